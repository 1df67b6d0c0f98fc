"""How each figure was measured, on which environments, and the pitfalls met, all
with the numbers taken from the records themselves. Every probe result is on a page per
environment (they grow with every case measured)."""

from __future__ import annotations

import pandas as pd

from report import analysis
from report.analysis import DTYPE, Environment, of_env, ordered, processes, rows
from report.pages import stability
from report.releases import ab
from report.site import Site

# The dtype whose float64 tolerance the page justifies by what eager itself gets in it.
LOW_PRECISION = "bfloat16"

# The concurrency check's subset: launch-bound and device-bound cases, in eager, CUDA-graph
# trees and manual CUDA graphs; the page prints the commands that measure it.
CONCURRENCY_CHECK = {"workloads": ("matmul-512", "launch-chain-100", "conv2d-block"),
                     "modes": ("eager", "reduce-overhead", "cuda-graph"),
                     "alone": analysis.ALONE_TAG, "busy": analysis.BUSY_TAG, "repeats": 3}


def probes_page(env_id: str) -> str:
    return f"analysis/probes/{env_id}.md"


def probe_counts(found) -> list[dict]:
    """Per probe, in name order: how many results, and in which modes."""
    return [{"probe": name, "results": len(group),
             "modes": sorted(set(group["mode"]), key=analysis.mode_rank)}
            for name, group in found.groupby("probe", sort=True)]


def recompile_summary(compiled) -> list[dict]:
    """Per workload and mode with a recompile or graph break in a timed run: in how many
    cases and environments, and the most of each that one case recorded. (One entry per
    case made a paragraph that grew with every case measured.)"""
    hit = compiled[(compiled["recompiles"] > 0) | (compiled["graph_breaks"] > 0)]
    out = hit.groupby(["workload", "mode"], sort=False).agg(
        cases=("env_id", "size"), environments=("env_id", "nunique"),
        recompiles=("recompiles", "max"), graph_breaks=("graph_breaks", "max")).reset_index()
    return rows(ordered(out.assign(batch_size=None)))


def skip_summary(compiled) -> list[dict]:
    """Per backend, mode and recorded reasons: the compiled cases of a CUDA-graph mode
    that ran without CUDA graphs, in how many workloads and environments."""
    hit = compiled[compiled["cudagraph_skips"] > 0]
    hit = hit.assign(reasons=hit["skip_reasons"].map(lambda found: "; ".join(found or ())))
    out = hit.groupby(["backend", "mode", "reasons"], sort=False).agg(
        cases=("env_id", "size"), workloads=("workload", "nunique"),
        environments=("env_id", "nunique")).reset_index()
    return rows(out.sort_values(["backend", "mode"], key=lambda c: c.map(analysis.mode_rank)
                                if c.name == "mode" else c, kind="stable"))


def _why_unchecked(record: dict) -> str:
    """Why a process has no float64 check: its failure, or the probe that says so."""
    if record["reason"]:
        return f"{record['status']}: {record['reason']}"
    for probe in record["probes"] or ():
        if probe.name == "float64-reference":
            return probe.summary
    return "no float64 check recorded"


def _why_failed(record: dict) -> str:
    """Why a process failed its float64 check: its error over the tolerance, and any note
    the check left (a non-finite output, a wrong shape)."""
    notes = [p.summary for p in record["probes"] or () if p.name == "correctness"]
    return "; ".join([f"relative error {record['rel_error']:.2e} above the tolerance "
                      f"{record['tolerance']:.2e}", *filter(None, notes)])


def tolerance_table(records: pd.DataFrame, labels: dict[str, str],
                    dtype: str = LOW_PRECISION) -> dict:
    """Per environment and workload measured in `dtype`: eager's relative error against
    float64 over its processes (`eager_lo`, `eager_hi`, `eager_n`), the tolerance the
    records applied (`tolerances`), the headroom (tolerance over eager's largest error), and
    how many of the dtype's processes (isolated and paired, every mode) passed, failed or
    had no check. `failed` and `unchecked` list those processes with why."""
    every = analysis.latest(records)
    mine = every[(every[DTYPE] == dtype) & every["tag"].str.match(analysis.PROCESS_TAGS)]
    mine = mine.assign(label=mine["env_id"].map(labels))
    out, failed, unchecked = [], [], []
    for (label, workload), group in mine.groupby(["label", "workload"], sort=True):
        checked = group[group["passed"].notna()]
        eager = checked.loc[checked["mode"] == analysis.BASELINE, "rel_error"]
        tolerances = sorted(set(checked["tolerance"]))
        out.append({"label": label, "workload": workload,
                    "eager_lo": eager.min() if len(eager) else None,
                    "eager_hi": eager.max() if len(eager) else None, "eager_n": len(eager),
                    "tolerances": tolerances,
                    "headroom": min(tolerances) / eager.max()
                    if len(eager) and tolerances and eager.max() > 0 else None,
                    "passed": int(checked["passed"].astype(bool).sum()),
                    "failed": int((~checked["passed"].astype(bool)).sum()),
                    "unchecked": len(group) - len(checked)})
        for r in rows(ordered(group, "process_timing", "repeat")):
            where = {"label": label, "workload": workload, "mode": r["mode"],
                     "batch_size": r["batch_size"], "timing": r["process_timing"],
                     "repeat": r["repeat"], "source": r["source"]}
            if r["passed"] is None:
                unchecked.append({**where, "why": _why_unchecked(r)})
            elif not r["passed"]:
                failed.append({**where, "why": _why_failed(r)})
    return {"dtype": dtype, "rows": out, "failed": failed, "unchecked": _counted(unchecked)}


