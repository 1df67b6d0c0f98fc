"""A case that crashes, raises or hangs gets its own status, and the run goes on.

Faults are injected without test hooks in bench/: the case processes the runner
starts inherit PYTHONPATH with tests/bench_helpers/faults/sitecustomize.py and
ATLAS_TEST_FAULTS, which swap one workload's builder in their registry.
"""

from __future__ import annotations

import io
import os
import time

import pytest
from bench_helpers import FAULTS_DIR, ROOT, is_gone, records

from bench.environment import collect
from bench.records import CaseKey
from bench.runner import OutOfTime, RunConfig, run, run_in_subprocess

OK_WORKLOAD = "elementwise-chain"


def key(workload: str, tag: str = "main", mode: str = "eager") -> CaseKey:
    return CaseKey("cpu", workload, mode, None, "tiny", tag)


def config(results_dir, timeout_s: float) -> RunConfig:
    return RunConfig(profile="quick", shapes="tiny", tag="main", force=False, timeout_s=timeout_s,
                     budget_s=0.02, results_dir=results_dir, max_minutes=None)


def run_with_faults(cases, faults: str, results_dir, scratch, timeout_s: float):
    with pytest.MonkeyPatch.context() as patch:
        # Only the children's environment changes; this process runs bench unpatched.
        patch.setenv("PYTHONPATH", os.pathsep.join([str(FAULTS_DIR), str(ROOT)]))
        patch.setenv("ATLAS_TEST_FAULTS", faults)
        patch.setenv("ATLAS_TEST_FAULT_DIR", str(scratch))
        out = io.StringIO()
        path = run(cases, collect("cpu", "fault-test"), config(results_dir, timeout_s), out=out)
    return {(r.key.workload, r.key.mode, r.key.tag): r for r in records(path)}, out.getvalue()


@pytest.fixture(scope="module")
def faulty_run(tmp_path_factory):
    """Crash, then ok; raise, then ok; unsupported; then (second run) hang, then ok."""
    results = tmp_path_factory.mktemp("results")
    scratch = tmp_path_factory.mktemp("scratch")
    first, first_out = run_with_faults(
        [key("trivial-call"), key(OK_WORKLOAD, "after-crash"),
         key("matmul-128"), key(OK_WORKLOAD, "after-raise"),
         key(OK_WORKLOAD, mode="cuda-graph")],
        "trivial-call=crash,matmul-128=raise", results, scratch, timeout_s=300)
    # The hang costs the whole timeout, so keep it just long enough for an ok case.
    ok_time = max(first[(OK_WORKLOAD, "eager", tag)].duration_s
                  for tag in ("after-crash", "after-raise"))
    timeout_s = max(10.0, 4 * ok_time)
    second, second_out = run_with_faults(
        [key("launch-chain-10"), key(OK_WORKLOAD, "after-hang")],
        "launch-chain-10=hang", results, scratch, timeout_s=timeout_s)
    return {"records": first | second, "output": first_out + second_out,
            "timeout_s": timeout_s, "scratch": scratch}


def record(faulty_run, workload, tag="main", mode="eager"):
    return faulty_run["records"][(workload, mode, tag)]


def test_crashed_case_is_an_error_naming_the_signal(faulty_run):
    crashed = record(faulty_run, "trivial-call")
    assert crashed.status == "error"
    assert "killed by SIGSEGV" in crashed.reason
    assert crashed.timing is None


def test_raising_case_is_an_error_naming_the_exception_and_stage(faulty_run):
    raised = record(faulty_run, "matmul-128")
    assert raised.status == "error"
    assert raised.reason == "during build: RuntimeError: boom"


def test_hanging_case_times_out(faulty_run):
    hung = record(faulty_run, "launch-chain-10")
    assert hung.status == "timeout"
    assert hung.reason == f"no result within {faulty_run['timeout_s']:g} s"


