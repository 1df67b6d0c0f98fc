"""`python -m bench.fleet.plan`: the wall time of a fleet run, worked out from committed records.

For each GPU type named (`--gpus "NVIDIA H100 80GB HBM3=16"`), the processes of one profile
run as the records hold them: each isolated process, and each paired process once (its
records share one process), as the median duration of every time that process was measured.
A fleet of G GPUs of that type then takes at least

    W = max(T / G, C)

where T is the sum of those durations and C the longest chain of processes that never run at
the same time (the runner starts a case's next repeat only after its earlier one, and a
group's paired process only after its modes' isolated ones). W is a floor: it leaves out
starting each worker, and compiles that a process pays again on a node without its caches.
A type without records says so; nothing is guessed for it. Standard library only.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

from bench.records import read_records, results_files


def processes(folder: Path, device: str, profile: str, tag: str) -> dict[tuple, float]:
    """(group, mode or "paired", repeat) -> the median duration of that process in the
    records of `device`; a group is a case less its mode."""
    seen: dict[tuple, list[float]] = defaultdict(list)
    paired: dict[tuple, float] = {}
    for path in results_files(folder):
        for record in read_records(path, lambda message: None):
            if (record.env.device_name != device or record.profile != profile
                    or record.key.tag != tag):
                continue
            group, p = replace(record.key, mode=""), record.process
            if p.timing == "paired":  # one process, one record per mode: counted once
                one = (record.env_id, p.run_id, record.started_at, p.repeat, group)
                paired[one] = max(paired.get(one, 0.0), record.duration_s)
            else:
                seen[(group, record.key.mode, p.repeat)].append(record.duration_s)
    for (_, _, _, repeat, group), took in paired.items():
        seen[(group, "paired", repeat)].append(took)
    return {unit: statistics.median(times) for unit, times in seen.items()}


def chain_s(units: dict[tuple, float]) -> float:
    """The longest that one group's processes take end to end: its modes' isolated processes
    side by side (each mode's repeats one after another), then its paired ones in turn."""
    modes: dict[tuple, float] = defaultdict(float)
    paired: dict = defaultdict(float)
    for (group, mode, _), took in units.items():
        if mode == "paired":
            paired[group] += took
        else:
            modes[(group, mode)] += took
    longest_isolated: dict = defaultdict(float)
    for (group, _), took in modes.items():
        longest_isolated[group] = max(longest_isolated[group], took)
    groups = set(paired) | set(longest_isolated)
    return max((longest_isolated[g] + paired[g] for g in groups), default=0.0)


def _gpus(value: str) -> tuple[str, int]:
    device, _, count = value.rpartition("=")
    if not device or not count.isdigit() or int(count) < 1:
        raise argparse.ArgumentTypeError(f"must be DEVICE NAME=COUNT, such as 'NVIDIA H200=16'; "
                                         f"got {value!r}")
    return device, int(count)


def _clock(seconds: float) -> str:
    minutes, secs = divmod(round(seconds), 60)
    return f"{minutes // 60}:{minutes % 60:02d}:{secs:02d}"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.fleet.plan", description=__doc__.split("\n")[0])
    p.add_argument("--gpus", type=_gpus, action="append", required=True,
                   help="repeatable: a device name as records give it, and how many GPUs of it")
    p.add_argument("--results", type=Path, default=Path("results"))
    p.add_argument("--profile", default="full")
    p.add_argument("--tag", default="main")
    args = p.parse_args(argv)
    print(f"{'device':<28} {'GPUs':>4} {'processes':>9} {'T (GPU-h)':>9} {'C':>8} {'W = max(T/G, C)':>16}")
    walls = []
    for device, count in args.gpus:
        units = processes(args.results, device, args.profile, args.tag)
        if not units:
            print(f"{device:<28} {count:>4}  not measured: no {args.profile} records of it in "
                  f"{args.results}")
            continue
        total, chain = sum(units.values()), chain_s(units)
        walls.append(max(total / count, chain))
        print(f"{device:<28} {count:>4} {len(units):>9} {total / 3600:>9.1f} {_clock(chain):>8} "
              f"{_clock(walls[-1]):>16}")
    if walls:
        print(f"the types with records: one driver measures their environments one after "
              f"another, at least {_clock(sum(walls))} (the sum of W); one driver per type "
              f"(--accelerator-type, each its own --results-dir) at once, at least "
              f"{_clock(max(walls))} (the largest W)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