def _counted(found: list[dict]) -> list[dict]:
    """One entry per environment, workload, batch, mode and reason, with its `processes`:
    one reason repeated process after process made a list as long as the runs."""
    grouped: dict[tuple, dict] = {}
    for f in found:
        key = (f["label"], f["workload"], f["batch_size"], f["mode"], f["why"])
        grouped.setdefault(key, {**f, "processes": 0})["processes"] += 1
    return list(grouped.values())


def span(values) -> tuple | None:
    values = values.dropna()
    return (int(values.min()), int(values.max())) if len(values) else None


def render(site: Site) -> None:
    data = site.data
    procs = processes(data.shown)
    timed = procs[procs["ok"]]
    found = analysis.probes(data.shown)
    labels = {env_id: env.label for env_id, env in data.environments.items()}
    found = found.assign(label=found["env_id"].map(labels)).sort_values("label", kind="stable")
    compiled = data.cases[data.cases["ok"] & data.cases["unique_graphs"].notna()]
    summary = analysis.compile_summary(data.cases)
    costs = analysis.run_costs(data.records).assign(
        first_at=lambda d: d["first_at"].dt.strftime("%Y-%m-%d"))
    repeated = analysis.spreads(data.cases)
    alone = analysis.concurrency(data.shown)
    # env_repeated: a side resting on one process reads "single run", it has no spread.
    alone = alone.assign(label=alone["env_id"].map(labels), env_repeated=True)
    summary_of = {side: {"compared": int(alone[f"measured_{side}"].sum()),
                         "within": int(alone[f"overlap_{side}"].fillna(False).astype(bool).sum())}
                  for side in analysis.CONCURRENT_SIDES}
    checked = alone[alone["measured_busy"]]
    sessions = checked.groupby("label", sort=False).agg(
        first_at_alone=("first_at_alone", "min"), first_at_busy=("first_at_busy", "min"),
        threads_alone=("threads_alone", "max"), threads_busy=("threads_busy", "max"))
    sessions = sessions.reset_index().assign(
        first_at_alone=lambda d: d["first_at_alone"].dt.strftime("%Y-%m-%d %H:%M"),
        first_at_busy=lambda d: d["first_at_busy"].dt.strftime("%Y-%m-%d %H:%M"))

    def of(table, env: Environment):
        return of_env(table, env.env_id)

    def named(name: str) -> list[dict]:
        """One row per environment, mode, finding and value, naming every workload and
        batch that gave it: the same finding case after case made the page too long."""
        grouped: dict[tuple, dict] = {}
        for r in rows(found[found["probe"] == name]):
            key = (r["label"], r["mode"], r["summary"], str(r["value"]))
            entry = grouped.setdefault(key, {**r, "points": []})
            point = (r["workload"], r["batch_size"])
            if point not in entry["points"]:
                entry["points"].append(point)
        return list(grouped.values())

    def probes_of(env: Environment) -> dict | None:
        here = of(found, env)
        if here.empty:
            return None
        site.page(probes_page(env.env_id), "probes-env.md.j2", env=env, rows=rows(here))
        return {"counts": probe_counts(here), "page": probes_page(env.env_id)}

    checked = data.paired[data.paired["passed"].notna()]
    wrong = checked[checked["passed"] == False]  # noqa: E712 - a column of booleans
    ro = checked[checked["mode"] == "reduce-overhead"]
    paired = {"processes": data.paired["group"].nunique(),
              "points": len(data.paired.drop_duplicates(analysis.POINT)),
              "checked": len(checked), "correct": int(checked["passed"].sum()),
              "failed": rows(wrong.drop_duplicates(["workload", "mode"])),
              "ro_checked": len(ro), "ro_correct": int(ro["passed"].sum())}
    site.page(
        "methodology.md", "methodology.md.j2",
        paired=paired, bounds={"launch": analysis.LAUNCH_BOUND, "device": analysis.DEVICE_BOUND},
        ranges={"warmup_calls": span(timed["warmup_calls"]),
                "calls_per_sample": span(timed["calls_per_sample"]),
                "count": span(timed["count"]), "profiled_calls": span(timed["profiled_calls"]),
                "timers": {backend: sorted(set(timed.loc[timed["backend"] == backend, "timer"]))
                           for backend in data.backends}},
        statuses=dict(sorted(procs["status"].value_counts().items())),
        compile_times=site.by_backend(lambda env: (
            {"rows": rows(of(summary, env))} if len(of(summary, env)) else None)),
        moves=site.by_backend(lambda env: (
            {"summary": analysis.move_summary(of(repeated, env))} if len(of(repeated, env))
            else None)),
        probes=site.by_backend(probes_of),
        held=named("held-output-overwrite"), mark_step=named("cudagraph-mark-step-begin"),
        tf32=named("tf32-matmul"), recompile_probe=named("recompile-on-new-shape"),
        recompiled=recompile_summary(compiled), skipped_graphs=skip_summary(compiled),
        compiled_count=len(compiled),
        costs=site.by_backend(lambda env: (
            {"rows": rows(of(costs, env))} if len(of(costs, env)) else None)),
        ab_costs=rows(ab.run_costs(data.records).assign(
            started=lambda d: d["started"].dt.strftime("%Y-%m-%d %H:%M"))),
        concurrency={"check": CONCURRENCY_CHECK, "rows": rows(alone), "summary": summary_of,
                     "sessions": rows(sessions)},
        low_precision=tolerance_table(data.records, labels),
        cpu_agreement=[{**a, "page": stability.cpu_page(a["env"].env_id)}
                       for a in stability.cpu_agreement(data)],
        moved=analysis.MOVED,
    )
