"""Backends as data: how to find, synchronize, time and profile one kind of device."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class Backend:
    name: str
    device: str
    is_available: Callable[[], bool]
    synchronize: Callable[[], None]
    event_timer: bool  # True: per-sample device events; False: host clock after a synchronize
    reset_peak_memory: Callable[[], None]
    peak_memory: Callable[[], int | None]
    peak_reserved: Callable[[], int | None]  # allocator pools included (CUDA graph pools among them)
    profiler_activity: str | None  # name in torch.profiler.ProfilerActivity for device kernels

    def new_event(self):
        return torch.cuda.Event(enable_timing=True)

    def clock(self) -> float:
        self.synchronize()
        return time.perf_counter()


def _nothing() -> None:
    return None


def _cuda_available() -> bool:
    # Ask NVML, not the CUDA runtime: cudaGetDeviceCount initialises CUDA in this process,
    # and a child forked from it afterwards cannot use the GPU (see bench/pool.py).
    # torch falls back to the runtime only where NVML cannot answer.
    os.environ.setdefault("PYTORCH_NVML_BASED_CUDA_CHECK", "1")
    return torch.cuda.is_available()


def _mps_available() -> bool:
    return bool(getattr(torch.backends, "mps", None)) and torch.backends.mps.is_available()


CPU = Backend(
    name="cpu",
    device="cpu",
    is_available=lambda: True,
    synchronize=_nothing,
    event_timer=False,
    reset_peak_memory=_nothing,
    peak_memory=lambda: None,
    peak_reserved=lambda: None,
    profiler_activity=None,
)

CUDA = Backend(
    name="cuda",
    device="cuda",
    is_available=_cuda_available,
    synchronize=lambda: torch.cuda.synchronize(),
    event_timer=True,
    reset_peak_memory=lambda: torch.cuda.reset_peak_memory_stats(),
    peak_memory=lambda: int(torch.cuda.max_memory_allocated()),
    peak_reserved=lambda: int(torch.cuda.max_memory_reserved()),
    profiler_activity="CUDA",
)

MPS = Backend(
    name="mps",
    device="mps",
    is_available=_mps_available,
    synchronize=lambda: torch.mps.synchronize(),
    event_timer=False,
    reset_peak_memory=_nothing,
    # The MPS allocator exposes current, not peak, usage; read after timing it is a lower bound.
    peak_memory=lambda: int(torch.mps.driver_allocated_memory()),
    peak_reserved=lambda: None,
    profiler_activity=None,
)

BACKENDS: dict[str, Backend] = {b.name: b for b in (CPU, CUDA, MPS)}


def available_backends() -> list[str]:
    return [name for name, backend in BACKENDS.items() if backend.is_available()]
