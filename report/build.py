"""results/ -> docs/: load, select, render every page, drop pages that went stale."""

from __future__ import annotations

from pathlib import Path

from report import charts, export
from report.analysis import Data, load
from report.pages import (
    all_results,
    break_even,
    byom,
    changes,
    concepts,
    gpu_types,
    guide,
    history,
    launch_overhead,
    ledger,
    methodology,
    models,
    overview,
    stability,
    workloads,
)
from report.site import Site

PAGES = (overview, workloads, ledger, guide, models, byom, break_even, launch_overhead, stability,
         gpu_types, history, changes, all_results, methodology, concepts)


DATA_DIR = "data"  # the exported speedups, linked from every page that shows speedups


def build(results_dir: Path, docs_dir: Path, warn=None) -> Site:
    site = Site(Data(load(results_dir, warn=warn)), docs_dir)
    with charts.drawn_together():
        for page in PAGES:
            page.render(site)
    for path in export.write(site.data, Path(docs_dir) / DATA_DIR):
        site.written.add(path)
    site.remove_stale()
    return site
