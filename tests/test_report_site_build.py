"""End to end: `python -m report` then `mkdocs build --strict`, as the docs session runs
them, on the fixtures (the shared `fixture_site`, tests/conftest.py) and on no results at
all, in scratch folders (tests/fixtures/site.py)."""

from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path

import pytest
from fixtures import RESULTS
from fixtures import make_results as fx
from fixtures.site import FIXTURE_HASH_SEED, build, build_site, generated, run_report

from report import build as report_build
from report import charts, export, pages
from report.analysis import Data, load
from report.site import Site

pytestmark = pytest.mark.slow


def test_fixture_site_builds_strictly_with_every_page(fixture_site):
    env = fx.ENV_A.env_id()
    for page in ("index.html", "methodology/index.html", "workloads/matmul-128/index.html",
                 "analysis/launch-overhead/index.html", "concepts/cuda-graphs/index.html",
                 f"analysis/guide/{env}/index.html", f"analysis/launch-overhead/{env}/index.html"):
        assert (fixture_site / page).is_file(), page
    home = (fixture_site / "index.html").read_text(encoding="utf-8")
    assert 'class="tabbed-set tabbed-alternate"' in home
    assert "javascripts/tablesort.js" in home
    # The hook put the generated workload pages into the nav.
    assert 'href="workloads/vit16x6x384/"' in home


def test_properdocs_builds_the_same_pages_from_the_same_config(fixture_root, tmp_path):
    """ProperDocs, the maintained fork of MkDocs 1.x, reads the same mkdocs.yml and docs/:
    leaving MkDocs is then a change of one tool name (noxfile.py's docs-properdocs session)."""
    pytest.importorskip("properdocs", reason="the properdocs dependency group is not installed")
    done = build(fixture_root, tool="properdocs", site=tmp_path / "site")
    assert done.returncode == 0, done.stderr[-3000:]
    by_mkdocs = fixture_root / "site"
    pages = {p.relative_to(by_mkdocs) for p in by_mkdocs.rglob("*.html")}
    assert pages == {p.relative_to(tmp_path / "site") for p in (tmp_path / "site").rglob("*.html")}


def test_search_indexes_prose_and_headings_but_no_table_cells(fixture_site):
    index = json.loads((fixture_site / "search/search_index.json").read_text("utf-8"))
    texts = {d["location"]: d["text"] for d in index["docs"]}
    # A header only the latency tables have.
    assert not any("samples × calls" in t for t in texts.values())
    assert any(loc.startswith("methodology/") and len(t) > 200 for loc, t in texts.items())
    # The pages themselves keep their tables.
    page = (fixture_site / "workloads/matmul-128/index.html").read_text("utf-8")
    assert "samples × calls" in page


def test_site_pulls_nothing_from_the_network(fixture_site):
    for html in fixture_site.rglob("*.html"):
        text = html.read_text("utf-8")
        # Links to other sites are fine; scripts, images, styles and fonts must be local.
        assert not re.search(r'<(script|img)[^>]+src="https?://', text), html
        assert not re.search(r'<link[^>]+href="https?://[^"]+"[^>]*rel="stylesheet"', text), html
        assert "fonts.googleapis.com" not in text, html


def test_site_builds_strictly_from_no_results(tmp_path):
    done = build_site(tmp_path, tmp_path / "no-results")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "not measured" in (tmp_path / "site/index.html").read_text("utf-8").lower()


def test_output_depends_on_neither_the_hash_seed_nor_the_processes(fixture_root, tmp_path):
    """Separate processes with different string hashing (set order) give the same bytes,
    and so do the two processes of `--jobs 2` and the one of `--jobs 1`: the fixture
    site's docs (FIXTURE_HASH_SEED, two processes) against the same records rendered again."""
    out = tmp_path / "docs"
    done = run_report(RESULTS, out, hash_seed=str(int(FIXTURE_HASH_SEED) + 1), jobs=1)
    assert done.returncode == 0, done.stderr
    again, first = generated(out), generated(fixture_root / "docs")
    assert sorted(again) == sorted(first)
    assert [path for path in sorted(first) if again[path] != first[path]] == []


def test_every_page_module_renders_in_one_half_of_the_build():
    """A page is added as a module of report/pages and a place in report_build.HALVES: one left
    out of HALVES would never be rendered, one in both would be rendered twice."""
    modules = {path.stem for path in Path(pages.__file__).parent.glob("*.py")} - {"__init__"}
    placed = [page.__name__.rsplit(".", 1)[1] for page in report_build.PAGES]
    assert sorted(placed) == sorted(modules)


def test_pages_that_share_a_memo_render_in_one_half(tmp_path, monkeypatch):
    """The two halves of the pages render in two processes (`--jobs 2`), each with its own
    Data: a memo asked for by pages of both halves (the judged ledger, the case table) is
    computed twice, and the half that was balanced to take half the time takes more. Every
    memo the pages and the export ask for on the fixture results, by the half that asks."""
    asking: list[object] = [None]
    asked: dict[object, set] = defaultdict(set)
    memo = Data.memo

    def recorded(self, key, compute):
        asked[key].add(asking[0])
        return memo(self, key, compute)

    monkeypatch.setattr(Data, "memo", recorded)
    monkeypatch.setattr(charts, "_draw", lambda *job: None)  # the memos, not the drawings
    site = Site(Data(load(RESULTS)), tmp_path, results=RESULTS)
    with charts.drawn_together(workers=1):
        for page in report_build.PAGES:
            asking[0] = page
            page.render(site)
        asking[0] = report_build.overview  # the export is written beside the home page (report_build._render)
        export.write(site.data, tmp_path / report_build.DATA_DIR)
    half = {page: number for number, pages_of in enumerate(report_build.HALVES) for page in pages_of}
    assert asked, "no page asked for a memo: the check checks nothing"
    split = {str(key): sorted(page.__name__ for page in by) for key, by in asked.items()
             if len({half[page] for page in by}) > 1}
    assert split == {}, f"memos asked for by pages of both halves of report/build.py's HALVES: {split}"
