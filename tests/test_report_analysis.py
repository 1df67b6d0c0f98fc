"""The analysis layer: which records the site shows, a case's figure as the median of its
process medians with their spread, comparisons settled only when every pairing of
processes agrees, ties inside the spread, break-even, and mode traits read from records."""

from __future__ import annotations

import dataclasses
import math

import pandas as pd
import pytest
from fixtures import RESULTS, model_records
from fixtures import make_results as fx

from bench.records import CaseKey
from report import analysis, formatting
from report.analysis import Data

A, B, CPU = fx.ENV_A.env_id(), fx.ENV_B.env_id(), fx.ENV_CPU.env_id()


@pytest.fixture(scope="module")
def data() -> Data:
    return Data(analysis.load(RESULTS))


def load(tmp_path, *records) -> Data:
    fx.write(tmp_path / "r.jsonl", list(records))
    return Data(analysis.load(tmp_path))


def case(data: Data, env_id: str, workload: str, mode: str, batch=None) -> dict:
    c = data.cases
    found = c[(c["env_id"] == env_id) & (c["workload"] == workload) & (c["mode"] == mode)
              & (c["batch_size"].isna() if batch is None else c["batch_size"] == batch)]
    assert len(found) == 1, found
    return analysis.rows(found)[0]


def runs(workload, mode, scales, batch=None, **kw):
    """One process per scale, each `scale` x the fixture latency of the mode."""
    return [fx.ok_record(fx.ENV_A, workload, mode, batch, scale=s, repeat=i,
                         repeats=len(scales), **kw) for i, s in enumerate(scales)]


def test_a_case_is_the_median_of_its_process_medians_with_their_range(tmp_path):
    data = load(tmp_path, *runs("matmul-128", "eager", (1.0, 1.3, 0.9)))
    row = case(data, A, "matmul-128", "eager")
    base = fx.latency(fx.ENV_A, "matmul-128", "eager", None)
    assert row["median_s"] == pytest.approx(base)
    assert (row["lo_s"], row["hi_s"]) == (pytest.approx(0.9 * base), pytest.approx(1.3 * base))
    assert row["n_processes"] == 3 and row["spread"] == pytest.approx(0.4 / 0.9)
    assert formatting.latency(row) == "12.0\u00a0µs (10.8–15.6, 3\u00a0proc.)"


def test_rerun_tags_are_further_processes_of_the_same_case(tmp_path):
    main = fx.ok_record(fx.ENV_A, "matmul-128", "eager", None)
    rerun = fx.ok_record(fx.ENV_A, "matmul-128", "eager", None, tag="rerun-1", scale=2.0,
                         started="2026-11-21T00:00:00+00:00")
    other = fx.ok_record(fx.ENV_A, "matmul-128", "eager", None, tag="experiment", scale=9.0)
    data = load(tmp_path, main, rerun, other)
    row = case(data, A, "matmul-128", "eager")
    assert row["n_processes"] == 2 and row["hi_s"] == pytest.approx(2 * row["lo_s"])
    assert len(data.shown) == 3  # the experiment tag is listed, not pooled


def test_newest_record_of_a_process_wins_and_counts_as_superseded(tmp_path):
    old = fx.ok_record(fx.ENV_A, "matmul-128", "eager", None, scale=5.0,
                       started="2026-01-01T00:00:00+00:00")
    new = fx.ok_record(fx.ENV_A, "matmul-128", "eager", None, started="2026-02-01T00:00:00Z")
    data = load(tmp_path, new, old)  # newest first: file order alone would pick wrongly
    assert case(data, A, "matmul-128", "eager")["median_s"] == pytest.approx(
        new.timing.median_s)
    assert data.superseded == 1


def test_a_newer_run_with_fewer_repeats_drops_the_older_runs_extra_processes(tmp_path):
    older = runs("matmul-128", "eager", (1.0, 1.0, 3.0), started="2026-01-01T00:00:00+00:00")
    newer = fx.ok_record(fx.ENV_A, "matmul-128", "eager", None,
                         started="2026-02-01T00:00:00+00:00")
    data = load(tmp_path, *older, newer)
    assert case(data, A, "matmul-128", "eager")["n_processes"] == 1


def test_resumed_repeats_of_two_invocations_join_one_case(tmp_path):
    first = runs("matmul-128", "eager", (1.0, 1.1, 1.2))[:2]
    second = runs("matmul-128", "eager", (1.0, 1.1, 1.2),
                  started="2026-11-21T00:00:00+00:00")[2:]
    assert case(load(tmp_path, *first, *second), A, "matmul-128", "eager")["n_processes"] == 3


