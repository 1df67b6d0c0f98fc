"""Cold start: what the first call costs on each rung of the ladder (empty caches, warm
local caches, a portable bundle, an ahead-of-time artifact), what each compile cache
layer served, what a bundle from another GPU type does, and regional compilation.

One page sums it up (what is measured where, and each machine's ladder charts); every case
is on its machine's own page (one page of every case outgrew 300 KB of HTML as the GPU
ladders filled in).

It reads the cold-start records (bench/coldstart/records.py) under the results folder the
site is built from (`python -m report --results`), not the case records the other pages
read."""

from __future__ import annotations

from pathlib import Path

from bench.coldstart.records import LADDER, MODES, REGIONAL, RUNG_TEXT
from report.analysis import MODEL_WORKLOADS
from report.coldstart import ab as coldstart_ab
from report.coldstart import charts as coldstart_charts
from report.coldstart.data import (
    BLOCK_MODELS,
    COLDSTART,
    LAYERS,
    NOT_ON_ONE_HOST,
    REGIONAL_BATCHES,
    TO_COLD,
    Case,
    EnvView,
    Paired,
    host_speed,
    joined,
    ladder_views,
    shown_records,
)
from report.releases import ab
from report.releases.vocabulary import release_key
from report.site import Site

PAGE = "analysis/cold-start.md"


def env_page(env_id: str) -> str:
    return f"analysis/{env_link(env_id)}"


def env_link(env_id: str) -> str:
    """The machine's page, linked from PAGE."""
    return f"cold-start/{env_id}.md"


# The cases the issue asks for, shown as "not measured" until they are.
EXPECTED_WORKLOADS = ("resnet50", "vit-base16", "bert-base", "gpt2-small", "llama-small",
                      "vit16x6x384", "vit32x12x768", "vit32x18x1024")
PROCESSES = 3  # fresh processes per rung the issue asks for
COMPILED = tuple(name for name in LADDER if name != "eager")  # the rungs that compile


def _chart(site: Site, view: EnvView, mode: str, batch: int | None, shapes: str) -> str | None:
    """Every workload's ladder at one mode and batch, or None where no compiled rung of
    theirs has a residual; a rung none of them has (unsupported by the release, say) is left
    out, and the machine's page states why under its table. The chart's name, which
    `site.chart_path` links from either page."""
    cases = sorted((c for c in view.cases if (c.mode, c.batch_size, c.shapes) == (mode, batch, shapes)),
                   key=lambda c: c.workload)
    rungs = [name for name in LADDER if any(name in c.measured for c in cases)]
    if not rungs:
        return None
    bars = {name: [_bar(c.rungs[name]) for c in cases] for name in rungs}
    name = f"cold-start-{view.env.env_id}-{mode}-bs{batch}-{shapes}"
    path, _ = site.chart_path(PAGE, name)
    coldstart_charts.ladder_chart(
        path, code=coldstart_charts.CODE,
        title=f"{view.env.device}, {mode}, batch {batch}: residual over eager per rung",
        workloads=[c.workload for c in cases], rungs=rungs, bars=bars)
    return name


def _bar(rung) -> tuple[float, float, float] | str:
    if rung is None:
        return "not measured"
    if rung.residual is None:
        return rung.status or "not measured"
    return rung.residual.median, rung.residual.low, rung.residual.high


def _charts(site: Site, view: EnvView) -> list[dict]:
    found = sorted({(c.mode, c.batch_size, c.shapes) for c in view.cases},
                   key=lambda k: (k[1] or 0, k[0], k[2]))
    out = []
    for mode, batch, shapes in found:
        name = _chart(site, view, mode, batch, shapes)
        if name:
            out.append({"mode": mode, "batch": batch, "name": name})
    return out


def _linked(site: Site, page: str, charts: list[dict]) -> list[dict]:
    return [{**chart, "link": site.chart_path(page, chart["name"])[1]} for chart in charts]


def _missing(view: EnvView) -> list[str]:
    """Expected workloads this environment has no cold-start record of."""
    measured = {c.workload for c in view.cases}
    return [w for w in EXPECTED_WORKLOADS if w not in measured]


def _whole(case: Case) -> bool:
    """Every rung of the ladder recorded, each in PROCESSES processes or more, except one the
    release has no API for (recorded unsupported without a process)."""
    return all(r is not None and (r.status == "unsupported" or r.processes >= PROCESSES)
               for r in case.rungs.values())


