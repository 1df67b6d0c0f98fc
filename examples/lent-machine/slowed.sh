#!/usr/bin/env bash
# Slowed-host proof (issue 51): the sentinel profile with every core oversubscribed 2x by busy loops.
# usage: bash examples/lent-machine/slowed.sh ENV_GLOB MACHINE MINUTES [LOOPS]
set -u
glob=$1; machine=$2; minutes=$3; loops=${4:-}
export PYTHONUNBUFFERED=1
mkdir -p $OUT/results
for f in results/$glob*.jsonl; do cp "$f" "$OUT/results/$(basename "$f" .jsonl)-archive.jsonl"; done
ls -la $OUT/results
nproc; nvidia-smi --query-gpu=name,clocks.sm --format=csv
cores=$(nproc); loops=${loops:-$cores}
echo "quiet probe:"; timeout 60 python -m bench host --backend cuda --results /nonexistent 2>&1 | head -8
pids=()
for i in $(seq $loops); do (while :; do :; done) & pids+=($!); done
echo "loaded probe ($loops busy loops):"; timeout 60 python -m bench host --backend cuda --results /nonexistent 2>&1 | head -8
python -m bench --backend cuda --profile sentinel --machine $machine --tag slowed-host --order grouped \
   --max-minutes $minutes --results-dir $OUT/results 2>&1 | tail -40
kill ${pids[@]} 2>/dev/null
ls -la $OUT/results
