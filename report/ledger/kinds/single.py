"""One mode at each point: a record field or a figure derived from one process's record
(absolute), or whether every process passed its float64 check (correctness)."""

from __future__ import annotations

from report import analysis
from report.ledger.comparison import Comparison, judged
from report.ledger.schema import COST, EFFECT, Test
from report.ledger.values import ABSOLUTE_FIELDS, LATER_MEMORY, as_float, median, missing

UNITS = {"cold_first_call_s": "seconds", "warm_first_call_s": "seconds",
         "mean_kernel_s": "seconds", "idle_s_per_call": "seconds", "busy_fraction": "fraction",
         "idle_fraction": "fraction",
         "rel_error": "number", "peak_device_bytes": "bytes", "warmup_calls_to_steady": "calls",
         "first_calls_much_slower": "calls", **{f: "bytes" for f in LATER_MEMORY}}


# Which way each field grows when the claim's effect does (schema.EFFECT, schema.COST):
# compile times, the idle share and counts of graph replays are what their claims assert
# ("compiling is slow", "the GPU sits idle a large share of the run", "it replays a
# graph"), so larger is more of it; latencies, overheads, kernel durations, idle time per
# call, memory and calls are costs, and a cost past its stated point is never more of the
# claim: it fails there.
COSTS = {"mean_kernel_s", "idle_s_per_call", "peak_device_bytes",
         "warmup_calls_to_steady", "first_calls_much_slower", "first_call_ratio", "rel_error",
         *LATER_MEMORY}


def unit(test: Test) -> str:
    return UNITS.get(test.field, "count")


def larger(test: Test) -> str:
    return COST if test.field in COSTS else EFFECT


def field_problems(test: dict) -> list[str]:
    if test.get("field") not in ABSOLUTE_FIELDS:
        return [f"absolute field {test.get('field')!r} is not one of {', '.join(ABSOLUTE_FIELDS)}"]
    return []


def passes(x) -> bool | None:
    return None if missing(x) else bool(x)


def one_sided(judge, here, test, column: str, agrees) -> list[Comparison]:
    out = []
    for row in judge.mode_rows(here, test.mode):
        comparison = judge.point(row, column)
        mine = row.get(f"{column}_v")
        mine = mine if isinstance(mine, tuple) else ()
        comparison.processes = (len(mine),)
        if not row["ok"] or not mine:
            comparison.note = (f"{test.mode}: {row['status']}" if not row["ok"]
                               else f"no {column} in the records")
            comparison.field_absent = bool(row["ok"])
            out.append(comparison)
            continue
        comparison.busy = as_float(row.get("busy_fraction"))
        if column in ("warmup_calls_to_steady", "first_calls_much_slower") and (
                test.mode != analysis.BASELINE):
            comparison.floor = judge.floor(here, row, column)
        comparison.figure = float(all(mine)) if column == "passed" else median(mine)
        values, comparison.n = [float(v) for v in mine], len(mine)
        judged(comparison, values, agrees)
        out.append(comparison)
    return out


def absolute(judge, here, env_id, test, agrees) -> list[Comparison]:
    return one_sided(judge, here, test, test.field, agrees)


def correctness(judge, here, env_id, test, agrees) -> list[Comparison]:
    return one_sided(judge, here, test, "passed", agrees)