def _coverage(views: list[EnvView]) -> dict:
    """Per machine, mode and batch (1 and the large one): how many expected workloads have
    the whole ladder and how many part of it, so that what is not measured yet shows at the
    head of the page, not only as a missing section further down."""
    columns = [(mode, batch) for mode in MODES for batch in REGIONAL_BATCHES]
    rows = []
    for view in views:
        cells = []
        for mode, batch in columns:
            cases = [c for c in view.cases if (c.mode, c.batch_size) == (mode, batch)
                     and c.workload in EXPECTED_WORKLOADS]
            whole = sum(map(_whole, cases))
            cells.append({"whole": whole, "part": len(cases) - whole})
        rows.append({"label": view.env.label, "link": env_link(view.env.env_id), "cells": cells})
    return {"columns": columns, "rows": rows, "processes": PROCESSES}


def _why_not(view: EnvView) -> list[dict]:
    """Each rung, status and reason of the processes that gave no figure (unsupported by the
    release, an error, a timeout), with their cases: stated once under the table instead of
    in every cell, where a traceback's first line would push the figures off the screen."""
    found: dict[tuple[str, str, str], list[str]] = {}
    for c in view.cases:
        for name, r in c.rungs.items():
            if r is not None and r.status is not None:
                found.setdefault((name, r.status, r.reason or ""), []).append(
                    f"{c.workload} batch {c.batch_size} {c.mode}")
    return [{"rung": rung, "status": status, "reason": reason, "cases": cases,
             "every": len(cases) == len(view.cases)}
            for (rung, status, reason), cases in sorted(found.items())]


def first_call(views: list[EnvView]) -> list[dict]:
    """Per cold-start environment and case: the rung with the smallest residual over eager's
    first call (`Case.recommended`), with that residual and the cold rung's, and the fewer
    processes of the two (a median of one process has no spread to read). A case with one
    compiled rung measured (regional compilation's batch alone has only the cold rung) has no
    recommendation, and is left out."""
    out = []
    for view in views:
        cases = []
        for case in view.cases:
            rung = case.recommended
            if rung is None:
                continue
            cold = case.rungs.get("cold")
            counted = [r.residual.n for r in (case.rungs[rung], cold) if r and r.residual]
            cases.append({"workload": case.workload, "batch": case.batch_size, "mode": case.mode,
                          "dtype": case.dtype, "rung": rung,
                          "residual_s": case.rungs[rung].residual.median,
                          "cold_s": cold.residual.median if cold and cold.residual else None,
                          "processes": min(counted)})
        if cases:
            out.append({"label": view.env.label, "link": env_link(view.env.env_id),
                        "cases": cases})
    return out


def at_a_glance(views: list[EnvView]) -> list[dict]:
    """The real models' ladder in one row per device, batch and mode, so that the answer
    fits a screen: each compiled rung's residual over eager as the range of the models'
    medians, and how many models each rung left the least for. Where several machines of a
    device measured a mode and batch, the row is the one with the most models on the whole
    ladder (then the newest torch, then the one named first): each row is one machine at its
    own time, never a mix of machines."""
    rows: dict[tuple, dict] = {}
    for view in views:
        for (mode, batch), cases in _model_cases(view).items():
            rank = (sum(map(_whole, cases)), len(cases), release_key(view.env.torch))
            key = (view.env.backend != "cuda", view.env.device, batch, mode)
            if key not in rows or rank > rows[key]["rank"]:
                rows[key] = {"rank": rank, "view": view, "cases": cases}
    out = []
    for (_, device, batch, mode), found in sorted(rows.items(), key=_glance_order):
        cases, env = found["cases"], found["view"].env
        least: dict[str, int] = {}
        for c in cases:
            if c.recommended:
                least[c.recommended] = least.get(c.recommended, 0) + 1
        out.append({"device": device, "torch": env.torch, "link": env_link(env.env_id),
                    "batch": batch, "mode": mode, "dtype": joined(c.dtype for c in cases),
                    "models": len(cases), "cases": cases,
                    "rungs": {name: _glance_cell(cases, name) for name in COMPILED},
                    "compiler": {name: _compiler_cell(cases, name) for name in COMPILED},
                    "least": sorted(least.items(), key=lambda item: (-item[1], item[0])),
                    "lead": _lead(least)})
    return out


