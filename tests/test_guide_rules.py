"""The decision guide's rules: thresholds are found in the records, never typed, and one
recommendation function serves the guide and a model of one's own."""

from __future__ import annotations

import dataclasses
import math

import pandas as pd
import pytest
from fixtures import make_results as fx

from bench.modes import MODES
from bench.records import Activity, CompileTimes, DynamoCounters, Record
from report import analysis, guide_rules
from report.guide_rules import find_split, flow, pick, recommend

EAGER_BUSY = {1: 0.40, 2: 0.55, 4: 0.70, 8: 0.97, 16: 0.99}  # vit16x6x384 on a made-up GPU


def record(env, workload: str, mode: str, batch: int | None, median_s: float, *,
           busy: float | None = None, kernels: float | None = None, cold_s: float = 4.0,
           cycle: tuple[int, ...] = (), training: bool = False, recompiles: int = 0) -> Record:
    # The fixture's records of a known workload, renamed: only the fields set here matter.
    known = mode if mode in fx.FACTORS[env.backend] else "default"
    made = fx.ok_record(env, "vit16x6x384" if batch else "trivial-call", known, batch)
    made = dataclasses.replace(made, key=dataclasses.replace(made.key, workload=workload, mode=mode),
                               mode_traits=MODES[mode].traits)
    cuda = env.backend == "cuda"
    info = dataclasses.replace(made.workload_info, batch_cycle=cycle, training=training)
    compiled = made.mode_traits.compiled
    return dataclasses.replace(
        made, workload_info=info, timing=fx.timing(median_s, 0.01, not cuda),
        activity=Activity(20, kernels if cuda else None, kernels if cuda else None, 0.0, 1.0,
                          median_s * busy if busy is not None else None, busy),
        compile=CompileTimes(cold_s, cold_s / 10, (cold_s,)) if compiled else None,
        dynamo=DynamoCounters(0, recompiles, 1 + recompiles, 0) if compiled else None)


def cases_of(tmp_path, records) -> pd.DataFrame:
    fx.write(tmp_path / "results" / "r.jsonl", records)
    return analysis.Data(analysis.load(tmp_path / "results")).cases


def vit_on_gpu() -> list[Record]:
    """Graphs (reduce-overhead) pay over default while eager keeps the GPU at most 70%
    busy (batch <= 4), and stop paying from 97% (batch 8); the compiled call launches
    60 kernels. A trivial call is launch-bound too, but compiles into 1 kernel, where
    graphs do not pay."""
    out = []
    for batch, busy in EAGER_BUSY.items():
        eager = 1e-3 * batch
        graphs_gain = 2.0 if busy < 0.9 else 1.0
        out += [record(fx.ENV_A, "vit16x6x384", "eager", batch, eager, busy=busy, kernels=90),
                record(fx.ENV_A, "vit16x6x384", "default", batch, eager / 1.1, busy=busy,
                       kernels=60),
                record(fx.ENV_A, "vit16x6x384", "reduce-overhead", batch,
                       eager / 1.1 / graphs_gain, busy=0.99, kernels=60)]
    out += [record(fx.ENV_A, "trivial-call", "eager", None, 1e-5, busy=0.1, kernels=1),
            record(fx.ENV_A, "trivial-call", "default", None, 1e-5, busy=0.1, kernels=1),
            record(fx.ENV_A, "trivial-call", "reduce-overhead", None, 2e-5, busy=0.1, kernels=1)]
    return out


def test_split_cuts_between_the_last_point_that_paid_and_the_first_that_did_not():
    points = pd.DataFrame({"workload": ["w"] * 5, "batch_size": [1, 2, 4, 8, 16],
                           "busy": [0.4, 0.55, 0.7, 0.97, 0.99],
                           "pays": [True, True, True, False, False]})
    split = find_split(points, "busy", "pays", "below")
    assert (split.near, split.far) == (0.7, 0.97)
    assert (split.near_hits, split.near_n, split.far_hits, split.far_n) == (3, 3, 0, 2)
    assert split.near_points == (("w", 1, True), ("w", 2, True), ("w", 4, True))
    assert split.far_points == (("w", 8, False), ("w", 16, False))


