"""A case that crashes, raises or hangs gets its own status, and the run goes on.

Faults are injected without test hooks in bench/: the runner starts with
tests/bench_helpers/faults/sitecustomize.py on its path and ATLAS_TEST_FAULTS set, which
swap one workload's builder in the registry; forked cases inherit the swap, spawned ones
load it again.
"""

from __future__ import annotations

import dataclasses
import io
import types

import pytest
from bench_helpers import (
    all_gone,
    bench_env,
    fake_environment,
    fake_record,
    only_results_file,
    records,
    run_bench,
)

from bench import pool, runner
from bench.records import CaseKey, CompileTimes, append_records
from bench.runner import Job, Recorded, durations, jobs, signature

OK = "ok"
# In plan order: each fault is followed by a workload that must still be measured.
FAULTS = {"trivial-call": "crash", "matmul-128": "raise", "launch-chain-10": "hang"}
AFTER = {"crash": "entropy", "raise": "launch-chain-100", "hang": "elementwise-chain"}
# A tiny eager case takes well under a second once forked, but CI's three workers on two
# cores once held one past 5 s (its record read "timeout"): the hanging case waits this long.
TIMEOUT_S = 15


def selection(*workloads: str) -> list[str]:
    return ["--shapes", "tiny", "--profile", "full", "--repeats", "1", "--machine", "faults",
            *(arg for w in workloads for arg in ("--workload", w)),
            "--mode", "eager", "--mode", "cuda-graph"]


@pytest.fixture(scope="module")
def faulty_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("faults")
    workloads = [w for fault, after in AFTER.items()
                 for w in (next(k for k, v in FAULTS.items() if v == fault), after)]
    result = run_bench(*selection(*workloads), "--timeout", str(TIMEOUT_S),
                       "--results-dir", str(tmp / "results"), "--cache-dir", str(tmp / "cache"),
                       env=bench_env(tmp, ",".join(f"{w}={f}" for w, f in FAULTS.items())))
    assert result.returncode == 0, result.stderr[-3000:]
    found = records(only_results_file(tmp / "results"))
    return {"records": {(r.key.workload, r.key.mode): r for r in found}, "order": found,
            "output": result.stdout, "tmp": tmp}


def record(faulty_run, workload, mode="eager"):
    return faulty_run["records"][(workload, mode)]


def test_crashed_case_is_an_error_naming_the_signal(faulty_run):
    crashed = record(faulty_run, "trivial-call")
    assert crashed.status == "error"
    assert "killed by SIGSEGV" in crashed.reason
    assert crashed.timing is None


def test_raising_case_is_an_error_naming_the_exception_and_stage(faulty_run):
    raised = record(faulty_run, "matmul-128")
    assert raised.status == "error"
    assert raised.reason == "during build: RuntimeError: boom"


def test_hanging_case_times_out_and_dies_with_its_workers(faulty_run):
    hung = record(faulty_run, "launch-chain-10")
    assert hung.status == "timeout"
    assert hung.reason == f"no result within {TIMEOUT_S:g} s"
    pids = [int(p) for p in (faulty_run["tmp"] / "hang.pids").read_text().split()]
    assert all_gone(pids)


@pytest.mark.parametrize("fault", sorted(AFTER))
def test_case_after_a_failure_is_still_measured(fault, faulty_run):
    after = record(faulty_run, AFTER[fault])
    assert after.status == OK, after.reason
    assert after.timing.count > 0
    assert after.correctness.passed


@pytest.mark.parametrize("workload", sorted(FAULTS))
def test_failed_case_keeps_the_end_of_its_log(workload, faulty_run):
    assert f"injected fault: {FAULTS[workload]}" in record(faulty_run, workload).log_tail


def test_mode_the_backend_cannot_run_is_unsupported_with_a_reason(faulty_run):
    unsupported = record(faulty_run, "entropy", mode="cuda-graph")
    assert unsupported.status == "unsupported"
    assert unsupported.reason == "cuda-graph needs backend cuda, not cpu"


