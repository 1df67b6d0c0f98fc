"""One page per workload, an index of them, and the nav entries for MkDocs."""

from __future__ import annotations

import pandas as pd

from report import analysis, charts, formatting, guide_rules
from report.analysis import BASELINE, DEFAULT_DTYPE, DTYPE, POINT, Environment, host, ordered, rows
from report.analysis import EXTERNAL_FAMILY as EXTERNAL
from report.releases import ab
from report.site import Site

SPREAD_NOTE = "error bars span the medians of the case's processes (none for a single run)"


def latency_chart(site: Site, page: str, env: Environment, workload: str, axis: str | None,
                  timed: list[dict]) -> dict | None:
    if not timed:
        return None
    unit, scale = charts.time_unit([r["hi_s"] for r in timed])
    target, link = site.chart_path(page, f"workloads/{workload}-{env.env_id}")
    title = f"{workload}: median latency\n{env.label}"
    colors = {r["mode"]: charts.mode_color(r["mode"]) for r in timed}
    fastest = min(timed, key=lambda r: (r["median_s"], r["mode"]))
    if axis is None:
        charts.bar_chart(target, title=title, xlabel=f"median latency per call ({unit})",
                         bars=[(r["mode"], charts.case_point(0, r, scale)) for r in timed],
                         colors=colors)
        kind = "Bar chart of median latency per call for each mode"
    else:
        series: dict[str, list[charts.Point]] = {}
        for r in timed:
            series.setdefault(r["mode"], []).append(charts.case_point(r["batch_size"], r, scale))
        eager = {r["batch_size"]: r["median_s"] for r in timed if r["mode"] == BASELINE}
        speedups = {mode: [charts.Point(p.x, eager[p.x] * 1.0 / (p.y * scale))
                           for p in points if p.x in eager]
                    for mode, points in series.items() if mode != BASELINE}
        charts.line_chart(target, title=title, xlabel=axis,
                          ylabel=f"median latency per call ({unit}, log scale)",
                          series=series, colors=colors,
                          speedups={m: p for m, p in speedups.items() if p} or None)
        kind = f"Line chart of median latency per call against {axis}, one line per mode,"
    where = f" at batch {fastest['batch_size']}" if fastest["batch_size"] is not None else ""
    alt = (f"{kind} for {workload} on {env.label}; {SPREAD_NOTE}. "
           f"Fastest: {fastest['mode']}{where}, {formatting.seconds(fastest['median_s'])}.")
    return {"link": link, "alt": alt}


def library_builds(site: Site, workload: str) -> list[dict]:
    """Each version of each library that built `workload`'s records, with the environments
    it built them in: each machine installs its own, and a model's code can change between
    releases of its library."""
    data = site.data
    here = data.shown[(data.shown["workload"] == workload) & data.shown["libraries"].notna()]
    found: dict[tuple[str, str], set[str]] = {}
    for env_id, libraries in zip(here["env_id"], here["libraries"], strict=True):
        for library, version in libraries.items():
            found.setdefault((library, version), set()).add(data.environments[env_id].label)
    return [{"library": library, "version": version, "environments": sorted(labels)}
            for (library, version), labels in sorted(found.items())]


def dtype_order(dtypes) -> list[str]:
    """The default dtype first, then the others by name."""
    return sorted(set(dtypes), key=lambda d: (d != DEFAULT_DTYPE, d))


def at_a_glance(published: pd.DataFrame, calls: int) -> list[dict]:
    """Per point of `published` (rows of the published table) where two or more modes were
    timed: the chooser's answer at `calls` calls per process (`analysis.choose`), with how
    eager is bound there (`class`) and the published rows of the chosen mode (`row`) and of
    the runner-up (`runner_up_row`), so the page shows the figures every page shows."""
    timed = published[published["ok"].eq(True) & published["speedup"].notna()]
    counts = timed.groupby(POINT, dropna=False)["mode"].transform("size")
    timed = timed[counts >= 2]
    if timed.empty:
        return []
    chosen = analysis.choose(timed, calls)
    eager = timed.loc[timed["mode"] == BASELINE, [*POINT, "busy_fraction"]]
    chosen = chosen.merge(eager, on=POINT, how="left")
    chosen["class"] = analysis.boundedness(chosen["busy_fraction"]).fillna(analysis.UNPROFILED)
    by_case = {tuple(r[c] for c in (*POINT, "mode")): r for r in rows(timed)}
    out = []
    for r in rows(ordered(chosen, batch_first=True)):
        point = tuple(r[c] for c in POINT)
        out.append({**r, "dtype": r[DTYPE], "row": by_case[(*point, r["mode"])],
                    "runner_up_row": by_case.get((*point, r["mode_runner_up"]))})
    # Each dtype's points together, the default dtype's first (a stable sort keeps the batches' order).
    return sorted(out, key=lambda r: dtype_order(x["dtype"] for x in out).index(r["dtype"]))


