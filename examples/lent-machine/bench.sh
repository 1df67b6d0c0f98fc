#!/usr/bin/env bash
# usage: bash examples/lent-machine/bench.sh ENV_GLOB -- <python -m bench args...>
# Earlier records of the environment travel as *-archive.jsonl[.gz] (read for resume and expected
# durations); new records land in the environment's own file name under $OUT/results.
set -u
glob=$1; shift; [ "$1" = "--" ] && shift
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
source examples/lent-machine/site.sh || exit 1
mkdir -p $OUT/results
for f in results/$glob*.jsonl results/$glob*.jsonl.gz; do
    [ -e "$f" ] && b=$(basename "$f") && cp "$f" "$OUT/results/${b/.jsonl/-archive.jsonl}"; done
python -c "import timm, transformers, torch; print('timm', timm.__version__, 'transformers', transformers.__version__, 'torch', torch.__version__)"
python -m bench "$@" --results-dir $OUT/results 2>&1 | grep -v "^\s*$" | tail -60
rm -f $OUT/results/*-archive.jsonl $OUT/results/*-archive.jsonl.gz
ls -la $OUT/results