def test_split_weighs_a_rare_outcome_as_much_as_a_common_one():
    """Nine points that never pay and one that does, at the lowest busy fraction: plain
    accuracy would call "never" good enough; balanced accuracy finds the cut."""
    busy = [0.1 * i for i in range(1, 11)]
    points = pd.DataFrame({"workload": ["w"] * 10, "batch_size": range(10), "busy": busy,
                           "pays": [True] + [False] * 9})
    assert find_split(points, "busy", "pays", "below").near == pytest.approx(0.1)


def test_split_without_both_outcomes_finds_no_cut_and_counts_the_points():
    points = pd.DataFrame({"workload": ["w"] * 3, "batch_size": [1, 2, 3],
                           "busy": [0.2, 0.5, 0.9], "pays": [False, False, False]})
    split = find_split(points, "busy", "pays", "below")
    assert not split.found and split.measured
    assert (split.near_hits, split.near_n) == (0, 3)


def test_launch_bound_threshold_is_the_busiest_point_where_graphs_paid(tmp_path):
    fl = flow(cases_of(tmp_path, vit_on_gpu()))
    assert (fl.busy.near, fl.busy.far) == (0.70, 0.97)
    assert fl.graphs_mode == "reduce-overhead" and fl.plain_mode == "default"
    assert fl.batch_limits == (("vit16x6x384", 4),)


def test_kernels_after_compiling_separate_the_launch_bound_points(tmp_path):
    fl = flow(cases_of(tmp_path, vit_on_gpu()))
    assert (fl.kernels.near, fl.kernels.far) == (60, 1)
    assert fl.leaves["launch-many"].pick.mode == "reduce-overhead"
    assert fl.leaves["launch-many"].pick.n == 3


def test_device_bound_leaf_picks_the_plain_compiled_mode_within_the_gain(tmp_path):
    """At batch 8 and 16 graphs add nothing: default and reduce-overhead tie at one cost,
    and the site's mode order names default."""
    fl = flow(cases_of(tmp_path, vit_on_gpu()))
    leaf = fl.leaves["device-bound"]
    assert leaf.pick.mode == "default"
    assert leaf.pick.speedup == pytest.approx(1.1, rel=1e-3)


def in_processes(made: Record, medians: tuple[float, ...]) -> list[Record]:
    """`made` as one process per median."""
    return [dataclasses.replace(made, process=fx.process(i, len(medians)),
                                timing=fx.timing(m, 0.01, False))
            for i, m in enumerate(medians)]


@pytest.mark.parametrize(("moves", "mode"), [(0.05, "eager"), (0.0, "default")])
def test_pick_stays_eager_in_a_tie_and_takes_a_lead_outside_the_spread(tmp_path, moves, mode):
    """A 3% lead is a tie where the two processes of each mode overlap (the cheaper side,
    eager, is the answer) and a lead where they do not: the rule of analysis.choose."""
    eager = record(fx.ENV_A, "mlp", "eager", 1, 1e-3)
    default = record(fx.ENV_A, "mlp", "default", 1, 1e-3 / 1.03)
    cases = cases_of(tmp_path, [*in_processes(eager, (1e-3, 1e-3 * (1 - moves))),
                                *in_processes(default, (1e-3 / 1.03, 1e-3 / 1.03 * (1 + moves)))])
    found = pick(cases)
    assert found.mode == mode and found.compiles == (mode != "eager")
    assert (found.cold_calls is None) == (mode == "eager")
    (chosen,) = guide_rules.chosen(cases, 1e9).values()  # every mode paid back
    assert chosen.mode == mode


def test_break_even_is_the_compile_time_over_the_saving_per_call(tmp_path):
    cases = cases_of(tmp_path, [record(fx.ENV_A, "mlp", "eager", 1, 2e-3),
                                record(fx.ENV_A, "mlp", "default", 1, 1e-3, cold_s=5.0)])
    found = pick(cases)
    assert found.mode == "default"
    assert found.cold_calls == math.ceil(5.0 / 1e-3)
    assert found.warm_calls == math.ceil(0.5 / 1e-3)


