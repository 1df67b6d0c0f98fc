"""results/ -> docs/: load, select, render every page, drop pages that went stale."""

from __future__ import annotations

import contextlib
import ctypes
import gc
import multiprocessing
import os
import signal
import sys
import unicodedata
from pathlib import Path

from report import charts, export, safe_output
from report.analysis import Data, ResultsError, load, ordering
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
    shapes,
    stability,
    workloads,
)
from report.site import GENERATED_DIRS, GENERATED_FILES, Site

# Two halves of about equal time (the export goes with the first); a new page goes in
# one. Pages that share a memo (Data.memo) stay in one half, or the second process
# computes it again: tests/test_report_site_build.py records which pages ask for which
# memo and fails on a memo split across the halves, and on a page module in neither.
# The home page, history and changes read one case table and judge the ledger; the guide
# picks with analysis.choose and walks its flows; stability and the workload pages read the
# host model's rows. Timed on ten thousand two-record environments (issue 94): the guide's
# flows are the longest page, so all results, methodology and concepts (no memo) go with
# the ledger's half; the ledger's judgments stay in the half that reads them.
HALVES = ((overview, ledger, history, changes, all_results, methodology, concepts),
          (guide, launch_overhead, stability, workloads, models, gpu_types,
           break_even, shapes, byom, cold_start))
PAGES = tuple(page for half in HALVES for page in half)


DATA_DIR = "data"  # the exported speedups, linked from every page that shows speedups


def build(results_dir: Path, docs_dir: Path, warn=None, workers: int = 1) -> Site:
    """Render every page into a fresh folder inside docs_dir, then swap it in: a reader, a
    second render or a crash finds the old pages or the new ones, never a mix. With
    `workers` of 2 or more (the command line passes the core count) the second half of the
    pages renders in a forked process beside the first: pages only read the analysed data
    and each writes files of its own. Every process it forks dies with its parent."""
    records = load(results_dir, warn=warn)
    refuse_colliding_names(records)
    data = Data(records)
    _forks_die_with_parent()
    docs = Path(docs_dir)
    with _full_collections_between_pages(), safe_output.staging(docs) as out:
        site = Site(data, docs, out, results=results_dir)
        if workers >= 2 and "fork" in multiprocessing.get_all_start_methods():
            first, second = HALVES
            _give_back_freed_memory()  # what loading freed, before the fork copies the heap
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
        safe_output.publish(out, docs, (*GENERATED_FILES, *GENERATED_DIRS))
    site.written = {docs / path.relative_to(out) for path in site.written}
    site.out = docs
    return site


@contextlib.contextmanager
def _full_collections_between_pages():
    """Full garbage collections only after a page, each over what the page left behind.
    A full collection visits every live object, and a render keeps about a hundred judgements
    per environment: collections the allocator started during a page took 35 of the home
    page's and the claims pages' 140 s of CPU at 3,000 environments, more with every
    environment (issue 94). What a page keeps for the next (memos) is frozen after it, and
    the analysed data before the fork, which keeps it shared with the forked half: a full
    collection there wrote to every object's header, and the kernel copied their pages.
    A collection after each page still frees the page's context, which Jinja's macros hold
    in a cycle."""
    young, middle, full = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(young, middle, 2**31 - 1)  # a full collection after 2**31 middle ones
    try:
        yield
    finally:
        gc.set_threshold(young, middle, full)
        gc.unfreeze()


def refuse_colliding_names(records) -> None:
    """Names that become file names (a workload's page and charts, a profile) must differ
    after case folding and Unicode normalisation, or two pages would be one file on
    macOS's and Windows' default file systems; ResultsError in one line names both."""
    for column in ("workload", "profile"):
        first = records.drop_duplicates(column)
        folded = first[column].map(lambda n: unicodedata.normalize("NFC", n).casefold())
        clash = first[folded.duplicated(keep=False)]
        if len(clash):
            a, b = clash.iloc[0], clash[folded[clash.index] == folded[clash.index[0]]].iloc[1]
            raise ResultsError(
                f"{b['source']}: {column} {b[column]!r} differs from {a[column]!r} "
                f"({a['source']}) only in case or Unicode form: their pages would be one file "
                f"on a case-insensitive disk; rename one")


_PARENT = [0]


def _forks_die_with_parent() -> None:
    """Every process forked from here on (the other half, the chart pools) is SIGKILLed
    when the process that forked it dies, so a killed render leaves nothing writing."""
    if sys.platform != "linux" or _PARENT[0]:
        return
    _PARENT[0] = os.getpid()

    def before() -> None:
        _PARENT[0] = os.getpid()

    def in_child() -> None:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
        if os.getppid() != _PARENT[0]:  # the parent died before the request took effect
            os._exit(1)

    os.register_at_fork(before=before, after_in_child=in_child)


def _render(site: Site, pages) -> None:
    # Each process draws its charts in a pool of its own, one worker per core: when one
    # finishes first, the other's pool has every core to itself.
    with charts.drawn_together(published=(site.out, site.published) if site.published else None):
        for page in pages:
            page.render(site)
            ordering.forget()
            gc.collect()  # what the page left (see _full_collections_between_pages)
            gc.freeze()
            _give_back_freed_memory()
    if overview in pages:
        for path in export.write(site.data, site.out / DATA_DIR):
            site.written.add(path)


def _give_back_freed_memory() -> None:
    """Return to the system the heap that a page freed: glibc's malloc keeps freed memory
    for the process's next allocations, and a page's tables and strings (tens of MB per
    thousand environments) stayed counted against the render after the page (issue 94)."""
    if sys.platform == "linux":
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None).malloc_trim(0)


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