def test_a_failed_process_leaves_the_case_ok_and_counts_it(tmp_path):
    ok = runs("matmul-128", "eager", (1.0, 1.1, 1.2))[:2]
    bad = fx.failed(fx.ENV_A, "matmul-128", "eager", None, "timeout", "slow", repeat=2,
                    repeats=3)
    row = case(load(tmp_path, *ok, bad), A, "matmul-128", "eager")
    assert row["ok"] and row["status"] == "ok" and row["n_processes"] == 2
    assert row["n_failed"] == 1


def test_cold_compile_time_comes_from_cold_processes_only(tmp_path):
    records = runs("matmul-128", "default", (1.0, 1.0, 1.0))
    warm = [dataclasses.replace(r, compile=dataclasses.replace(r.compile, cold_first_call_s=0.5))
            for r in records[1:]]
    row = case(load(tmp_path, records[0], *warm), A, "matmul-128", "default")
    assert row["cold_first_call_s"] == records[0].compile.cold_first_call_s


def test_compare_is_settled_only_when_every_pairing_agrees(tmp_path):
    eager = runs("vit16x6x384", "eager", (1.0, 1.0, 1.0), batch=1)
    close = runs("vit16x6x384", "reduce-overhead", (1.0, 2.6, 1.0), batch=1)  # 2.86x, 1.10x
    clear = runs("vit16x6x384", "max-autotune", (1.0, 1.1, 0.95), batch=1)
    data = load(tmp_path, *eager, *close, *clear)
    ro = analysis.rows(analysis.compare(data.cases, "reduce-overhead", at_least=1.3))[0]
    assert ro["speedup"] == pytest.approx(1 / 0.35) and ro["holds"]
    assert ro["speedup_lo"] == pytest.approx(1 / (0.35 * 2.6))
    assert ro["pairings"] == 9 and ro["settled"] is False
    ma = analysis.rows(analysis.compare(data.cases, "max-autotune", at_least=1.3))[0]
    assert ma["holds"] and ma["settled"] is True


def test_compare_with_one_process_a_side_is_one_pairing(tmp_path):
    data = load(tmp_path, fx.ok_record(fx.ENV_A, "matmul-128", "eager", None),
                fx.ok_record(fx.ENV_A, "matmul-128", "default", None))
    row = analysis.rows(analysis.compare(data.cases, "default"))[0]
    assert row["pairings"] == 1 and row["settled"] is True
    assert formatting.speedup(row) == "1.25×"  # a single-run environment: no mark per cell


def test_compare_without_a_baseline_is_not_judged(data):
    rows = analysis.rows(analysis.compare(data.cases, "max-autotune"))
    failed = [r for r in rows if r["workload"] == "vit16x6x384" and r["batch_size"] == 4
              and r["env_id"] == A]
    assert failed[0]["status"] == "oom" and failed[0]["speedup"] is None
    assert failed[0]["holds"] is None


def test_break_even_rounds_up_and_is_never_without_a_saving():
    calls = analysis.break_even(pd.Series([10.0, 5.0, None, 5.0]),
                                pd.Series([3.0, -1.0, 1.0, 0.0]))
    assert calls[0] == 4.0 and calls[1] == analysis.NEVER and math.isnan(calls[2])
    assert calls[3] == analysis.NEVER
    assert formatting.calls(analysis.NEVER) == "never"
    # 0.1 * 3 / 0.1 is 3.0000000000000004 in floating point: exactly 3 calls, not 4.
    assert analysis.break_even(pd.Series([0.1 * 3, 0.1 * 3 + 1e-9]),
                               pd.Series([0.1, 0.1])).tolist() == [3.0, 4.0]


def test_boundedness_bands():
    classes = analysis.boundedness(pd.Series([0.2, 0.6, 0.9, None]))
    assert list(classes) == ["launch-bound", "mixed", "device-bound", None]


def test_mode_traits_come_from_the_records(data):
    assert data.traits["cuda-graph"]["cuda_graphs"] and not data.traits["cuda-graph"]["compiled"]
    assert analysis.mode_with(data.cases, compiled=True) == "default"
    assert analysis.mode_with(data.cases, compiled=True, cuda_graphs=True) == "reduce-overhead"
    assert analysis.graph_pairs(data.cases) == [
        ("reduce-overhead", "eager"), ("reduce-overhead", "default"),
        ("max-autotune", "max-autotune-no-cudagraphs")]