def test_break_even_saves_what_the_paired_processes_saved(tmp_path):
    """The guide's break-even took its saving from the one isolated process per mode, where
    eager ran as slow as reduce-overhead: "never", beside a 2x paired speedup."""
    from fixtures import model_records as mx

    found = pick(cases_of(tmp_path, mx.eager_alone_as_slow_as_reduce_overhead()))
    assert found.mode == "reduce-overhead" and found.speedup == pytest.approx(2.0)
    assert found.cold_calls == 15000  # 30 s over 4 ms x (1 - 1/2) saved per call


def test_branches_without_records_are_not_measured(tmp_path):
    fl = flow(cases_of(tmp_path, vit_on_gpu()))
    assert not fl.leaves["training"].pick.measured
    assert not fl.leaves["varying"].pick.measured
    assert (fl.training_points, fl.dynamic_points) == (0, 0)


def test_varying_shapes_go_to_their_own_leaf_with_the_recompiles(tmp_path):
    cycle = (8, 16, 32)
    records = vit_on_gpu() + [
        record(fx.ENV_A, "dynamic-mlp", "eager", None, 1e-3, busy=0.5, kernels=4, cycle=cycle),
        record(fx.ENV_A, "dynamic-mlp", "default", None, 0.9e-3, busy=0.5, kernels=3,
               cycle=cycle, recompiles=2),
        record(fx.ENV_A, "dynamic-mlp", "default-dynamic", None, 0.6e-3,
               busy=0.5, kernels=3, cycle=cycle)]
    cases = cases_of(tmp_path, records)
    fl = flow(cases)
    assert fl.dynamic_points == 1
    assert fl.leaves["varying"].pick.mode == "default-dynamic"
    assert fl.leaves["varying"].recompiles == 2
    versus = fl.leaves["varying"].versus
    assert (versus.mode, versus.base) == ("default-dynamic", "default")
    assert versus.speedup == pytest.approx(1.5, rel=1e-3)
    rec = recommend(cases[cases["workload"] == "dynamic-mlp"], fl)
    assert rec.leaf == "varying" and rec.mode == "default-dynamic"


def test_training_steps_go_to_their_own_leaf(tmp_path):
    records = vit_on_gpu() + [
        record(fx.ENV_A, "train-mlp", "eager", 8, 2e-3, busy=0.3, kernels=20, training=True),
        record(fx.ENV_A, "train-mlp", "default", 8, 1e-3, busy=0.3, kernels=10, training=True)]
    fl = flow(cases_of(tmp_path, records))
    assert fl.training_points == 1
    assert fl.leaves["training"].pick.mode == "default"


def test_without_a_busy_fraction_the_flow_asks_how_long_an_eager_call_takes(tmp_path):
    records = []
    for workload, eager, gain in (("trivial-call", 1e-5, 0.5), ("matmul-128", 3e-5, 0.6),
                                  ("mlp", 5e-3, 1.5), ("vit16x6x384", 4e-2, 1.3)):
        batch = 1 if workload in ("mlp", "vit16x6x384") else None
        records += [record(fx.ENV_CPU, workload, "eager", batch, eager),
                    record(fx.ENV_CPU, workload, "default", batch, eager / gain)]
    fl = flow(cases_of(tmp_path, records))
    assert fl.busy is None and fl.graphs_mode is None
    assert (fl.latency.near, fl.latency.far) == (5e-3, 3e-5)
    assert fl.leaves["slow-call"].pick.mode == "default"
    assert fl.leaves["fast-call"].pick.mode == "eager"


def test_recommendation_follows_the_points_own_measurements_and_states_the_path(tmp_path):
    cases = cases_of(tmp_path, vit_on_gpu())
    fl = flow(cases)
    point = cases[(cases["workload"] == "vit16x6x384") & (cases["batch_size"] == 2)]
    rec = recommend(point, fl)
    assert rec.mode == "reduce-overhead" and rec.leaf == "launch-many" and rec.agrees
    assert "eager keeps the GPU busy 55% (launch-bound at ≤ 70%)" in rec.reason
    assert "kernels per compiled call: 60 (many at ≥ 60)" in rec.reason


