"""Pages that list every environment chart only the first `charts.Charted.LIMIT` of each
backend (issue 94, fault f: ten thousand charts took most of a render). Where a chart is
left out, the page says how many environments of that backend have none and that the
table holds every figure; it never links an image that was not drawn."""

from __future__ import annotations

import re

import pytest
from fixtures import RESULTS

from report import charts
from report.analysis import Data, load
from report.pages import launch_overhead, overview, workloads
from report.site import Site

# The fixture's cuda backend has two environments (h100-a, h100-b), its cpu backend one.
NOTE = re.compile(r"draws (?:one|heat maps)? ?for the first 1 environments of each backend "
                  r"\((\d+) more of (\w+) are not drawn\); the (?:table|counts below) hold")
BROKEN_IMAGE = re.compile(r"!\[[^\]]*\]\((?:None)?\)")


@pytest.fixture(scope="module")
def capped(tmp_path_factory):
    """The fixture results' pages with at most one chart per backend; charts are queued,
    not drawn (what a page links is decided before drawing)."""
    docs = tmp_path_factory.mktemp("capped")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(charts.Charted, "LIMIT", 1)
        patch.setattr(charts, "_QUEUE", [])
        site = Site(Data(load(RESULTS)), docs, docs, results=RESULTS)
        for page in (overview, launch_overhead, workloads):
            page.render(site)
    return docs


def notes(text: str) -> list[tuple[str, str]]:
    return [(backend, left) for left, backend in NOTE.findall(text)]


def test_the_home_page_names_the_environment_left_without_a_heat_map(capped):
    text = (capped / "index.md").read_text(encoding="utf-8")
    assert notes(text) == [("cuda", "1")]
    assert len(re.findall(r"charts/overview/speedup-", text)) == 2  # one per backend
    assert not BROKEN_IMAGE.search(text)


def test_launch_overhead_notes_each_chart_it_leaves_out(capped):
    text = (capped / launch_overhead.PAGE).read_text(encoding="utf-8")
    # per-kernel chains, the per-call floor and the busy fraction: each charts h100-a
    # (and the cpu machine where it has that part) and notes h100-b
    assert notes(text) == [("cuda", "1")] * 3
    for part in ("per-kernel", "floor", "busy"):
        assert "h100-b" not in "".join(re.findall(rf"charts/launch/{part}-[^)]*", text))
    assert not BROKEN_IMAGE.search(text)


def test_a_workload_page_notes_the_latency_chart_it_leaves_out(capped):
    pages = sorted((capped / "workloads").glob("*.md"))
    noted = [page for page in pages if notes(page.read_text(encoding="utf-8"))]
    assert noted  # a workload measured on both cuda machines
    for page in pages:
        text = page.read_text(encoding="utf-8")
        assert set(notes(text)) <= {("cuda", "1")}, page.name
        assert not BROKEN_IMAGE.search(text), page.name


def test_with_no_limit_every_environment_is_charted_and_nothing_is_noted(tmp_path, monkeypatch):
    monkeypatch.setattr(charts.Charted, "LIMIT", None)
    monkeypatch.setattr(charts, "_QUEUE", [])
    site = Site(Data(load(RESULTS)), tmp_path, tmp_path, results=RESULTS)
    overview.render(site)
    text = (tmp_path / "index.md").read_text(encoding="utf-8")
    assert not notes(text)
    assert len(re.findall(r"charts/overview/speedup-", text)) == 3
