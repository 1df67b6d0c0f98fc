#!/usr/bin/env bash
# usage, on a lent GPU machine from the repository root, .whl carried (examples/lent-machine/wheels.sh):
#   bash examples/independent-check/run.sh [PROCESSES_PER_MODEL] [START_BUDGET_S]
# One fresh process per model in turn (gpt2-small, bert-base, llama-small), PROCESSES_PER_MODEL
# times (default 3); no process starts after START_BUDGET_S seconds (default 420), so that a
# 600 s call ends with its lines: each process is also cut at 240 s, and at 560 s in all. The first process of each model compiles cold (about a
# minute); the later ones find Inductor's cache that it left in /tmp. Lines land in
# $OUT/independent/measured.jsonl, the processes' logs in one logs.txt beside them (a call brings
# back only so many files: one log per process once crowded out the records). They stay out of results/:
# the host model must not be fitted on what checks it.
set -u
processes=${1:-3}; budget=${2:-420}; start=$SECONDS
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
source examples/lent-machine/site.sh || exit 1
mkdir -p "$OUT/independent"
nvidia-smi -L
python3 -c "import torch, transformers; print('torch', torch.__version__, 'transformers', transformers.__version__)"
cat /proc/sys/kernel/random/boot_id
for repeat in $(seq "$processes"); do
    for model in gpt2-small bert-base llama-small; do
        if (( SECONDS - start > budget )); then echo "start budget spent: $model process $repeat not run"; continue; fi
        log=/tmp/independent-$model-$repeat.log
        limit=$(( 560 - (SECONDS - start) )); (( limit > 240 )) && limit=240
        timeout "$limit" python3 examples/independent-check/measure.py --model "$model" \
            --out "$OUT/independent/measured.jsonl" > "$log" 2>&1
        echo "$model process $repeat: exit $? at $((SECONDS - start)) s"
        grep -v '^{' "$log" | tail -3
        { echo "== $model process $repeat"; cat "$log"; } >> "$OUT/independent/logs.txt"
    done
done
[ -s "$OUT/independent/measured.jsonl" ] && python3 - "$OUT/independent/measured.jsonl" <<'PY'
import json, sys
for raw in open(sys.argv[1]):
    line = json.loads(raw)
    print(f"{line['model']:12} ratio {line['ratio']:.2f}x  probe {line['probe_us']:.2f} us  "
          f"compile {line['compile_s']:.0f} s  {line['gpu_name']}  boot {line['boot_id'][:8]}")
PY
