"""The ledger's fourth pass (issue 91): "exceeds" only past a point on the side where the
claim's effect grows, never for a cost; contradictions that open with what their settled
comparisons say; the "up to" aggregate keeping its paired label; claims re-encoded to the
quantity their seeds name."""

from __future__ import annotations

from pathlib import Path

import pytest

from report import ledger
from report.ledger.comparison import Comparison, judged
from report.ledger.kinds import paired
from tests.test_ledger import CUDA, _pages, claim, speedups

BOOK = ledger.load_ledger()


def outcome(test: ledger.Test, figure: float) -> str:
    """The answer of one settled comparison at `figure` (three processes a side)."""
    comparison = Comparison(workload="vit16x6x384", batch=1, axis="batch", family="vit",
                            flops=None, figure=figure, processes=(3, 3))
    judged(comparison, [figure], ledger.rule(test))
    return comparison.outcome


@pytest.mark.parametrize("figure, expected", [(2.1e-6, "holds"), (3.3e-6, "fails"),
                                              (1.0e-6, "fails")])
def test_graph_launch_2us_fails_past_its_point_on_either_side(figure, expected):
    """A graph launch measured at 3.0-3.6 µs against "about 2 µs" costs more than stated:
    the claim fails there, and the contradictions page must not count it as support."""
    test = BOOK.claim("graph-launch-2us").test
    assert ledger.larger_of(test) == ledger.COST
    assert outcome(test, figure) == expected


COSTS = [
    ({"kind": "absolute", "field": "mean_kernel_s", "mode": "default", "at_least": 2e-5,
      "at_most": 3e-5, "tolerance": 0.1}, 1.4e-4),  # kernels of 143 µs are not tiny ones
    ({"kind": "absolute", "field": "idle_s_per_call", "mode": "default", "about": 1e-4,
      "tolerance": 0.25}, 3e-4),
    ({"kind": "launch-chain", "field": "per_launch_overhead_s", "mode": "eager",
      "about": 5e-6, "tolerance": 0.25}, 8e-6),
]
EFFECTS = [
    ({"kind": "speedup", "mode": "reduce-overhead", "baseline": "default", "about": 1.55,
      "tolerance": 0.25}, 2.5),
    ({"kind": "absolute", "field": "cold_first_call_s", "mode": "default", "about": 0.876,
      "tolerance": 0.5}, 4.0),  # a first call slower than "most of a second"
    # "the GPU sits idle a large share of the run": 64% idle is more of it than 22%
    ({"kind": "absolute", "field": "idle_fraction", "mode": "default", "about": 0.22,
      "tolerance": 0.25}, 0.64),
    ({"kind": "share-of-gain", "mode": "default", "baseline": "eager",
      "reference": "reduce-overhead", "about": 0.4, "tolerance": 0.25}, 0.8),
]


@pytest.mark.parametrize("test, above", COSTS)
def test_a_cost_above_its_point_fails(test, above):
    found = claim(test).test
    assert ledger.larger_of(found) == ledger.COST
    assert outcome(found, above) == "fails"


@pytest.mark.parametrize("test, above", EFFECTS)
def test_an_effect_above_its_point_is_exceeded(test, above):
    found = claim(test).test
    assert ledger.larger_of(found) == ledger.EFFECT
    assert outcome(found, above) == "exceeds"
    assert outcome(found, found.about * 0.3) == "fails"


def test_a_stated_reduction_is_exceeded_below_it():
    """"71x fewer kernels": 100x fewer is more of the effect; 1.0x is none of it."""
    test = BOOK.claim("vit-small-ro-71x-fewer-kernels").test
    assert outcome(test, 0.01) == "exceeds"
    assert outcome(test, 1.0) == "fails"


def test_the_largest_speedup_keeps_its_paired_label():
    """"Up to X" over paired comparisons reads "3 paired proc.", not "3×3 proc."."""
    items = [Comparison(workload="vit16x6x384", batch=b, axis="batch", family="vit",
                        flops=None, figure=f, lo=f, hi=f, n=3, processes=(3, 3), paired=True)
             for b, f in ((1, 2.0), (2, 3.0))]
    [top] = paired.largest(items, ledger.rule(claim(
        {"kind": "speedup", "mode": "reduce-overhead", "baseline": "eager", "at_least": 2.5,
         "tolerance": 0, "aggregate": "max"}).test))
    assert top.paired and top.figure == 3.0


def _answer(tmp_path, by_batch: dict, processes=None) -> str:
    """The opening of the max-autotune against reduce-overhead question, on records of
    reduce-overhead against max-autotune at the batches of `by_batch` (speedups)."""
    records = speedups(CUDA, "vit16x6x384", "reduce-overhead", "max-autotune", by_batch,
                       processes=processes)
    text = _pages(tmp_path, records)["analysis/claims/contradictions.md"]
    part = text[text.index("{ #contradiction-max-autotune-vs-reduce-overhead }"):]
    return part[part.index("**Answer.**"):].splitlines()[1]


