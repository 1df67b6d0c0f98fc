"""results/ -> docs/: load, select, render every page, drop pages that went stale."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

from report import charts, export
from report.analysis import Data, load
from report.pages import (
    all_results,
    break_even,
    byom,
    changes,
    cold_start,
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

# Two halves of about equal time (the export goes with the first). Pages that share a
# memo stay in one half: the home page and the claims pages judge the ledger, and the
# home page, history and changes read one case table.
HALVES = ((overview, ledger, history, changes, stability, methodology),
          (guide, models, concepts, gpu_types, break_even, all_results, workloads, byom,
           launch_overhead, cold_start))
PAGES = tuple(page for half in HALVES for page in half)


DATA_DIR = "data"  # the exported speedups, linked from every page that shows speedups


def build(results_dir: Path, docs_dir: Path, warn=None, workers: int = 1) -> Site:
    """Render every page. With `workers` of 2 or more (the command line passes the core
    count) the second half of the pages renders in a forked process beside the first:
    pages only read the analysed data and each writes files of its own."""
    site = Site(Data(load(results_dir, warn=warn)), docs_dir)
    if workers >= 2 and "fork" in multiprocessing.get_all_start_methods():
        first, second = HALVES
        reader, writer = multiprocessing.get_context("fork").Pipe(duplex=False)
        child = multiprocessing.get_context("fork").Process(
            target=_render_in_child, args=(site, second, writer), daemon=False)
        child.start()
        writer.close()
        try:
            _render(site, first)
        finally:
            outcome, found = _receive(reader)
            child.join()
        if outcome == "error":
            raise found
        site.written |= found
    else:
        _render(site, PAGES)
    site.remove_stale()
    return site


def _render(site: Site, pages) -> None:
    # Each process draws its charts in a pool of its own, one worker per core: when one
    # finishes first, the other's pool has every core to itself.
    with charts.drawn_together():
        for page in pages:
            page.render(site)
    if overview in pages:
        for path in export.write(site.data, Path(site.docs) / DATA_DIR):
            site.written.add(path)


def _render_in_child(site: Site, pages, writer) -> None:
    try:
        _render(site, pages)
        writer.send(("ok", site.written))
    except BaseException as error:  # handed to the parent, which raises it
        writer.send(("error", error))
    finally:
        writer.close()


def _receive(reader) -> tuple[str, object]:
    try:
        return reader.recv()
    except EOFError:  # the child died without a word (killed, out of memory)
        return "error", RuntimeError("python -m report: the process rendering half of the "
                                     "pages ended without finishing")
