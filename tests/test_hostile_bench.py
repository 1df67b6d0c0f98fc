"""Hostile files, models and hosts for `python -m bench`: each is refused in one line with a
non-zero exit before anything is measured, never followed through a link, never a
traceback; a SIGKILLed runner's case ends with all it started, and whatever a keeper could
not end, the next run does.

Most tests call `bench.cli.main` in this process with a case CPU cannot run (CUDA graphs),
which is recorded without starting a case process: every check here comes before that.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest
from bench_helpers import all_gone, bench_env, is_gone, run_bench, start_bench, wait_for

from bench import cli
from bench.environment import collect
from bench.runner import results_path

TESTS = Path(__file__).resolve().parent
NO_PROCESS = ["--backend", "cpu", "--workload", "matmul-128", "--mode", "cuda-graph",
              "--machine", "hostile"]


def one_line_error(capsys, argv, code) -> tuple[str, str]:
    """The one line `python -m bench` printed on stderr, and its stdout."""
    assert cli.main(argv) == code
    out, err = capsys.readouterr()
    assert len(err.splitlines()) == 1, err[-3000:]
    assert err.startswith("python -m bench: error: ")
    assert "Traceback" not in out + err
    return err.rstrip("\n"), out


def results_file(results: Path) -> Path:
    """Where a run of NO_PROCESS writes its records."""
    return results_path(results, collect("cpu", "hostile"))


def run_no_process(capsys, tmp_path, code=1) -> tuple[str, str]:
    return one_line_error(capsys, [*NO_PROCESS, "--results-dir", str(tmp_path / "results"),
                                   "--cache-dir", str(tmp_path / "cache")], code)


# ---- links, directories and files that cannot be written ---------------------------------

def test_a_lock_that_is_a_symlink_is_refused_and_its_target_untouched(capsys, tmp_path):
    target = tmp_path / "passwd"
    target.write_text("root:x:0:0:root:/root:/bin/bash\n")
    path = results_file(tmp_path / "results")
    path.parent.mkdir(parents=True)
    lock = path.with_name(path.name + ".lock")
    lock.symlink_to(target)
    line, _ = run_no_process(capsys, tmp_path)
    assert line.endswith(f"{lock} is a symbolic link to a file; results and lock files are "
                         f"never written through links: remove it, or use another --results-dir")
    assert target.read_text() == "root:x:0:0:root:/root:/bin/bash\n"


@pytest.mark.parametrize("kind, says", [
    ("directory", "is not a regular file (a directory?)"),
    ("dangling-link", "is a symbolic link to nothing"),
    ("link-to-directory", "is a symbolic link to a directory"),
    ("link-to-file", "is a symbolic link to a file"),
])
def test_a_results_path_that_is_no_plain_file_is_refused_in_one_line(capsys, tmp_path, kind,
                                                                     says):
    path = results_file(tmp_path / "results")
    path.parent.mkdir(parents=True)
    elsewhere = tmp_path / "elsewhere"
    if kind == "directory":
        path.mkdir()
    elif kind == "dangling-link":
        path.symlink_to(tmp_path / "nothing")
    elif kind == "link-to-directory":
        elsewhere.mkdir()
        path.symlink_to(elsewhere)
    else:
        elsewhere.write_text("")
        path.symlink_to(elsewhere)
    line, _ = run_no_process(capsys, tmp_path)
    assert f"{path} {says}" in line
    assert not elsewhere.is_file() or elsewhere.read_text() == ""


def test_a_directory_named_jsonl_among_the_results_is_one_line(capsys, tmp_path):
    path = results_file(tmp_path / "results")
    shard = path.with_name(path.stem + "-shard1of2.jsonl")  # read when resuming
    shard.mkdir(parents=True)
    line, _ = run_no_process(capsys, tmp_path)
    assert line.endswith(f"{shard}: cannot be read as a results file: not a regular file")


def test_a_disk_already_full_at_the_start_is_one_line(capsys, tmp_path, monkeypatch):
    real_pwrite = os.pwrite

    def full(fd, data, offset):
        if os.readlink(f"/proc/self/fd/{fd}").endswith(".lock"):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_pwrite(fd, data, offset)

    monkeypatch.setattr(os, "pwrite", full)
    line, out = run_no_process(capsys, tmp_path)
    path = results_file(tmp_path / "results")
    assert line.endswith(f"cannot write {path}.lock: No space left on device")
    assert "case process(es) to run" not in out
    assert not Path(f"{path}.lock").exists()


@contextlib.contextmanager
def read_only(path: Path):
    """`path` made read-only for this process: chmod, or for root (whom modes do not stop)
    the immutable attribute."""
    if os.geteuid() != 0:
        path.chmod(0o444)
        yield
        return
    if shutil.which("chattr") is None or subprocess.run(
            ["chattr", "+i", str(path)], capture_output=True).returncode != 0:
        pytest.skip("root, and this file system has no immutable attribute")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(path)], check=True)


def test_a_read_only_results_file_is_refused_before_measuring(capsys, tmp_path):
    path = results_file(tmp_path / "results")
    path.parent.mkdir(parents=True)
    path.write_bytes(b"")
    with read_only(path):
        line, out = run_no_process(capsys, tmp_path)
    assert line.endswith(f"cannot append to {path}: Operation not permitted (is it read-only?)"
                         ) or line.endswith(f"cannot append to {path}: Permission denied (is it "
                                            f"read-only?)")
    assert "case process(es) to run" not in out
    assert path.read_bytes() == b""


# ---- a model of your own that attacks the runner -----------------------------------------

@pytest.fixture
def hostile_models(monkeypatch, tmp_path):
    monkeypatch.setenv("PYTHONPATH", str(TESTS))  # the check's child finds byom_fixtures
    monkeypatch.setenv("ATLAS_TEST_FAULT_DIR", str(tmp_path))


def own_model(capsys, tmp_path, factory: str, timeout: str = "120") -> tuple[str, str, float]:
    spec = f"byom_fixtures.hostile:{factory}"
    began = time.monotonic()
    line, out = one_line_error(capsys, ["--backend", "cpu", "--workload", spec, "--mode",
                                        "eager", "--timeout", timeout, "--results-dir",
                                        str(tmp_path / "results")], code=2)
    assert f"workload {spec!r}: " in line
    assert not (tmp_path / "results").exists()
    return line, out, time.monotonic() - began


@pytest.mark.slow
@pytest.mark.parametrize("factory", ["hard_exit", "system_exit"])
def test_a_factory_that_exits_is_one_line_naming_the_spec(hostile_models, capsys, tmp_path,
                                                          factory):
    line, _, _ = own_model(capsys, tmp_path, factory)
    assert line.endswith("the process checking it exited with code 3 before factory('cpu' "
                         "device, batch_size=1) returned")


@pytest.mark.slow
def test_a_factory_that_hangs_is_stopped_at_the_case_timeout(hostile_models, capsys, tmp_path):
    line, _, took = own_model(capsys, tmp_path, "hang", timeout="20")
    assert line.endswith("took longer than 20 s (--timeout)")
    assert took < 60
    assert all_gone([int((tmp_path / "factory.pid").read_text())])


@pytest.mark.slow
def test_a_factory_that_floods_its_output_leaves_the_runners_output_alone(hostile_models,
                                                                         capsys, tmp_path):
    line, out, _ = own_model(capsys, tmp_path, "flood")
    assert line.endswith("raised RuntimeError: flooded")
    assert len(out) + len(line) < 2000


# ---- SIGKILL ------------------------------------------------------------------------------

@pytest.mark.slow
def test_a_sigkilled_runner_leaves_no_process_of_its_case_5_s_later(tmp_path):
    """The case's keeper is a child subreaper that outlives the runner: told of its death
    (PR_SET_PDEATHSIG), it ends the case and whatever the case started, even a process
    that does not ask to die with its parent."""
    where = ("--results-dir", str(tmp_path / "results"), "--cache-dir", str(tmp_path / "cache"))
    runner = start_bench("--shapes", "tiny", "--workload", "trivial-call", "--mode", "eager",
                         "--machine", "killed", *where,
                         env=bench_env(tmp_path, "trivial-call=orphan"))
    case, worker = (int(p) for p in wait_for(tmp_path / "orphan.pids").split())
    try:
        runner.kill()
        runner.communicate(timeout=60)
        assert all_gone([case, worker], timeout=5)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(worker, signal.SIGKILL)


@pytest.mark.slow
def test_the_run_after_a_sigkill_ends_a_case_group_its_keeper_could_not(tmp_path):
    """The backstop: a keeper SIGKILLed with its runner leaves the case's group running
    (the case dies with its keeper; its worker does not ask to), and the next run ends it."""
    where = ("--results-dir", str(tmp_path / "results"), "--cache-dir", str(tmp_path / "cache"))
    runner = start_bench("--shapes", "tiny", "--workload", "trivial-call", "--mode", "eager",
                         "--machine", "killed", *where,
                         env=bench_env(tmp_path, "trivial-call=orphan"))
    case, worker = (int(p) for p in wait_for(tmp_path / "orphan.pids").split())
    keeper = int(Path(f"/proc/{case}/stat").read_text().rsplit(")", 1)[1].split()[1])
    try:
        os.kill(keeper, signal.SIGKILL)
        runner.kill()
        runner.communicate(timeout=60)
        assert all_gone([case])
        time.sleep(1)
        assert not is_gone(worker)
        after = run_bench(*NO_PROCESS, *where, env=bench_env(tmp_path))
        assert after.returncode == 0, after.stderr[-3000:]
        assert (f"ended 1 process(es) of case group {keeper}, left running by a runner that no "
                f"longer runs") in after.stdout.splitlines()
        assert all_gone([worker])
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(worker, signal.SIGKILL)


# ---- factories that leave something behind ------------------------------------------------

def own_model_run(tmp_path, factory: str) -> subprocess.CompletedProcess:
    env = bench_env(tmp_path) | {"PYTHONPATH": os.pathsep.join([str(TESTS), str(TESTS.parent)]),
                                 "ATLAS_TEST_FAULT_DIR": str(tmp_path)}
    return run_bench("--backend", "cpu", "--workload", f"fixtures.hostile_factories:{factory}",
                     "--mode", "eager", "--shapes", "tiny", "--repeats", "1", "--timeout", "60",
                     "--machine", "factories", "--results-dir", str(tmp_path / "results"),
                     "--cache-dir", str(tmp_path / "cache"), env=env, timeout=280)


@pytest.mark.slow
def test_a_factory_that_leaves_a_thread_running_is_measured_without_waiting_for_it(tmp_path):
    began = time.monotonic()
    done = own_model_run(tmp_path, "lingering_thread")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "took longer than" not in done.stderr
    assert time.monotonic() - began < 55  # the check's timeout is 60 s


@pytest.mark.slow
def test_a_factory_whose_child_calls_setsid_leaves_no_process_after_the_run(tmp_path):
    done = own_model_run(tmp_path, "setsid_child")
    assert done.returncode == 0, done.stderr[-3000:]
    pids = [int(p) for p in (tmp_path / "setsid.pids").read_text().split()]
    assert len(pids) >= 2  # the check's and the case's
    try:
        assert all_gone(pids, timeout=5)
    finally:
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