def _lead(least: dict[str, int]) -> str | None:
    """The rung that left the least for more models than any other; None on a tie."""
    counts = sorted(least.values(), reverse=True)
    if not counts or (len(counts) > 1 and counts[0] == counts[1]):
        return None
    return max(least, key=least.get)


def _model_cases(view: EnvView) -> dict[tuple, list[Case]]:
    found: dict[tuple, list[Case]] = {}
    for c in view.cases:
        if c.workload in MODEL_WORKLOADS and c.batch_size in REGIONAL_BATCHES and c.measured:
            found.setdefault((c.mode, c.batch_size), []).append(c)
    return found


def _glance_order(item) -> tuple:
    gpu_last, device, batch, mode = item[0]
    return batch, gpu_last, device, MODES.index(mode) if mode in MODES else len(MODES)


def _glance_cell(cases: list[Case], name: str) -> dict:
    """One rung over the models: the range of their median residuals and the fewest
    processes behind one; with no figure, why (one status shared by every model, else not
    measured)."""
    rungs = [c.rungs.get(name) for c in cases]
    figures = [r for r in rungs if r is not None and r.residual is not None]
    if not figures:
        statuses = {r.status if r is not None else None for r in rungs}
        return {"words": statuses.pop() if len(statuses) == 1 and None not in statuses
                else "not measured"}
    medians = [r.residual.median for r in figures]
    return {"words": None, "low": min(medians), "high": max(medians), "models": len(figures),
            "processes": min(r.residual.n for r in figures)}


def _compiler_cell(cases: list[Case], name: str) -> dict | None:
    """One rung's host-compiler seconds and runs in the first call, as the range of the
    models' medians; None where no process of any model recorded them."""
    rungs = [r for c in cases if (r := c.rungs.get(name)) is not None and r.compiler]
    if not rungs:
        return None
    seconds = [r.compiler.median for r in rungs]
    runs = [r.compiler_runs.median for r in rungs]
    return {"low": min(seconds), "high": max(seconds), "runs_low": min(runs),
            "runs_high": max(runs), "models": len(rungs),
            "processes": min(r.compiler.n for r in rungs)}


LOADED = ("bundle", "aot", "precompile")  # the rungs that start from a saved artifact


def rebuilt(cases: list[Case]) -> list[str]:
    """The loaded rungs that ran the compiler as many times as empty caches (median runs)
    for every model where both were counted, while warm caches ran it fewer times: what a
    saved artifact does not carry, which the local cache folder does."""
    def runs(case: Case, name: str) -> float | None:
        rung = case.rungs.get(name)
        return rung.compiler_runs.median if rung is not None and rung.compiler_runs else None

    found = []
    for name in LOADED:
        pairs = [(runs(c, name), runs(c, "cold"), runs(c, "warm")) for c in cases]
        pairs = [p for p in pairs if None not in p]
        if pairs and all(loaded >= cold > warm for loaded, cold, warm in pairs):
            found.append(name)
    return found


def compiler_glance(glance: list[dict]) -> dict:
    """The glance's rows where some process recorded the host compiler, a table per batch
    with the rungs some row has it for; and, per device and release, the modes and batches
    of the rows where none did."""
    recorded = [r for r in glance if any(r["compiler"].values())]
    tables = []
    for batch in sorted({r["batch"] for r in recorded}):
        mine = [r for r in recorded if r["batch"] == batch]
        tables.append({"batch": batch, "rows": mine,
                       "rungs": [name for name in COMPILED if any(r["compiler"][name] for r in mine)],
                       "rebuilt": [{"row": r, "rungs": rungs} for r in mine
                                   if (rungs := rebuilt(r["cases"]))]})
    silent: dict[str, dict[str, list]] = {}
    for r in glance:
        if r not in recorded:
            modes = silent.setdefault(f"{r['device']} · torch {r['torch']}", {})
            modes.setdefault(r["mode"], []).append(r["batch"])
    return {"tables": tables, "silent": [(label, list(modes.items()))
                                         for label, modes in silent.items()]}


