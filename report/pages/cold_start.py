"""Cold start: what the first call costs on each rung of the ladder (empty caches, warm
local caches, a portable bundle, an ahead-of-time artifact), what each compile cache
layer served, what a bundle from another GPU type does, and regional compilation.

It reads the cold-start records (bench/coldstart_records.py) under the results folder the
site is built from (`python -m report --results`), not the case records the other pages
read."""

from __future__ import annotations

from pathlib import Path

from bench.coldstart_records import LADDER, REGIONAL, RUNG_TEXT
from report import cold_start_charts
from report.cold_start_data import BLOCK_MODELS, COLDSTART, LAYERS, REGIONAL_BATCHES, EnvView, load
from report.site import Site

PAGE = "analysis/cold-start.md"
# The cases the issue asks for, shown as "not measured" until they are.
EXPECTED_WORKLOADS = ("resnet50", "vit-base16", "bert-base", "gpt2-small", "llama-small",
                      "vit16x6x384", "vit32x12x768", "vit32x18x1024")


def _chart(site: Site, view: EnvView, workload: str, batch: int | None, shapes: str) -> str | None:
    cases = [c for c in view.cases
             if (c.workload, c.batch_size, c.shapes) == (workload, batch, shapes)]
    if not cases:
        return None
    modes = [c.mode for c in cases]
    bars = {c.mode: [_bar(r) for name, r in c.rungs.items() if name != "eager"] for c in cases}
    if all(isinstance(b, str) for values in bars.values() for b in values):
        return None
    eager = cases[0].eager
    name = f"cold-start-{view.env.env_id}-{workload}-bs{batch}-{shapes}"
    path, link = site.chart_path(PAGE, name)
    cold_start_charts.ladder_chart(
        path, code=cold_start_charts.CODE,
        title=f"{workload}, batch {batch} · {view.env.device}",
        rungs=[r for r in LADDER if r != "eager"], modes=modes, bars=bars,
        eager_s=eager.first_call.median if eager and eager.first_call else None)
    return link


def _bar(rung) -> tuple[float, float, float] | str:
    if rung is None:
        return "not measured"
    if rung.first_call is None:
        return rung.status or "not measured"
    return rung.first_call.median, rung.first_call.low, rung.first_call.high


def _charts(site: Site, view: EnvView) -> list[dict]:
    found = sorted({(c.workload, c.batch_size, c.shapes) for c in view.cases},
                   key=lambda k: (k[0], k[1] or 0, k[2]))
    out = []
    for workload, batch, shapes in found:
        link = _chart(site, view, workload, batch, shapes)
        if link:
            out.append({"workload": workload, "batch": batch, "link": link})
    return out


def _missing(view: EnvView) -> list[str]:
    """Expected workloads this environment has no cold-start record of."""
    measured = {c.workload for c in view.cases}
    return [w for w in EXPECTED_WORKLOADS if w not in measured]


def _unsupported(view: EnvView) -> list[dict]:
    """Each rung and reason an environment's records give as unsupported, with its cases:
    stated once under the table instead of in every cell."""
    found: dict[tuple[str, str], list[str]] = {}
    for c in view.cases:
        for name, r in c.rungs.items():
            if r is not None and r.status == "unsupported":
                found.setdefault((name, r.reason or ""), []).append(
                    f"{c.workload} batch {c.batch_size} {c.mode}")
    return [{"rung": rung, "reason": reason, "cases": cases, "every": len(cases) == len(view.cases)}
            for (rung, reason), cases in sorted(found.items())]


def render(site: Site, results: Path | None = None) -> None:
    """The page from the cold-start records under `results`, by default the site's own
    results folder's COLDSTART; a site without a results folder has none."""
    if results is None and site.results is not None:
        results = site.results / COLDSTART
    found, hidden = load(results) if results is not None else ([], 0)
    envs = [{"view": view, "charts": _charts(site, view), "missing": _missing(view),
             "unsupported": _unsupported(view)} for view in found]
    site.page(PAGE, "cold-start.md.j2", envs=envs, hidden=hidden, ladder=LADDER, regional_rungs=REGIONAL,
              rung_text=RUNG_TEXT, layers=list(LAYERS), block_models=BLOCK_MODELS,
              regional_batches=REGIONAL_BATCHES, expected=EXPECTED_WORKLOADS)
