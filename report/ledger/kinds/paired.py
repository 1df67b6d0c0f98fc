"""Two modes at each point: a speedup (baseline median / mode median, from
analysis.compare, paired where the records were timed paired), a ratio of counters or of
cold first calls (mode / baseline), and the crossover's comparisons. "Up to X" judges the
largest speedup alone (`aggregate: max`)."""

from __future__ import annotations

import math

from report.analysis import BASELINE
from report.ledger.comparison import FAILS, HOLDS, MIN_PROCESSES, Comparison, judged
from report.ledger.values import RATIO_METRICS, as_float, combine, median, missing

SPEEDUP_WORDS = ("{largest} speedup of {mode} over {baseline} ({baseline} median / {mode} "
                 "median), at each measured point")


def aggregate_problems(test: dict) -> list[str]:
    if "aggregate" in test and test["aggregate"] != "max":
        return ["aggregate is `max`, on speedup tests only"]
    return []


def metric_problems(test: dict) -> list[str]:
    if test.get("metric") not in RATIO_METRICS:
        return [f"ratio metric {test.get('metric')!r} is not one of {', '.join(RATIO_METRICS)}"]
    return []


def crossover_problems(test: dict) -> list[str]:
    problems = []
    if test.get("axis") not in ("batch", "n"):
        problems.append(f"crossover axis {test.get('axis')!r} is neither batch nor n")
    sides = [k for k in ("above", "below") if k in test]
    if len(sides) != 1 or missing(test.get(sides[0])) or not isinstance(
            test.get(sides[0]), (int, float)):
        problems.append("crossover needs exactly one numeric `above` or `below`")
    return problems


def wins(x: float | None) -> bool | None:
    return None if missing(x) else x > 1.0


def two_sided(judge, here, test, column: str, agrees) -> list[Comparison]:
    """mode against baseline per point; `column` is median_s (speedup: baseline / mode)
    or a counter (mode / baseline)."""
    speedup = column == "median_s"
    out = []
    for row in judge.pair_rows(here, test.mode, test.baseline):
        comparison = judge.point(row, "speedup" if speedup else column)
        sides = judge.sides(row, test, column, comparison)
        if sides is None:
            out.append(comparison)
            continue
        mine, base = sides
        comparison.busy = as_float(row.get("busy_fraction_base"))
        bound = row.get("ratio_bound")
        comparison.bound = bound if isinstance(bound, str) else None
        if speedup:
            # compare()'s figure and range: the extremes over every pairing of processes,
            # or the paired ratios where the records were timed paired.
            comparison.figure = float(row["speedup"])
            values = [float(row["speedup_lo"]), float(row["speedup_hi"])]
            comparison.n = int(row["pairings"]) if not missing(row.get("pairings")) else 0
            if row.get("paired") is True:  # both modes timed in each of n processes
                comparison.processes, comparison.paired = (comparison.n, comparison.n), True
        else:
            m, b = median(mine), median(base)
            if not b or (column == "launches_per_call" and b <= 1):  # a graph adds copies
                comparison.note = (f"{test.baseline} has {column} 0" if not b else
                                   f"{test.baseline} issues one launch per call: none to group")
                out.append(comparison)
                continue
            comparison.figure = m / b
            values, comparison.n = combine([mine, base], lambda x, y: x / y if y else math.nan)
        judged(comparison, values, agrees)
        if speedup and test.baseline == BASELINE:
            comparison.host_region = judge.host_region(row, test.mode, agrees)
        out.append(comparison)
    return out


def speedup(judge, here, env_id, test, agrees) -> list[Comparison]:
    found = two_sided(judge, here, test, "median_s", agrees)
    return largest(found, agrees) if test.aggregate == "max" else found


def ratio_metric(judge, here, env_id, test, agrees) -> list[Comparison]:
    return two_sided(judge, here, test, test.metric, agrees)


def compile_ratio(judge, here, env_id, test, agrees) -> list[Comparison]:
    return two_sided(judge, here, test, "cold_first_call_s", agrees)


def crossover(judge, here, env_id, test, agrees) -> list[Comparison]:
    return two_sided(judge, here, test, "median_s", agrees)


def largest(items: list[Comparison], agrees) -> list[Comparison]:
    """"Up to X": the largest speedup over the claim's cases is the one figure. Settled
    once some case of MIN_PROCESSES or more a side reaches X in every pairing, or when
    none reaches it in any pairing and none rests on one process."""
    measured = [c for c in items if c.figure is not None]
    if not measured:
        return items
    best = max(measured, key=lambda c: c.figure)
    top = Comparison(workload=best.workload, batch=best.batch, axis=best.axis,
                     family=best.family, flops=best.flops, figure=best.figure, lo=best.lo,
                     hi=best.hi, n=best.n, processes=best.processes, evidence=best.evidence,
                     busy=best.busy, single=best.single, paired=best.paired, host_us=best.host_us,
                     host_region=best.host_region,
                     note=f"the largest of {len(measured)} cases")
    top.agrees = agrees(best.figure)
    top.outcome = HOLDS if top.agrees else FAILS
    if any(c.lo is not None and agrees(c.lo) and not c.single for c in measured):
        top.settled = top.agrees is True
        return [top]
    reach = [c for c in measured if c.hi is not None and agrees(c.hi)]
    single = [c for c in measured if c.single]
    top.settled = not reach and not single
    if not top.settled:
        top.unsettled_because = _open(top.agrees, reach, single, len(measured))
    return [top]


def _open(holds: bool, reach: list[Comparison], single: list[Comparison], count: int) -> str:
    from report.ledger.words import points
    if holds:  # it holds on too few processes, and no case settles it
        return (f"no case of {MIN_PROCESSES} or more processes a side reaches the claim in "
                "every pairing of its processes")
    because = []  # it fails, but another case could still turn out to reach the claim
    if reach:
        because.append(f"the range{'s' if len(reach) > 1 else ''} of {points(reach, 3)} "
                       f"reach{'es' if len(reach) == 1 else ''} the claim")
    if single:
        because.append(f"{len(single)} of the {count} cases rest on one process a side "
                       f"({points(single, 3)})")
    return "; ".join(because)
