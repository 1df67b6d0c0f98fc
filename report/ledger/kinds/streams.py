"""The shape streams (bench/shapes), per stream case as report/shapes/data.py sums it up.
One mode (stream-absolute): a count from Dynamo's counters, the sizes that fell back to
eager at the recompile limit, or whether every process passed its float64 check. Two
modes on one stream (stream-ratio): the p99 once every shape is seen, or the total of the
stream's first pass, compiles included, of one mode divided by the other's. The
fixed-shape tables leave streams out (report.analysis.fixed_seed), so these kinds read
them there."""

from __future__ import annotations

import math

from report.ledger.comparison import Comparison, judged
from report.ledger.values import combine, median
from report.shapes.data import STREAM

# The figures of a stream case each process has (report.shapes.data.cases' per_process).
FIELDS = ("recompiles", "graph_breaks", "guard_failures", "fell_back", "passed")
UNITS = {"fell_back": "sizes", "passed": "pass"}
WORDS = "{field} of {mode} over each shape stream's calls, per stream"
EVIDENCE = ("analysis/shapes.md", "")
# The figures of two modes on one stream that stream-ratio divides (report.shapes.data.cases).
RATIO_FIELDS = ("p99_s", "total_s")
# Both sides are isolated processes of the stream, each mode in processes of its own, in one
# environment: one run and one timing method, never a paired median against an isolated one.
RATIO_WORDS = ("{field} of {mode} divided by that of {baseline} on each shape stream (p99_s: "
               "the p99 of the calls once every shape is seen; total_s: the stream's first "
               "pass, compiles included), both from isolated stream processes of this "
               "environment")


def problems(test: dict) -> list[str]:
    if test.get("field") not in FIELDS:
        return [f"stream-absolute field {test.get('field')!r} is not one of {', '.join(FIELDS)}"]
    return []


def ratio_problems(test: dict) -> list[str]:
    if test.get("field") not in RATIO_FIELDS:
        return [f"stream-ratio field {test.get('field')!r} is not one of {', '.join(RATIO_FIELDS)}"]
    return []


def unit(test) -> str:
    return UNITS.get(test.field, "count")


def absolute(judge, here, env_id, test, agrees) -> list[Comparison]:
    """One comparison per stream case of `test.mode` in `here` (the claim's stream cases in
    the environment, Judge.stream_points): the median over processes of the field, every
    process judged on its own."""
    out = []
    for case in here:
        if case["mode"] != test.mode:
            continue
        comparison = Comparison(workload=case["workload"], batch=case["batch_size"],
                                axis="batch", family="shapes", flops=None, evidence=EVIDENCE)
        mine = case.get("per_process", {}).get(test.field, []) if case["ok"] else []
        comparison.processes = (len(mine),)
        if not mine:
            failed = "; ".join(sorted({f["status"] for f in case["failed"]}))
            comparison.note = f"{test.mode}: {failed or 'no process ran the stream whole'}"
            out.append(comparison)
            continue
        values = [float(v) for v in mine]
        comparison.figure = float(all(mine)) if test.field == "passed" else median(values)
        comparison.n = len(values)
        judged(comparison, values, agrees)
        out.append(comparison)
    return out


def ratio(judge, here, env_id, test, agrees) -> list[Comparison]:
    """One comparison per stream of `here` where `test.mode` ran: the case's figure (the
    median over its processes, as the streams' page shows it) of the mode over the
    baseline's, with the range over every pairing of their processes."""
    out = []
    for case in here:
        if case["mode"] != test.mode:
            continue
        base = next((c for c in here if c["mode"] == test.baseline
                     and all(c[k] == case[k] for k in STREAM)), None)
        comparison = Comparison(workload=case["workload"], batch=case["batch_size"],
                                axis="batch", family="shapes", flops=None, evidence=EVIDENCE)
        sides = [c["per_process"][test.field] if c is not None and c["ok"] else []
                 for c in (case, base)]
        comparison.processes = tuple(len(s) for s in sides)
        missing_sides = [_why(c, mode) for c, mode, s in
                         zip((case, base), (test.mode, test.baseline), sides, strict=True)
                         if not s]
        if missing_sides or not base[test.field]:
            comparison.note = "; ".join(missing_sides) or f"{test.baseline} has {test.field} 0"
            out.append(comparison)
            continue
        comparison.figure = case[test.field] / base[test.field]
        values, comparison.n = combine([tuple(s) for s in sides],
                                       lambda x, y: x / y if y else math.nan)
        judged(comparison, values, agrees)
        out.append(comparison)
    return out


def _why(case: dict | None, mode: str) -> str:
    if case is None:
        return f"no {mode} record of the stream"
    failed = "; ".join(sorted({f["status"] for f in case["failed"]}))
    return f"{mode}: {failed or 'no process ran the stream whole'}"
