"""The launch chains: a mode's median latency against the chain length N of the
launch-chain-N workloads, fitted by least squares. The slope (`per_launch_overhead_s`) is
what one more launch and its tiny kernel add; the fixed part (`per_graph_overhead_s`) is
what a call costs whatever its length: under a graph, the cost of launching the graph. It
is read at the shortest chain (its latency less its length times the slope), since an
intercept fitted by least squares rests on the longest chain, where a small relative
error in the slope moves it by more than the fixed cost itself."""

from __future__ import annotations

from report import analysis
from report.ledger.comparison import Comparison, judged
from report.ledger.values import combine, median, slope_and_intercept

FIELDS = {"per_launch_overhead_s": 0, "per_graph_overhead_s": 1}  # which part of the line
WORDS = "{field} of {mode}, fitted over the launch chains"
LAUNCH_PAGE = ("analysis/launch-overhead.md", "cost-per-kernel")


def problems(test: dict) -> list[str]:
    if test.get("field") not in FIELDS:
        return [f"launch-chain field {test.get('field')!r} is not one of {', '.join(FIELDS)}"]
    return []


def chains(judge, here, env_id, test, agrees) -> list[Comparison]:
    found = analysis.per_kernel(judge.env_cases(env_id))
    found = found[(found["mode"] == test.mode) & found["ok"]]
    comparison = Comparison(workload=", ".join(found["workload"]) or "launch chains",
                            batch=None, axis="batch", family="launch-overhead", flops=None,
                            evidence=LAUNCH_PAGE)
    measured = [(float(n), v) for n, v in zip(found["chain"], found["median_s_v"], strict=True)
                if isinstance(v, tuple) and v]
    lengths, sides = [n for n, _ in measured], [v for _, v in measured]
    comparison.processes = tuple(len(s) for s in sides)
    if len(set(lengths)) < 2:
        comparison.note = f"needs {test.mode} on two or more launch-chain-N workloads"
        return [comparison]
    part = FIELDS[test.field]

    shortest = lengths.index(min(lengths))

    def fit(*latencies):
        slope = slope_and_intercept(lengths, latencies)[0]
        return slope if part == 0 else latencies[shortest] - lengths[shortest] * slope

    comparison.figure = fit(*[median(s) for s in sides])
    values, comparison.n = combine(sides, fit)
    judged(comparison, values, agrees)
    return [comparison]
