"""Shape streams across torch releases: A/B groups (bench/ab.py) whose workloads are shape
streams, judged as report/releases/ab.py judges fixed shapes, on the stream's own figures.

Every side of a group measured each mode in one fresh process per repeat, and repeat r of
every side ran next to each other on one host (ABBA order). So a step's figure is, per mode
and figure, the median over repeats of new over old; its spread, their smallest and
largest; and the A/A floor, how far a release strayed from itself under a second label (the
largest of r and 1/r). `ab.steps`, given a process's total for the stream's first pass
(compiles included) in place of a paired median, pairs, floors and judges the steps; the p99
of a call once every shape is seen is shown, not judged.
"""

from __future__ import annotations

import statistics
from typing import Any

import pandas as pd

from report.analysis import built_headers, rows
from report.analysis.shown import is_stream
from report.releases import ab
from report.releases.vocabulary import host_text, public_release, release_key
from report.shapes.data import mode_rank, quantile

FIGURES = {"total_s": "total of the stream's first pass, compiles included",
           "p99_s": "p99 of a call once every shape is seen"}
# The figures a step between releases is called on. A stream's p99 comes from one steady pass
# per process, so it lies near that pass's slowest call and swings with any stall of the host;
# three repeats give it no floor to judge against. It is shown per release, not judged.
JUDGED = ("total_s",)
CALLED = ("slower", "faster")


def stream_ab_records(records: pd.DataFrame) -> pd.DataFrame:
    """The isolated records of A/B groups whose workloads are shape streams."""
    if records.empty:
        return records
    found = records[is_stream(records) & (records["process_timing"] == "isolated")]
    return ab.ab_records(found)


def _figures(record: dict[str, Any]) -> dict[str, float | None]:
    """One process's figures, or None for each where it failed or failed the float64 check.
    A first pass that built Inductor's precompiled headers (a machine's first C++ compile
    for that release) has no total to set beside the other side's."""
    if not record["ok"] or record["passed"] is not True or not record["first_pass_s"]:
        return dict.fromkeys(FIGURES)
    total = None if built_headers(record.get("headers_built")) else sum(record["first_pass_s"])
    return {"total_s": total, "p99_s": quantile(record["samples"], 0.99)}


def _processes(found: pd.DataFrame) -> dict[tuple, dict[int, dict]]:
    """(group, label, workload, batch size, mode) -> repeat -> the process's record and figures."""
    out: dict[tuple, dict[int, dict]] = {}
    for record in rows(found):
        key = (record["ab_group"], record["ab_label"], record["workload"],
               record["batch_size"], record["mode"])
        out.setdefault(key, {})[record["repeat"]] = record | _figures(record)
    return out


def _span(values: list[float]) -> dict[str, float] | None:
    if not values:
        return None
    return {"median": statistics.median(values), "lo": min(values), "hi": max(values),
            "n": len(values)}


def _slots(processes: dict[tuple, dict[int, dict]], figure: str) -> pd.DataFrame:
    """Each process's `figure` where it has one, as `ab.slot_medians` gives paired medians,
    so that `ab.steps` pairs, floors and judges it as it does a fixed shape's median."""
    kept = [{"ab_group": group, "ab_label": label, **{c: p[c] for c in ab.CASE},
             "repeat": repeat, "median_s": p[figure]}
            for (group, label, *_), by_repeat in processes.items()
            for repeat, p in by_repeat.items() if p[figure] is not None]
    return pd.DataFrame(kept, columns=["ab_group", "ab_label", *ab.CASE, "repeat", "median_s"])


def groups(records: pd.DataFrame) -> list[dict[str, Any]]:
    """Per A/B group of streams: its releases in version order, its hosts, and per stream
    and mode each release's figures (median and range over its processes, or its failure)
    and each step's ratio, spread, A/A floor and verdict."""
    found = stream_ab_records(records)
    if found.empty:
        return []
    side_rows = ab.sides(found)
    processes = _processes(found)
    judged = {figure: ab.steps(found, _slots(processes, figure)) for figure in JUDGED}
    out = []
    for group, sides in side_rows.groupby("group", sort=False):
        labels = [r["label"] for _, r in sides.sort_values(
            "release", key=lambda s: s.map(lambda r: (release_key(r), r))).iterrows()]
        release_of = dict(zip(sides["label"], sides["release"], strict=True))
        cases = sorted({k[2:] for k in processes if k[0] == group},
                       key=lambda k: (k[0], k[1] or 0, mode_rank(k[2])))
        streams: dict[tuple, list[dict]] = {}
        for workload, batch, mode in cases:
            of = {label: processes.get((group, label, workload, batch, mode), {})
                  for label in labels}
            row = {"mode": mode, "sides": {}, "steps": [], "floors": {}}
            for label, by_repeat in of.items():
                failed = [p for p in by_repeat.values() if p["total_s"] is None]
                row["sides"][label] = {
                    figure: _span([p[figure] for p in by_repeat.values()
                                   if p[figure] is not None]) for figure in FIGURES} | {
                    "processes": len(by_repeat),
                    "failed": [{"status": p["status"] if not p["ok"] else "failed float64 check",
                                "reason": p["reason"]} for p in failed]}
            for figure, table in judged.items():
                mine = table[(table["group"] == group) & (table["workload"] == workload)
                             & (table["mode"] == mode)
                             & (table["batch_size"].isna() if batch is None
                                else table["batch_size"] == batch)]
                floors = mine["floor"].dropna()
                row["floors"][figure] = float(floors.max()) if len(floors) else None
                row["steps"] += [{
                    "figure": figure, "old": public_release(s.old_release),
                    "new": public_release(s.new_release), "median": s.ratio, "lo": s.lo,
                    "hi": s.hi, "n": s.pairs, "floor": None if s.floor != s.floor else s.floor,
                    "verdict": s.verdict} for s in mine.itertuples()]
            streams.setdefault((workload, batch), []).append(row)
        hosts = list(sides["hosts"])
        every_floor = [r["floors"][figure] for rows_ in streams.values() for r in rows_
                       for figure in JUDGED if r["floors"][figure] is not None]
        out.append({
            "group": group, "labels": labels,
            # A side under a second label of its release (an A/A run) is named by both.
            "names": {label: public_release(release_of[label]) if label == public_release(
                release_of[label]) else f"{public_release(release_of[label])} ({label})"
                for label in labels},
            "hosts": host_text(hosts[0]) if all(h == hosts[0] for h in hosts)
            else "several hosts",
            "backend": ", ".join(sorted(set(sides["backend"]))),
            "floor_median": statistics.median(every_floor) if every_floor else None,
            "floor_max": max(every_floor) if every_floor else None,
            "streams": [{"workload": w, "batch_size": b, "modes": m}
                        for (w, b), m in streams.items()]})
    return out
