"""Issue 94, fault f: the render's work grows with the environments, not with their square.
The home page (with the ledger's judging), the claims pages, launch overhead, the guide
and break-even filter a whole table a fixed number of times however many environments
there are: before, launch overhead and the guide filtered it once per environment, which
made ten thousand environments a render of hours. Counted, then timed on the page code
(charts are queued, not drawn: each costs the same whatever the other environments)."""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
import pytest
from fixtures import many_environments

from report import charts
from report.analysis import Data, load
from report.build import PAGES
from report.site import Site

SMALL, LARGE = 10, 30  # three times the environments
LINEAR_PAGES = ("overview", "ledger", "launch_overhead", "guide", "break_even")


def render(tmp_path, count: int, monkeypatch) -> tuple[dict[str, int], float]:
    """Per page of LINEAR_PAGES, how many times it filtered a table holding every record
    (a boolean mask as long as the table); and the CPU seconds every page took."""
    results = tmp_path / f"results-{count}"
    many_environments.write(results, count)
    data = Data(load(results))
    assert len(data.environments) == count
    docs = tmp_path / f"docs-{count}"
    site = Site(data, docs, docs, results=results)
    scans = dict.fromkeys(LINEAR_PAGES, 0)
    page_now = [""]
    select = pd.DataFrame.__getitem__

    def counted(frame, key):
        if (page_now[0] in scans and len(frame) >= 2 * count
                and isinstance(key, pd.Series | np.ndarray) and key.dtype == bool):
            scans[page_now[0]] += 1
        return select(frame, key)

    monkeypatch.setattr(pd.DataFrame, "__getitem__", counted)
    monkeypatch.setattr(charts, "_QUEUE", [])
    start = time.process_time()
    for page in PAGES:
        page_now[0] = page.__name__.rpartition(".")[2]
        page.render(site)
    return scans, time.process_time() - start


@pytest.mark.slow
def test_the_pages_filter_whole_tables_as_often_for_three_times_the_environments(
        tmp_path, monkeypatch):
    small, small_s = render(tmp_path, SMALL, monkeypatch)
    large, large_s = render(tmp_path, LARGE, monkeypatch)
    assert large == small
    # Linear work plus a fixed part takes at most three times as long for three times the
    # environments, a part growing with their square nine times; the bound leaves room for
    # a shared, busy CPU.
    assert large_s < 4.5 * small_s, f"{SMALL} environments: {small_s:.1f} s, {LARGE}: {large_s:.1f} s"
