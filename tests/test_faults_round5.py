"""Faults of issue 94 (round 5), each reproduced as it was found: `python -m bench` stops
with one line and loses or doubles no record; the CSV download runs no formula."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from bench_helpers import bench_env, records, start_bench, wait_for

AS_NOBODY = ["setpriv", "--reuid", "nobody", "--regid", "nogroup", "--clear-groups"]
ROOT = Path(__file__).resolve().parents[1]


def hanging_run(tmp: Path, results: Path, *, prefix: list[str] = ()) -> subprocess.Popen:
    """A run whose first case hangs until its 5 s timeout, then one tiny eager case: the
    test changes the results folder while the first case runs, before anything is saved."""
    args = ["--shapes", "tiny", "--profile", "full", "--repeats", "1", "--machine", "faults",
            "--workload", "launch-chain-10", "--workload", "entropy", "--mode", "eager",
            "--timeout", "5", "--results-dir", str(results), "--cache-dir", str(tmp / "cache")]
    env = bench_env(tmp, "launch-chain-10=hang")
    if not prefix:
        return start_bench(*args, env=env)
    return subprocess.Popen([*prefix, sys.executable, "-m", "bench", *args], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            stdin=subprocess.DEVNULL)


def readable_by_others(folder: Path) -> bool:
    """Whether a user of neither the owner's nor its group can import from `folder`."""
    return all(p.stat().st_mode & 0o001 for p in (folder, *folder.parents)) and bool(
        folder.stat().st_mode & 0o004)


def one_line_error(run: subprocess.Popen) -> str:
    out, err = run.communicate(timeout=120)
    assert run.returncode == 1, (out[-2000:], err[-3000:])
    assert "Traceback" not in err, err[-3000:]
    (line,) = err.splitlines()
    return line


# ---- d: the results folder removed mid-run ---------------------------------------------------

@pytest.mark.slow
def test_a_results_folder_removed_mid_run_stops_the_run_in_one_line(tmp_path):
    results = tmp_path / "results"
    run = hanging_run(tmp_path, results)
    wait_for(tmp_path / "hang.pids", run=run)
    shutil.rmtree(results)
    line = one_line_error(run)
    assert "was removed or replaced during the run" in line and "run again" in line
    # Nothing was written without the lock: no new folder, no record a second runner could
    # then measure again.
    assert not results.exists()


# ---- a2: the results folder turned read-only mid-run -----------------------------------------

@pytest.mark.slow
@pytest.mark.skipif(sys.platform != "linux", reason="needs Linux permissions")
def test_a_results_folder_turned_read_only_mid_run_is_one_line_and_the_next_run_resumes(
        shared_tmp):
    # Root writes in a read-only folder regardless: it runs as nobody, who does not.
    prefix = []
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip("needs setpriv to run as another user than root")
        if not readable_by_others(ROOT):
            # `mktemp -d` makes a 0700 folder: a clone there cannot be imported by nobody
            pytest.skip(f"nobody cannot read this checkout ({ROOT}); clone it where others can")
        prefix = AS_NOBODY
    results = shared_tmp / "results"
    run = hanging_run(shared_tmp, results, prefix=prefix)
    wait_for(shared_tmp / "hang.pids", run=run)
    locks = list(results.glob("*.lock"))
    assert len(locks) == 1
    results.chmod(0o555)
    try:
        line = one_line_error(run)
    finally:
        results.chmod(0o755)
    assert "could not save the record of launch-chain-10 eager" in line
    assert "Permission denied" in line
    assert locks[0].exists()  # left as it was: the next run takes it over
    again = hanging_run(shared_tmp, results, prefix=prefix)
    out, err = again.communicate(timeout=300)
    assert again.returncode == 0, err[-3000:]
    found = {(r.key.workload, r.status) for path in results.glob("*.jsonl")
             for r in records(path)}
    assert found == {("launch-chain-10", "timeout"), ("entropy", "ok")}
    assert not list(results.glob("*.lock"))