def test_a_contradiction_opens_with_its_settled_comparisons_in_the_verdicts_words(tmp_path):
    """At batch 1 reduce-overhead is 1.5x max-autotune, at batch 8 as fast: "max-autotune
    matches reduce-overhead" is settled both ways (depends) and "reduce-overhead is not
    slower" holds at both (supported)."""
    opening = _answer(tmp_path, {1: 1.5, 8: 1.0})
    assert "neither" not in opening.lower() and "no comparison" not in opening.lower()
    assert ("[`vit-ma-matches-ro`](seed-001.md#vit-ma-matches-ro) depends: 1 of its 2 settled "
            "comparisons agrees with it (1.00×) and 1 contradicts it (0.667×)") in opening
    assert ("[`ro-beats-ma`](seed-002.md#ro-beats-ma) is supported: both its settled "
            "comparisons agree with it (1.00–1.50×)") in opening


def test_a_contradiction_without_a_settled_comparison_says_so(tmp_path):
    one = {1: ((1.5e-3,), (1e-3,))}  # one process a side: never settled
    opening = _answer(tmp_path, {1: 1.5}, processes=one)
    assert opening == "No comparison of its claims is settled in any environment."


@pytest.mark.parametrize("claim_id, quantity", [
    ("vit-default-idle-gaps", "idle_fraction"),
    ("vit-small-ro-idle-gone", "idle_s_per_call"),
    ("doc-ro-may-hold-more-memory", "case_peak_reserved_bytes"),
    ("steady-after-couple-calls", "first_calls_much_slower"),
])
def test_the_unfaithful_claims_read_the_quantity_their_seed_names(claim_id, quantity):
    test = BOOK.claim(claim_id).test
    assert quantity in (test.field, test.metric)


def test_idle_removed_holds_at_the_seeds_98_percent_and_fails_well_short_of_it():
    test = BOOK.claim("vit-small-ro-idle-gone").test
    assert outcome(test, 0.02) == "holds"  # 98% of the idle time removed
    assert outcome(test, 0.2) == "fails"  # 80% removed


def test_fusion_claims_leave_out_the_workload_the_seed_says_has_nothing_to_fuse():
    assert "matmul-softmax" not in BOOK.claim("fusion-fewer-gpu-kernels").workloads


def test_no_memory_claim_reads_a_version_1_records_device_peak(tmp_path):
    """A version 1 record's device-memory peak includes the workspace cuBLAS allocates on
    its first matmul: the ledger leaves it out; the record's other figures stay."""
    import shutil

    from report import analysis
    from report.ledger.values import process_values
    shutil.copy(Path(__file__).parent / "fixtures" / "results" / "h100-b.jsonl", tmp_path)
    records = analysis.load(tmp_path)
    assert set(records[analysis.loading.WRITTEN]) == {1}
    assert records["peak_device_bytes"].notna().any()
    data = analysis.Data(records)
    values = process_values(data.shown, data.paired)
    assert not values["peak_device_bytes_v"].map(len).any()
    assert values["median_s_v"].map(len).all()


def test_a_graphs_overhead_is_set_against_reduce_overheads_fixed_cost_not_its_latency(tmp_path):
    """The graph runs each chain unfused (1.2 µs a kernel, 4 µs a call); reduce-overhead
    fuses it (a flat 0.01 µs a kernel) but pays 80 µs a call. Total latency would favour
    reduce-overhead on the longest chain; the fixed cost of a call is 4 / 80 = 0.05."""
    from tests.test_ledger import _chains, data_of, only
    records = (_chains(CUDA, "cuda-graph", 1.2e-6, fixed=4e-6)
               + _chains(CUDA, "reduce-overhead", 1e-8, fixed=8e-5))
    j = only(data_of(tmp_path, records), BOOK.claim("manual-graph-lower-overhead"))
    assert j.figure == pytest.approx(0.05) and j.verdict == "holds"


def test_a_baseline_of_one_launch_a_call_has_no_launches_to_group(tmp_path):
    """Default fuses the 1000-kernel chain into one launch; reduce-overhead replays its graph
    and copies the input: 2 launches, which no graph can bring below one."""
    import dataclasses

    from tests.test_ledger import data_of, only, record, twice

    def launches(r):
        return dataclasses.replace(r, activity=dataclasses.replace(
            r.activity, launches_per_call=2 if r.key.mode == "reduce-overhead" else 1))
    records = [launches(r) for mode in ("default", "reduce-overhead")
               for r in twice(record, CUDA, "launch-chain-1000", mode, None, 1e-5, kernels=1)]
    j = only(data_of(tmp_path, records), BOOK.claim("ro-uses-graphs-under-hood"))
    assert j.verdict == "not measured"
    assert "none to group" in j.reason


def test_the_hundredfold_cut_sets_a_graphs_call_against_forty_launches_one_by_one(tmp_path):
    """Eager: 5 µs a launch, so 200 µs for forty; the graph: 2 µs a call whatever its
    length. The seed's 100x is their ratio, 0.01; a graph costing 8 µs cuts it 25x."""
    from tests.test_ledger import _chains, data_of, only
    claim_ = BOOK.claim("graph-100x-less-overhead")
    cut = _chains(CUDA, "eager", 5e-6) + _chains(CUDA, "cuda-graph", 1.2e-6, fixed=2e-6)
    j = only(data_of(tmp_path / "a", cut), claim_)
    assert j.figure == pytest.approx(0.01) and j.verdict == "holds"
    less = _chains(CUDA, "eager", 5e-6) + _chains(CUDA, "cuda-graph", 1.2e-6, fixed=8e-6)
    assert only(data_of(tmp_path / "b", less), claim_).verdict == "fails"