def test_run_reports_each_failure_on_its_progress_line(faulty_run):
    output = faulty_run["output"]
    assert "error: case process killed by SIGSEGV" in output
    assert "error: during build: RuntimeError: boom" in output
    assert f"timeout: no result within {TIMEOUT_S:g} s" in output
    assert "unsupported: cuda-graph needs backend cuda" in output


def test_spawned_cases_fail_and_recover_the_same_way(tmp_path):
    """--isolation spawn, the fallback where forking is not possible or not wanted."""
    result = run_bench(*selection("trivial-call", "entropy"), "--isolation", "spawn",
                       "--results-dir", str(tmp_path / "results"), "--cache-dir", str(tmp_path / "cache"),
                       env=bench_env(tmp_path, "trivial-call=crash"))
    assert result.returncode == 0, result.stderr[-3000:]
    assert "imported torch" not in result.stdout  # nothing is imported for the cases
    found = {(r.key.workload, r.key.mode): r for r in records(only_results_file(
        tmp_path / "results"))}
    assert "killed by SIGSEGV" in found[("trivial-call", "eager")].reason
    assert "injected fault: crash" in found[("trivial-call", "eager")].log_tail
    assert found[("entropy", "eager")].status == OK
    assert found[("entropy", "eager")].process.parent_import_s is None


def test_run_deadline_leaves_the_unfinished_case_unrecorded_and_resumable(tmp_path):
    result = run_bench(*selection("trivial-call", "entropy"), "--max-minutes", "0.0001",
                       "--results-dir", str(tmp_path / "results"),
                       env=bench_env(tmp_path, "trivial-call=hang"))
    assert result.returncode == 0, result.stderr[-3000:]
    assert "stopped unfinished at --max-minutes; not recorded" in result.stdout
    assert "4 case(s) left; run again to resume" in result.stdout
    assert list((tmp_path / "results").glob("*.jsonl")) == []


def test_run_does_not_start_a_case_that_the_longest_so_far_says_will_not_finish(tmp_path):
    hang_s = 3.0
    # The hang times out after hang_s, leaving about 0.6 * hang_s: less than it took.
    result = run_bench(*selection("launch-chain-10", "entropy"), "--timeout", str(hang_s),
                       "--max-minutes", str(1.6 * hang_s / 60),
                       "--results-dir", str(tmp_path / "results"),
                       env=bench_env(tmp_path, "launch-chain-10=hang"))
    assert result.returncode == 0, result.stderr[-3000:]
    assert [r.status for r in records(only_results_file(tmp_path / "results"))] == ["timeout"]
    assert "not starting another case" in result.stdout
    assert "stopped unfinished" not in result.stdout
    assert "3 case(s) left; run again to resume" in result.stdout


# ---- which job still fits before --max-minutes ----------------------------------------------

ENV = fake_environment()
EAGER, DEFAULT = (CaseKey("cpu", "mlp", mode, 8) for mode in ("eager", "default"))
OTHER_EAGER = CaseKey("cpu", "mlp", "eager", 32)