def render_workload(site: Site, workload: str, table: list[dict], failures: list[dict],
                    recs: list[dict] | None = None, glance: pd.DataFrame | None = None) -> None:
    """`recs`: the guide's recommendation at each point (`guide_rules.for_workloads` rows),
    for a model of one's own; None for the built-in workloads. The page opens with the
    mode the chooser gives at each point for analysis.CALLS_ANSWERED calls per process
    (`at_a_glance` of `glance`, the workload's rows of the published table), so that a
    reader who came to choose a mode finds the answer, its spread and its cost in the first
    screen, and the same answer as the chooser's."""
    data = site.data
    page = f"workloads/{workload}.md"
    info = data.workload_info(workload)
    # What CaseKey.batch_size means here: a batch, or a matrix size for sweeps over n.
    axis = (("matrix size n" if info and info["axis"] == "n" else "batch size")
            if data.batched(workload) else None)

    if glance is None:
        glance = data.published[data.published["workload"] == workload]
    # One choice over every environment's points, read per environment: the choice at a
    # point depends on that point's rows alone, and making it per environment was seconds.
    fastest = at_a_glance(glance, analysis.CALLS_ANSWERED)
    charted = charts.Charted()

    def build(env: Environment):
        here = [r for r in table if r["env_id"] == env.env_id]
        if not here:
            return None
        by_case = {(r["mode"], r["batch_size"], r[DTYPE]): r for r in here}
        dtypes = dtype_order(r[DTYPE] for r in here)
        predicted = host.page_rows(data, env.env_id, workload)
        ok = [r for r in here if r["ok"]]
        # Gaps among the modes and batches this environment ran read "not measured" in the
        # table; the modes and batches it never ran are named once, below it.
        timed = [r for r in ok if r[DTYPE] == DEFAULT_DTYPE]
        drawn = bool(timed) and charted.draws(env.backend)
        modes = [m for m in data.modes if any(mode == m for mode, _, _ in by_case)]
        batches = [b for b in data.batches(workload) if any(batch == b for _, batch, _ in by_case)]
        return {
            "fastest": [{**r, "noisy": r["dtype"] == DEFAULT_DTYPE and ab.noisy(
                            data, env.env_id, workload, r["batch_size"], r["mode"])}
                        for r in fastest if r["env_id"] == env.env_id],
            "host_model": [{"dtype": dtype, "rows": [r for r in predicted if r[DTYPE] == dtype]}
                           for dtype in dtype_order(r[DTYPE] for r in predicted)],
            "stability_page": f"../analysis/stability/{env.env_id}.md",
            "latency": [{"mode": mode, "batch": batch, "dtype": dtype,
                         "result": by_case.get((mode, batch, dtype))}
                        for dtype in dtypes for mode in modes for batch in batches
                        if dtype == DEFAULT_DTYPE or (mode, batch, dtype) in by_case],
            "modes_not_run": [m for m in data.modes if m not in modes],
            "batches_not_run": [b for b in data.batches(workload) if b not in batches],
            "chart": latency_chart(site, page, env, workload, axis, timed) if drawn else None,
            "undrawn": bool(timed) and not drawn,
            "ok": ok,
            "dtypes": dtypes,
            "compiled": [r for r in ok if r["cold_first_call_s"] is not None
                         or r["warm_first_call_s"] is not None],
            "dynamo": [r for r in ok if r["unique_graphs"] is not None],
            "checked": [r for r in ok if r["reference"] is not None],
            "failed": [r for r in failures if r["env_id"] == env.env_id],
            "recommended": [{"batch_size": r["batch_size"], "rec": r["recommendation"]}
                            for r in recs or () if r["env_id"] == env.env_id],
        }

    site.page(page, "workload.md.j2", workload=workload, info=info, axis=axis,
              builds=library_builds(site, workload),
              dtypes=dtype_order(data.shown.loc[data.shown["workload"] == workload, DTYPE]),
              family=data.family(workload), batches=data.batches(workload),
              backends=site.by_backend(build), external=recs is not None,
              calls=analysis.CALLS_ANSWERED, charted=charted)


def render(site: Site) -> None:
    data = site.data
    table = data.published
    table = rows(table.assign(gflops=table["flops"] / table["median_s"] / 1e9,
                              gbps=table["bytes_moved"] / table["median_s"] / 1e9))
    failures = rows(ordered(data.shown[~data.shown["ok"]], "tag", "repeat"))
    # A model of one's own gets the guide's recommendation on its page, by the same rules
    # (and the same environment thresholds) as the bring-your-own-model page.
    external = [w for w in data.workloads if data.family(w) == EXTERNAL]
    recs = rows(guide_rules.for_workloads(data.cases, external,
                                                 data.published)[0]) if external else []
    by_workload = dict(iter(data.published.groupby("workload", sort=False)))
    for workload in data.workloads:
        render_workload(site, workload, [r for r in table if r["workload"] == workload],
                        [r for r in failures if r["workload"] == workload],
                        [r for r in recs if r["workload"] == workload]
                        if workload in external else None,
                        by_workload.get(workload, data.published.iloc[:0]))
    groups = [{"family": family, "workloads": names} for family, names in data.families()]
    measured_in = {w: data.shown.loc[data.shown["workload"] == w, "env_id"].nunique()
                   for w in data.workloads}
    dtypes = {w: dtype_order(group) for w, group in data.shown.groupby("workload")[DTYPE]}
    site.page("workloads/index.md", "workloads-index.md.j2", families=groups,
              measured_in=measured_in, dtypes=dtypes)
    site.write_workload_nav([{"family": g["family"],
                              "pages": [[w, f"workloads/{w}.md"] for w in g["workloads"]]}
                             for g in groups])