def test_recommendation_without_the_environments_other_points_rests_on_its_own(tmp_path):
    """A model measured alone, as a results folder of one's own holds it: no threshold
    can be found from one point, and the recommendation is its own fastest mode."""
    cases = cases_of(tmp_path, [record(fx.ENV_CPU, "pkg.mod:factory", "eager", 1, 2e-3),
                                record(fx.ENV_CPU, "pkg.mod:factory", "default", 1, 1e-3)])
    rec = recommend(cases)
    assert rec.mode == "default"
    assert rec.leaf_mode is None or rec.leaf_mode == "default"


def test_recommendations_cover_every_point_in_workload_then_batch_order(tmp_path):
    cases = cases_of(tmp_path, vit_on_gpu())
    recs = guide_rules.recommendations(cases, {(fx.ENV_A.env_id(), "float32"): flow(cases)})
    assert [(r["workload"], r["batch_size"]) for r in
            analysis.rows(recs[["workload", "batch_size"]])] == [
        ("trivial-call", None), *(("vit16x6x384", b) for b in EAGER_BUSY)]


# ---- the pages that render the rules ------------------------------------------------------------

def build_docs(tmp_path, records):
    from report.build import build

    fx.write(tmp_path / "results" / "r.jsonl", records)
    build(tmp_path / "results", tmp_path / "docs")
    return tmp_path / "docs"


def flow_section(page: str) -> str:
    start = page.index("## The decision flow\n")
    return page[start:page.index("\n## ", start + 1)]


def test_guide_flow_states_the_thresholds_found_in_the_records(tmp_path):
    page = (build_docs(tmp_path, vit_on_gpu()) / "analysis" / "guide.md").read_text("utf-8")
    flow = flow_section(page)
    assert ("**Does eager keep the GPU ≤ 70.0% busy** (launch-bound: in float32, batch ≤ 4 for "
            "vit16x6x384)?" in flow)
    assert "**does the compiled call still launch ≥ 60 kernels?**" in flow
    assert "1. **A training step?** Yes: not measured." in flow
    # A backend with no records gets no tab: a reader never lands on "Not measured".
    assert '=== "cuda"' in flow and '=== "mps"' not in flow and '=== "cpu"' not in flow


def test_guide_flow_renders_without_records(tmp_path):
    page = (build_docs(tmp_path, []) / "analysis" / "guide.md").read_text("utf-8")
    assert "Not measured: no records from any machine yet." in flow_section(page)


def test_guide_flow_rounds_break_even_calls_to_what_their_range_supports():
    from report.formatting import about

    assert about(11_363, 2_000, 40_000) == "about 10,000"
    assert about(11_363, 10_500, 12_000) == "about 11,000"
    assert about(7, 3, 40) == "7"


def test_a_count_of_calls_agrees_with_its_number():
    from report.formatting import about_calls

    assert about_calls(1) == "1 call"  # not "pays back in 1 calls" (issue 93)
    assert about_calls(11_363, 2_000, 40_000) == "about 10,000 calls"
    assert about_calls(math.inf) == "never"


def test_byom_page_says_when_no_model_of_ones_own_was_measured(tmp_path):
    page = (build_docs(tmp_path, vit_on_gpu()) / "analysis" / "bring-your-own-model.md"
            ).read_text("utf-8")
    assert "No model of your own is in the records" in page
    assert "python -m bench --workload examples.byom.tiny_models:factory" in page
    # How long a run takes, from the records' own durations: 12.5 s a case, three modes.
    assert ("about 0.62\u00a0min on cuda (the median case of each of 3 modes, summed; 18 cases)"
            in page)


def test_byom_page_recommends_a_mode_for_an_external_model(tmp_path):
    spec = "pkg.models:factory"
    records = [dataclasses.replace(r, workload_info=dataclasses.replace(r.workload_info,
                                                                        family="external"))
               for r in (record(fx.ENV_CPU, spec, "eager", 1, 2e-3),
                         record(fx.ENV_CPU, spec, "default", 1, 1e-3))]
    docs = build_docs(tmp_path, records)
    assert (docs / "workloads" / f"{spec}.md").is_file()
    page = (docs / "analysis" / "bring-your-own-model.md").read_text("utf-8")
    section = page[page.index("## Your models in these records"):]
    assert f"(../workloads/{spec}.md)" in section
    assert "| 1 | **default** | 2.00×" in section
