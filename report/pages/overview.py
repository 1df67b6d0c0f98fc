"""The home page: a speedup-vs-eager heat map and table per environment."""

from __future__ import annotations

from report import charts, metrics
from report.dataset import Dataset, Environment
from report.pages import claims
from report.pages.common import by_backend, eager_of, workload_label
from report.site import Site

PAGE = "index.md"


def speedup_grid(data: Dataset, env: Environment) -> list[dict]:
    """Rows of workloads at their representative batch; one cell per mode."""
    rows = []
    for workload in data.workloads:
        batch = data.representative_batch(workload)
        eager = eager_of(data, env.env_id, workload, batch)
        cells = []
        for mode in data.modes:
            result = data.get(env.env_id, workload, mode, batch)
            cells.append({"mode": mode, "result": result,
                          "speedup": metrics.speedup(eager, result)})
        if any(cell["result"] for cell in cells):
            rows.append({"workload": workload, "batch": batch, "eager": eager,
                         "label": workload_label(data, workload, batch), "cells": cells})
    return rows


def heat_cell(cell: dict) -> charts.HeatCell:
    result = cell["result"]
    if result is None:
        return charts.HeatCell()
    if not result.ok:
        return charts.HeatCell(label=result.status, measured=True)
    if cell["speedup"] is None:
        return charts.HeatCell(label="no eager", measured=True)
    return charts.HeatCell(speedup=cell["speedup"], measured=True)


def render(site: Site) -> None:
    data = site.data

    def build(env: Environment):
        rows = speedup_grid(data, env)
        if not rows:
            return None
        target, link = site.chart_path(PAGE, f"overview/speedup-{env.env_id}")
        title = f"Speedup vs eager\n{env.label}"
        charts.heatmap(
            target, title=title, rows=[row["label"] for row in rows], columns=data.modes,
            cells={(row["label"], cell["mode"]): heat_cell(cell)
                   for row in rows for cell in row["cells"]},
            colorbar_label="speedup vs eager (median latency ratio)")
        return {"rows": rows, "chart": link, "title": title}

    batched = [w for w in data.workloads if data.batches(w) != [None]]
    site.page(PAGE, "index.md.j2", backends=by_backend(data, build),
              verdicts=claims.verdict_table(data, claims.sections(data)),
              representative={w: data.representative_batch(w) for w in batched})
