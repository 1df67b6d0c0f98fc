"""A runner that is killed or terminated leaves no case running, and a second runner on the
same results file is turned away: the faults that time-limited machines and CI produce."""

from __future__ import annotations

import signal
import time
from collections import Counter

import pytest
from bench_helpers import (
    all_gone,
    bench_env,
    only_results_file,
    records,
    run_bench,
    scratch_folders,
    start_bench,
    wait_for,
)

SELECTION = ("--shapes", "tiny", "--profile", "quick", "--machine", "signals", "--repeats", "2",
             "--timing", "isolated",
             "--workload", "trivial-call", "--workload", "launch-chain-10", "--mode", "eager")


def hang_pids(tmp) -> list[int]:
    return [int(p) for p in wait_for(tmp / "hang.pids").split()]


@pytest.fixture(scope="module")
def killed_then_resumed(tmp_path_factory):
    """Repeat 0 of launch-chain-10 hangs; the runner is SIGKILLed there; a second run resumes."""
    tmp = tmp_path_factory.mktemp("killed")
    where = ("--results-dir", str(tmp / "results"), "--cache-dir", str(tmp / "cache"))
    runner = start_bench(*SELECTION, *where, env=bench_env(tmp, "launch-chain-10=hang"))
    pids = hang_pids(tmp)
    left_behind = scratch_folders(tmp)
    runner.kill()
    runner.communicate(timeout=60)
    case_gone = all_gone(pids)
    first = records(only_results_file(tmp / "results"))
    resumed = run_bench(*SELECTION, *where, env=bench_env(tmp))
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    return {"pids": pids, "case_gone": case_gone, "left_behind": left_behind, "first": first,
            "resumed": resumed, "all": records(only_results_file(tmp / "results")), "tmp": tmp}


def test_sigkilled_runner_takes_its_case_and_the_case_workers_with_it(killed_then_resumed):
    assert killed_then_resumed["case_gone"], killed_then_resumed["pids"]


def test_killed_repeat_is_not_recorded(killed_then_resumed):
    assert [(r.key.workload, r.process.repeat) for r in killed_then_resumed["first"]] == [
        ("trivial-call", 0)]


def test_killed_run_resumes_with_every_case_and_repeat_recorded_once(killed_then_resumed):
    assert "3 case process(es) to run of 4" in killed_then_resumed["resumed"].stdout
    counts = Counter((r.key.workload, r.process.repeat) for r in killed_then_resumed["all"])
    assert counts == {("trivial-call", 0): 1, ("launch-chain-10", 0): 1,
                      ("trivial-call", 1): 1, ("launch-chain-10", 1): 1}
    assert {r.status for r in killed_then_resumed["all"]} == {"ok"}


def test_next_run_removes_the_scratch_folder_a_killed_runner_left(killed_then_resumed):
    (left,) = killed_then_resumed["left_behind"]
    assert f"removed {left}, left by a runner that no longer runs" in (
        killed_then_resumed["resumed"].stdout)
    assert scratch_folders(killed_then_resumed["tmp"]) == []


@pytest.fixture(scope="module")
def terminated(tmp_path_factory):
    """A runner hangs in a case; a second runner tries the same results; then SIGTERM."""
    tmp = tmp_path_factory.mktemp("terminated")
    where = ("--results-dir", str(tmp / "results"), "--cache-dir", str(tmp / "cache"))
    env = bench_env(tmp, "trivial-call=hang")
    runner = start_bench(*SELECTION, *where, env=env)
    pids = hang_pids(tmp)
    began = time.monotonic()
    second = run_bench(*SELECTION, *where, env=env)
    second_s = time.monotonic() - began
    runner.send_signal(signal.SIGTERM)
    stdout, stderr = runner.communicate(timeout=60)
    return {"pids": pids, "second": second, "second_s": second_s, "code": runner.returncode,
            "stdout": stdout, "stderr": stderr, "tmp": tmp, "runner_pid": runner.pid,
            "results": tmp / "results"}


def test_second_runner_on_one_results_file_is_refused_in_one_line(terminated):
    second = terminated["second"]
    assert second.returncode == 1, second.stderr
    (line,) = second.stderr.splitlines()
    assert line.startswith(f"python -m bench: error: another runner (pid {terminated['runner_pid']})"
                           " is writing ")
    assert "case process(es) to run" not in second.stdout  # it measured nothing
    assert terminated["second_s"] < 60


def test_sigterm_stops_the_running_case_and_its_workers(terminated):
    assert all_gone(terminated["pids"]), terminated["pids"]


def test_sigterm_exits_non_zero_with_one_line(terminated):
    assert terminated["code"] == 143
    (line,) = terminated["stderr"].splitlines()
    assert line.startswith("python -m bench: terminated (SIGTERM)")


def test_sigterm_leaves_no_scratch_folder_lock_or_record(terminated):
    assert scratch_folders(terminated["tmp"]) == []
    assert [p.name for p in terminated["results"].iterdir()] == []

