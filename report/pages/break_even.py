"""Calls after which compiling pays off, with cold and with warm compile times."""

from __future__ import annotations

from report import metrics
from report.dataset import Environment
from report.pages.common import by_backend, eager_of
from report.site import Site
from report.vocabulary import BASELINE_MODE


def render(site: Site) -> None:
    data = site.data

    def build(env: Environment):
        rows = []
        for workload in data.workloads:
            for batch in data.batches(workload):
                eager = eager_of(data, env.env_id, workload, batch)
                for mode in data.modes:
                    result = data.get(env.env_id, workload, mode, batch)
                    if mode == BASELINE_MODE or result is None:
                        continue
                    cold = metrics.compile_time(result, "cold")
                    warm = metrics.compile_time(result, "warm")
                    saving = (eager.median_s - result.median_s
                              if eager and eager.median_s is not None
                              and result.median_s is not None else None)
                    rows.append({
                        "workload": workload, "batch": batch, "mode": mode, "result": result,
                        "eager": eager, "saving": saving, "cold": cold, "warm": warm,
                        "cold_calls": metrics.break_even_calls(cold, eager, result),
                        "warm_calls": metrics.break_even_calls(warm, eager, result),
                    })
        return {"rows": rows} if rows else None

    site.page("analysis/break-even.md", "break-even.md.j2", backends=by_backend(data, build))