def test_durations_are_the_longest_each_kind_of_job_took(tmp_path):
    path = runner.results_path(tmp_path, ENV)
    at = "2025-01-01T00:0{}:00+00:00".format
    append_records(path, [fake_record(ENV, EAGER, duration_s=30.0),
                          fake_record(ENV, EAGER, duration_s=50.0, run_id="run-2"),
                          fake_record(ENV, EAGER, repeat=1, duration_s=4.0)])
    # Two paired processes of the same two modes, and one of those modes alone at batch 32.
    for run_id, seconds in (("run-1", 12.0), ("run-2", 20.0)):
        append_records(path, [fake_record(ENV, key, timing="paired", duration_s=seconds,
                                          run_id=run_id, started_at=at(1))
                              for key in (EAGER, DEFAULT)])
    append_records(path, [fake_record(ENV, OTHER_EAGER, timing="paired", duration_s=7.0,
                                      started_at=at(1))])
    # Another environment of the backend fills in only what this one never ran.
    other = fake_environment("elsewhere")
    append_records(runner.results_path(tmp_path, other), [
        fake_record(other, CaseKey("cpu", "mlp", "eager", 8), duration_s=999.0),
        fake_record(other, OTHER_EAGER, duration_s=9.0)])

    took = durations(tmp_path, ENV)
    paired_jobs = [j for j in jobs([EAGER, DEFAULT], 2, Recorded(), "paired") if j.group]
    lone = Job(OTHER_EAGER, 0, (OTHER_EAGER,))
    # A paired process's warm repeats are expected to take as long as its cold one, as these
    # records hold no compile times that caches could spare.
    assert took == {signature(Job(EAGER, 0)): 50.0, signature(Job(EAGER, 1)): 4.0,
                    signature(paired_jobs[0]): 20.0, signature(paired_jobs[0], cold=False): 20.0,
                    signature(lone): 7.0, signature(lone, cold=False): 7.0,
                    signature(Job(OTHER_EAGER, 0)): 9.0}
    assert signature(paired_jobs[1]) == signature(paired_jobs[0], cold=False)
    assert signature(Job(DEFAULT, 0)) not in took  # a mode never measured alone


def scheduler(tmp_path, todo, took, max_minutes=None) -> runner._Run:
    config = runner.RunConfig(profile="quick", shapes="seed", tag="main", force=False,
                              timeout_s=900.0, budget_s=0.1, results_dir=tmp_path,
                              max_minutes=max_minutes, repeats=2, cache_dir=tmp_path / "cache")
    return runner._Run(todo, ENV, config, runner.results_path(tmp_path, ENV), [pool.Slot()],
                       pool.Launcher("spawn"), io.StringIO(), took)


def test_a_job_that_does_not_fit_is_skipped_with_every_later_one_of_its_case(tmp_path):
    big, small = Job(EAGER, 0), Job(OTHER_EAGER, 0)
    after_big, after_small = Job(EAGER, 1), Job(OTHER_EAGER, 1)
    took = {signature(big): 100.0, signature(small): 5.0,
            signature(after_big): 1.0, signature(after_small): 2.0}
    run = scheduler(tmp_path, [big, small, after_big, after_small], took)
    # Repeat 1 of the big case would fit, but it needs the caches repeat 0 writes.
    assert [run.next_job(50.0), run.next_job(50.0), run.next_job(50.0)] == [
        small, after_small, None]
    assert run.queue == [big, after_big]
    assert run.next_job(100.0) == big


def test_a_job_never_seen_is_expected_to_take_the_longest_so_far(tmp_path):
    never_seen = Job(DEFAULT, 0)
    run = scheduler(tmp_path, [never_seen], {})
    assert run.expected_s(never_seen) == 0.0  # nothing finished yet: anything fits
    run.longest_s = 40.0
    assert run.next_job(30.0) is None
    assert run.next_job(45.0) == never_seen


def test_a_paired_process_is_expected_to_compile_cold_until_caches_are_on_disk(tmp_path):
    # A lent machine starts bare: the first paired process there pays every cold compile
    # (autotuning included) even after the isolated ones ran on an earlier machine.
    paired = Job(EAGER, 1, (EAGER, DEFAULT))
    took = {signature(paired, cold=True): 470.0, signature(paired, cold=False): 50.0}
    run = scheduler(tmp_path, [paired], took)
    assert run.expected_s(paired) == 470.0
    assert run.next_job(100.0) is None
    isolated = runner.case_cache_dir(run.config.cache_dir, ENV.env_id(), DEFAULT)
    (isolated / "inductor").mkdir(parents=True)
    assert run.expected_s(paired) == 50.0
    assert run.next_job(100.0) == paired


def test_durations_key_a_process_by_the_caches_it_found(tmp_path):
    path = runner.results_path(tmp_path, ENV)
    append_records(path, [fake_record(ENV, key, timing="paired", repeat=1, cache="cold",
                                      duration_s=470.0) for key in (EAGER, DEFAULT)])
    paired = Job(EAGER, 1, (EAGER, DEFAULT))
    assert durations(tmp_path, ENV)[signature(paired, cold=True)] == 470.0


