"""One ratio, one timing method (issue 91): a ratio of two modes divides the medians of
paired processes that timed both, or both modes' isolated medians; never a paired median
by an isolated one. Built where it went wrong: a later paired run timed eager and default
only, so their cases publish paired figures while reduce-overhead has isolated processes
alone. Every consumer (the published table, the export, the chooser, the fastest mode,
the ledger) must get the all-isolated ratio, labelled "isolated"."""

from __future__ import annotations

import dataclasses
import math

import pytest
from fixtures import make_results as fx
from fixtures import model_records as mr

from report import analysis, export, ledger
from report.analysis import Data

ENV = mr.ENV.env_id()
# The isolated processes of eager and default ran 1.5x slower than their paired ones, so a
# ratio that mixes the two methods differs from either all-isolated or all-paired.
SLOWER = 1.5
EAGER_S = mr.EAGER_S["resnet50"]
RO_S = EAGER_S * mr.FACTOR["reduce-overhead"]  # reduce-overhead's isolated median


def records() -> list:
    out = []
    for repeat in range(3):
        for mode in ("eager", "default", "reduce-overhead"):
            record = mr.isolated("resnet50", mode, 1, repeat)
            if mode != "reduce-overhead":
                median = EAGER_S * mr.FACTOR[mode] * fx.REPEAT_SCALES[repeat] * SLOWER
                record = dataclasses.replace(record, timing=fx.timing(median, 0.02, False))
            out.append(record)
        out += mr.paired("resnet50", ("eager", "default"), 1, repeat)
    return out


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Data:
    folder = tmp_path_factory.mktemp("one-timing")
    fx.write(folder / "r.jsonl", records())
    return Data(analysis.load(folder))


ISOLATED_OVER_EAGER = SLOWER * EAGER_S / RO_S  # 3.0; mixed it would read 2.0
ISOLATED_OVER_DEFAULT = SLOWER * EAGER_S * mr.FACTOR["default"] / RO_S  # 2.4; mixed 1.6


def test_the_cases_publish_as_the_fixture_means(data):
    eager = analysis.row_of(data.published, ENV, "resnet50", 1, "eager")
    graphed = analysis.row_of(data.published, ENV, "resnet50", 1, "reduce-overhead")
    assert eager["timing"] == "paired" and eager["latency_s"] == pytest.approx(EAGER_S)
    assert graphed["paired_processes"] == 0


def test_the_published_ratio_divides_isolated_medians_on_both_sides(data):
    row = analysis.row_of(data.published, ENV, "resnet50", 1, "reduce-overhead")
    assert row["timing"] == "isolated"
    assert row["speedup"] == pytest.approx(ISOLATED_OVER_EAGER)
    assert row["latency_base_s"] == pytest.approx(SLOWER * EAGER_S)
    assert row["latency_base_s"] / row["latency_s"] == pytest.approx(row["speedup"])
    assert row["saving_s"] == pytest.approx(row["latency_base_s"] - row["latency_s"])
    assert row["processes"] == 3  # the isolated processes a side, not the paired ones


def test_a_paired_comparison_still_divides_the_paired_processes(data):
    row = analysis.row_of(data.published, ENV, "resnet50", 1, "default")
    assert row["timing"] == "paired"
    assert row["speedup"] == pytest.approx(1 / mr.FACTOR["default"])


def test_the_export_gives_the_same_ratios_against_eager_and_against_default(data):
    table = export.table(data)
    graphed = table[(table["workload"] == "resnet50") & (table["mode"] == "reduce-overhead")]
    over = graphed.set_index("baseline")
    assert over.at["eager", "speedup"] == pytest.approx(ISOLATED_OVER_EAGER)
    assert over.at["eager", "timing"] == "isolated"
    assert over.at["eager", "eager_latency_s"] == pytest.approx(SLOWER * EAGER_S)
    assert over.at["default", "speedup"] == pytest.approx(ISOLATED_OVER_DEFAULT)
    # against another baseline too, the row says how its ratio was timed and what it rests on
    assert over.at["default", "timing"] == "isolated" and over.at["default", "processes"] == 3


def test_compare_against_another_baseline_labels_its_ratio(data):
    found = analysis.compare(data.cases, "reduce-overhead", "default")
    row = analysis.rows(found)[0]
    assert row["timing"] == "isolated" and not row["paired"]
    assert row["speedup"] == pytest.approx(ISOLATED_OVER_DEFAULT)
    assert row["compared_processes"] == 3


def test_the_chooser_reads_the_all_isolated_ratio(data):
    chosen = analysis.rows(analysis.choose(data.published, 10**9))[0]
    assert chosen["mode"] == "reduce-overhead" and chosen["timing"] == "isolated"
    assert chosen["speedup"] == pytest.approx(ISOLATED_OVER_EAGER)


def test_the_fastest_mode_leads_by_isolated_medians(data):
    best = analysis.rows(analysis.choose(data.published, math.inf))[0]
    assert best["mode"] == "reduce-overhead" and best["mode_runner_up"] == "default"
    assert best["margin"] == pytest.approx(ISOLATED_OVER_DEFAULT - 1)


def test_the_ledger_judges_the_all_isolated_ratio(data):
    claim = ledger.parse_ledger({"claims": [{
        "id": "ro-3x", "seed": "001", "line": 1, "paraphrase": "a claim made for a test",
        "figures": "", "metric": "speedup", "conditions": {
            "backend": "cuda", "training": False, "workloads": ["resnet50"]},
        "test": {"kind": "speedup", "mode": "reduce-overhead", "baseline": "eager",
                 "about": 3.0, "tolerance": 0.25}, "testable": True, "missing": ""}],
        "contradictions": []}).claims[0]
    env = data.environments[ENV]
    judgement = ledger.Judge(data).judge(claim, env)
    [comparison] = judgement.measured
    assert comparison.figure == pytest.approx(ISOLATED_OVER_EAGER)
    assert not comparison.paired and comparison.processes == (3, 3)


def test_the_guides_decision_flow_divides_isolated_medians_on_both_sides(data):
    """The flow's pick forms its own ratio where no paired process timed both modes: the
    all-isolated one, never eager's paired median over reduce-overhead's isolated one."""
    from report.guide_rules import pick

    found = pick(data.published[data.published["env_id"] == ENV])
    assert found.mode == "reduce-overhead"
    assert found.speedup == pytest.approx(ISOLATED_OVER_EAGER)


def test_the_flow_keeps_the_isolated_figures_its_pick_divides(data):
    from report.guide_rules import flow

    mine = data.published[data.published["env_id"] == ENV]
    leaves = [leaf for leaf in flow(mine).leaves.values() if leaf.pick.mode == "reduce-overhead"]
    assert leaves and all(leaf.pick.speedup == pytest.approx(ISOLATED_OVER_EAGER) for leaf in leaves)
