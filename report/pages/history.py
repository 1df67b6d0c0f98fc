"""Latency and speedup over eager across torch releases, per machine (asv's history view)."""

from __future__ import annotations

import pandas as pd

from report import charts, history
from report.analysis import mode_rank, ordered, rows, workload_rank
from report.compare import LINEAGE_FIELDS, VERSION_FIELDS
from report.site import Site

PAGE = "analysis/history.md"
# Where the README shows how a machine with a GPU measures a release (the repository of
# site_url in mkdocs.yml; the anchor is the README heading "Comparing releases").
GPU_RECIPE = "https://github.com/torch-compile-atlas/torch-compile-atlas#comparing-releases"


def chart_batch(found: pd.DataFrame) -> int | None:
    """Batch 1 where measured, else the smallest; None for unbatched workloads."""
    batches = sorted(int(b) for b in found["batch_size"].dropna().unique())
    return None if not batches else (1 if 1 in batches else batches[0])


def workload_view(site: Site, lineage: pd.Series, profile: str, workload: str,
                  found: pd.DataFrame, releases: list[str], several_profiles: bool) -> dict:
    batch = chart_batch(found)
    at = found[found["batch_size"].isna()] if batch is None else found[found["batch_size"] == batch]
    timed = at[at["ok"].astype(bool)]
    unit, scale = charts.time_unit(list(timed["median_s"]))
    position = {r: i for i, r in enumerate(releases)}
    series = {mode: [charts.case_point(position[r["release"]], r, scale)
                     for r in rows(group.sort_values("position"))]
              for mode, group in sorted(timed.groupby("mode"), key=lambda g: mode_rank(g[0]))}
    name = f"history/{lineage['lineage']}-{profile}-{workload}"
    target, link = site.chart_path(PAGE, name)
    title = (f"{workload}" + (f" (batch {batch})" if batch is not None else "")
             + f"\n{lineage['lineage_label']}" + (f" · {profile} profile" if several_profiles else ""))
    charts.release_chart(target, title=title, ylabel=f"median latency per call ({unit})",
                         releases=releases, series=series)
    table = []
    for (b, mode), group in found.groupby(["batch_size", "mode"], dropna=False, sort=False):
        cells = {r["release"]: r for r in rows(group)}
        table.append({"batch_size": None if pd.isna(b) else int(b), "mode": mode,
                      "cells": [cells.get(r) for r in releases]})
    table.sort(key=lambda r: ((0, 0) if r["batch_size"] is None else (1, r["batch_size"]),
                              mode_rank(r["mode"])))
    return {"workload": workload, "profile": profile, "chart": link, "title": title,
            "chart_batch": batch, "rows": table}


def render(site: Site) -> None:
    records = site.data.records
    envs = history.releases(records)
    # Releases of different environments share a table: a figure from one process says
    # "single run" itself rather than relying on a note per environment.
    found = history.history(records, history.site_case_table(site.data)).assign(env_repeated=True)
    lineages, single = [], []
    order = envs.drop_duplicates("lineage").sort_values(["backend", "lineage_label"])
    for _, lineage in order.iterrows():
        of = envs[envs["lineage"] == lineage["lineage"]].sort_values("position")
        releases = list(of["release"])
        shown = found[(found["lineage"] == lineage["lineage"]) & (found["in_releases"] >= 2)]
        if shown.empty:
            single.append({"lineage": lineage, "releases": rows(of)})
            continue
        profiles = sorted(shown["profile"].unique())
        workloads = []
        for profile in profiles:
            of_profile = shown[shown["profile"] == profile]
            for workload in sorted(of_profile["workload"].unique(), key=workload_rank):
                workloads.append(workload_view(
                    site, lineage, profile, workload,
                    ordered(of_profile[of_profile["workload"] == workload]), releases,
                    len(profiles) > 1))
        left_out = found[(found["lineage"] == lineage["lineage"]) & (found["in_releases"] < 2)]
        lineages.append({"lineage": lineage, "releases": rows(of), "workloads": workloads,
                         "several_profiles": len(profiles) > 1, "left_out": len(left_out)})
    site.page(PAGE, "history.md.j2", lineages=lineages, single=single, gpu_recipe=GPU_RECIPE,
              lineage_fields=LINEAGE_FIELDS, version_fields=VERSION_FIELDS)
