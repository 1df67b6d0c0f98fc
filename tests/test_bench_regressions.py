"""Behaviours that once were wrong: each test names the invariant that broke."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from bench_helpers import FAULTS_DIR, ROOT, is_gone

from bench import environment
from bench.runner import plan


def test_a_name_given_twice_plans_one_case():
    cases = plan("cpu", ["trivial-call", "trivial-call"], ["eager", "eager"], "quick",
                 set(), "seed", "main")
    assert len(cases) == 1


def test_a_clean_checkout_is_recorded_as_not_dirty(tmp_path, monkeypatch):
    def git(*args):
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)

    git("init", "-q")
    (tmp_path / "f").write_text("x")
    git("add", "f")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "m")
    monkeypatch.setattr(environment, "REPO", tmp_path)
    monkeypatch.delenv("ATLAS_GIT_COMMIT", raising=False)
    commit, dirty = environment._git_commit()
    assert len(commit) == 40 and dirty is False
    (tmp_path / "f").write_text("y")
    assert environment._git_commit()[1] is True


def test_ctrl_c_stops_the_running_case_process(tmp_path):
    env = os.environ | {"PYTHONPATH": os.pathsep.join([str(FAULTS_DIR), str(ROOT)]),
                        "ATLAS_TEST_FAULTS": "trivial-call=hang",
                        "ATLAS_TEST_FAULT_DIR": str(tmp_path)}
    runner = subprocess.Popen(
        [sys.executable, "-m", "bench", "--shapes", "tiny", "--workload", "trivial-call",
         "--mode", "eager", "--results-dir", str(tmp_path / "results")],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    pids_file = tmp_path / "hang.pids"
    deadline = time.monotonic() + 120
    while not pids_file.exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    case_pid, worker_pid = (int(p) for p in pids_file.read_text().split())
    runner.send_signal(signal.SIGINT)
    _, stderr = runner.communicate(timeout=60)
    assert runner.returncode == 130, stderr
    deadline = time.monotonic() + 10
    while not (is_gone(case_pid) and is_gone(worker_pid)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert is_gone(case_pid) and is_gone(worker_pid)
