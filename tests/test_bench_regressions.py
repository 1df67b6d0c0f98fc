"""Behaviours that once were wrong: each test names the invariant that broke."""

from __future__ import annotations

import signal
import subprocess

from bench_helpers import all_gone, bench_env, scratch_folders, start_bench, wait_for

from bench import environment


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
    runner = start_bench("--shapes", "tiny", "--workload", "trivial-call", "--mode", "eager",
                         "--results-dir", str(tmp_path / "results"),
                         env=bench_env(tmp_path, "trivial-call=hang"))
    pids = [int(p) for p in wait_for(tmp_path / "hang.pids").split()]
    runner.send_signal(signal.SIGINT)
    _, stderr = runner.communicate(timeout=60)
    assert runner.returncode == 130, stderr
    assert all_gone(pids)
    assert scratch_folders(tmp_path) == []
