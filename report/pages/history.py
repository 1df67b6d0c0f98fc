"""Latency across torch releases, per machine (asv's history view): each A/B group as one
connected series (its releases measured alternately on one host in one run), and the
older runs, one release per run, as points apart that no line joins."""

from __future__ import annotations

import hashlib
from pathlib import Path

import matplotlib
import pandas as pd
from matplotlib.lines import Line2D

from report import charts
from report.analysis import mode_rank, ordered, rows, workload_rank
from report.releases import ab, history, vocabulary
from report.releases.vocabulary import LINEAGE_FIELDS, VERSION_FIELDS, public_release
from report.site import Site

PAGE = "analysis/history.md"
# Where the README shows how a machine with a GPU measures a release (the repository of
# site_url in mkdocs.yml; the anchor is the README heading "Comparing releases").
GPU_RECIPE = "https://github.com/torch-compile-atlas/torch-compile-atlas#comparing-releases"
GROUP_STYLES = ("-", "--", ":", "-.")
# charts._key hashes charts.py only; this chart is drawn here, so a change here redraws it.
_CODE = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()


def chart_batch(found: pd.DataFrame) -> int | None:
    """Batch 1 where measured, else the smallest; None for unbatched workloads."""
    batches = sorted(int(b) for b in found["batch_size"].dropna().unique())
    return None if not batches else (1 if 1 in batches else batches[0])


def _at(found: pd.DataFrame, batch: int | None) -> pd.DataFrame:
    return found[found["batch_size"].isna()] if batch is None else found[found["batch_size"] == batch]


