"""What torch reports about a case beyond its latency: profiler activity and Dynamo counters."""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Callable

import torch

from bench.backends import Backend
from bench.records import Activity, DynamoCounters
from bench.stats import relative_error


def precompiled_headers() -> int | None:
    """How many precompiled headers (files *.gch) Inductor's header folder holds. Read before
    and after a process's first calls, the difference says whether they built the headers,
    which only a machine's first C++ compile does (bench/pool.py, header_folder); None where
    the folder cannot be read."""
    codecache = sys.modules.get("torch._inductor.codecache")
    folder = getattr(codecache, "_HEADER_DIR", None)
    if folder is None:
        from torch._inductor.runtime.cache_dir_utils import default_cache_dir

        folder = os.path.join(default_cache_dir(), "precompiled_headers")
    try:
        return sum(1 for name in os.listdir(folder) if name.endswith(".gch"))
    except FileNotFoundError:
        return 0
    except OSError:
        return None


def headers_built(before: int | None) -> int | None:
    """The precompiled headers built since `precompiled_headers()` read `before`."""
    after = precompiled_headers()
    return None if before is None or after is None else after - before


LAUNCH_MARKERS = ("LaunchKernel", "GraphLaunch", "LaunchCooperativeKernel")


def output_tensors(out: object) -> list[torch.Tensor]:
    """The tensors of a call's output: a tensor, or a tuple, list or dict of them."""
    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, dict):
        return [t for key in sorted(out) for t in output_tensors(out[key])]
    if isinstance(out, tuple | list):
        return [t for part in out for t in output_tensors(part)]
    raise TypeError(f"the output is a {type(out).__name__}, not a tensor or a tuple, list or "
                    f"dict of tensors")


def snapshot(out: object) -> list[torch.Tensor]:
    """A copy of a call's output: a CUDA graph overwrites its output on the next replay."""
    return [t.detach().clone() for t in output_tensors(out)]


def output_error(out: object, ref: object) -> float:
    """||out - ref|| / ||ref|| over all output tensors, computed in float64."""
    outs, refs = output_tensors(out), output_tensors(ref)
    shapes, ref_shapes = [tuple(t.shape) for t in outs], [tuple(t.shape) for t in refs]
    if shapes != ref_shapes:  # broadcasting would hide a wrong shape
        raise ValueError(f"output shapes {shapes} differ from the reference's {ref_shapes}")
    diff = sum((o.double() - r.double()).norm().item() ** 2 for o, r in zip(outs, refs, strict=True))
    norm = sum(r.double().norm().item() ** 2 for r in refs)
    return relative_error(diff**0.5, norm**0.5)


def _union_length(intervals: list[tuple[float, float]]) -> float:
    total, end = 0.0, float("-inf")
    for start, stop in sorted(intervals):
        if stop <= end:
            continue
        total += stop - max(start, end)
        end = stop
    return total


def activity(call: Callable[[], object], backend: Backend, calls: int,
             wall_per_call_s: float, inner_calls: int = 1) -> Activity:
    """Profile `calls` calls of `call`, each making `inner_calls` workload calls."""
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile

    activities = [ProfilerActivity.CPU]
    if backend.profiler_activity:
        activities.append(getattr(ProfilerActivity, backend.profiler_activity))
    backend.synchronize()
    with profile(activities=activities) as prof:
        for _ in range(calls):
            call()
        backend.synchronize()
    events = prof.events()
    calls *= inner_calls

    device_events = [e for e in events if e.device_type != DeviceType.CPU]
    launches = [e for e in events if any(m in e.name for m in LAUNCH_MARKERS)]
    graph_launches = [e for e in launches if "GraphLaunch" in e.name]
    top_level_ops = [e for e in events if e.name.startswith("aten::")
                     and (e.cpu_parent is None or not e.cpu_parent.name.startswith("aten::"))]
    measured_device = backend.profiler_activity is not None
    busy_s = _union_length([(e.time_range.start, e.time_range.end) for e in device_events]) / 1e6
    busy_per_call = busy_s / calls if measured_device else None
    return Activity(
        profiled_calls=calls,
        device_kernels_per_call=len(device_events) / calls if measured_device else None,
        launches_per_call=len(launches) / calls if measured_device else None,
        graph_launches_per_call=len(graph_launches) / calls if measured_device else None,
        cpu_ops_per_call=len(top_level_ops) / calls,
        device_busy_s_per_call=busy_per_call,
        busy_fraction=(min(1.0, busy_per_call / wall_per_call_s)
                       if busy_per_call is not None and wall_per_call_s > 0 else None),
    )


class CompilerLog(logging.Handler):
    """Counts the recompiles and cudagraph skips torch logs, keeping skip reasons."""

    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.recompiles = 0
        self.skip_reasons: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if message.startswith("Recompiling function"):
            self.recompiles += 1
        elif message.lower().startswith("skipping cudagraphs"):
            reason = message.splitlines()[0][:200]
            if reason not in self.skip_reasons:
                self.skip_reasons.append(reason)

    @classmethod
    def install(cls) -> CompilerLog:
        torch._logging.set_logs(recompiles=True, perf_hints=True, cudagraphs=True)
        handler = cls()
        # torch's own loggers stop propagation below "torch", so listen where they log.
        for name in ("torch._dynamo", "torch._inductor"):
            logging.getLogger(name).addHandler(handler)
        return handler


# A model can break its graph in many places for many reasons; keep the most frequent.
GRAPH_BREAK_REASONS, REASON_CHARS = 20, 300


def graph_break_reasons(breaks: dict[str, int]) -> tuple[str, ...]:
    """Dynamo's graph_break counter (reason -> count) as "3x: first line of the reason",
    most frequent first: what `TORCH_LOGS=graph_breaks` would print, counted."""
    counted: dict[str, int] = {}
    for reason, count in breaks.items():
        lines = str(reason).strip().splitlines()
        line = lines[0][:REASON_CHARS] if lines else "no reason given"
        counted[line] = counted.get(line, 0) + int(count)
    top = sorted(counted.items(), key=lambda item: (-item[1], item[0]))[:GRAPH_BREAK_REASONS]
    return tuple(f"{count}x: {line}" for line, count in top)


def dynamo_counters(log: CompilerLog) -> DynamoCounters:
    from torch._dynamo.utils import counters

    return DynamoCounters(
        graph_breaks=int(sum(counters["graph_break"].values())),
        recompiles=log.recompiles,
        unique_graphs=int(counters["stats"]["unique_graphs"]),
        cudagraph_skips=int(counters["inductor"]["cudagraph_skips"]),
        skip_reasons=tuple(log.skip_reasons),
        graph_break_reasons=graph_break_reasons(counters["graph_break"]),
    )
