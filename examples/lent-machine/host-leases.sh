#!/usr/bin/env bash
# usage: bash examples/lent-machine/host-leases.sh MINUTES
# One lease's share of the GPU work, in the order results/HOST-LEASES.md gives, on whichever GPU
# the call was lent: on an H200, issue 90's paired cases that still lack processes or leases;
# on an H100, issue 95's cold-start ladders and then issue 96's first shape stream. Each step
# resumes from the records the tree carries, so a step that is done records nothing.
# Paired and stream records land in $OUT/results under the environment's own file name; the
# cold-start records in $OUT/coldstart.tgz (unpack with --strip-components=1 over
# results/coldstart/) and new bundles in $OUT/bundles.tgz.part-* (into .bundles/).
set -u
minutes=$1
end=$(( $(date +%s) + ${minutes%.*} * 60 ))
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "GPU $gpu; boot $(cat /proc/sys/kernel/random/boot_id)"
real="--workload gpt2-small --workload llama-small --workload resnet50 --workload vit-base16 --workload bert-base"
modes="--mode eager --mode default --mode reduce-overhead --mode cuda-graph --timing paired"
left_minutes() { echo $(( (end - $(date +%s)) / 60 )); }
step() {  # step ENV_GLOB MACHINE ARGS...: one bench run bounded by what is left of the call
    local glob=$1 machine=$2; shift 2
    local left; left=$(left_minutes)
    [ "$left" -ge 1 ] || { echo "no time left for: $*"; return; }
    bash examples/lent-machine/bench.sh "$glob" -- --backend cuda --profile full --machine "$machine" \
        $modes "$@" --max-minutes "$left"
}
cold() {  # cold ARGS...: one cold-start run (python -m bench.coldstart) in what is left
    local left; left=$(left_minutes)
    [ "$left" -ge 2 ] || { echo "no time left for cold start: $*"; return; }
    bash examples/lent-machine/cold.sh "$left" -- --repeats 3 "$@"
}
# A process that outlasts the call was cut off unrecorded and tried again on the next lease, for
# ever: resnet50's cold max-autotune-no-cudagraphs process ran past 7 minutes on two H100 leases
# (eleventh and twelfth sessions). So each process gets one minute less than the step has left
# and is then recorded as a timeout, its status. A call of 8.5 minutes reaches this step with
# 7 left (the twelfth session asked for 8 and so never ran it).
cold_bounded() {  # cold_bounded ARGS...: as cold, each process stopped and recorded in time
    local left; left=$(left_minutes)
    [ "$left" -ge 5 ] || { echo "fewer than 5 minutes left for: $*"; return; }
    cold --timeout $(( left - 1 )) "$@"
}
streams="--mode eager --mode default --mode reduce-overhead --mode default-dynamic --mode reduce-overhead-dynamic
  --mode default-static --mode reduce-overhead-static --mode default-mark-dynamic --mode reduce-overhead-mark-dynamic
  --mode default-mark-unbacked --mode reduce-overhead-mark-unbacked --mode default-pad-pow2
  --mode reduce-overhead-pad-pow2 --mode default-pad64 --mode reduce-overhead-pad64 --mode default-shapes-spec
  --mode reduce-overhead-shapes-spec"
case "$gpu" in
*H200*)
    g=cuda-lent-h200-torch2.11.0-cu130-9c1485e7594b
    step $g lent-h200 --workload gpt2-small --workload llama-small --workload resnet50 \
        --batch-size 1 --dtype float32 --repeats 7
    step $g lent-h200 $real --batch-size 8 --dtype float32 --repeats 4
    step $g lent-h200 $real --batch-size 1 --batch-size 8 --dtype bfloat16 --repeats 1
    step $g lent-h200 $real --batch-size 8 --dtype float32 --repeats 5
    step $g lent-h200 $real --batch-size 1 --batch-size 8 --dtype bfloat16 --repeats 2 ;;
*H100*)
    # The H100's paired plan is done (eighth session): checking it again cost 2 minutes of a
    # lease in imports, so an H100 goes straight to the cold-start ladders.
    g=cuda-lent-h100
    cold $real --batch-size 32 --mode reduce-overhead
    # The models whose processes fit a call first, resnet50 (the longest) last.
    cold_bounded --workload bert-base --workload vit-base16 --workload gpt2-small \
        --workload llama-small --batch-size 1 --batch-size 32 --mode max-autotune-no-cudagraphs
    cold_bounded --workload resnet50 --batch-size 1 --batch-size 32 --mode max-autotune-no-cudagraphs
    left=$(left_minutes)
    [ "$left" -ge 1 ] && bash examples/lent-machine/bench.sh $g -- --backend cuda --profile full \
        --timing isolated --repeats 3 --machine lent-h100 --max-minutes "$left" \
        --workload gpt2-small-prompts --batch-size 1 $streams ;;
*) echo "not an H100 or H200: $gpu"; exit 3 ;;
esac