def test_a_warm_paired_process_is_expected_to_spare_the_compiles_its_caches_hold(tmp_path):
    # resnet50's six modes on an H200: a 964 s cold paired process, then warm ones of 37 and
    # 41 s, which a lease's last 10 minutes refused as 964 s jobs.
    path = runner.results_path(tmp_path, ENV)
    compiled = lambda record, cold_s, warm_s: dataclasses.replace(  # noqa: E731
        record, compile=CompileTimes(cold_s, warm_s))
    append_records(path, [compiled(fake_record(ENV, DEFAULT, duration_s=320.0), 300.0, 5.0),
                          fake_record(ENV, EAGER, timing="paired", duration_s=400.0),
                          compiled(fake_record(ENV, DEFAULT, timing="paired", duration_s=400.0),
                                   350.0, None)])
    paired = Job(EAGER, 1, (EAGER, DEFAULT))
    took = durations(tmp_path, ENV)
    assert took[signature(paired, cold=True)] == 400.0
    assert took[signature(paired, cold=False)] == 400.0 - 350.0 + 5.0
    # A warm process measured is what a warm one takes.
    append_records(path, [fake_record(ENV, key, timing="paired", repeat=1, duration_s=70.0,
                                      run_id="run-2") for key in (EAGER, DEFAULT)])
    assert durations(tmp_path, ENV)[signature(paired, cold=False)] == 70.0


def test_the_run_starts_what_fits_then_stops_when_nothing_does(tmp_path, monkeypatch):
    big, small = Job(EAGER, 0), Job(OTHER_EAGER, 0)
    run = scheduler(tmp_path, [big, small], {signature(big): 120.0, signature(small): 5.0},
                    max_minutes=1)
    run.longest_s = 300.0  # the old rule would have started nothing
    started = []
    monkeypatch.setattr(run, "start", lambda job, slot: started.append(job)
                        or types.SimpleNamespace(job=job))
    assert run.fill() is True
    assert started == [small]
    run.running.clear()  # small finished
    assert run.fill() is False
    assert started == [small]
    assert ("not starting another case: 60 s left; the 1 job(s) left need about 120 s or more "
            "each, or come after one that does") in run.out.getvalue()


# ---- a machine name that already names another GPU ---------------------------------------------

def gpu_environment(machine: str, device_name: str):
    return dataclasses.replace(fake_environment(machine), backend="cuda", device_name=device_name)


def test_a_machine_name_of_another_gpu_is_refused_in_one_line(tmp_path):
    h200 = gpu_environment("lent-h200", "NVIDIA H200")
    append_records(runner.results_path(tmp_path, h200),
                   [fake_record(h200, CaseKey("cuda", "mlp", "eager", 8))])
    # The same name, the same GPU (another driver, say) measures on; so do other names.
    runner.check_same_device(tmp_path, dataclasses.replace(h200, driver="581.0"))
    runner.check_same_device(tmp_path, gpu_environment("lent-h100", "NVIDIA H100 80GB HBM3"))

    with pytest.raises(runner.RunError) as refused:
        runner.check_same_device(tmp_path, gpu_environment("lent-h200", "NVIDIA H100 80GB HBM3"))
    message = str(refused.value)
    assert "\n" not in message
    assert "'lent-h200' belongs to the NVIDIA H200" in message
    assert "this machine's device is the NVIDIA H100 80GB HBM3" in message
    assert "--machine" in message


def test_the_cpu_keeps_its_name_on_another_host(tmp_path):
    """A release runner's CPU can change model from one release to the next."""
    old_host = dataclasses.replace(fake_environment("github-ubuntu"), device_name="AMD EPYC")
    append_records(runner.results_path(tmp_path, old_host),
                   [fake_record(old_host, CaseKey("cpu", "mlp", "eager", 8))])
    runner.check_same_device(tmp_path, dataclasses.replace(old_host, device_name="Intel Xeon"))