def history_chart(path: Path, *, title: str, ylabel: str, releases: list[str],
                  older: dict[str, list[charts.Point]],
                  groups: dict[str, dict[str, list[charts.Point]]]) -> None:
    """Older runs as hollow points that no line joins (each release ran apart); each A/B
    group as one line per mode through its releases, one line style per group."""
    key = charts._key("history_chart", {"title": title, "ylabel": ylabel, "releases": releases,
                                        "older": older, "groups": groups, "code": _CODE})
    if charts._current(path, key):
        return
    modes = sorted({*older, *(m for g in groups.values() for m in g)}, key=mode_rank)
    with matplotlib.rc_context(charts.STYLE):
        fig = charts._figure(6.4, 4.2)
        ax = fig.add_subplot()
        for mode, points in older.items():
            _errorbar(ax, points, dict(color=charts.mode_color(mode), marker="o", linestyle="none",
                                       markerfacecolor="white", markersize=4.5))
        for series, style in zip(groups.values(), GROUP_STYLES * 8, strict=False):
            for mode, points in series.items():
                _errorbar(ax, points, dict(color=charts.mode_color(mode), marker="o",
                                           markersize=3.5, linestyle=style, linewidth=1.4))
        ax.set_xticks(range(len(releases)), releases)
        ax.set_xlim(-0.4, len(releases) - 0.6)
        values = [p.y for s in [*older.values(), *(v for g in groups.values() for v in g.values())]
                  for p in s if p.y > 0]
        log = bool(values) and max(values) > 5 * min(values)
        if log:
            ax.set_yscale("log")
            charts._plain_log_ticks(ax.yaxis)
            ylabel += ", log scale"
        # One process far off the others (a disturbed turn) would flatten every line: its
        # bar is cut at the edge and marked, the point itself always shown.
        every = {(group, mode): points for group, series in [(None, older), *groups.items()]
                 for mode, points in series.items()}
        charts._clip_outliers(ax, every, {key: charts.mode_color(key[1]) for key in every}, log)
        fig.suptitle(title)
        ax.set_xlabel("torch release")
        ax.set_ylabel(ylabel)
        handles = [Line2D([], [], color=charts.mode_color(m), linewidth=1.4, label=m) for m in modes]
        if older:
            handles.append(Line2D([], [], color="#555555", marker="o", linestyle="none",
                                  markerfacecolor="white", label="older runs, each apart"))
        handles += [Line2D([], [], color="#555555", linestyle=style, label=f"A/B group {group}")
                    for group, style in zip(groups, GROUP_STYLES * 8, strict=False)]
        columns = max(1, min(len(handles), 90 // (max(len(h.get_label()) for h in handles) + 6)))
        fig.legend(handles=handles, loc="outside lower center", ncols=columns)
        charts._save(fig, path, title, key)


def _errorbar(ax, points: list[charts.Point], style: dict) -> None:
    low = [p.y - (p.low if p.low is not None else p.y) for p in points]
    high = [(p.high if p.high is not None else p.y) - p.y for p in points]
    ax.errorbar([p.x for p in points], [p.y for p in points], yerr=[low, high], capsize=2.5,
                **style)


def _batch_key(value) -> int | None:
    return None if pd.isna(value) else int(value)


def _ab_table(found: pd.DataFrame, releases: list[str], steps: pd.DataFrame) -> list[dict]:
    """`_table` of one group's points, each cell after the first release with its step from
    the release before it (`ab.steps`: the ratio new/old, the verdict and the case's A/A
    floor), the figures the changes page shows for the same case."""
    by_cell = {(r.new_release, r.mode, _batch_key(r.batch_size)): {
        "old": public_release(r.old_release), "ratio": r.ratio, "verdict": r.verdict,
        "floor": ab.factor(r.floor)} for r in steps.itertuples()}
    table = _table(found, releases)
    for row in table:
        row["cells"] = [None if c is None else
                        {**c, "step": by_cell.get((c["release"], row["mode"], row["batch_size"]))}
                        for c in row["cells"]]
    return table


def workload_view(site: Site, lineage: dict, profile: str, workload: str, found: pd.DataFrame,
                  ab_found: pd.DataFrame, releases: list[str], several_profiles: bool,
                  steps: pd.DataFrame) -> dict:
    batch = chart_batch(pd.concat([found[["batch_size"]], ab_found[["batch_size"]]]))
    older_at = _at(found, batch)
    older_at = older_at[older_at["ok"].astype(bool)]
    ab_at = _at(ab_found, batch)
    unit, scale = charts.time_unit([*older_at["median_s"], *ab_at["median_s"]])
    position = {r: i for i, r in enumerate(releases)}
    older = {mode: [charts.case_point(position[public_release(r["release"])], r, scale)
                    for r in rows(group.sort_values("position"))]
             for mode, group in sorted(older_at.groupby("mode"), key=lambda g: mode_rank(g[0]))}
    groups = {}
    for group, of_group in ab_at.groupby("group", sort=False):
        of_group = of_group.assign(_x=of_group["release"].map(lambda r: position[public_release(r)]))
        groups[group] = {mode: [charts.case_point(r["_x"], r, scale)
                                for r in rows(part.sort_values("_x"))]
                         for mode, part in sorted(of_group.groupby("mode"),
                                                  key=lambda g: mode_rank(g[0]))}
    name = f"history/{lineage['lineage']}-{profile}-{workload}"
    target, link = site.chart_path(PAGE, name)
    title = (f"{workload}" + (f" (batch {batch})" if batch is not None else "")
             + f"\n{lineage['lineage_label']}" + (f" · {profile} profile" if several_profiles else ""))
    history_chart(target, title=title, ylabel=f"median latency per call ({unit})",
                  releases=releases, older=older, groups=groups)
    return {"workload": workload, "profile": profile, "chart": link, "title": title,
            "chart_batch": batch, "rows": _table(found, lineage["older_releases"]),
            "ab_tables": [{"group": g, "releases": vocabulary.sort_releases(part["release"].unique()),
                           "rows": _ab_table(part, vocabulary.sort_releases(part["release"].unique()),
                                             steps[(steps["group"] == g)
                                                   & (steps["workload"] == workload)
                                                   & (steps["profile"] == profile)])}
                          for g, part in ab_found.groupby("group", sort=False)]}


def _table(found: pd.DataFrame, releases: list[str]) -> list[dict]:
    table = []
    for (b, mode), group in found.groupby(["batch_size", "mode"], dropna=False, sort=False):
        cells = {r["release"]: r for r in rows(group)}
        table.append({"batch_size": None if pd.isna(b) else int(b), "mode": mode,
                      "cells": [cells.get(r) for r in releases]})
    table.sort(key=lambda r: ((0, 0) if r["batch_size"] is None else (1, r["batch_size"]),
                              mode_rank(r["mode"])))
    return table


def render(site: Site) -> None:
    older_records = history.site_older(site.data)
    envs = history.releases(older_records)
    # Releases of different environments share a table: a figure from one process says
    # "single run" itself rather than relying on a note per environment.
    found = history.history(older_records, history.site_case_table(site.data)).assign(
        env_repeated=True)
    points = ab.site_points(site.data).assign(ok=True, status="ok", env_repeated=True)
    steps = ab.site_steps(site.data)
    side_rows = ab.site_sides(site.data)
    labels = dict(zip(envs["lineage"], envs["lineage_label"], strict=True))
    labels |= {r["lineage"]: f"{r['machine']} · {r['backend']}" for _, r in side_rows.iterrows()
               if r["lineage"] not in labels}
    lineages, single = [], []
    for lineage in sorted(labels, key=lambda x: labels[x]):
        of = envs[envs["lineage"] == lineage].sort_values("position")
        shown = found[(found["lineage"] == lineage) & (found["in_releases"] >= 2)]
        ab_shown = points[points["lineage"] == lineage]
        if shown.empty and ab_shown.empty:
            # A lineage of A/B groups alone with nothing to draw (eager only): its sides.
            listed = of if not of.empty else side_rows[side_rows["lineage"] == lineage]
            single.append({"lineage": {"lineage_label": labels[lineage],
                                       "backend": listed["backend"].iloc[0]},
                           "releases": rows(listed)})
            continue
        releases = vocabulary.sort_releases({*map(public_release, of["release"]),
                                          *map(public_release, ab_shown["release"])})
        info = {"lineage": lineage, "lineage_label": labels[lineage],
                "older_releases": list(of["release"])}
        profiles = sorted({*shown["profile"], *ab_shown["profile"]})
        workloads = []
        for profile in profiles:
            older_of = shown[shown["profile"] == profile]
            ab_of = ab_shown[ab_shown["profile"] == profile]
            for workload in sorted({*older_of["workload"], *ab_of["workload"]}, key=workload_rank):
                workloads.append(workload_view(
                    site, info, profile, workload,
                    ordered(older_of[older_of["workload"] == workload]),
                    ordered(ab_of[ab_of["workload"] == workload]), releases, len(profiles) > 1,
                    steps))
        left_out = found[(found["lineage"] == lineage) & (found["in_releases"] < 2)]
        groups = [{"group": g, "host": vocabulary.host_text(part["hosts"].iloc[0]),
                   "sides": ", ".join(f"{r.label} (torch {r.release})" for r in part.itertuples())}
                  for g, part in side_rows[side_rows["lineage"] == lineage].groupby(
                      "group", sort=False)]
        lineages.append({"lineage": info, "releases": rows(of), "workloads": workloads,
                         "groups": groups, "several_profiles": len(profiles) > 1,
                         "left_out": len(left_out)})
    site.page(PAGE, "history.md.j2", lineages=lineages, newest=ab.release_answer(site.data),
              single=single, gpu_recipe=GPU_RECIPE,
              lineage_fields=LINEAGE_FIELDS, version_fields=VERSION_FIELDS)