def regional_glance(views: list[EnvView]) -> list[dict]:
    """Regional compilation for the main page: per device one machine's rows (the one with
    the most block models measured regionally, then the newest torch), a row per model,
    batch and mode with a regional strategy measured; the machine's page has the spreads."""
    chosen: dict[str, tuple[tuple, EnvView, list]] = {}
    for view in views:
        rows = [g for g in view.regional if any(g.strategies.get(name) for name in REGIONAL)]
        rank = (len({g.workload for g in rows}), release_key(view.env.torch))
        if rows and (view.env.device not in chosen or rank > chosen[view.env.device][0]):
            chosen[view.env.device] = (rank, view, rows)
    return [{"device": view.env.device, "torch": view.env.torch, "link": env_link(view.env.env_id),
             "workload": g.workload, "batch": g.batch_size, "mode": g.mode, "dtype": g.dtype,
             "strategies": {name: _strategy(rung) for name, rung in g.strategies.items()},
             "break_even": g.break_even}
            for _, view, rows in chosen.values() for g in rows]


def _strategy(rung) -> dict | None:
    if rung is None or rung.first_call is None:
        return None
    return {"first_call": rung.first_call.median, "speedup": rung.speedup}


def upgrades(found: list[coldstart_ab.Comparison]) -> list[dict]:
    """Upgrading torch as a lever on the first call: per release A/B on one host and rung, how
    many cases the newer release made faster, slower or left the same (the A/B section's
    verdicts), and the range of their median ratios, new over old. Sides on two hosts have
    no ratio, so they say nothing here."""
    out = []
    for c in found:
        if not c.host:
            continue
        rungs = []
        for name in LADDER:
            steps = [s for s in c.steps if s.rung == name]
            if not steps:
                continue
            counts = {v: sum(s.verdict == v for s in steps) for v in ("faster", "slower", "same")}
            counts["not called"] = len(steps) - sum(counts.values())
            rungs.append({"rung": name, "cases": len(steps),
                          "called": [(v, n) for v, n in counts.items() if n],
                          "low": min(s.ratio.median for s in steps),
                          "high": max(s.ratio.median for s in steps)})
        if rungs:
            out.append({"old": c.old.torch, "new": c.new.torch, "host": c.host, "rungs": rungs})
    return out


def first_call_table(envs: list[dict], upgraded: list[dict]) -> dict | None:
    """first_call's answers as one table, a row per machine, batch and mode and a column per
    workload (the cold-start page's per-model section); with what upgrading torch did to the
    rungs where releases were measured A/B (`upgrades`)."""
    if not envs:
        return None
    rows: dict[tuple, dict] = {}
    for env in envs:
        for case in env["cases"]:
            key = (env["label"], env["link"], case["batch"], case["mode"])
            rows.setdefault(key, {})[case["workload"]] = case
    return {"workloads": sorted({w for cells in rows.values() for w in cells}),
            "rows": [{"label": label, "link": link, "batch": batch, "mode": mode, "cells": cells,
                      "dtype": joined(c["dtype"] for c in cells.values())}
                     for (label, link, batch, mode), cells in rows.items()],
            "processes": PROCESSES, "upgrades": upgraded}


def across_machines(views: list[EnvView]) -> list[dict]:
    """Per machine that loaded bundles saved elsewhere, source, mode and batch: the outcomes
    over its cases, and the range over cases of the median first call with the foreign
    bundle, with this machine's own bundle and with empty caches; and the range over the
    cases measured so of the foreign bundle's first call over empty caches on one host
    (data.paired), None where no case was."""
    groups: dict[tuple, list] = {}
    for view in views:
        for case, rung in view.foreign:
            key = (view.env.label, env_link(view.env.env_id), rung.source, rung.source_env,
                   case.mode, case.batch_size)
            groups.setdefault(key, []).append((case, rung))

    def span(rungs) -> tuple[float, float] | None:
        medians = [r.first_call.median for r in rungs if r is not None and r.first_call]
        return (min(medians), max(medians)) if medians else None

    rows = []
    for (label, link, source, source_env, mode, batch), found in groups.items():
        outcomes: dict[str, int] = {}
        for _, rung in found:
            outcome = rung.outcome if rung.ok else (rung.status or "failed")
            outcomes[outcome or "not read"] = outcomes.get(outcome or "not read", 0) + 1
        rows.append({"label": label, "link": link, "source": source, "source_env": source_env,
                     "mode": mode, "batch": batch, "cases": len(found),
                     "dtype": joined(rung.dtype or case.dtype for case, rung in found),
                     "outcomes": sorted(outcomes.items()),
                     "foreign": span(rung for _, rung in found),
                     "own": span(case.rungs.get("bundle") for case, _ in found),
                     "cold": span(case.rungs.get("cold") for case, _ in found),
                     "paired": _paired_span([rung.paired for _, rung in found if rung.paired])})
    return rows


