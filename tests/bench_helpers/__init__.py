"""Helpers for the bench/ tests: records built from the contract, and `python -m bench` runs.

Nothing here imports torch, so worker processes that only append records start quickly.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from bench.records import (
    Activity,
    CaseKey,
    CompileTimes,
    Correctness,
    DynamoCounters,
    Environment,
    Memory,
    Record,
    Timing,
    WorkloadInfo,
    read_records,
)
from bench.stats import summarize

ROOT = Path(__file__).resolve().parents[2]
# A directory holding only a sitecustomize.py that injects faults into case processes.
FAULTS_DIR = Path(__file__).resolve().parent / "faults"

ENV = Environment(
    machine="test-box", backend="cpu", os="Linux-6.8", python="3.11.7", torch="2.13.0+cpu",
    torch_requested=None, triton=None, cuda_runtime=None, cudnn=None, driver=None,
    device_name="Test CPU", gpu_sm_count=None, gpu_memory_bytes=None, cpu_model="Test CPU",
    cpu_count=2, torch_threads=2, float32_matmul_precision="highest",
    cuda_matmul_allow_tf32=None, cudnn_allow_tf32=None,
    git_commit="0123456789abcdef0123456789abcdef01234567", git_dirty=False,
)


def make_record(workload: str = "matmul-128", mode: str = "default", tag: str = "main",
                extra: dict | None = None) -> Record:
    """A record with every optional part filled in, as a successful compiled case has."""
    samples = (2.0e-5, 2.2e-5, 2.1e-5, 2.5e-5, 1.9e-5)
    return Record(
        key=CaseKey("cpu", workload, mode, None, "tiny", tag),
        status="ok", reason=None, profile="quick", env=ENV, env_id=ENV.env_id(),
        started_at="2025-01-01T00:00:00+00:00", duration_s=3.5,
        workload_info=WorkloadInfo("matmul", "a @ b", ((8, 8), (8, 8)), "torch.float32",
                                   1024, 768, 0),
        timing=Timing(samples=samples, calls_per_sample=4, warmup_calls=100,
                      wall_per_call_s=2.2e-5, timer="perf-counter", **summarize(samples)),
        compile=CompileTimes(0.8, 0.05, (0.8, 1e-4, 5e-5)),
        memory=Memory(None, 300_000_000),
        activity=Activity(5, None, None, None, 1.0, None, None),
        dynamo=DynamoCounters(0, 1, 2, 0, ("skipping cudagraphs due to cpu device",)),
        correctness=Correctness("eager", 0.0, 1e-3, True),
        extra=extra if extra is not None else {"stage_s": {"build": 0.001}},
    )


def run_bench(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    """`python -m bench ARGS` from the repository root, output captured as text."""
    return subprocess.run([sys.executable, "-m", "bench", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout, stdin=subprocess.DEVNULL)


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


def child_pids(pid: int) -> list[int]:
    """Direct children of `pid`, from /proc (Linux)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found.append(int(entry.name))
    return found


def is_gone(pid: int) -> bool:
    """True once `pid` has exited (a zombie nobody reaped counts as exited)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] in ("Z", "X")
