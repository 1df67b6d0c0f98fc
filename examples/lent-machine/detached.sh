#!/usr/bin/env bash
# Runs that outlast one call (10 minutes) on one lease: the lent machine keeps a process that
# started its own session running between calls, until the lease ends. Every call copies all
# records so far to $OUT, so a lease lost early loses only the process in flight.
#
# usage (one call each, back to back on one lease, carrying .whl, which wheels.sh fills):
#   bash examples/lent-machine/detached.sh start SECONDS NAME CPUS -- python -m bench ... [NAME CPUS -- ...]
#   bash examples/lent-machine/detached.sh wait SECONDS   (name the kind that the start call got)
# A run named NAME writes under /tmp/runs/NAME: give it --results-dir /tmp/runs/NAME. It starts
# with the committed records it resumes from (results/coldstart for bench.coldstart, else the
# GPU records results/cuda-*.jsonl[.gz] as *-archive files), pinned to the cores CPUS (taskset list),
# so runs on the GPUs of one host never share a core. Each run works in its own copy of the tree
# (/tmp/tree/NAME): every call recopies the working tree, and a child process that imports bench
# while that happens fails. wait: until every run has ended or SECONDS
# have passed since the call began; then $OUT/runs.tgz holds /tmp/runs without bundles or archives.
set -u
began=$SECONDS
action=$1 seconds=$2; shift 2
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 PYTHONPATH=/tmp/site
mkdir -p /tmp/runs /tmp/logs
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
case "$gpu" in *H200*) LENT_MACHINE=lent-h200;; *H100*) LENT_MACHINE=lent-h100;; *) LENT_MACHINE=lent-gpu;; esac
export LENT_MACHINE  # a command in bash -c '...' names it: --machine $LENT_MACHINE
echo "GPU $gpu x $(nvidia-smi -L | wc -l) -> machine $LENT_MACHINE"
if [ "$action" = start ]; then
    source examples/lent-machine/site.sh || exit 1
    while [ $# -gt 0 ]; do
        name=$1 cpus=$2; shift 2; [ "$1" = "--" ] && shift
        command=()
        # a command ends where the next "NAME CPUS --" begins
        while [ $# -gt 0 ] && [ "${3:-}" != "--" ]; do command+=("$1"); shift; done
        mkdir -p /tmp/runs/$name
        if [[ " ${command[*]} " == *" bench.coldstart "* ]]; then
            cp -r results/coldstart/. /tmp/runs/$name/
        else
            for f in results/cuda-*.jsonl results/cuda-*.jsonl.gz; do
                b=$(basename "$f"); cp "$f" "/tmp/runs/$name/${b/.jsonl/-archive.jsonl}"; done
        fi
        rm -rf /tmp/tree/$name && mkdir -p /tmp/tree && cp -a . /tmp/tree/$name
        echo "start $name on cores $cpus: ${command[*]}"
        (cd /tmp/tree/$name || exit 1; setsid nohup taskset -c "$cpus" "${command[@]}" >/tmp/logs/$name.log 2>&1 </dev/null & echo $! >/tmp/logs/$name.pid)
    done
fi
ls /tmp/logs/*.pid >/dev/null 2>&1 || { echo "no runs on this machine: the lease is new (the last one went back); start them again"; exit 1; }
while [ $((SECONDS - began)) -lt "$seconds" ]; do
    running=0
    for p in /tmp/logs/*.pid; do kill -0 "$(cat "$p")" 2>/dev/null && running=1; done
    [ $running = 0 ] && break
    sleep 10
done
for log in /tmp/logs/*.log; do echo "== $log"; grep -v "^\s*$" "$log" | tail -25; done
for p in /tmp/logs/*.pid; do kill -0 "$(cat "$p")" 2>/dev/null && echo "still running: $p"; done
tar czf $OUT/runs.tgz -C /tmp --exclude='*.bin' --exclude='*-archive.jsonl*' runs logs
ls -la $OUT
