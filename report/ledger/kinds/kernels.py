"""Kernels a mode runs beyond its baseline's, per call, set against the input copies a
graph-replaying mode adds. The profiler's counts do not name kernels, so the records
cannot tell a copy from a work kernel: a mode that replays a CUDA graph copies each input
into its static buffer before replaying (the manual graph one copy per input,
bench/modes.py; reduce-overhead at most as many), so its extra kernels are judged against
that allowance: the work kernels are unchanged where 0 <= extra <= the inputs copied."""

from __future__ import annotations

from bench.modes import MODES
from report.ledger.comparison import Comparison, judged
from report.ledger.schema import Rule
from report.ledger.values import combine, median, missing

WORDS = ("kernels per call of {mode} less those of {baseline}, against the input copies a "
         "graph-replaying mode adds (the records count kernels, they do not name them)")


def within_copies(x) -> bool | None:  # the per-point rule below replaces it
    return None if missing(x) else x == 0


def copies(judge, workload: str, mode: str) -> int:
    """Input copies per call of `mode`: one per input where it replays a CUDA graph."""
    if not MODES[mode].traits.cuda_graphs:
        return 0
    return len((judge.data.workload_info(workload) or {}).get("input_shapes") or ())


def extra(judge, here, env_id, test, agrees) -> list[Comparison]:
    out = []
    column = "device_kernels_per_call"
    for row in judge.pair_rows(here, test.mode, test.baseline):
        comparison = judge.point(row, column)
        sides = judge.sides(row, test, column, comparison)
        if sides is None:
            out.append(comparison)
            continue
        mine, base = sides
        allowance = copies(judge, row["workload"], test.mode) - copies(
            judge, row["workload"], test.baseline)
        comparison.allowance = float(allowance)
        comparison.busy = row.get("busy_fraction_base")
        comparison.figure = median(mine) - median(base)
        values, comparison.n = combine([mine, base], lambda m, b: m - b)
        judged(comparison, values, Rule(lo=min(0.0, allowance), hi=max(0.0, allowance),
                                         hi_inclusive=True, comparator="copies"))
        out.append(comparison)
    return out
