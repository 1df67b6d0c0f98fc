"""A case that crashes, raises or hangs gets its own status, and the run goes on.

Faults are injected without test hooks in bench/: the runner starts with
tests/bench_helpers/faults/sitecustomize.py on its path and ATLAS_TEST_FAULTS set, which
swap one workload's builder in the registry; forked cases inherit the swap, spawned ones
load it again.
"""

from __future__ import annotations

import pytest
from bench_helpers import all_gone, bench_env, only_results_file, records, run_bench

OK = "ok"
# In plan order: each fault is followed by a workload that must still be measured.
FAULTS = {"trivial-call": "crash", "matmul-128": "raise", "launch-chain-10": "hang"}
AFTER = {"crash": "entropy", "raise": "launch-chain-100", "hang": "elementwise-chain"}
TIMEOUT_S = 5  # a tiny eager case takes well under a second once forked


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
