"""The C and C++ compiler runs of one cold-start process, and the seconds they took.

A cache hit in every layer the counters know (FX graph, AOTAutograd) can still leave the
host's compiler to run: Inductor's CPU kernels and C++ wrappers, and Triton's launchers, are
shared libraries built from source where no built copy is found on disk. No counter of
torch's says so, and on a machine with many cores the builds run in Inductor's worker
processes, out of reach of its in-process timers. So the runner puts a small wrapper in
front of each compiler on PATH, which every child process inherits: each run that writes a
file (-o) appends its start and end to a log. Linux only (GNU date); elsewhere nothing is
wrapped and the record says not recorded.

CPU only: on CUDA the compiler's path enters the compile caches' keys, so a wrapper in a
folder of each process's own made every warm process on an H200 (torch 2.11.0) miss the FX
graph cache that its cold process had filled, which a plain PATH entry did not (checked
there on 2026-11-30: examples/lent-machine/compiler-wrapper-check.py). On the CPU, warm
and bundle processes hit with the wrappers on.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from pathlib import Path

COMPILERS = ("cc", "gcc", "g++", "c++", "clang", "clang++")
# CC and CXX name the compiler where set (Triton reads CC, Inductor CXX): wrapped too.
CHOSEN = ("CC", "CXX")
LOG = "ATLAS_COMPILER_LOG"

WRAPPER = """#!/bin/sh
case " $* " in
  *" -o "*) ;;
  *) exec {real} "$@" ;;
esac
start=$(date +%s.%N)
{real} "$@"
status=$?
echo "$start $(date +%s.%N)" >> "${log}"
exit $status
"""


def environment(folder: Path, backend: str) -> dict[str, str]:
    """Variables that route this process's compiler runs through wrappers in `folder`,
    logging to a file there; {} where they are not used (a GPU backend, not Linux, no
    compiler found)."""
    if backend != "cpu" or not sys.platform.startswith("linux") or shutil.which("date") is None:
        return {}
    chosen = {var: real for var in CHOSEN
              if os.environ.get(var) and (real := shutil.which(os.environ[var]))}
    reals = {name: real for name in COMPILERS if (real := shutil.which(name))}
    reals |= {f"atlas-{var}": real for var, real in chosen.items()}
    if not reals:
        return {}
    wrappers = Path(folder) / "compilers"
    wrappers.mkdir(parents=True, exist_ok=True)
    for name, real in reals.items():
        wrapper = wrappers / name
        wrapper.write_text(WRAPPER.format(real=shlex.quote(real), log=LOG))
        wrapper.chmod(0o755)
    log = wrappers / "runs.log"
    log.touch()
    return {**{var: str(wrappers / f"atlas-{var}") for var in chosen},
            "PATH": f"{wrappers}{os.pathsep}{os.environ.get('PATH', '')}", LOG: str(log)}


def runs(since: float, until: float) -> tuple[int, float] | None:
    """The compiler runs that began between `since` and `until` (wall-clock seconds), and the
    seconds within that span when at least one ran; None where runs are not logged."""
    path = os.environ.get(LOG)
    if not path or not Path(path).exists():
        return None
    spans = []
    for line in Path(path).read_text().splitlines():
        start, _, end = line.partition(" ")
        try:
            begun, ended = float(start), float(end)
        except ValueError:
            continue  # a torn line, or a date without %N
        if since <= begun <= until:
            spans.append((begun, min(ended, until)))
    return len(spans), busy_seconds(spans)


def busy_seconds(spans: list[tuple[float, float]]) -> float:
    """The length of the union of the spans: parallel builds count once."""
    total, reach = 0.0, float("-inf")
    for start, end in sorted(spans):
        if end > reach:
            total += end - max(start, reach)
            reach = end
    return total
