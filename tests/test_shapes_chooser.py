"""The guide's chooser answers varying shapes with the varying-shapes page's answer: its
data file (guide-data.json) carries, per stream measured, the text the page's first screen
prints, so that the two read the same; an environment without streams has none."""

from __future__ import annotations

import json

import pytest
from fixtures import make_results as fx
from fixtures.stream_records import WORKLOAD, page_records

from bench.records import append_records
from report.analysis import Data, load
from report.pages import guide, shapes
from report.site import Site


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("chooser")
    fixed = [fx.ok_record(env, "trivial-call", mode, None, repeat=r, repeats=3)
             for env in (fx.ENV_A, fx.ENV_CPU) for mode in ("eager", "default") for r in range(3)]
    # Streams measured on the H100 alone, and on another machine that measured nothing else.
    streams = page_records(fx.ENV_A) + page_records(fx.ENV_B)
    append_records(root / "results" / "all.jsonl", fixed + streams)
    site = Site(Data(load(root / "results")), root / "docs")
    guide.render(site)
    shapes.render(site)
    chooser = json.loads((root / "docs" / "analysis" / "guide-data.json").read_text())
    return site.data, chooser, (root / "docs" / shapes.PAGE).read_text()


def first_screen_row(page: str, label: str) -> list[str]:
    """The cells of the stream's row in the first screen's block of environment `label`."""
    block = page.split("## Every strategy")[0].split(f"**{label}**")[1]
    row = next(line for line in block.splitlines() if f"| {WORKLOAD}, batch 1" in line)
    return [c.strip() for c in row.strip().strip("|").split("|")]


def test_the_chooser_answers_a_varying_shape_input_as_the_page_does(built):
    data, chooser, page = built
    labels = {e["id"]: e["label"] for e in chooser["environments"]}
    assert {s[0] for s in chooser["streams"]} == {fx.ENV_A.env_id(), fx.ENV_B.env_id()}
    for env_id, workload, batch, dtype, kind, answer in chooser["streams"]:
        assert (workload, batch, dtype, kind) == (WORKLOAD, 1, "float32", "GPT-style decoder")
        cells = first_screen_row(page, labels[env_id])
        assert cells[0].endswith(f": {answer['inputs']}")
        assert cells[1:] == [f"`{answer['soonest']}`", answer["soonest_total"],
                             answer["eager_total"], f"`{answer['steadiest']}`",
                             answer["steadiest_p99"], answer["eager_p99"], answer["pays_off"],
                             answer["memory"]]
        # The fixture's picks (tests/test_shapes_report.py says why).
        assert (answer["soonest"], answer["steadiest"]) == ("default", "reduce-overhead-pad-pow2")
        assert answer["soonest_strategy"] == "automatic-dynamic"


def test_an_environment_that_measured_only_streams_can_be_picked(built):
    data, chooser, _ = built
    ids = [e["id"] for e in chooser["environments"]]
    assert fx.ENV_B.env_id() in ids and fx.ENV_B.env_id() not in data.environments
    assert fx.ENV_CPU.env_id() in ids  # no streams there: the chooser says not measured
    assert not [s for s in chooser["streams"] if s[0] == fx.ENV_CPU.env_id()]
    assert not [p for p in chooser["points"] if p[1] == WORKLOAD]
