"""The launch chains: a mode's median latency against the chain length N of the
launch-chain-N workloads, fitted by least squares. The slope (`per_launch_overhead_s`) is
what one more launch and its tiny kernel add; the fixed part (`per_graph_overhead_s`) is
what a call costs whatever its length: under a graph, the cost of launching the graph. It
is read at the shortest chain (its latency less its length times the slope), since an
intercept fitted by least squares rests on the longest chain, where a small relative
error in the slope moves it by more than the fixed cost itself."""

from __future__ import annotations

from report.ledger.comparison import Comparison, judged
from report.ledger.values import combine, median, slope_and_intercept

FIELDS = {"per_launch_overhead_s": 0, "per_graph_overhead_s": 1}  # which part of the line
WORDS = "{field} of {mode}, fitted over the launch chains"
LAUNCH_PAGE = ("analysis/launch-overhead.md", "cost-per-kernel")


def problems(test: dict) -> list[str]:
    if test.get("field") not in FIELDS:
        return [f"launch-chain field {test.get('field')!r} is not one of {', '.join(FIELDS)}"]
    return []


def _line(judge, env_id: str, mode: str, field: str, comparison: Comparison):
    """`mode`'s per-process latencies on each launch chain and the function that fits its
    `field` to one latency per chain; None (with the comparison's note) under two chains."""
    found = judge.per_kernel(env_id)
    if not found.empty:  # most environments ran no launch chain: no selection to make
        found = found[(found["mode"] == mode) & found["ok"]]
    measured = [(float(n), v) for n, v in zip(found["chain"], found["median_s_v"], strict=True)
                if isinstance(v, tuple) and v]
    lengths, sides = [n for n, _ in measured], [v for _, v in measured]
    if len(set(lengths)) < 2:
        comparison.note = f"needs {mode} on two or more launch-chain-N workloads"
        return None
    part = FIELDS[field]
    shortest = lengths.index(min(lengths))

    def fit(*latencies):
        slope = slope_and_intercept(lengths, latencies)[0]
        return slope if part == 0 else latencies[shortest] - lengths[shortest] * slope

    return sides, fit, ", ".join(found["workload"])


def _comparison() -> Comparison:
    return Comparison(workload="launch chains", batch=None, axis="batch",
                      family="launch-overhead", flops=None, evidence=LAUNCH_PAGE)


def chains(judge, here, env_id, test, agrees) -> list[Comparison]:
    comparison = _comparison()
    line = _line(judge, env_id, test.mode, test.field, comparison)
    if line is None:
        return [comparison]
    sides, fit, comparison.workload = line
    comparison.processes = tuple(len(s) for s in sides)
    comparison.figure = fit(*[median(s) for s in sides])
    values, comparison.n = combine(sides, fit)
    judged(comparison, values, agrees)
    return [comparison]


def ratio_problems(test: dict) -> list[str]:
    launches = test.get("launches")
    if launches is not None and (not isinstance(launches, int) or launches < 1):
        return [f"launches {launches!r} is not a positive whole number"]
    return problems(test)


def ratio(judge, here, env_id, test, agrees) -> list[Comparison]:
    """The mode's fitted `field` over the baseline's, both over the same launch chains: a
    call's fixed cost (per_graph_overhead_s) set against another mode's, apart from the
    work per kernel that fusion changes. With `launches`, over the baseline's per-launch
    overhead times that many launches: what the mode's call costs against launching as
    many kernels one by one."""
    comparison = _comparison()
    mine = _line(judge, env_id, test.mode, test.field, comparison)
    base = _line(judge, env_id, test.baseline,
                 "per_launch_overhead_s" if test.launches else test.field, comparison)
    if mine is None or base is None:
        return [comparison]
    (mode_sides, mode_fit, comparison.workload), (base_sides, base_fit, _) = mine, base
    comparison.processes = (min(len(s) for s in mode_sides), min(len(s) for s in base_sides))
    split = len(mode_sides)

    def of(*latencies):
        below = base_fit(*latencies[split:]) * (test.launches or 1)
        return mode_fit(*latencies[:split]) / below if below else float("nan")

    comparison.figure = of(*[median(s) for s in (*mode_sides, *base_sides)])
    values, comparison.n = combine([*mode_sides, *base_sides], of)
    judged(comparison, values, agrees)
    return [comparison]
