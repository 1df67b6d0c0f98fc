#!/usr/bin/env bash
# Slowed-host proof (issue 51) on the 2-core CPU machine: python -m bench.host.slowed times the
# probe quiet, starts one busy loop (not pinned), times it again, then measures every CPU
# speedup with a host model of machine atlas-cpu under a new slowed-host tag, straight into results/.
# usage: bash examples/cpu-machine/slowed.sh [python -m bench.host.slowed options]
#   e.g. PYTHON=/work/venv/bin/python bash examples/cpu-machine/slowed.sh --repeats 2
# Run it on an otherwise idle machine: any other load is part of what it measures.
set -u
"${PYTHON:-python}" -m bench.host.slowed --backend cpu --machine atlas-cpu --results-dir results \
    --loops 1 "$@"
