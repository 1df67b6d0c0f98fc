#!/usr/bin/env bash
# usage: bash examples/lent-machine/host-leases.sh MINUTES
# Issue 90's share of one lease: the paired cases that still lack processes or leases, in the
# order results/HOST-LEASES.md gives, on whichever GPU the call was lent. Each step resumes from
# the records the tree carries, so a step that is done records nothing and costs seconds.
# Records land in $OUT/results under the environment's own file name.
set -u
minutes=$1
end=$(( $(date +%s) + ${minutes%.*} * 60 ))
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "GPU $gpu; boot $(cat /proc/sys/kernel/random/boot_id)"
real="--workload gpt2-small --workload llama-small --workload resnet50 --workload vit-base16 --workload bert-base"
modes="--mode eager --mode default --mode reduce-overhead --mode cuda-graph --timing paired"
step() {  # step ENV_GLOB MACHINE ARGS...: one bench run bounded by what is left of the call
    local glob=$1 machine=$2; shift 2
    local left=$(( (end - $(date +%s)) / 60 ))
    [ "$left" -ge 1 ] || { echo "no time left for: $*"; return; }
    bash examples/lent-machine/bench.sh "$glob" -- --backend cuda --profile full --machine "$machine" \
        $modes "$@" --max-minutes "$left"
}
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
    g=cuda-lent-h100
    step $g lent-h100 $real --batch-size 32 --dtype bfloat16 --repeats 5
    step $g lent-h100 $real --batch-size 8 --batch-size 1 --dtype bfloat16 --dtype float32 --repeats 6
    step $g lent-h100 $real --batch-size 32 --dtype bfloat16 --dtype float32 --repeats 6 ;;
*) echo "not an H100 or H200: $gpu"; exit 3 ;;
esac