def test_a_new_mode_needs_no_change_to_the_report(tmp_path):
    record = fx.ok_record(fx.ENV_A, "matmul-128", "eager", None)
    new = dataclasses.replace(record, key=CaseKey("cuda", "matmul-128", "aa-mode", None),
                              mode_traits=dataclasses.replace(record.mode_traits,
                                                              description="a new mode"))
    data = load(tmp_path, new, record)
    assert data.modes == ["eager", "aa-mode"]
    assert data.traits["aa-mode"]["mode_description"] == "a new mode"


def test_workloads_follow_the_registry_and_unknown_ones_come_after(tmp_path):
    record = fx.ok_record(fx.ENV_A, "matmul-128", "eager", None)
    external = dataclasses.replace(
        record, key=CaseKey("cuda", "aa-external", "eager", None),
        workload_info=dataclasses.replace(record.workload_info, family="external"))
    trivial = fx.ok_record(fx.ENV_A, "trivial-call", "eager", None)
    data = load(tmp_path, external, record, trivial)
    assert data.workloads == ["trivial-call", "matmul-128", "aa-external"]
    assert [f for f, _ in data.families()] == ["launch-overhead", "matmul", "external"]


def test_environments_with_the_same_gpu_are_not_merged(data):
    a, b = data.environments[A], data.environments[B]
    assert a.label != b.label and "h100-a" in a.label and "h100-b" in b.label
    assert case(data, A, "trivial-call", "default")["median_s"] != case(
        data, B, "trivial-call", "default")["median_s"]


def test_a_cpu_environment_is_named_by_its_model_and_core_count(data):
    assert data.environments[CPU].label == (
        "Intel Xeon Platinum 8480+, 16 cores · torch 2.11.0 · h100-a · 2026-11-20")


def test_every_environment_has_the_human_name_the_chooser_picks_it_by(data):
    from report.pages import guide

    envs = list(data.environments.values())
    chooser = guide.chooser_data(data)
    assert chooser["environments"] and all(
        c["label"] == data.environments[c["id"]].label for c in chooser["environments"])
    assert not any(e.env_id in e.label for e in envs)  # no two read the same here


def test_an_environment_of_single_runs_is_marked_so(data):
    assert data.environments[A].repeated and data.environments[CPU].repeated
    assert not data.environments[B].repeated  # the v1 file: one process per case


def test_tiny_shapes_are_left_out_and_counted(data):
    assert data.hidden_shapes == {"tiny": 1}
    assert (data.shown["shapes"] == "seed").all()


def test_the_older_record_in_a_subfolder_loses(data):
    row = case(data, A, "matmul-128", "default")
    assert "older" not in row["source"]
    assert row["median_s"] == pytest.approx(fx.latency(fx.ENV_A, "matmul-128", "default", None))


def test_representative_batch_is_one_where_measured(data):
    assert data.representative_batch("vit16x6x384") == 1
    assert data.representative_batch("matmul-128") is None
    at = data.representative()
    assert set(at.loc[at["workload"] == "vit16x6x384", "batch_size"]) == {1}


def test_every_known_backend_is_listed_even_unmeasured(data):
    assert data.backends == ["cuda", "cpu", "mps"] and data.envs("mps") == []


def test_run_costs_add_each_runs_first_start_to_last_finish(tmp_path):
    def at(minute: int, run: str, mode: str):
        record = fx.ok_record(fx.ENV_A, "matmul-128", mode, None,
                              started=f"2026-11-20T10:{minute:02d}:00+00:00")
        return dataclasses.replace(
            record, duration_s=60.0, process=dataclasses.replace(record.process, run_id=run))

    # run 1: 10:00 to 10:06; run 2, resumed later: 10:30 to 10:32.
    data = load(tmp_path, at(0, "one", "eager"), at(5, "one", "default"),
                at(30, "two", "reduce-overhead"), at(31, "two", "max-autotune"))
    cost = analysis.rows(analysis.run_costs(data.records))
    assert len(cost) == 1
    assert (cost[0]["runs"], cost[0]["isolated"], cost[0]["paired"]) == (2, 4, 0)
    assert cost[0]["minutes"] == pytest.approx(6 + 2)


