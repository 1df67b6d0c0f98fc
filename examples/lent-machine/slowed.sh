#!/usr/bin/env bash
# Slowed-host proof (issue 51) on a lent GPU: python -m bench.host.slowed pins itself and its runs
# to a few CPUs, adds busy loops there until the host probe is about twice its quiet value,
# then measures every speedup with a host model of MACHINE under a new slowed-host tag.
# usage: bash examples/lent-machine/slowed.sh ENV_GLOB MACHINE MINUTES [python -m bench.host.slowed options]
#   e.g. bash examples/lent-machine/slowed.sh cuda-lent-h100 lent-h100 8
#        bash examples/lent-machine/slowed.sh cuda-lent-h200 lent-h200 8 --workload bert-base
# Earlier records travel as *-archive.jsonl[.gz] (the fits, resume, expected durations), as in
# bench.sh; the new records and the whole log (slowed.log) come back under $OUT.
set -u
glob=$1; machine=$2; minutes=$3; shift 3
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
source examples/lent-machine/site.sh || exit 1
mkdir -p $OUT/results
for f in results/$glob*.jsonl results/$glob*.jsonl.gz; do
    [ -e "$f" ] && b=$(basename "$f") && cp "$f" "$OUT/results/${b/.jsonl/-archive.jsonl}"; done
nproc; nvidia-smi --query-gpu=name,clocks.sm --format=csv,noheader
python -m bench.host.slowed --backend cuda --machine "$machine" --results-dir $OUT/results \
    --minutes "$minutes" "$@" 2>&1 | tee $OUT/slowed.log | grep -v "^\s*$" | tail -80
rm -f $OUT/results/*-archive.jsonl $OUT/results/*-archive.jsonl.gz
ls -la $OUT/results