# ---- c: a model that calls CUDA in forward, forked on a host without CUDA --------------------

@pytest.mark.slow
def test_a_forked_case_that_calls_cuda_records_the_hosts_reason_not_the_fork(tmp_path):
    fresh = subprocess.run([sys.executable, "-c", "import torch; torch.cuda.init()"],
                           capture_output=True, text=True, timeout=300, check=False)
    if fresh.returncode == 0:
        pytest.skip("CUDA works on this host")
    torch_says = fresh.stderr.strip().splitlines()[-1]  # "RuntimeError: Found no NVIDIA driver..."
    results = tmp_path / "results"
    env = bench_env(tmp_path) | {"PYTHONPATH": os.pathsep.join([str(ROOT / "tests"), str(ROOT)])}
    done = subprocess.run(
        [sys.executable, "-m", "bench", "--backend", "cpu", "--isolation", "fork",
         "--workload", "byom_fixtures.cuda_in_forward:factory", "--mode", "eager",
         "--repeats", "1", "--machine", "no-cuda", "--results-dir", str(results),
         "--cache-dir", str(tmp_path / "cache")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    (record,) = [r for path in results.glob("*.jsonl") for r in records(path)]
    assert record.status == "error"
    assert "Cannot re-initialize CUDA" not in record.reason
    assert record.reason.startswith("during first calls: ")
    assert torch_says[:200] in record.reason


# ---- j2: release strings are checked where they enter bench.ab (nox: test_nox_environments)

def ab_error(capsys, *argv: str) -> str:
    from bench import ab

    assert ab.main(list(argv)) == 2
    err = capsys.readouterr().err
    (line,) = err.splitlines()
    return line


def test_bench_ab_refuses_a_requested_release_that_is_no_version(capsys):
    line = ab_error(capsys, "--env", f"a@../../x={sys.executable}", "--env",
                    f"b={sys.executable}")
    assert "--env a@...: '../../x' is not a torch release" in line


# ---- j3: an interpreter named as a command, or one that is not Python ----------------------

def test_bench_ab_finds_an_interpreter_on_path_as_a_shell_would(tmp_path, monkeypatch):
    from bench import ab

    folder = tmp_path / "bin"
    folder.mkdir()
    (folder / "python3").symlink_to(sys.executable)
    monkeypatch.setenv("PATH", str(folder))
    assert ab._side("a=python3") == ab.Side("a", str(folder / "python3"), None)


def test_bench_ab_names_a_command_that_is_not_on_path(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    line = ab_error(capsys, "--env", "a=python3", "--env", f"b={sys.executable}")
    assert "--env a=python3: no such command on PATH" in line


@pytest.mark.parametrize("program", ["true", "echo"])
def test_bench_ab_says_in_one_line_that_an_executable_is_not_python(capsys, program):
    line = ab_error(capsys, "--env", f"a={shutil.which(program)}", "--env",
                    f"b={sys.executable}", "--dry-run")
    assert line.startswith(f"python -m bench.ab: error: {shutil.which(program)} is not a Python "
                           f"interpreter that can run this project's bench")


# ---- D3b: runner and keeper SIGKILLed together, the case's setsid() child left running -------

def parent_of(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


@pytest.mark.slow
@pytest.mark.skipif(sys.platform != "linux", reason="needs /proc")
def test_the_next_run_ends_a_setsid_child_that_runner_and_keeper_left_when_killed_together(
        tmp_path):
    from bench_helpers import all_gone, is_gone

    from bench import pool

    where = ("--results-dir", str(tmp_path / "results"), "--cache-dir", str(tmp_path / "cache"))
    runner = start_bench("--shapes", "tiny", "--workload", "trivial-call", "--mode", "eager",
                         "--machine", "killed", *where,
                         env=bench_env(tmp_path, "trivial-call=setsid"))
    case, worker = (int(p) for p in wait_for(tmp_path / "setsid.pids").split())
    try:
        keeper = parent_of(case)
        (scratch,) = tmp_path.glob(f"{pool.SCRATCH_PREFIX}*")
        note = scratch / pool.DESCENDANTS_FILE
        deadline = time.monotonic() + 30  # the keeper notes what runs below it every second
        while str(worker) not in (note.read_text() if note.exists() else ""):
            assert time.monotonic() < deadline, "the keeper never noted the setsid child"
            time.sleep(0.1)
        os.kill(keeper, signal.SIGKILL)
        runner.kill()
        runner.communicate(timeout=60)
        assert all_gone([case])
        time.sleep(1)
        assert not is_gone(worker)  # out of the case's group: the group's kill missed it
        after = subprocess.run(
            [sys.executable, "-m", "bench", "--backend", "cpu", "--workload", "matmul-128",
             "--mode", "cuda-graph", "--machine", "killed", *where], cwd=ROOT,
            env=bench_env(tmp_path), capture_output=True, text=True, timeout=300, check=False)
        assert after.returncode == 0, after.stderr[-3000:]
        assert f"of case group {keeper}, left running by a runner that no longer runs" in \
            after.stdout
        assert all_gone([worker])
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(worker, signal.SIGKILL)


# ---- CSV cells a spreadsheet would run -------------------------------------------------------

def test_the_csv_download_quotes_text_a_spreadsheet_would_run_and_keeps_numbers(tmp_path):
    import csv
    import dataclasses
    import json

    from fixtures import make_results as fx

    from report import export
    from report.analysis import Data, load

    env = dataclasses.replace(fx.ENV_CPU, machine="@SUM(1+1)",
                              device_name='=HYPERLINK("http://x","y")', cpu_model="\tTab")
    written = [fx.ok_record(env, "matmul-128", mode, None) for mode in ("eager", "default")]
    fx.write(tmp_path / "r" / "hostile.jsonl",
             [dataclasses.replace(r, env_id=env.env_id()) for r in written])
    paths = export.write(Data(load(tmp_path / "r")), tmp_path / "out")
    with open(paths[0], newline="", encoding="utf-8") as f:
        (row,) = [r for r in csv.DictReader(f) if r["mode"] == "default"]
    assert row["machine"] == "'@SUM(1+1)"
    assert row["device"] == '\'=HYPERLINK("http://x","y")'
    assert row["workload"] == "matmul-128" and row["mode"] == "default"  # nothing else changes
    assert float(row["speedup"]) > 0 and not row["speedup"].startswith("'")
    (kept,) = [r for r in json.loads(paths[1].read_text()) if r["mode"] == "default"]
    assert kept["device"] == '=HYPERLINK("http://x","y")'  # the JSON holds it as recorded


@pytest.mark.parametrize("cell, shown", [("=1+1", "'=1+1"), ("+1", "'+1"), ("-x", "'-x"),
                                         ("@A1", "'@A1"), ("\tx", "'\tx"), ("\rx", "'\rx"),
                                         ("a=b", "a=b"), (-1.5, -1.5), (-3, -3), (None, None)])
def test_only_text_cells_that_start_a_formula_are_quoted(cell, shown):
    from report.export import inert

    assert inert(cell) == shown


def test_the_pages_that_offer_the_csv_say_that_such_cells_are_quoted(tmp_path):
    from fixtures import make_results as fx

    from report.analysis import Data, load
    from report.pages import break_even
    from report.site import Site

    fx.write(tmp_path / "r" / "a.jsonl", [fx.ok_record(fx.ENV_CPU, "matmul-128", mode, None)
                                          for mode in ("eager", "default")])
    site = Site(Data(load(tmp_path / "r")), tmp_path / "docs")
    break_even.render(site)
    (page,) = (tmp_path / "docs").rglob("break-even.md")
    text = " ".join(page.read_text(encoding="utf-8").split())
    assert "[CSV](../data/speedups.csv)" in text
    assert ("a text cell that starts with `=`, `+`, `-`, `@`, a tab or a carriage return "
            "begins with a single quote") in text
