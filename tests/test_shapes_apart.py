"""Shape streams are not fixed-shape cases: their records stay off every table built for
fixed shapes (the shown records, the cases, the published figures, and so the workload
pages, all results and the guide) and reach the varying-shapes page alone."""

from __future__ import annotations

import pytest
from fixtures import make_results as fx
from fixtures.stream_records import WORKLOAD, page_records

from bench.records import append_records
from report.analysis import Data, load
from report.pages import all_results, guide, shapes, workloads
from report.site import Site

FIXED = "trivial-call"


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("apart")
    fixed = [fx.ok_record(fx.ENV_A, FIXED, mode, None, repeat=r, repeats=3)
             for mode in ("eager", "default", "reduce-overhead") for r in range(3)]
    append_records(root / "results" / "cuda.jsonl", fixed + page_records())
    site = Site(Data(load(root / "results")), root / "docs")
    for page in (workloads, all_results, guide, shapes):
        page.render(site)
    return site, root / "docs"


def test_stream_records_are_read_but_left_out_of_every_fixed_shape_table(built):
    data = built[0].data
    assert WORKLOAD in set(data.records["workload"])
    for table in (data.shown, data.cases, data.published):
        assert FIXED in set(table["workload"])
        assert WORKLOAD not in set(table["workload"])
    assert WORKLOAD not in data.workloads


def test_generic_pages_do_not_list_a_stream(built):
    docs = built[1]
    assert (docs / "workloads" / f"{FIXED}.md").exists()
    assert not (docs / "workloads" / f"{WORKLOAD}.md").exists()
    generic = [docs / "workloads" / "index.md", docs / all_results.PAGE,
               *(docs / "analysis" / "results").glob("*.md"), docs / guide.PAGE,
               *(docs / "guide").rglob("*.md")]
    for page in generic:
        if page.exists():
            assert WORKLOAD not in page.read_text(), page


def test_the_shapes_page_lists_the_stream_in_the_same_environment(built):
    text = (built[1] / shapes.PAGE).read_text()
    assert f"| {WORKLOAD}, batch 1" in text
    assert built[0].data.environments[fx.ENV_A.env_id()].label in text
