#!/usr/bin/env bash
# usage: bash examples/lent-machine/ray-check.sh [MINUTES [-- <more python -m bench args>]]
# The one-node Ray check of issue 97, on a lent GPU machine, in calls of 10 minutes (carry
# .ray, built here by examples/lent-machine/ray-wheels.sh): the sentinel profile run by the
# local runner, then through a one-node Ray cluster (`--ray local`), into one results folder,
# $OUT/ray-check, with
# machine names local-CARD and ray-CARD, then an A/A run of the sentinel (machine aa-CARD);
# CARD is h100 or h200, from nvidia-smi's name, or cpu on a machine without a GPU, where the
# same check runs on the CPU backend. MINUTES (default 9) bounds the three runs together: the
# local run gets them all, the Ray run what it leaves, the A/A run what they leave, and a run
# stopped by the limit resumes on the next call. The Ray run starts a fresh Python for every
# case process (the local runner forks from one that imported torch once), so it takes longer
# than the local run: call again, on the warm machine, until the three runs find nothing to run.
# Between calls on a warm machine the records are kept in /tmp/ray-check. Finish all three
# runs on one machine: figures are compared only between runs of one host, so a new machine
# starts over (keep the earlier machine's files, as examples/lent-machine/ray-check-leases/
# does, but never put them in .ray/check/ for it). The three runs take three calls of one
# machine back to back (results/HOST-LEASES.md gives the first lease's times).
# The lent machine has no pandas, so compare here once the files are back in .ray/check/
# (`mkdir -p .ray/check && cp FILES_AT/ray-check/*.jsonl .ray/check/`, FILES_AT from the reply):
#   python -m report compare --ratios --results .ray/check machine=local-h100 machine=ray-h100
# It sets each case's paired speedup over eager (the ratio the check is about: eager and the
# mode timed in one process, from each side's paired processes alone) side by side, with a
# verdict: "within the noise" or "differs" by a factor. Without --ratios it sets the isolated
# latencies side by side: one isolated process per case in the sentinel, so no verdict.
set -u
minutes=${1:-9}; shift || true; [ "${1:-}" = "--" ] && shift
deadline=$(( $(date +%s) + ${minutes%.*} * 60 ))
export PYTHONUNBUFFERED=1 RAY_USAGE_STATS_ENABLED=0
out=${OUT:?OUT names the folder that comes back}/ray-check
keep=/tmp/ray-check
mkdir -p "$out" "$keep"
cp "$keep"/*.jsonl "$out/" 2>/dev/null

card=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 \
    | grep -o -E '[A-Z][A-Z0-9]*[0-9]' | head -1 | tr A-Z a-z)  # NVIDIA H100 80GB HBM3: h100
if [ -n "$card" ]; then backend=cuda; else backend=cpu card=cpu; fi

# Ray, unpacked once per machine: the archive made for this Python, and Ray's common
# dependencies only where this Python lacks them (the lent image has them, in the versions its
# torch was installed with).
tag=$(python3 -c 'import sys; print(f"cp{sys.version_info[0]}{sys.version_info[1]}")')
archive=$(ls .ray/ray-[0-9]*-"$tag".tar.xz 2>/dev/null | head -1)
if [ -z "$archive" ]; then
    echo "ray-check: no .ray/ray-*-$tag.tar.xz: run" \
        "examples/lent-machine/ray-wheels.sh ${tag:2:1}.${tag:3} and carry .ray" >&2
    exit 2
fi
site=/tmp/ray-site
if [ "$(cat $site/archive 2>/dev/null)" != "$archive" ]; then
    rm -rf $site && mkdir -p $site/ray $site/common
    tar -C $site/ray -xJf "$archive" || exit 2
    tar -C $site/common -xJf .ray/ray-common-"$tag".tar.xz || exit 2
    echo "$archive" >$site/archive
fi
raypath=$site/ray
python3 -c 'import attr, certifi, charset_normalizer, click, filelock, idna, packaging
import requests, typing_extensions, urllib3, yaml' 2>/dev/null || raypath=$raypath:$site/common
raypath=$raypath${PYTHONPATH:+:$PYTHONPATH}
PYTHONPATH=$raypath python3 -c 'import ray; print("ray", ray.__version__, "from", ray.__file__)' \
    || exit 2

left() { echo $(( (deadline - $(date +%s)) / 60 )); }
run() {  # run NAME [--ray local]: the sentinel profile under machine name NAME-CARD
    local name=$1; shift
    if [ "$(left)" -lt 1 ]; then
        echo "ray-check: no time left for the $name run: call again to resume"; return
    fi
    echo "== $name-$card: python -m bench $* (--max-minutes $(left))"
    python3 -m bench "$@" --backend $backend --profile sentinel --machine "$name-$card" \
        --results-dir "$out" --max-minutes "$(left)" "${extra[@]}" 2>&1 \
        | tee -a "$OUT/ray-check-$name.log" | grep -v '^\s*$' | tail -40
    cp "$out"/*.jsonl "$keep/" 2>/dev/null
}
# The A/A run: the sentinel against itself in alternating processes on this host (python -m
# bench.ab, one interpreter under two labels). Its spread is the noise floor that `compare
# --ratios` judges the two runs' ratios against; without it the verdict reads "no floor".
# The narrowing options (--workload) are bench.ab's own filters, which it passes to every turn.
aa() {
    if [ "$(left)" -lt 1 ]; then
        echo "ray-check: no time left for the A/A run: call again to resume"; return
    fi
    echo "== aa-$card: python -m bench.ab, the sentinel twice over (--max-minutes $(left))"
    python3 -m bench.ab --env a=python3 --env a-aa=python3 --group "raycheck$card" \
        --backend $backend --results-dir "$out" --max-minutes "$(left)" "${extra[@]}" \
        -- --profile sentinel --machine "aa-$card" 2>&1 | tee -a "$OUT/ray-check-aa.log" \
        | grep -E '^(== turn|A/B group|stopping)' | tail -20
    cp "$out"/*.jsonl "$keep/" 2>/dev/null
}
extra=("$@")
run local
PYTHONPATH=$raypath run ray --ray local
aa
ls -la "$out"
