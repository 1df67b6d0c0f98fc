"""Launch overhead and CUDA graphs: per-kernel cost, per-call floor, overhead anatomy,
and the batch size where CUDA graphs stop helping. The page sums up the anatomy and the
crossovers per environment; their cases are on one page per environment (every case on
one page neared 300 KB of HTML as the GPU profiles filled in)."""

from __future__ import annotations

from report import analysis, charts, formatting
from report.analysis import Environment, rows
from report.site import Site

PAGE = "analysis/launch-overhead.md"


def env_page(env_id: str) -> str:
    return f"analysis/launch-overhead/{env_id}.md"


def by_env(table) -> dict[str, list[dict]]:
    """The rows of `table` per environment, from one conversion of the whole table: a
    filter of the table per environment made the page grow with their square."""
    out: dict[str, list[dict]] = {}
    for r in rows(table):
        out.setdefault(r["env_id"], []).append(r)
    return out


def per_kernel_view(site: Site, env: Environment, found: list[dict],
                    charted: charts.Charted) -> dict | None:
    if not found:
        return None
    lengths = sorted({r["chain"] for r in found})
    table_rows = [{"mode": mode, "cells": [next((r for r in found if r["mode"] == mode
                                                 and r["chain"] == n), None) for n in lengths]}
                  for mode in site.data.modes if any(r["mode"] == mode for r in found)]
    series = {row["mode"]: [charts.Point(c["chain"], c["per_kernel_s"] / 1e-6)
                            for c in row["cells"] if c and c["per_kernel_s"] is not None]
              for row in table_rows}
    series = {mode: points for mode, points in series.items() if points}
    chart, undrawn = None, bool(series) and not charted.draws(env.backend)
    if series and not undrawn:
        target, link = site.chart_path(PAGE, f"launch/per-kernel-{env.env_id}")
        title = f"Cost per kernel in a chain of N\n{env.label}"
        charts.line_chart(target, title=title, xlabel="kernels in the chain (N)",
                          ylabel="median per call / N (µs, log scale)", series=series,
                          colors={m: charts.mode_color(m) for m in series}, xbase=10)
        chart = {"link": link, "alt": f"Line chart of median latency divided by N, in "
                 f"microseconds, for chains of N tiny kernels on {env.label}, one line per mode."}
    return {"rows": table_rows, "lengths": lengths, "chart": chart, "undrawn": undrawn,
            "headline": analysis.headline_per_kernel(site.data.cases, env.env_id)}


def floor_view(site: Site, env: Environment, found: list[dict],
               charted: charts.Charted) -> dict | None:
    if not found:
        return None
    timed = [r for r in found if r["ok"]]
    chart, undrawn = None, bool(timed) and not charted.draws(env.backend)
    if timed and not undrawn:
        unit, scale = charts.time_unit([r["hi_s"] for r in timed])
        target, link = site.chart_path(PAGE, f"launch/floor-{env.env_id}")
        title = f"Per-call floor ({analysis.TRIVIAL})\n{env.label}"
        charts.bar_chart(target, title=title, xlabel=f"median latency per call ({unit})",
                         bars=[(r["mode"], charts.case_point(0, r, scale)) for r in timed],
                         colors={r["mode"]: charts.mode_color(r["mode"]) for r in timed})
        lowest = min(timed, key=lambda r: (r["median_s"], r["mode"]))
        chart = {"link": link, "alt": f"Bar chart of the median latency of a trivial call in "
                 f"each mode on {env.label}; lowest: {lowest['mode']}, "
                 f"{formatting.seconds(lowest['median_s'])}."}
    return {"rows": found, "chart": chart, "undrawn": undrawn}


# The chart shows every case; the environment's page lists the least busy few of each
# class, which is where the class boundaries are read. Every case (hundreds per GPU, more
# with each sweep) would take that page past 200 KB; each workload's page has the rest.
ANATOMY_SHOWN_PER_CLASS = 15
CLASSES = ("launch-bound", "mixed", "device-bound")


def busy_cases(cases) -> dict[str, list[dict]]:
    """Every environment's successful cases with a busy fraction, least busy first, each
    with its class (analysis.boundedness)."""
    here = cases[cases["ok"] & cases["busy_fraction"].notna()]
    here = here.assign(**{"class": analysis.boundedness(here["busy_fraction"])})
    return by_env(here.sort_values(["busy_fraction", "workload", "mode"], kind="stable"))


def anatomy_view(site: Site, env: Environment, found: list[dict]) -> dict | None:
    """The environment's own page: the least busy cases of each class; the summary page
    charts them all (`anatomy_chart`)."""
    if not found:
        return None
    counts = {name: sum(1 for r in found if r["class"] == name) for name in CLASSES}
    listed, shown = [], dict.fromkeys(CLASSES, 0)
    for r in found:
        shown[r["class"]] += 1
        if shown[r["class"]] <= ANATOMY_SHOWN_PER_CLASS:
            listed.append(r)
    return {"rows": listed, "listed": len(listed), "cases": len(found),
            "per_class": ANATOMY_SHOWN_PER_CLASS, "counts": counts, "chart": None}


