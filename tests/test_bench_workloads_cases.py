"""The training, dynamic-shape, matmul-sweep and warm-up workloads, measured as cases in
tiny shapes on CPU through `bench.case.main`, eager and compiled."""

from __future__ import annotations

import math

import pytest
from test_bench_case import as_record, run_case

from bench.workloads import WORKLOADS

# Each new workload at a size of its sweep.
NEW = {"train-mlp": 32, "train-vit16x6x384": 1, "dynamic-mlp": None, "matmul-sweep": 128,
       "warmup-vit16x6x384": 1}


@pytest.fixture(scope="module")
def case(tmp_path_factory):
    """Runs each (workload, mode) once for the whole module."""
    found = {}

    def get(workload: str, mode: str):
        if (workload, mode) not in found:
            found[workload, mode] = run_case(tmp_path_factory.mktemp("case"), workload, mode,
                                             NEW[workload])
        return found[workload, mode]

    return get


# Compiled as well where compiling it is quick: the ViT training step compiles its own
# backward for most of a minute, and train-mlp takes the same compiled training path.
MEASURED = [(w, m) for w in NEW for m in ("eager", "default")
            if (w, m) != ("train-vit16x6x384", "default")]


@pytest.mark.slow
@pytest.mark.parametrize(("workload", "mode"), MEASURED)
def test_new_workload_measures_and_matches_float64(case, workload, mode):
    record = as_record(case(workload, mode))
    assert record.status == "ok", record.reason
    assert record.correctness.reference == "float64"
    assert record.correctness.passed, record.correctness
    assert record.workload_info.family == WORKLOADS[workload].family


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["eager", "default"])
def test_a_training_step_runs_with_autograd_and_says_so(case, mode):
    record = as_record(case("train-mlp", mode))
    assert record.workload_info.training
    # The float64 copy trained for as many steps gives nearly the same, finite loss.
    assert math.isfinite(record.correctness.rel_error)
    assert record.correctness.rel_error < 1e-5


@pytest.mark.slow
def test_only_training_workloads_say_training(case):
    assert not as_record(case("matmul-sweep", "eager")).workload_info.training


@pytest.mark.slow
def test_default_recompiles_for_a_new_batch_and_dynamic_does_not_need_more(case):
    default = as_record(case("dynamic-mlp", "default"))
    dynamic = as_record(case("dynamic-mlp", "default-dynamic"))
    assert default.dynamo.recompiles >= 1
    assert dynamic.dynamo.recompiles <= default.dynamo.recompiles


@pytest.mark.slow
def test_a_batch_cycle_is_recorded_and_each_batch_shows_in_the_first_calls(case):
    record = as_record(case("dynamic-mlp", "eager"))
    cycle = WORKLOADS["dynamic-mlp"].batch_cycle
    assert record.key.batch_size is None
    assert record.workload_info.batch_cycle == cycle
    assert len(record.compile.cold_first_calls_s) == len(cycle)
    # One timed sample covers whole cycles.
    assert record.timing.calls_per_sample % len(cycle) == 0


@pytest.mark.slow
def test_matmul_sweep_sizes_are_matrix_sizes(case):
    record = as_record(case("matmul-sweep", "eager"))
    assert record.workload_info.axis == "n"
    assert record.key.batch_size == 128
    assert record.workload_info.input_shapes == ((8, 8), (8, 8))  # tiny: n / 16


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["eager", "default"])
def test_the_warmup_workload_records_one_latency_per_call(case, mode):
    record = as_record(case("warmup-vit16x6x384", mode))
    assert len(record.warmup.latencies_s) == 50  # the tiny-shape curve
    assert all(x > 0 for x in record.warmup.latencies_s)


@pytest.mark.slow
def test_only_the_warmup_workload_records_a_curve(case):
    assert as_record(case("matmul-sweep", "eager")).warmup is None