def test_run_costs_count_a_paired_process_once_beside_the_isolated_ones(tmp_path):
    # One run: 16 isolated processes, and 3 paired ones that each timed resnet50's 3 modes.
    # The old table gave the run one "timing" label and counted 19 "processes".
    data = load(tmp_path, *model_records.records())
    cost = analysis.rows(analysis.run_costs(data.records))
    assert [(c["runs"], c["isolated"], c["paired"]) for c in cost] == [(1, 16, 3)]


def test_rows_of_one_environment_match_a_mask_and_stay_the_callers_own(data):
    cases = data.cases
    for env_id in (A, B, CPU, "no-such-env"):
        pd.testing.assert_frame_equal(analysis.of_env(cases, env_id),
                                      cases[cases["env_id"] == env_id])
    mine = analysis.of_env(cases, A)
    mine["scratch"] = 1
    assert "scratch" not in analysis.of_env(cases, A).columns


def test_text_columns_are_plain_objects_in_few_arrays(data):
    # One array per column made every row selection on the wide tables cost seconds a build.
    assert data.cases["workload"].dtype == object
    assert len(data.cases._mgr.blocks) < len(data.cases.columns) / 2


def model_data(tmp_path, records=None) -> Data:
    """The made-up model records (tests/fixtures/model_records.py): resnet50 at batch 1 in
    eager, default and reduce-overhead, 3 isolated and 3 paired processes each."""
    return load(tmp_path, *(model_records.records() if records is None else records))


def test_a_case_with_paired_processes_publishes_their_figures_and_spreads_over_them(tmp_path):
    # One isolated process per mode beside the three paired ones: the isolated side alone
    # has no spread, the paired side has one.
    data = model_data(tmp_path, model_records.eager_alone_as_slow_as_reduce_overhead())
    found = analysis.spreads(data.cases)
    paired = found[found["timing"] == "paired"]
    assert len(paired) == 3 and (found["n_processes"] >= 2).all()
    for case_row in analysis.rows(paired):
        mine = data.paired[(data.paired["mode"] == case_row["mode"])]
        medians = mine["median_s"]
        assert case_row["n_processes"] == case_row["paired_processes"] == len(medians) == 3
        assert case_row["spread"] == pytest.approx(medians.max() / medians.min() - 1.0)
    alone = data.isolated_cases.merge(paired[analysis.CASE], on=analysis.CASE)
    assert (alone["n_processes"] == 1).all()


def test_a_mode_timed_faster_than_eager_pays_back_its_compile_and_a_slower_one_never_does(tmp_path):
    """The saving per call must come from the processes the speedup comes from: here the
    isolated processes time default faster than eager (0.8x) and the paired ones slower
    (1.6x), so default never pays back, while reduce-overhead, faster in both, does."""
    slower = [dataclasses.replace(r, paired=dataclasses.replace(
                  r.paired, round_s=tuple(2 * s for s in r.paired.round_s)))
              if r.paired and r.key.mode == "default" else r for r in model_records.records()]
    table = analysis.with_break_even(model_data(tmp_path, slower).speedups).set_index("mode")
    resnet = table[table["workload"] == "resnet50"]
    assert resnet.loc["default", "paired"] and resnet.loc["default", "speedup"] < 1
    assert resnet.loc["default", "cold_calls"] == analysis.NEVER
    assert resnet.loc["reduce-overhead", "speedup"] > 1
    assert resnet.loc["reduce-overhead", "cold_calls"] < analysis.NEVER


def test_the_fastest_mode_leads_the_runner_up_by_the_ratio_of_their_paired_speedups(tmp_path):
    """The one rule (`analysis.choose`) ranks by the published speedup over eager: the lead
    of reduce-overhead (0.5 of eager) over default (0.8) is 1.6, the paired processes' own."""
    data = model_data(tmp_path)
    best = analysis.choose(data.published, math.inf).set_index("workload")
    assert best.loc["resnet50", "mode"] == "reduce-overhead"
    assert best.loc["resnet50", "mode_runner_up"] == "default"
    assert best.loc["resnet50", "timing"] == "paired"
    assert best.loc["resnet50", "margin"] == pytest.approx(0.8 / 0.5 - 1.0)


def test_the_fastest_table_counts_processes_in_whole_numbers(tmp_path):
    """Some point has no runner-up (bert-base and gpt2-small have eager only here), so the
    runner-up's counts are missing there: the chosen mode's stay whole numbers (the home
    page once read "1.0 process")."""
    best = analysis.choose(model_data(tmp_path).published, math.inf)
    assert best["mode_runner_up"].isna().any()
    assert best["processes"].dtype.kind == "i"


