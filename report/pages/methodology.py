"""How each figure was measured, on which environments, and the pitfalls met, all
with the numbers taken from the records themselves. Every probe result is on a page per
environment (they grow with every case measured)."""

from __future__ import annotations

from report import analysis
from report.analysis import Environment, of_env, ordered, processes, rows
from report.site import Site

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
        concurrency={"check": CONCURRENCY_CHECK, "rows": rows(alone), "summary": summary_of,
                     "sessions": rows(sessions)},
    )
