"""The home page: quick answers from the records, then a speedup-vs-eager heat map and
table per environment."""

from __future__ import annotations

from report import answers, charts
from report.analysis import BASELINE, Environment, rows
from report.site import Site

PAGE = "index.md"


def heat_cell(cell: dict | None) -> charts.HeatCell:
    if cell is None:
        return charts.HeatCell()
    if not cell["ok"]:
        return charts.HeatCell(label=cell["status"], measured=True)
    if cell["speedup"] is None:
        return charts.HeatCell(label="no eager", measured=True)
    if answers.outlier(cell["speedup_lo"], cell["speedup_hi"]):
        detail = "outlier process"  # a range like 0.00–480 says nothing about the case
    else:
        detail = (f"{cell['speedup_lo']:.2f}–{cell['speedup_hi']:.2f}"
                  if (cell["pairings"] or 0) >= 2 else "")
    return charts.HeatCell(speedup=cell["speedup"], measured=True, detail=detail)


def render(site: Site) -> None:
    data = site.data
    # Every environment's rows from one conversion of the table: converting each
    # environment's part on its own cost a pass over every column per environment.
    of_env: dict[str, dict[str, dict[str, dict]]] = {}
    for r in rows(data.representative()):
        of_env.setdefault(r["env_id"], {}).setdefault(r["workload"], {})[r["mode"]] = r

    charted = charts.Charted()

    def build(env: Environment):
        found = of_env.get(env.env_id)
        if not found:
            return None
        grid = []
        for workload in data.workloads:
            cells = found.get(workload)
            if cells:
                batch = data.representative_batch(workload)
                label = f"{workload} (batch {batch})" if data.batched(workload) else workload
                grid.append({"workload": workload, "batch": batch, "label": label,
                             "eager": cells.get(BASELINE), "cells": cells})
        title = f"Speedup vs eager\n{env.label}"
        if not charted.draws(env.backend):
            return {"rows": grid, "chart": None, "title": title}
        target, link = site.chart_path(PAGE, f"overview/speedup-{env.env_id}")
        charts.heatmap(
            target, title=title, rows=[row["label"] for row in grid], columns=data.modes,
            cells={(row["label"], mode): heat_cell(row["cells"].get(mode))
                   for row in grid for mode in data.modes},
            colorbar_label="speedup vs eager (median latency ratio)")
        return {"rows": grid, "chart": link, "title": title}

    batched = [w for w in data.workloads if data.batched(w)]
    site.page(PAGE, "index.md.j2", backends=site.by_backend(build), charted=charted,
              verdicts=answers.verdict_table(data),
              answers=answers.answers(data, answers.judged(data)),
              gpu=answers.conditions(data), precision=answers.precision(data),
              calls_answered=answers.CALLS_ANSWERED,
              representative={w: data.representative_batch(w) for w in batched})
