"""How each figure was measured, on which environments, and the pitfalls met, all
with the numbers taken from the records themselves."""

from __future__ import annotations

from collections import Counter

from report import metrics
from report.dataset import Dataset, Environment
from report.load import Result
from report.pages.common import by_backend, move_summary, repeated_cases
from report.site import Site


def ranges(data: Dataset) -> dict:
    timed = [r for r in data.latest if r.ok and r.timing]
    profiled = [r for r in data.latest if r.ok and r.activity]
    return {
        "warmup_calls": metrics.value_range([r.timing["warmup_calls"] for r in timed]),
        "calls_per_sample": metrics.value_range([r.timing["calls_per_sample"] for r in timed]),
        "count": metrics.value_range([r.timing["count"] for r in timed]),
        "profiled_calls": metrics.value_range([r.activity["profiled_calls"] for r in profiled]),
        "timers": {backend: sorted({r.timing["timer"] for r in timed if r.backend == backend})
                   for backend in data.backends},
    }


def compile_summary(data: Dataset, env: Environment) -> dict | None:
    rows = []
    for mode in data.modes:
        with_both = [r for r in data.results(env_id=env.env_id, mode=mode)
                     if metrics.compile_time(r, "cold") and metrics.compile_time(r, "warm")]
        if not with_both:
            continue
        cold = metrics.middle([r.compile["cold_first_call_s"] for r in with_both])
        warm = metrics.middle([r.compile["warm_first_call_s"] for r in with_both])
        rows.append({"mode": mode, "cases": len(with_both), "cold": cold, "warm": warm,
                     "ratio": cold / warm if warm else None})
    return {"rows": rows} if rows else None


def probe_rows(data: Dataset, results: list[Result], name: str | None = None) -> list[dict]:
    """Probe findings in page order: environment label, then workload, mode, batch."""
    rank = {w: i for i, w in enumerate(data.workloads)}
    modes = {m: i for i, m in enumerate(data.modes)}
    ordered_results = sorted(results, key=lambda r: (
        data.environments[r.env_id].label, rank[r.workload], modes[r.mode],
        r.batch_size or 0))
    return [{"result": r, "probe": probe, **found}
            for r in ordered_results for probe, found in r.probes.items()
            if name is None or probe == name]


def render(site: Site) -> None:
    data = site.data
    compiled = [r for r in data.main if r.ok and r.dynamo]

    def probes(env: Environment):
        rows = probe_rows(data, data.results(env_id=env.env_id))
        return {"rows": rows} if rows else None

    site.page(
        "methodology.md", "methodology.md.j2",
        ranges=ranges(data),
        statuses=dict(sorted(Counter(r.status for r in data.main).items())),
        compile_times=by_backend(data, lambda env: compile_summary(data, env)),
        moves=by_backend(data, lambda env: (
            {"summary": s} if (s := move_summary(repeated_cases(data, env))) else None)),
        probes=by_backend(data, probes),
        held=probe_rows(data, data.main, "held-output-overwrite"),
        mark_step=probe_rows(data, data.main, "cudagraph-mark-step-begin"),
        tf32=probe_rows(data, data.main, "tf32-matmul"),
        recompile_probe=probe_rows(data, data.main, "recompile-on-new-shape"),
        recompiled=[r for r in compiled if r.dynamo["recompiles"] or r.dynamo["graph_breaks"]],
        skipped_graphs=[r for r in compiled if r.dynamo["cudagraph_skips"]],
        compiled_count=len(compiled),
    )