def test_two_compiled_modes_compare_on_the_processes_that_timed_them_side_by_side(tmp_path):
    """reduce-overhead against default (claims compare two compiled modes) is the ratio of
    the paired processes that timed both, over their 3 pairings, not one isolated process
    a side."""
    data = model_data(tmp_path)
    found = analysis.compare(data.cases, "reduce-overhead", "default").set_index("workload")
    assert found.loc["resnet50", "paired"]
    assert found.loc["resnet50", "speedup"] == pytest.approx(0.8 / 0.5)
    assert found.loc["resnet50", "pairings"] == found.loc["resnet50", "processes"] == 3


def test_a_newer_paired_run_of_fewer_modes_leaves_the_others_paired_with_their_own_eager(tmp_path):
    """A sentinel run times eager and default again after a full run timed all three: the
    newer processes stand for those two, and reduce-overhead, which it left out, keeps its
    older processes and their ratio against the eager timed beside it there."""
    newer = []
    for repeat in range(3):
        for rec in model_records.paired("resnet50", ("eager", "default"), 1, repeat):
            slower = 2.0 if rec.key.mode == "eager" else 1.0  # another host's eager
            rounds = dataclasses.replace(rec.paired, group=f"sentinel-{repeat}",
                                         round_s=tuple(s * slower for s in rec.paired.round_s))
            newer.append(dataclasses.replace(rec, paired=rounds,
                                             started_at=f"2026-11-22T10:00:0{repeat}+00:00"))
    data = load(tmp_path, *model_records.records(), *newer)
    s = data.speedups[data.speedups["workload"] == "resnet50"].set_index("mode")
    # Round by round the older processes timed reduce-overhead at 0.5 x (1, 1.05, 0.95) of eager.
    assert s.loc["reduce-overhead", "paired"] and s.loc["reduce-overhead", "pairings"] == 3
    assert s.loc["reduce-overhead", "speedup"] == pytest.approx(2.0)
    assert s.loc["reduce-overhead", "speedup_hi"] == pytest.approx(2.0 / 0.95)
    assert s.loc["default", "speedup"] == pytest.approx(2.0 / 0.8)  # the newer processes


def test_modes_no_process_timed_side_by_side_lead_by_their_speedups_over_eager(tmp_path):
    """max-autotune runs in paired processes of its own (eager beside it), here on a host
    whose eager is 4x slower: 0.3 of that eager is 3.3x, ahead of reduce-overhead's 2x,
    though its absolute median (1.2 eager-base) is behind reduce-overhead's (0.5). Ranked by
    speedup, the lead is their ratio, never below 0 (the H200's bfloat16 autotuning ran so)."""
    autotune = []
    for repeat in range(3):
        for rec in model_records.paired("resnet50", ("eager", "default"), 1, repeat):
            scale = 4.0 if rec.key.mode == "eager" else 4.0 * 0.3 / 0.8
            mode = "eager" if rec.key.mode == "eager" else "max-autotune"
            rounds = dataclasses.replace(rec.paired, group=f"autotune-{repeat}",
                                         modes=("eager", "max-autotune"),
                                         round_s=tuple(s * scale for s in rec.paired.round_s))
            autotune.append(dataclasses.replace(
                rec, key=dataclasses.replace(rec.key, mode=mode), paired=rounds,
                mode_traits=fx.traits(mode), timing=fx.timing(rec.timing.median_s * scale, 0.02,
                                                               False),
                started_at=f"2026-11-22T10:00:0{repeat}+00:00"))
        alone = model_records.isolated("resnet50", "default", 1, repeat)  # as the plan has
        autotune.append(dataclasses.replace(
            alone, key=dataclasses.replace(alone.key, mode="max-autotune"),
            mode_traits=fx.traits("max-autotune"),
            timing=fx.timing(model_records.EAGER_S["resnet50"] * 1.2, 0.02, False)))
    data = load(tmp_path, *model_records.records(), *autotune)
    best = analysis.choose(data.published, math.inf).set_index("workload").loc["resnet50"]
    assert (best["mode"], best["mode_runner_up"]) == ("max-autotune", "reduce-overhead")
    speedups = data.speedups[data.speedups["workload"] == "resnet50"].set_index("mode")["speedup"]
    assert best["margin"] == pytest.approx(speedups["max-autotune"] / speedups["reduce-overhead"] - 1)
    assert best["margin"] > 0 and not best["tie"]
