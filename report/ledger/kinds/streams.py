"""One mode on the shape streams (bench/shapes): a count from Dynamo's counters, the sizes
that fell back to eager at the recompile limit, or whether every process passed its
float64 check, per stream case as report/shapes/data.py sums it up. The fixed-shape
tables leave streams out (report.analysis.fixed_seed), so this kind reads them there."""

from __future__ import annotations

from report.ledger.comparison import Comparison, judged
from report.ledger.values import median

# The figures of a stream case each process has (report.shapes.data.cases' per_process).
FIELDS = ("recompiles", "graph_breaks", "guard_failures", "fell_back", "passed")
UNITS = {"fell_back": "sizes", "passed": "pass"}
WORDS = "{field} of {mode} over each shape stream's calls, per stream"
EVIDENCE = ("analysis/shapes.md", "")


def problems(test: dict) -> list[str]:
    if test.get("field") not in FIELDS:
        return [f"stream-absolute field {test.get('field')!r} is not one of {', '.join(FIELDS)}"]
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