def anatomy_chart(site: Site, env: Environment, found: list[dict]) -> dict:
    series = {mode: [charts.Point(r["median_s"] / 1e-3, r["busy_fraction"])
                     for r in found if r["mode"] == mode] for mode in site.data.modes}
    series = {mode: points for mode, points in series.items() if points}
    target, link = site.chart_path(PAGE, f"launch/busy-{env.env_id}")
    title = f"GPU busy fraction vs latency\n{env.label}"
    charts.scatter_chart(target, title=title, xlabel="median latency per call (ms, log scale)",
                         ylabel="GPU busy fraction (kernel time / wall time)", series=series,
                         colors={m: charts.mode_color(m) for m in series},
                         bands=(analysis.LAUNCH_BOUND, analysis.DEVICE_BOUND))
    return {"link": link, "alt": f"Scatter plot of GPU busy fraction against median "
            f"latency for {len(found)} cases on {env.label}, coloured by mode; the low "
            f"band marks launch-bound cases, the high band device-bound ones."}


def crossover_view(site: Site, env: Environment, workload: str, pairs: list[tuple[str, str]],
                   table: list[dict], cases: list[dict]) -> dict | None:
    """`table` and `cases`: the crossovers and the cases of this environment."""
    data = site.data
    found = [r for r in table if r["workload"] == workload]
    if not any(r["speedup"] is not None for r in found):
        return None
    batches = [b for b in data.batches(workload) if b is not None]
    names = [f"{mode} vs {base}" for mode, base in pairs]
    ratio = {(r["pair"], r["batch_size"]): r for r in found}
    here = [r for r in cases if r["workload"] == workload]
    measured_here = {r["batch_size"] for r in here}  # other GPUs' batches are not rows here
    table_rows = [{"batch": b, "ratios": [ratio.get((name, b)) for name in names],
                   "results": {r["mode"]: r for r in here if r["batch_size"] == b}}
                  for b in batches if b in measured_here]
    stops = []
    for i, (mode, base) in enumerate(pairs):
        measured = [(row["batch"], row["ratios"][i]) for row in table_rows
                    if row["ratios"][i] and row["ratios"][i]["speedup"] is not None]
        first = next((b for b, r in measured if r["speedup"] < 1.0 + analysis.MEANINGFUL_GAIN),
                     None)
        stops.append({"mode": mode, "base": base, "measured": bool(measured), "batch": first,
                      "batches": [b for b, _ in measured], "of": len(table_rows)})
    series = {name: [charts.Point(b, r["speedup"], r["speedup_lo"], r["speedup_hi"])
                     if (r["pairings"] or 0) >= 2 else charts.Point(b, r["speedup"])
                     for b in batches if (r := ratio.get((name, b))) and r["speedup"] is not None]
              for name in names}
    series = {name: points for name, points in series.items() if points}
    target, link = site.chart_path(env_page(env.env_id),
                                   f"launch/crossover-{workload}-{env.env_id}")
    title = f"What CUDA graphs add: {workload}\n{env.label}"
    palette = ("#4c72b0", "#c44e52", "#55a868")
    charts.line_chart(target, title=title, xlabel="batch size",
                      ylabel="speedup (median ratio, log scale)", series=series,
                      colors={name: palette[i % 3] for i, name in enumerate(series)},
                      reference_y=1.0)
    return {"workload": workload, "rows": table_rows, "stops": stops, "chart": {
        "link": link, "alt": f"Line chart of speedup against batch size for {workload} on "
        f"{env.label}: " + "; ".join(series) + ". The dashed line at 1 marks no gain."}}


def render(site: Site) -> None:
    data = site.data
    batched = [w for w in data.workloads if len([b for b in data.batches(w) if b]) > 1]
    pairs = analysis.graph_pairs(data.cases)
    of = data.cases[data.cases["workload"].isin(batched)]
    table, cases = by_env(analysis.crossovers(of, pairs)), by_env(of)
    busy = busy_cases(data.cases)

    def crossovers(env: Environment):
        mine, theirs = table.get(env.env_id, []), cases.get(env.env_id, [])
        views = [v for w in batched if (v := crossover_view(site, env, w, pairs, mine, theirs))]
        return {"workloads": views} if views else None

    views = {}
    for env in data.environments.values():
        anatomy = anatomy_view(site, env, busy.get(env.env_id, []))
        crossover = crossovers(env)
        if anatomy is None and crossover is None:
            continue
        page = env_page(env.env_id)
        site.page(page, "launch-overhead-env.md.j2", env=env, anatomy=anatomy,
                  crossover=crossover, pairs=pairs)
        views[env.env_id] = {"anatomy": anatomy, "crossover": crossover,
                             "page": page.removeprefix("analysis/")}

    charted = {part: charts.Charted() for part in ("per_kernel", "floor", "anatomy")}

    def summary(part: str) -> list[dict]:
        """The environments with a `part` view, each with the link to its page."""
        def view_of(env: Environment) -> dict | None:
            view = views.get(env.env_id)
            if not view or not view[part]:
                return None
            found = {**view[part], "page": view["page"]}
            if part == "anatomy" and charted["anatomy"].draws(env.backend):
                found["chart"] = anatomy_chart(site, env, busy[env.env_id])
            return found
        return site.by_backend(view_of)

    chains = by_env(analysis.per_kernel(data.cases))
    floors = by_env(data.cases[data.cases["workload"] == analysis.TRIVIAL])
    site.page(
        PAGE, "launch-overhead.md.j2",
        per_kernel=site.by_backend(lambda env: per_kernel_view(
            site, env, chains.get(env.env_id, []), charted["per_kernel"])),
        floor=site.by_backend(lambda env: floor_view(
            site, env, floors.get(env.env_id, []), charted["floor"])),
        anatomy=summary("anatomy"), crossover=summary("crossover"),
        chain_names=analysis.chains(data.workloads), trivial=analysis.TRIVIAL,
        pairs=pairs, graph_mode=analysis.mode_with(data.cases, cuda_graphs=True),
        batched=batched, charted=charted,
    )
