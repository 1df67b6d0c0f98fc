"""`python -m bench` refuses bad input in one line before it measures anything, and plans
exactly what was asked: shards partition the plan, repeats never split a case across shards.

Most tests call `bench.cli.main` in this process: every check here happens before a case
process would start.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest
from bench_helpers import run_bench

from bench import cli
from bench.backends import BACKENDS, available_backends
from bench.modes import MODES
from bench.records import Environment, RecordWriteError
from bench.runner import Recorded, jobs, plan, results_path, shard
from bench.workloads import ORDER, WORKLOADS
from bench.workloads.base import EVERY_BACKEND


def one_line_error(capsys, argv, code=2) -> str:
    assert cli.main(argv) == code
    out, err = capsys.readouterr()
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("python -m bench: error: ")
    assert " ok " not in out  # nothing was measured
    return lines[0]


def usage_error(capsys, tmp_path, *args: str) -> str:
    results = tmp_path / "results"
    line = one_line_error(capsys, [*args, "--results-dir", str(results)])
    assert not results.exists()
    return line


@pytest.mark.parametrize("option, valid", [
    ("--workload", ORDER), ("--mode", MODES), ("--backend", BACKENDS)])
def test_unknown_name_is_one_line_listing_the_valid_names(option, valid, capsys, tmp_path):
    line = usage_error(capsys, tmp_path, option, "nope")
    assert "'nope'" in line
    for name in valid:
        assert name in line


def test_unavailable_backend_is_one_line_listing_the_available_ones(capsys, tmp_path):
    here = available_backends()
    missing = [name for name in BACKENDS if name not in here]  # cuda on a CPU-only machine
    if not missing:
        pytest.skip("every backend is available here")
    line = usage_error(capsys, tmp_path, "--backend", missing[0])
    assert f"{missing[0]!r} is not available" in line
    assert line.endswith(f"(available: {', '.join(here)})")


def test_unknown_profile_is_one_line_listing_the_profiles(capsys, tmp_path):
    line = usage_error(capsys, tmp_path, "--profile", "huge")
    assert "'huge'" in line and "quick" in line and "full" in line


@pytest.mark.parametrize("option", ["--timeout", "--budget", "--max-minutes"])
@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "-1", "0", "soon"])
def test_a_time_that_is_not_positive_and_finite_is_one_line(option, value, capsys, tmp_path):
    line = usage_error(capsys, tmp_path, f"{option}={value}")
    assert option in line and repr(value) in line


@pytest.mark.parametrize("option", ["--repeats", "--batch-size"])
@pytest.mark.parametrize("value", ["0", "-2", "nan", "1.5"])
def test_a_count_below_one_is_one_line(option, value, capsys, tmp_path):
    line = usage_error(capsys, tmp_path, f"{option}={value}")
    assert option in line and repr(value) in line


@pytest.mark.parametrize("value", ["0/2", "3/2", "2", "1/0", "a/b"])
def test_a_shard_outside_one_to_n_is_one_line(value, capsys, tmp_path):
    line = usage_error(capsys, tmp_path, f"--shard={value}")
    assert "--shard" in line and "I/N" in line


def test_workload_outside_the_profile_says_which_profile_has_it(capsys, tmp_path):
    line = usage_error(capsys, tmp_path, "--backend", "cpu", "--workload", "mlp")
    assert line.endswith("workload 'mlp' is not in the quick profile on cpu (try --profile full)")


def test_size_filter_that_matches_nothing_names_the_sizes(capsys, tmp_path):
    line = usage_error(capsys, tmp_path, "--backend", "cpu", "--workload", "matmul-sweep",
                       "--profile", "full", "--batch-size", "7")
    sizes = WORKLOADS["matmul-sweep"].sizes("full", "cpu")
    assert "plans no case: --batch-size 7 matches none of the sizes" in line
    assert all(str(s) in line for s in sizes)


def test_dynamic_mode_on_fixed_shapes_plans_nothing_and_says_why(capsys, tmp_path):
    line = usage_error(capsys, tmp_path, "--backend", "cpu", "--workload", "matmul-128",
                       "--mode", "default-dynamic")
    assert "default-dynamic applies only to workloads whose shapes vary" in line


def test_gpus_without_the_cuda_backend_is_one_line(capsys, tmp_path):
    line = usage_error(capsys, tmp_path, "--backend", "cpu", "--gpus", "2")
    assert line.endswith("--gpus 2 needs the cuda backend; this run measures cpu")


@pytest.fixture
def two_gpus(monkeypatch):
    """A host with two GPUs, as far as the checks before measuring can tell."""
    monkeypatch.setattr(cli, "available_backends", lambda: ["cpu", "cuda"])
    monkeypatch.setattr(cli.pool, "visible_gpus", lambda: ["4", "7"])


def test_gpus_zero_is_a_count_of_none_and_says_what_to_write(two_gpus, capsys, tmp_path):
    line = usage_error(capsys, tmp_path, "--backend", "cuda", "--gpus", "0")
    assert line.endswith("--gpus 0 would run on no GPU: for GPU 0 alone write --gpus 1 "
                         "(a count) or --gpus 0, (an index list)")


@pytest.mark.parametrize("value, slots", [
    ("1", ["4"]), ("0,", ["4"]), ("1,", ["7"]), ("0,1", ["4", "7"]), ("2", ["4", "7"]),
    ("all", ["4", "7"])])
def test_gpus_is_a_count_or_an_index_list_with_a_trailing_comma(two_gpus, value, slots):
    assert cli.gpu_slots(value, ["cuda"]) == slots


@pytest.mark.parametrize("value", [",", "0,,", "a,"])
def test_gpus_that_is_no_list_of_indices_is_one_line(two_gpus, value, capsys, tmp_path):
    line = usage_error(capsys, tmp_path, "--backend", "cuda", f"--gpus={value}")
    assert line.endswith(f"--gpus must be all, a count, or indices such as 0,2 or 0,; "
                         f"got {value!r}")


@pytest.mark.parametrize("where", ["file", "under-a-file"])
def test_results_folder_that_cannot_be_written_is_refused_before_measuring(where, capsys,
                                                                          tmp_path):
    (tmp_path / "file").write_text("not a folder")
    results = tmp_path / "file" if where == "file" else tmp_path / "file" / "results"
    line = one_line_error(capsys, ["--backend", "cpu", "--workload", "matmul-128", "--mode",
                                   "eager", "--results-dir", str(results)], code=1)
    assert line.startswith(f"python -m bench: error: cannot write results to {results}: ")


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_read_only_results_folder_is_refused_before_measuring(capsys, tmp_path):
    results = tmp_path / "results"
    results.mkdir()
    results.chmod(0o555)
    line = one_line_error(capsys, ["--backend", "cpu", "--workload", "matmul-128", "--mode",
                                   "eager", "--results-dir", str(results)], code=1)
    assert "cannot write results to" in line


def test_list_names_every_workload_mode_and_backend(tmp_path):
    results = tmp_path / "results"
    result = run_bench("--list", "--results-dir", str(results))
    assert result.returncode == 0, result.stderr
    listed = result.stdout.split()
    for name in [*ORDER, *MODES, *BACKENDS]:
        assert name in listed
    backend_lines = result.stdout.split("backends:\n", 1)[1].splitlines()
    states = dict(line.strip().split(None, 1) for line in backend_lines)
    here = available_backends()
    assert states == {name: "available" if name in here else "not available"
                      for name in BACKENDS}
    assert states["cpu"] == "available"
    assert not results.exists()


# ---- planning -----------------------------------------------------------------------------

def full_plan() -> list:
    return plan("cpu", ORDER, list(MODES), "full", set(), "seed", "main")


@pytest.mark.parametrize("count", [1, 2, 3, 4, 7])
def test_shards_partition_the_plan_exactly(count):
    cases = full_plan()
    shards = [shard(cases, index, count) for index in range(1, count + 1)]
    assert sorted(map(repr, (c for s in shards for c in s))) == sorted(map(repr, cases))
    assert sum(len(s) for s in shards) == len(cases)  # pairwise disjoint
    assert max(map(len, shards)) - min(map(len, shards)) <= 1


def test_every_repeat_of_a_case_stays_in_its_shard():
    cases = full_plan()
    for index in (1, 2, 3):
        mine = set(shard(cases, index, 3))
        assert {job.key for job in jobs(list(mine), 3, Recorded())} <= mine


def test_jobs_interleave_repeats_and_run_an_unsupported_mode_once():
    cases = plan("cpu", ["matmul-128"], ["eager", "cuda-graph", "default"], "quick", set(),
                 "seed", "main")
    assert [(j.key.mode, j.repeat) for j in jobs(cases, 3, Recorded())] == [
        ("eager", 0), ("cuda-graph", 0), ("default", 0),
        ("eager", 1), ("default", 1), ("eager", 2), ("default", 2)]


def test_dynamic_mode_is_planned_only_where_shapes_vary():
    cases = plan("cpu", ORDER, list(MODES), "full", set(), "seed", "main")
    dynamic = {c.workload for c in cases if c.mode == "default-dynamic"}
    assert dynamic == {name for name in ORDER if WORKLOADS[name].varying_shapes}
    assert dynamic  # the registry has one


def test_quick_profile_leaves_autotuning_out_only_where_it_costs_minutes():
    autotuning = [name for name, mode in MODES.items() if mode.traits.autotune]
    heavy = [name for name in ORDER if WORKLOADS[name].quick_without_autotune == EVERY_BACKEND]
    assert {"vit16x6x384", "train-mlp"} <= set(heavy)
    quick = plan("cuda", ORDER, list(MODES), "quick", set(), "seed", "main")
    full = plan("cuda", ORDER, list(MODES), "full", set(), "seed", "main")
    assert not [c for c in quick if c.workload in heavy and c.mode in autotuning]
    assert {c.workload for c in full if c.mode in autotuning} >= set(heavy)
    # On a GPU every mode is still in the quick profile, through the small workloads, but
    # the strategies made for shape streams, which no quick workload is.
    assert {c.mode for c in quick} == {c.mode for c in full if not MODES[c.mode].streams_only}


def test_asking_quick_for_autotuning_a_heavy_workload_says_why_nothing_is_planned(
        capsys, tmp_path):
    line = usage_error(capsys, tmp_path, "--backend", "cpu", "--workload", "vit16x6x384",
                       "--mode", "max-autotune")
    assert "the quick profile leaves max-autotune out of vit16x6x384 on cpu" in line
    assert "try --profile full" in line


def test_a_name_given_twice_plans_one_case():
    cases = plan("cpu", ["trivial-call", "trivial-call"], ["eager", "eager"], "quick",
                 set(), "seed", "main")
    assert len(cases) == 1


def test_each_shard_writes_its_own_file_named_for_the_environment():
    env = Environment(
        machine="box", backend="cpu", os="Linux", python="3.11.7", torch="2.13.0+cpu",
        torch_requested=None, triton=None, cuda_runtime=None, cudnn=None, driver=None,
        device_name="CPU", gpu_sm_count=None, gpu_memory_bytes=None, cpu_model="CPU",
        cpu_count=2, torch_threads=2, float32_matmul_precision="highest",
        cuda_matmul_allow_tf32=None, cudnn_allow_tf32=None, git_commit=None, git_dirty=None)
    whole = results_path(Path("r"), env)
    assert whole.name == f"cpu-box-torch2.13.0-cpu-{env.env_id()}.jsonl"
    assert results_path(Path("r"), env, (2, 4)).name == whole.name.replace(".jsonl", "-shard2of4.jsonl")


def test_a_record_that_cannot_be_saved_stops_the_run_in_one_line(capsys, tmp_path, monkeypatch):
    """Disk full: RecordWriteError from the record layer ends the run, exit status 1. The
    case is a mode CPU cannot run, which is recorded without starting any process."""
    from bench import runner

    def full_disk(path, records):
        raise RecordWriteError(errno.ENOSPC, f"{path}: could not save the record of "
                               f"{records[0].key.workload} {records[0].key.mode} (0 of 900 bytes "
                               f"written): No space left on device")

    monkeypatch.setattr(runner, "append_records", full_disk)
    line = one_line_error(capsys, ["--backend", "cpu", "--workload", "matmul-128", "--workload",
                                   "trivial-call", "--mode", "cuda-graph", "--results-dir",
                                   str(tmp_path / "results"), "--cache-dir",
                                   str(tmp_path / "cache")], code=1)
    assert line.endswith("could not save the record of matmul-128 cuda-graph (0 of 900 bytes "
                         "written): No space left on device")
