"""`python -m bench` run as root among other users' files: it ends no process group it cannot
prove is its own, and refuses a results file whose mode says read-only."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from bench_helpers import bench_env, is_gone, run_bench

from bench import pool

NO_PROCESS = ["--backend", "cpu", "--workload", "matmul-128", "--mode", "cuda-graph",
              "--machine", "hostile"]
AS_NOBODY = ["setpriv", "--reuid", "nobody", "--regid", "nogroup", "--clear-groups"]

root_only = pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0 or shutil.which("setpriv") is None
    or sys.platform != "linux", reason="needs root, setpriv and /proc")


def dead_pid() -> int:
    done = subprocess.Popen(["true"])
    done.wait()
    return done.pid


def sleeper(*prefix: str) -> subprocess.Popen:
    """`setsid sleep 700`: the leader of a process group of its own."""
    return subprocess.Popen([*prefix, "setsid", "--wait", "sleep", "700"],
                            stdin=subprocess.DEVNULL)


def leader_of(popen: subprocess.Popen) -> int:
    """The pid of the `sleep` that setsid (possibly under setpriv) ended up running."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        for entry in Path("/proc").glob("[0-9]*"):
            with contextlib.suppress(OSError, IndexError):
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                cmd = (entry / "cmdline").read_bytes().split(b"\0")
                if (cmd[:2] == [b"sleep", b"700"] and int(entry.name) == int(fields[2])
                        and _descends(int(entry.name), popen.pid)):
                    return int(entry.name)
        time.sleep(0.05)
    raise AssertionError("the sleeper did not start")


def _descends(pid: int, ancestor: int) -> bool:
    while pid > 1:
        if pid == ancestor:
            return True
        try:
            pid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            return False
    return False


def plant(shared: Path, pgid: int, *prefix: str) -> Path:
    """A stale case folder naming group `pgid`, made by whoever `prefix` runs as, private
    (0700) and holding a record whose start time matches: all an attacker can fake."""
    folder = shared / f"{pool.SCRATCH_PREFIX}{dead_pid()}-planted{pgid}"
    note = f"{pgid} {pool._start_time(pgid)}"
    subprocess.run([*prefix, "sh", "-c", f'mkdir -m 700 "{folder}" && '
                    f'echo "{note}" > "{folder}/{pool.GROUP_FILE}"'], check=True)
    return folder


@root_only
@pytest.mark.slow
@pytest.mark.parametrize("victim_as", ["root", "nobody"])
def test_a_case_folder_planted_by_another_user_makes_root_kill_nothing(tmp_path, shared_tmp,
                                                                        victim_as):
    prefix = AS_NOBODY if victim_as == "nobody" else []
    victim = sleeper(*prefix)
    try:
        pgid = leader_of(victim)
        planted = plant(shared_tmp, pgid, *AS_NOBODY)
        assert os.stat(planted).st_uid != 0
        after = run_bench(*NO_PROCESS, "--results-dir", str(tmp_path / "results"),
                          "--cache-dir", str(tmp_path / "cache"), env=bench_env(shared_tmp))
        assert after.returncode == 0, after.stderr[-3000:]
        assert "case group" not in after.stdout
        time.sleep(0.5)
        assert not is_gone(pgid)
        assert planted.is_dir()  # nor is another user's folder removed
    finally:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(leader_of(victim), signal.SIGKILL)
        victim.kill()
        victim.wait()


@root_only
def test_a_case_folder_of_ours_that_others_could_write_is_not_ours(shared_tmp, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(shared_tmp))
    monkeypatch.setattr(tempfile, "tempdir", None)
    victim = sleeper()
    try:
        pgid = leader_of(victim)
        folder = shared_tmp / f"{pool.SCRATCH_PREFIX}{dead_pid()}-open"
        folder.mkdir(mode=0o777)
        folder.chmod(0o777)
        (folder / pool.GROUP_FILE).write_text(f"{pgid} {pool._start_time(pgid)}\n")
        assert pool.end_stale_case_groups() == []
        assert not is_gone(pgid)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, signal.SIGKILL)
        victim.kill()
        victim.wait()


# ---- a results file whose mode says read-only ------------------------------------------------

def test_a_results_file_of_mode_444_is_not_appended_to_even_by_root(tmp_path):
    from bench_helpers import fake_environment, fake_record

    from bench.records import CaseKey, RecordWriteError, append_records, check_appendable

    path = tmp_path / "results.jsonl"
    path.write_bytes(b"")
    path.chmod(0o444)
    record = fake_record(fake_environment(), CaseKey("cpu", "matmul-128", "eager", None))
    with pytest.raises(RecordWriteError, match=r"it is read-only \(mode 0444\)"):
        append_records(path, [record])
    with pytest.raises(PermissionError, match="read-only"):
        check_appendable(path)
    assert path.read_bytes() == b""
    path.chmod(0o644)
    append_records(path, [record])
    assert path.read_bytes().count(b"\n") == 1
