"""One end-to-end smoke run of `python -m bench --timing isolated` on CPU with tiny shapes, then resume.

matmul-128 in eager, default and cuda-graph mode, two repeats each: an eager case, a
compiled case whose second process starts from the first one's compile caches, and an
unsupported one, which is recorded once and costs no process. matmul-128 compiles in
about a second on CPU; a pointwise workload would spend ten seconds in the C++ compiler.
"""

from __future__ import annotations

import os
import platform
import shutil
import statistics

import pytest
import torch
from bench_helpers import (
    bench_env,
    line_count,
    only_results_file,
    records,
    run_bench,
    scratch_folders,
)

from bench.modes import MODES
from bench.runner import case_cache_dir
from bench.stats import summarize

# Isolated timing: every process here measures one case (tests/test_bench_paired.py runs
# the paired default end to end).
COMMON = ("--shapes", "tiny", "--profile", "quick", "--machine", "smoke",
          "--workload", "matmul-128", "--timing", "isolated")
SELECTION = (*COMMON, "--mode", "eager", "--mode", "default", "--mode", "cuda-graph",
             "--repeats", "2")
# A smaller selection for the runs that measure again: one case process, one unsupported.
AGAIN = (*COMMON, "--mode", "eager", "--mode", "cuda-graph")
PROCESSES = [("cuda-graph", 0), ("default", 0), ("default", 1), ("eager", 0), ("eager", 1)]


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    base = tmp_path_factory.mktemp("smoke")
    results, cache, tmp = base / "results", base / "cache", base / "tmp"
    tmp.mkdir()
    env = bench_env(tmp)
    result = run_bench(*SELECTION, "--results-dir", str(results), "--cache-dir", str(cache),
                       env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    path = only_results_file(results)
    return {"path": path, "records": records(path), "stdout": result.stdout, "cache": cache,
            "tmp": tmp, "env": env}


def by_status(smoke, *statuses):
    return [r for r in smoke["records"] if r.status in statuses]


def test_run_measures_every_case_once_per_repeat(smoke):
    assert "cpu: 5 case process(es) to run of 5 (3 case(s) x 2 repeat(s))" in smoke["stdout"]
    assert sorted((r.key.mode, r.process.repeat) for r in smoke["records"]) == PROCESSES
    assert line_count(smoke["path"]) == 5


def test_repeats_interleave_every_case_before_any_second_process(smoke):
    repeats = [r.process.repeat for r in smoke["records"]]
    assert repeats == sorted(repeats)
    assert [r.key.mode for r in smoke["records"]] == [
        "eager", "default", "cuda-graph", "eager", "default"]


def test_progress_lines_name_the_repeat(smoke):
    assert "[1/5 r1/2 " in smoke["stdout"] and "[5/5 r2/2 " in smoke["stdout"]


def test_every_process_of_the_run_shares_its_run_id_and_import_cost(smoke):
    processes = [r.process for r in smoke["records"]]
    assert len({p.run_id for p in processes}) == 1
    assert len({p.parent_import_s for p in processes}) == 1
    assert processes[0].parent_import_s > 0
    assert {(p.repeats, p.workers, p.gpu) for p in processes} == {(2, 1, None)}
    assert f"imported torch, Dynamo and Inductor once in {processes[0].parent_import_s:.1f} s" \
        in smoke["stdout"]


def test_first_repeat_compiles_cold_and_later_ones_start_from_its_caches(smoke):
    cache = {(r.key.mode, r.process.repeat): r.process.cache for r in smoke["records"]}
    assert cache[("default", 0)] == cache[("eager", 0)] == "cold"
    assert cache[("default", 1)] == cache[("eager", 1)] == "warm"
    default = next(r for r in smoke["records"] if r.key.mode == "default")
    folder = case_cache_dir(smoke["cache"], default.env_id, default.key)
    # Inductor wrote the FX graph cache where the runner told the forked case to.
    assert any((folder / "inductor" / "fxgraph").rglob("*")), sorted(folder.rglob("*"))


def test_every_scratch_folder_is_removed(smoke):
    assert scratch_folders(smoke["tmp"]) == []
    assert not list(smoke["path"].parent.glob("*.lock"))


def test_records_carry_the_run_options_and_mode_traits(smoke):
    for record in smoke["records"]:
        assert (record.key.backend, record.key.shapes, record.key.tag) == ("cpu", "tiny", "main")
        assert record.key.batch_size is None
        assert record.profile == "quick"
        assert record.mode_traits == MODES[record.key.mode].traits


def test_environment_is_filled_in(smoke):
    for record in smoke["records"]:
        env = record.env
        assert env.machine == "smoke" and env.backend == "cpu"
        assert env.torch == torch.__version__
        assert env.python == platform.python_version()
        assert env.cpu_count == os.cpu_count()
        assert env.float32_matmul_precision == torch.get_float32_matmul_precision()
        assert env.device_name == env.cpu_model


def test_results_file_is_named_for_the_environment(smoke):
    env_ids = {r.env_id for r in smoke["records"]}
    assert env_ids == {smoke["records"][0].env.env_id()}
    assert smoke["path"].name.endswith(f"-{env_ids.pop()}.jsonl")


def test_unsupported_case_costs_no_process_and_says_why(smoke):
    (record,) = [r for r in smoke["records"] if r.key.mode == "cuda-graph"]
    assert record.status == "unsupported"
    assert record.reason == "cuda-graph needs backend cuda, not cpu"
    assert record.duration_s == 0.0 and record.timing is None


def test_timing_keeps_samples_and_derives_statistics_from_them(smoke):
    for record in by_status(smoke, "ok"):
        timing = record.timing
        assert timing.samples and all(s > 0 for s in timing.samples)
        assert timing.median_s == statistics.median(timing.samples)
        assert {name: getattr(timing, name) for name in summarize(timing.samples)} == summarize(
            timing.samples)
        assert timing.timer == "perf-counter"


def test_compiled_cases_have_cold_and_warm_first_calls_and_counters(smoke):
    compiled = [r for r in by_status(smoke, "ok") if r.mode_traits.compiled]
    assert len(compiled) == 2
    for record in compiled:
        assert record.compile.cold_first_call_s > 0
        assert record.compile.warm_first_call_s > 0
        assert record.dynamo.unique_graphs >= 1 and record.dynamo.graph_breaks == 0


def test_eager_cases_have_no_compile_artifacts(smoke):
    eager = [r for r in by_status(smoke, "ok") if r.key.mode == "eager"]
    assert len(eager) == 2
    for record in eager:
        assert record.dynamo is None
        assert record.compile.warm_first_call_s is None
        assert record.compile.cold_first_call_s > 0


def test_outputs_pass_the_correctness_check(smoke):
    for record in by_status(smoke, "ok"):
        assert record.correctness.passed
        assert record.correctness.rel_error <= record.correctness.tolerance


def test_cpu_cases_report_rss_but_no_device_memory(smoke):
    for record in by_status(smoke, "ok"):
        assert record.memory.peak_device_bytes is None
        assert record.memory.peak_rss_bytes > 0


@pytest.fixture
def rerun_dir(smoke, tmp_path):
    """A copy of the smoke run's results, for runs that add to it."""
    results = tmp_path / "results"
    shutil.copytree(smoke["path"].parent, results)
    return results


def again(smoke, rerun_dir, *options):
    result = run_bench(*options, "--results-dir", str(rerun_dir), "--cache-dir",
                       str(smoke["cache"]), env=smoke["env"])
    assert result.returncode == 0, result.stderr[-3000:]
    path = only_results_file(rerun_dir)
    assert path.read_bytes().startswith(smoke["path"].read_bytes())  # nothing rewritten
    return result.stdout, records(path)[len(smoke["records"]):]


def test_same_selection_again_measures_nothing(smoke, rerun_dir):
    stdout, added = again(smoke, rerun_dir, *SELECTION)
    assert "cpu: 0 case process(es) to run of 5" in stdout
    assert added == []


def test_more_repeats_add_only_the_missing_processes(smoke, rerun_dir):
    stdout, added = again(smoke, rerun_dir, *AGAIN, "--repeats", "3")
    assert "cpu: 1 case process(es) to run of 4" in stdout  # eager: r2; cuda-graph: done
    assert [(r.key.mode, r.process.repeat, r.process.repeats, r.process.cache)
            for r in added] == [("eager", 2, 3, "warm")]


def test_force_measures_again(smoke, rerun_dir):
    stdout, added = again(smoke, rerun_dir, *AGAIN, "--force", "--repeats", "1")
    assert "cpu: 2 case process(es) to run of 2" in stdout
    assert sorted((r.key.mode, r.status, r.process.cache) for r in added) == [
        ("cuda-graph", "unsupported", "cold"), ("eager", "ok", "cold")]


def test_cold_repeats_compile_each_later_repeat_from_empty_caches_of_its_own(smoke, rerun_dir):
    stdout, added = again(smoke, rerun_dir, *COMMON, "--mode", "eager", "--mode", "default",
                          "--repeats", "3", "--cold-repeats")
    # default's warm repeat 1 is measured again, cold; eager has no compile to redo.
    assert "cpu: 3 case process(es) to run of 6" in stdout
    assert sorted((r.key.mode, r.process.repeat, r.process.cache) for r in added) == [
        ("default", 1, "cold"), ("default", 2, "cold"), ("eager", 2, "cold")]
    folder = case_cache_dir(smoke["cache"], added[0].env_id, added[0].key)
    own = folder.with_name(f"{folder.name}-cold-r2")
    # It wrote its own FX graph cache, so it compiled rather than loading repeat 0's entries,
    # and repeat 0's folder, which paired processes merge, is left as it was.
    assert any((own / "inductor" / "fxgraph").rglob("*")), sorted(own.rglob("*"))
    assert any((folder / "inductor" / "fxgraph").rglob("*"))