def _paired_span(pairs: list[Paired]) -> dict | None:
    if not pairs:
        return None
    ratios = [p.ratio.median for p in pairs]
    return {"low": min(ratios), "high": max(ratios), "cases": len(pairs),
            "label": ", ".join(sorted({p.label for p in pairs}))}


def host_speed_section(shown: list) -> dict:
    """The rows of the host-speed table, the loaded rungs some row has a ratio for, and per
    rung how often the ratio landed closer across hosts than the cold seconds."""
    rows = host_speed(shown)
    rungs = [name for name in TO_COLD if any(name in r["to_cold"] for r in rows)]
    compared = []
    for rung in rungs:
        found = [r["to_cold"][rung] for r in rows if r["hosts"] > 1 and rung in r["to_cold"]
                 and r["to_cold"][rung]["ratio_apart"] is not None
                 and r["to_cold"][rung]["seconds_apart"] is not None]
        if found:
            compared.append({"rung": rung, "cases": len(found),
                             "closer": sum(m["ratio_apart"] < m["seconds_apart"] for m in found)})
    return {"rows": rows, "rungs": rungs, "compared": compared}


def first_call_answer(results: Path | None) -> dict | None:
    """The first-call answer from the cold-start records under `results`, the folder this
    page reads, so that the guide's answer names this page's recommended rung."""
    if results is None:
        return None
    shown, _ = shown_records(results)
    return _answer(ladder_views(shown), coldstart_ab.comparisons(shown))


def _answer(found: list[EnvView], releases: list[coldstart_ab.Comparison]) -> dict | None:
    """The one first-call answer, built alike for the guide and this page."""
    table = first_call_table(first_call(found), upgrades(releases))
    glance = at_a_glance(found)
    shown = {c.workload for r in glance for c in r["cases"]}
    return table and {**table, "glance": _by_batch(glance), "compiler": compiler_glance(glance),
                      "model_names": [w for w in MODEL_WORKLOADS if w in shown]}


def _by_batch(rows: list[dict]) -> list[dict]:
    """The glance's rows a table per batch, with the compiled rungs some row has a figure
    for as columns; the others are named once under the table instead of a column of
    "unsupported" that squeezes the rest."""
    out = []
    for batch in sorted({r["batch"] for r in rows}):
        mine = [r for r in rows if r["batch"] == batch]
        shown = [name for name in COMPILED if any(not r["rungs"][name]["words"] for r in mine)]
        out.append({"batch": batch, "rows": mine, "rungs": shown,
                    "hidden": [name for name in COMPILED if name not in shown]})
    return out


def render(site: Site, results: Path | None = None) -> None:
    """The page from the cold-start records under `results`, by default the site's own
    results folder's COLDSTART; a site without a results folder has none."""
    if results is None and site.results is not None:
        results = site.results / COLDSTART
    shown, hidden = shown_records(results) if results is not None else ([], 0)
    found = ladder_views(shown)
    releases = coldstart_ab.comparisons(shown)
    shared = {"ladder": LADDER, "rung_text": RUNG_TEXT, "not_on_one_host": NOT_ON_ONE_HOST}
    envs = []
    for view in found:
        charts, page = _charts(site, view), env_page(view.env.env_id)
        site.page(page, "cold-start-env.md.j2", view=view, charts=_linked(site, page, charts),
                  missing_workloads=_missing(view), why_not=_why_not(view), layers=list(LAYERS),
                  block_models=BLOCK_MODELS, regional_batches=REGIONAL_BATCHES, **shared)
        envs.append({"view": view, "charts": _linked(site, PAGE, charts), "link": env_link(view.env.env_id)})
    site.page(PAGE, "cold-start.md.j2", envs=envs, hidden=hidden, expected=EXPECTED_WORKLOADS,
              coverage=_coverage(found),
              first_call=_answer(found, releases), ab=releases, across=across_machines(found),
              regional=regional_glance(found), block_models=BLOCK_MODELS,
              host_speed=host_speed_section(shown),
              floor_text=ab.factor, **shared)