def test_timeout_kills_the_case_and_its_workers(faulty_run):
    pids = [int(p) for p in (faulty_run["scratch"] / "hang.pids").read_text().split()]
    deadline = time.monotonic() + 10
    while not all(is_gone(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert [pid for pid in pids if not is_gone(pid)] == []


@pytest.mark.parametrize("fault", ["crash", "raise", "hang"])
def test_case_after_a_failure_is_still_measured(fault, faulty_run):
    after = record(faulty_run, OK_WORKLOAD, f"after-{fault}")
    assert after.status == "ok", after.reason
    assert after.timing.count > 0
    assert after.correctness.passed


@pytest.mark.parametrize("workload", ["trivial-call", "matmul-128", "launch-chain-10"])
def test_failed_case_keeps_the_end_of_its_log(workload, faulty_run):
    assert isinstance(record(faulty_run, workload).extra["log_tail"], list)


def test_cuda_graph_on_cpu_is_unsupported_with_a_reason(faulty_run):
    unsupported = record(faulty_run, OK_WORKLOAD, mode="cuda-graph")
    assert unsupported.status == "unsupported"
    assert unsupported.reason == "cuda-graph needs backend cuda, not cpu"
    assert unsupported.timing is None


def test_run_reports_each_failure_on_its_progress_line(faulty_run):
    output = faulty_run["output"]
    assert "error: case process killed by SIGSEGV" in output
    assert "error: during build: RuntimeError: boom" in output
    assert "timeout: no result within" in output
    assert "unsupported: cuda-graph needs backend cuda" in output


def test_case_without_a_result_in_time_is_a_timeout(tmp_path):
    # Far too short even to import torch.
    result = run_in_subprocess(key("trivial-call"), config(tmp_path, timeout_s=0.05))
    assert result["status"] == "timeout"
    assert result["reason"] == "no result within 0.05 s"


def test_case_cut_off_by_the_run_deadline_raises_instead_of_timing_out(tmp_path):
    with pytest.raises(OutOfTime):
        run_in_subprocess(key("trivial-call"), config(tmp_path, timeout_s=300),
                          deadline=time.monotonic() + 0.05)


def test_run_deadline_leaves_the_unfinished_case_unrecorded_and_resumable(tmp_path):
    results = tmp_path / "results"
    cfg = RunConfig(profile="quick", shapes="tiny", tag="main", force=False, timeout_s=300,
                    budget_s=0.02, results_dir=results, max_minutes=0.001)
    out = io.StringIO()
    path = run([key("trivial-call"), key(OK_WORKLOAD)], collect("cpu", "deadline-test"), cfg,
               out=out)
    assert not path.exists() or records(path) == []
    assert "stopped unfinished at --max-minutes; not recorded" in out.getvalue()
    assert "2 case(s) left; run again to resume" in out.getvalue()


def test_run_does_not_start_a_case_that_the_longest_so_far_says_will_not_finish(tmp_path):
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    hang_s = 6.0
    cfg = RunConfig(profile="quick", shapes="tiny", tag="main", force=False, timeout_s=hang_s,
                    budget_s=0.02, results_dir=tmp_path / "results",
                    max_minutes=1.6 * hang_s / 60)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PYTHONPATH", os.pathsep.join([str(FAULTS_DIR), str(ROOT)]))
        patch.setenv("ATLAS_TEST_FAULTS", "launch-chain-10=hang")
        patch.setenv("ATLAS_TEST_FAULT_DIR", str(scratch))
        out = io.StringIO()
        # The hang times out after hang_s, leaving about 0.6 * hang_s: less than it took.
        path = run([key("launch-chain-10"), key(OK_WORKLOAD)], collect("cpu", "deadline-test"),
                   cfg, out=out)
    assert [r.status for r in records(path)] == ["timeout"]
    assert "not starting another case" in out.getvalue()
    assert "stopped unfinished" not in out.getvalue()
    assert "1 case(s) left; run again to resume" in out.getvalue()
