"""The published-figures table: one row per environment, case and mode, every figure a page
shows chosen once by one rule (paired processes where they exist, else isolated ones),
so that a row's latency, spread, speedup and break-even rest on the same processes."""

from __future__ import annotations

import pandas as pd
import pytest
from fixtures import make_results as fx
from fixtures import model_records

from report import analysis
from report.analysis import Data

ENV = model_records.ENV.env_id()


def load(tmp_path, records) -> Data:
    fx.write(tmp_path / "r.jsonl", list(records))
    return Data(analysis.load(tmp_path))


def row(data: Data, workload: str, mode: str, batch: int = 1) -> dict:
    found = analysis.row_of(data.published, ENV, workload, batch, mode)
    assert found is not None, (workload, mode, batch)
    return found


def test_a_case_with_paired_processes_publishes_their_latency_beside_their_speedup(tmp_path):
    # Eager's one isolated process ran as slow as reduce-overhead; the paired processes
    # found reduce-overhead about 2x faster. Latency and speedup must both be paired.
    data = load(tmp_path, model_records.eager_alone_as_slow_as_reduce_overhead())
    eager, graphed = row(data, "resnet50", "eager"), row(data, "resnet50", "reduce-overhead")
    assert eager["timing"] == graphed["timing"] == "paired"
    assert eager["processes"] == graphed["processes"] == 3
    assert graphed["latency_base_s"] == pytest.approx(eager["latency_s"])
    # the paired medians of each side: eager 4 ms, reduce-overhead 2 ms x (1, 1.05, 0.95)
    assert eager["latency_s"] == pytest.approx(4e-3)
    assert graphed["latency_s"] == pytest.approx(2e-3)
    assert (graphed["latency_lo_s"], graphed["latency_hi_s"]) == (
        pytest.approx(2e-3 * 0.95), pytest.approx(2e-3 * 1.05))
    assert graphed["speedup"] == pytest.approx(2.0)
    assert graphed["speedup_lo"] == pytest.approx(2 / 1.05)
    assert graphed["speedup_hi"] == pytest.approx(2 / 0.95)


def test_a_case_without_paired_processes_publishes_its_isolated_ones(tmp_path):
    data = load(tmp_path, model_records.records())
    eager = row(data, "bert-base", "eager", 8)
    assert eager["timing"] == "isolated" and eager["processes"] == 3
    assert eager["isolated_processes"] == 3 and eager["paired_processes"] == 0
    iso = data.isolated_cases
    alone = iso[(iso["workload"] == "bert-base") & (iso["mode"] == "eager")].iloc[0]
    assert eager["latency_s"] == alone["median_s"]
    assert (eager["latency_lo_s"], eager["latency_hi_s"]) == (alone["lo_s"], alone["hi_s"])


def test_break_even_is_the_isolated_cold_compile_over_the_published_saving(tmp_path):
    data = load(tmp_path, model_records.records())
    graphed = row(data, "resnet50", "reduce-overhead")
    saving = graphed["latency_base_s"] - graphed["latency_s"]
    assert graphed["saving_s"] == pytest.approx(saving, rel=0.06)
    assert graphed["cold_calls"] == pytest.approx(
        -(-graphed["cold_compile_s"] // graphed["saving_s"]))
    eager = row(data, "resnet50", "eager")
    assert pd.isna(eager["cold_calls"]) and pd.isna(eager["cold_compile_s"])


def test_provenance_counts_processes_leases_and_hosts(tmp_path):
    data = load(tmp_path, model_records.records())
    graphed = row(data, "resnet50", "reduce-overhead")
    assert (graphed["isolated_processes"], graphed["paired_processes"]) == (3, 3)
    assert graphed["leases"] >= 1 and graphed["hosts"] == 1


def test_every_case_has_one_row_and_a_dtype(tmp_path):
    data = load(tmp_path, model_records.records())
    table = data.published
    assert not table.duplicated(analysis.CASE).any()
    assert (table[analysis.DTYPE] == analysis.DEFAULT_DTYPE).all()
    assert set(analysis.FIGURES) <= set(table.columns)


def test_the_hand_captured_graph_is_not_compiling(tmp_path):
    records = [fx.ok_record(fx.ENV_A, "trivial-call", mode, None)
               for mode in ("eager", "default", "cuda-graph")]
    data = load(tmp_path, records)
    table = data.published.set_index("mode")
    assert bool(table.at["default", "compiling"])
    assert not table.at["cuda-graph", "compiling"] and not table.at["eager", "compiling"]


def test_one_bound_vocabulary_for_cases_and_busy_fractions():
    busy = pd.Series([0.2, 0.6, 0.9, None])
    assert list(analysis.boundedness(busy)) == ["launch-bound", "mixed", "device-bound", None]
    cases = pd.DataFrame({"busy_fraction": [0.2, 0.9, 0.3], "backend": ["cuda", "cuda", "cpu"]})
    assert list(analysis.side_bound(cases)) == ["launch-bound", "device-bound", "cpu"]


def test_a_median_ratio_above_1_never_publishes_a_negative_saving():
    """Two paired processes, the second on a slower host: their mean ratio is above 1 while
    the mean of their savings is below 0 (vit32x18x1024 at CPU batch 1, max-autotune, read
    1.0025x and "never pays back"). The saving follows the published ratio's sign."""
    from report.analysis.shown import paired_speedups
    point = {"env_id": "e", "workload": "w", "batch_size": 1, "shapes": "seed",
             analysis.DTYPE: "float32", "mode": "m", "baseline": "eager", "rounds": 15,
             "probe_us": 1.0}
    ratios = pd.DataFrame([
        {**point, "ratio": 1.05, "lease": "a", "base_s": 0.10, "mode_s": 0.10 / 1.05,
         "saving_s": 0.10 * (1 - 1 / 1.05)},
        {**point, "ratio": 0.96, "lease": "b", "base_s": 0.50, "mode_s": 0.50 / 0.96,
         "saving_s": 0.50 * (1 - 1 / 0.96)}])
    assert ratios["ratio"].median() > 1 and ratios["saving_s"].median() < 0
    found = paired_speedups(ratios).iloc[0]
    assert found["speedup"] == pytest.approx(1.005)
    assert found["saving_s"] == pytest.approx(found["latency_base_s"] * (1 - 1 / 1.005))
    assert found["saving_s"] > 0
    assert analysis.break_even_calls(pd.Series([10.0]).to_numpy(),
                                     pd.Series([found["saving_s"]]).to_numpy())[0] < analysis.NEVER
