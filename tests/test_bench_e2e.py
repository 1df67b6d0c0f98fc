"""One end-to-end smoke run of `python -m bench` on CPU with tiny shapes, then resume.

Two workloads x (eager, default, cuda-graph) cover an eager case, a compiled case and
an unsupported one; all six compile modes would take minutes on a small CPU.
"""

from __future__ import annotations

import os
import platform
import shutil
import statistics

import pytest
import torch
from bench_helpers import line_count, only_results_file, records, run_bench

from bench.modes import MODES
from bench.stats import summarize

WORKLOADS = ("trivial-call", "matmul-128")
SELECTION = ("--shapes", "tiny", "--profile", "quick", "--machine", "smoke",
             *(arg for w in WORKLOADS for arg in ("--workload", w)),
             "--mode", "eager", "--mode", "default", "--mode", "cuda-graph")
TINY_SHAPES = {"trivial-call": ((256,),), "matmul-128": ((8, 8), (8, 8))}


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    results = tmp_path_factory.mktemp("results")
    result = run_bench(*SELECTION, "--results-dir", str(results))
    assert result.returncode == 0, result.stderr[-3000:]
    path = only_results_file(results)
    return {"path": path, "records": records(path), "stdout": result.stdout}


def by_status(smoke, *statuses):
    return [r for r in smoke["records"] if r.status in statuses]


def compiled(record) -> bool:
    return MODES[record.key.mode].compiled


def test_run_measures_every_planned_case_once(smoke):
    assert "cpu: 6 case(s) to measure, 0 already in" in smoke["stdout"]
    keys = sorted((r.key.workload, r.key.mode) for r in smoke["records"])
    assert keys == sorted((w, m) for w in WORKLOADS for m in ("eager", "default", "cuda-graph"))
    assert line_count(smoke["path"]) == 6


def test_every_case_is_ok_or_unsupported(smoke):
    for record in smoke["records"]:
        expected = "unsupported" if record.key.mode == "cuda-graph" else "ok"
        assert record.status == expected, (record.key, record.reason)


def test_records_carry_the_run_options(smoke):
    for record in smoke["records"]:
        assert (record.key.backend, record.key.shapes, record.key.tag) == ("cpu", "tiny", "main")
        assert record.key.batch_size is None
        assert record.profile == "quick"


def test_environment_is_filled_in(smoke):
    for record in smoke["records"]:
        env = record.env
        assert env.machine == "smoke" and env.backend == "cpu"
        assert env.torch == torch.__version__
        assert env.python == platform.python_version()
        assert env.cpu_model
        assert env.cpu_count == os.cpu_count()
        assert env.float32_matmul_precision == torch.get_float32_matmul_precision()
        assert env.device_name == env.cpu_model


def test_results_file_is_named_for_the_environment(smoke):
    env_ids = {r.env_id for r in smoke["records"]}
    assert env_ids == {smoke["records"][0].env.env_id()}
    assert smoke["path"].name.endswith(f"-{env_ids.pop()}.jsonl")


def test_tiny_shapes_reach_the_case_process(smoke):
    for record in by_status(smoke, "ok"):
        assert record.workload_info.input_shapes == TINY_SHAPES[record.key.workload]


def test_timing_keeps_samples_and_derives_statistics_from_them(smoke):
    for record in by_status(smoke, "ok"):
        timing = record.timing
        assert timing.samples and all(s > 0 for s in timing.samples)
        assert timing.median_s == statistics.median(timing.samples)
        assert {name: getattr(timing, name) for name in summarize(timing.samples)} == summarize(
            timing.samples)
        assert timing.timer == "perf-counter"


def test_compiled_cases_have_cold_and_warm_first_calls(smoke):
    cases = [r for r in by_status(smoke, "ok") if compiled(r)]
    assert cases
    for record in cases:
        assert record.compile.cold_first_call_s > 0
        assert record.compile.warm_first_call_s > 0
        assert len(record.compile.cold_first_calls_s) == 3


def test_compiled_cases_have_dynamo_counters(smoke):
    for record in (r for r in by_status(smoke, "ok") if compiled(r)):
        assert record.dynamo is not None
        assert record.dynamo.unique_graphs >= 1
        assert record.dynamo.graph_breaks == 0


def test_eager_cases_have_no_compile_artifacts(smoke):
    cases = [r for r in by_status(smoke, "ok") if r.key.mode == "eager"]
    assert cases
    for record in cases:
        assert record.dynamo is None
        assert record.compile.warm_first_call_s is None
        assert record.compile.cold_first_call_s > 0


def test_outputs_match_eager(smoke):
    for record in by_status(smoke, "ok"):
        assert record.correctness.reference == "eager"
        assert record.correctness.passed
        assert record.correctness.rel_error <= record.correctness.tolerance


def test_cpu_cases_report_rss_but_no_device_memory(smoke):
    for record in by_status(smoke, "ok"):
        assert record.memory.peak_device_bytes is None
        assert record.memory.peak_rss_bytes > 0


def test_recompile_probe_runs_for_compiled_trivial_call(smoke):
    (record,) = [r for r in smoke["records"] if (r.key.workload, r.key.mode)
                 == ("trivial-call", "default")]
    assert record.extra["probes"]["recompile-on-new-shape"]["value"] >= 1


@pytest.fixture
def rerun_dir(smoke, tmp_path):
    """A copy of the smoke run's results, for runs that add to it."""
    results = tmp_path / "results"
    shutil.copytree(smoke["path"].parent, results)
    return results


def test_same_selection_again_measures_nothing(smoke, rerun_dir):
    result = run_bench(*SELECTION, "--results-dir", str(rerun_dir))
    assert result.returncode == 0, result.stderr[-3000:]
    assert "cpu: 0 case(s) to measure, 6 already in" in result.stdout
    assert only_results_file(rerun_dir).read_bytes() == smoke["path"].read_bytes()


# A smaller selection for the runs that measure again: one case process, one unsupported.
AGAIN = ("--shapes", "tiny", "--profile", "quick", "--machine", "smoke",
         "--workload", "trivial-call", "--mode", "eager", "--mode", "cuda-graph")


def measure_again(smoke, rerun_dir, *options):
    result = run_bench(*AGAIN, *options, "--results-dir", str(rerun_dir))
    assert result.returncode == 0, result.stderr[-3000:]
    path = only_results_file(rerun_dir)
    assert path.read_bytes().startswith(smoke["path"].read_bytes())  # nothing rewritten
    return result.stdout, records(path)[len(smoke["records"]):]


def test_force_measures_again(smoke, rerun_dir):
    stdout, added = measure_again(smoke, rerun_dir, "--force")
    assert "cpu: 2 case(s) to measure, 0 already in" in stdout
    assert sorted((r.key.mode, r.key.tag, r.status) for r in added) == [
        ("cuda-graph", "main", "unsupported"), ("eager", "main", "ok")]


def test_new_tag_measures_again(smoke, rerun_dir):
    stdout, added = measure_again(smoke, rerun_dir, "--tag", "again")
    assert "cpu: 2 case(s) to measure, 0 already in" in stdout
    assert sorted((r.key.mode, r.key.tag, r.status) for r in added) == [
        ("cuda-graph", "again", "unsupported"), ("eager", "again", "ok")]
