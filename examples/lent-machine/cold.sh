#!/usr/bin/env bash
# usage: bash examples/lent-machine/cold.sh MINUTES -- <python -m bench.coldstart args (no --machine/--results-dir)>
set -u
minutes=$1; shift; [ "$1" = "--" ] && shift
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
source examples/lent-machine/site.sh || exit 1
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
case "$gpu" in *H200*) machine=lent-h200;; *H100*) machine=lent-h100;; *) machine=lent-gpu;; esac
echo "GPU $gpu -> machine $machine"
# a second run in one call keeps the first one's records
[ -d /tmp/cs ] || { mkdir -p /tmp/cs/bundles && cp -r results/coldstart/. /tmp/cs/ && { [ -d .bundles ] && cp -r .bundles/. /tmp/cs/bundles/ || true; } && touch /tmp/cs.start; }
python -m bench.coldstart --backend cuda --machine $machine --results-dir /tmp/cs --max-minutes $minutes "$@" 2>&1 | tail -40
du -sh /tmp/cs /tmp/cs/bundles/* 2>/dev/null
# Records and bundle descriptions in one file; the bundles made in this call apart, in parts
# under the tool's 16 MiB per file (join: cat bundles.tgz.part-* | tar xz).
tar czf $OUT/coldstart.tgz -C /tmp --exclude='*.bin' cs
rm -f $OUT/bundles.tgz.part-*
(cd /tmp && find cs/bundles -name '*.bin' -newer /tmp/cs.start | tar czf - -T -) | split -b 15m - $OUT/bundles.tgz.part-
ls -la $OUT
