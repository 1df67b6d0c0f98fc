"""The host's part of a figure: which machine a process ran on, and how fast it dispatches.

A launch-bound time is set by the CPU that issues the work, so every process records a
fingerprint (`Host`) and times a probe next to its workload: the eager per-call cost of a
trivial in-place op (Python, dispatcher and launch) and, on CUDA, of a bare kernel launch.
Paired processes time the probe as one more member of every round, so it sees the host in
the same states the modes saw.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import time
from pathlib import Path

import torch

from bench.backends import Backend
from bench.environment import cpu_model

PROBE_CALLS = 200  # calls per probe block; a trivial op takes about 5-50 us
# A long block runs the same op for this long: on a time-sliced host a scheduler slice is a
# few milliseconds, so a block of 50 ms keeps its share of preemptions, as a mode's block of
# tens of milliseconds does, where a 1-2 ms block's median leaves them out. A few per
# process (LONG_BLOCKS) cost a fraction of a second.
LONG_BLOCK_S = 0.05
LONG_BLOCKS = 5


def _read(path: str) -> str | None:
    try:
        return Path(path).read_text().strip() or None
    except OSError:
        return None


def _cpus() -> list[int]:
    try:
        return sorted(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return list(range(os.cpu_count() or 1))


def _cpu_mhz(cpus: list[int]) -> float | None:
    """The mean current frequency the kernel reports for `cpus` (cpufreq, else cpuinfo)."""
    found = [_read(f"/sys/devices/system/cpu/cpu{i}/cpufreq/scaling_cur_freq") for i in cpus]
    khz = [float(x) for x in found if x]
    if khz:
        return sum(khz) / len(khz) / 1e3
    info = _read("/proc/cpuinfo") or ""
    mhz = [float(line.split(":", 1)[1]) for line in info.splitlines() if line.startswith("cpu MHz")]
    return sum(mhz) / len(mhz) if mhz else None


def _chosen(path: str) -> str | None:
    """The bracketed choice of a sysfs setting such as "always [madvise] never"."""
    found = re.search(r"\[([^\]]+)\]", _read(path) or "")
    return found.group(1) if found else None


ALLOCATORS = ("jemalloc", "tcmalloc", "mimalloc", "snmalloc")
# glibc's own settings that decide when freed memory goes back to the kernel, and so how
# often an eager call faults in fresh pages (bench/timer.py page_faults).
GLIBC_SETTINGS = ("GLIBC_TUNABLES", "MALLOC_ARENA_MAX", "MALLOC_MMAP_MAX_",
                  "MALLOC_MMAP_THRESHOLD_", "MALLOC_TOP_PAD_", "MALLOC_TRIM_THRESHOLD_")


def _allocator() -> str | None:
    """The malloc this process uses: a known allocator's library mapped into it (LD_PRELOAD
    or linked), else "glibc" followed by any of its settings the environment gives, such as
    "glibc MALLOC_TRIM_THRESHOLD_=1000000000"; None where the mappings cannot be read."""
    maps = _read("/proc/self/maps")
    if maps is None:
        return None
    for line in maps.splitlines():
        name = line.rsplit("/", 1)[-1] if "/" in line else ""
        if any(known in name for known in ALLOCATORS):
            return name
    return " ".join(["glibc", *(f"{name}={os.environ[name]}" for name in GLIBC_SETTINGS
                                if name in os.environ)])


def _numa_nodes() -> int | None:
    found = list(Path("/sys/devices/system/node").glob("node[0-9]*"))
    return len(found) or None


def _load() -> tuple[float, ...]:
    try:
        return tuple(round(x, 2) for x in os.getloadavg())
    except OSError:
        return ()


def _gpu_clocks() -> tuple[int | None, int | None]:
    """SM and memory clocks of the visible GPU now, from nvidia-smi (no CUDA call here)."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0].strip() or "0"
    try:
        out = subprocess.run(["nvidia-smi", "-i", visible, "--query-gpu=clocks.sm,clocks.mem",
                              "--format=csv,noheader,nounits"], capture_output=True, text=True,
                             timeout=10)
        sm, mem = (int(x) for x in out.stdout.strip().splitlines()[0].split(","))
        return sm, mem
    except (OSError, subprocess.SubprocessError, ValueError, IndexError):
        return None, None


class Probe:
    """Times the host-speed probe in blocks; `block()` adds one figure to each series."""

    def __init__(self, backend: Backend) -> None:
        self.backend = backend
        self.x = torch.ones(16, device=backend.device)  # ones: never time on all-zero data
        self.op_s: list[float] = []
        self.launch_s: list[float] = []
        self.op_long_s: list[float] = []
        self.cuda = backend.name == "cuda"

    def _time(self, call) -> float:
        self.backend.synchronize()
        start = time.perf_counter()
        for _ in range(PROBE_CALLS):
            call()
        # The device finishes each trivial kernel long before the host issues the next, so
        # the synchronize adds one kernel's time, not a backlog.
        self.backend.synchronize()
        return (time.perf_counter() - start) / PROBE_CALLS

    def block(self) -> None:
        x = self.x
        self.op_s.append(self._time(lambda: x.mul_(1.0)))
        if self.cuda:
            # _sleep(0) is a bare kernel launch from a Python binding, with no dispatcher.
            self.launch_s.append(self._time(lambda: torch.cuda._sleep(0)))


    def long_block(self) -> None:
        """One block of the op lasting LONG_BLOCK_S: PROBE_CALLS calls at a time until then,
        the device synchronized at both ends; seconds per call."""
        x = self.x
        self.backend.synchronize()
        start = time.perf_counter()
        calls = 0
        while time.perf_counter() - start < LONG_BLOCK_S:
            for _ in range(PROBE_CALLS):
                x.mul_(1.0)
            calls += PROBE_CALLS
        self.backend.synchronize()
        self.op_long_s.append((time.perf_counter() - start) / calls)


class Fingerprint:
    """Everything a Host holds but the probe, read before and after the work."""

    def __init__(self, backend: Backend) -> None:
        self.cuda = backend.name == "cuda"
        self.cpus = _cpus()
        self.load_before = _load()
        self.mhz_before = _cpu_mhz(self.cpus)

    def host(self, probe: Probe) -> dict:
        after = _cpu_mhz(self.cpus)
        mhz = [m for m in (self.mhz_before, after) if m is not None]
        sm, mem = _gpu_clocks() if self.cuda else (None, None)  # after the work: clocks under load
        return {"hostname": socket.gethostname(),
                "boot_id": _read("/proc/sys/kernel/random/boot_id"),
                "cpu_model": cpu_model(), "cpu_mhz": sum(mhz) / len(mhz) if mhz else None,
                "cpus_available": len(self.cpus), "load_before": list(self.load_before),
                "load_after": list(_load()), "gpu_sm_clock_mhz": sm, "gpu_memory_clock_mhz": mem,
                "op_s": list(probe.op_s), "launch_s": list(probe.launch_s),
                "op_long_s": list(probe.op_long_s), "cpus": list(self.cpus),
                "thp": _chosen("/sys/kernel/mm/transparent_hugepage/enabled"),
                "thp_defrag": _chosen("/sys/kernel/mm/transparent_hugepage/defrag"),
                "allocator": _allocator(), "numa_nodes": _numa_nodes()}

