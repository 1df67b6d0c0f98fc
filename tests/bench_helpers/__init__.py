"""Helpers for the bench/ tests: `python -m bench` runs, results files and processes.

Nothing here imports torch.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from bench.records import CaseKey, Environment, ModeTraits, Process, Record, read_records

ROOT = Path(__file__).resolve().parents[2]
# A directory holding only a sitecustomize.py that injects faults into case processes.
FAULTS_DIR = Path(__file__).resolve().parent / "faults"
# A directory holding only a sitecustomize.py that hides timm and transformers.
WITHOUT_MODELS_DIR = Path(__file__).resolve().parent / "without_models"


def bench_env(tmp: Path, faults: str | None = None) -> dict[str, str]:
    """The environment of a test runner: its own temp folder (where scratch folders go),
    and, with `faults`, the fault injector on the path of the runner and its cases."""
    env = os.environ | {"TMPDIR": str(tmp)}
    if faults:
        env |= {"PYTHONPATH": os.pathsep.join([str(FAULTS_DIR), str(ROOT)]),
                "ATLAS_TEST_FAULTS": faults, "ATLAS_TEST_FAULT_DIR": str(tmp)}
    return env


def without_models_env(tmp: Path) -> dict[str, str]:
    """`bench_env(tmp)` in which timm and transformers cannot be imported, as if absent."""
    return bench_env(tmp) | {"PYTHONPATH": os.pathsep.join([str(WITHOUT_MODELS_DIR), str(ROOT)])}


def run_bench(*args: str, timeout: float = 300, env: dict | None = None
              ) -> subprocess.CompletedProcess:
    """`python -m bench ARGS` from the repository root, output captured as text."""
    return subprocess.run([sys.executable, "-m", "bench", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout, stdin=subprocess.DEVNULL, env=env)


def _as_in_the_foreground() -> None:
    # A shell without job control starts background commands with SIGINT ignored, and
    # Python then never raises KeyboardInterrupt: the tests' Ctrl-C must reach the runner
    # however the test run itself was started.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start_bench(*args: str, env: dict) -> subprocess.Popen:
    """`python -m bench ARGS` in the background, with SIGINT as a terminal gives it."""
    return subprocess.Popen([sys.executable, "-m", "bench", *args], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            stdin=subprocess.DEVNULL, preexec_fn=_as_in_the_foreground)


def wait_for(path: Path, timeout: float = 300, run: subprocess.Popen | None = None) -> str:
    """The text of `path` once it exists. The bound is generous: a run that imports torch
    and starts its case took over 120 s under a full test session on 2 cores. With `run`,
    the process that should write it: its exit before then fails at once, with its stderr."""
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} did not appear within {timeout} s"
        if run is not None and run.poll() is not None:
            raise AssertionError(f"{path} never appeared: the run exited with {run.returncode}: "
                                 f"{run.communicate()[1][-3000:]}")
        time.sleep(0.1)
    time.sleep(0.1)  # written in one go, but let the writer finish
    return path.read_text()


def results_files(results_dir: Path) -> list[Path]:
    return sorted(results_dir.glob("*.jsonl"))


def only_results_file(results_dir: Path) -> Path:
    files = results_files(results_dir)
    assert len(files) == 1, f"expected one results file in {results_dir}, found {files}"
    return files[0]


def line_count(path: Path) -> int:
    return len(path.read_bytes().splitlines())


def records(path: Path) -> list[Record]:
    return list(read_records(path))


def is_gone(pid: int) -> bool:
    """True once `pid` has exited (a zombie nobody reaped counts as exited)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] in ("Z", "X")


def all_gone(pids, timeout: float = 10) -> bool:
    deadline = time.monotonic() + timeout
    while not all(is_gone(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    return all(is_gone(pid) for pid in pids)


def scratch_folders(tmp: Path) -> list[Path]:
    return sorted(tmp.glob("atlas-case-*"))


def fake_environment(machine: str = "box") -> Environment:
    """A CPU environment for records written by a test, not read from this host."""
    return Environment(
        machine=machine, backend="cpu", os="Linux", python="3.11.7", torch="2.13.0+cpu",
        torch_requested=None, triton=None, cuda_runtime=None, cudnn=None, driver=None,
        device_name="CPU", gpu_sm_count=None, gpu_memory_bytes=None, cpu_model="CPU",
        cpu_count=2, torch_threads=2, float32_matmul_precision="highest",
        cuda_matmul_allow_tf32=None, cudnn_allow_tf32=None, git_commit=None, git_dirty=None)


def fake_record(env: Environment, key: CaseKey, status: str = "error", repeat: int = 0,
                timing: str = "isolated", duration_s: float = 1.0, run_id: str = "run-1",
                started_at: str = "2025-01-01T00:00:00+00:00", cache: str | None = None
                ) -> Record:
    """A record of a process that measured nothing (an error, a timeout): what the runner
    reads back to plan and schedule, without the figures of a measured one. Its compile
    caches were empty (`cache` "cold") in repeat 0 and there (`warm`) after, unless said."""
    return Record(key=key, status=status, reason="test", profile="quick", env=env,
                  env_id=env.env_id(), started_at=started_at, duration_s=duration_s,
                  process=Process(repeat=repeat, repeats=3, run_id=run_id, gpu=None, workers=1,
                                  parent_import_s=None,
                                  cache=cache or ("cold" if repeat == 0 else "warm"), timing=timing),
                  mode_traits=ModeTraits(False, False, False, False, "test"))
