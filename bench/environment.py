"""Where a record came from: software versions, hardware, settings, and the project commit."""

from __future__ import annotations

import os
import platform
import socket
import subprocess
from pathlib import Path

import torch

from bench import REPO
from bench.records import Environment


def _run(*command: str) -> str | None:
    try:
        out = subprocess.run(command, capture_output=True, text=True, timeout=20, cwd=REPO)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 and out.stdout.strip() else None


def _first_line(text: str | None) -> str | None:
    return text.splitlines()[0].strip() if text else None


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    brand = _run("sysctl", "-n", "machdep.cpu.brand_string")
    return brand or platform.processor() or platform.machine()


def _triton_version() -> str | None:
    try:
        import triton
    except ImportError:
        return None
    return triton.__version__


def _git_commit() -> tuple[str | None, bool | None]:
    # GPU boxes often get a copy of the tree without .git; the launcher can pass it in.
    commit = os.environ.get("ATLAS_GIT_COMMIT") or _run("git", "rev-parse", "HEAD")
    if commit is None:
        return None, None
    try:
        status = subprocess.run(("git", "status", "--porcelain", "--untracked-files=no"),
                                capture_output=True, text=True, timeout=20, cwd=REPO)
    except (OSError, subprocess.SubprocessError):
        return commit, None
    return commit, (bool(status.stdout.strip()) if status.returncode == 0 else None)


def collect(backend: str, machine: str | None) -> Environment:
    """This process's environment. For cuda it initialises CUDA, so the runner asks in a
    child (bench.runner.collect_environment), never in the process that forks the cases."""
    cuda = backend == "cuda"
    props = torch.cuda.get_device_properties(0) if cuda else None
    commit, dirty = _git_commit()
    device_name = props.name if props else ("Apple GPU (MPS)" if backend == "mps" else cpu_model())
    return Environment(
        machine=machine or socket.gethostname(),
        backend=backend,
        os=platform.platform(),
        python=platform.python_version(),
        torch=torch.__version__,
        torch_requested=os.environ.get("ATLAS_TORCH_PIN"),
        triton=_triton_version(),
        cuda_runtime=torch.version.cuda,
        cudnn=str(torch.backends.cudnn.version()) if cuda else None,
        driver=_first_line(_run("nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"))
        if cuda else None,
        device_name=device_name,
        gpu_sm_count=props.multi_processor_count if props else None,
        gpu_memory_bytes=props.total_memory if props else None,
        cpu_model=cpu_model(),
        cpu_count=os.cpu_count() or 1,
        torch_threads=torch.get_num_threads(),
        float32_matmul_precision=torch.get_float32_matmul_precision(),
        cuda_matmul_allow_tf32=torch.backends.cuda.matmul.allow_tf32 if cuda else None,
        cudnn_allow_tf32=torch.backends.cudnn.allow_tf32 if cuda else None,
        git_commit=commit,
        git_dirty=dirty,
    )
