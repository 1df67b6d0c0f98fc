"""Measure one case in this process: `python -m bench.case SPEC.json RESULT.json`.

The runner starts one such process per case with fresh Inductor/Triton cache
directories, so a crash, hang or OOM here costs only this case. Every stage
adds to the result as it finishes, and whatever was measured before a failure
is still written out.
"""

from __future__ import annotations

import time

IMPORT_STARTED = time.perf_counter()

import json  # noqa: E402
import os
import resource
import sys
from pathlib import Path

import torch

from bench import probes
from bench.backends import BACKENDS
from bench.modes import MODES
from bench.observe import CompilerLog, activity, dynamo_counters, output_error
from bench.timer import measure
from bench.workloads import WORKLOADS

FIRST_CALLS = 3
PROFILED_CALLS = 5
CUDA_GRAPH_MODES = ("reduce-overhead", "max-autotune", "cuda-graph")


def _one_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0][:300] if text else ''}".rstrip(": ")


def _refuse_zero_inputs(inputs) -> None:
    for x in inputs:
        if x.count_nonzero().item() == 0:
            raise ValueError("refusing to time on an all-zero input")


def _warm_first_call(mode, built, backend) -> float:
    torch._dynamo.reset()
    clear = getattr(torch._inductor.utils, "clear_inductor_caches", None)
    if clear is not None:
        clear()
    fresh = mode.prepare(built.fn, built.inputs)
    start = backend.clock()
    fresh(*built.inputs)
    return backend.clock() - start


class Stages:
    """Names the stage in progress (for error reasons) and keeps each stage's duration."""

    def __init__(self, result: dict) -> None:
        self.result, self.current, self.began = result, None, time.perf_counter()
        result["stage_s"] = {}

    def enter(self, name: str) -> None:
        now = time.perf_counter()
        if self.current is not None:
            self.result["stage_s"][self.current] = now - self.began
        self.current, self.began = name, now
        self.result["stage"] = name


def run(spec: dict, result: dict) -> None:
    backend, mode = BACKENDS[spec["backend"]], MODES[spec["mode"]]
    workload = WORKLOADS[spec["workload"]]
    stages = Stages(result)
    log = CompilerLog.install()
    torch.manual_seed(0)

    stages.enter("build")
    built = workload.build(torch.device(backend.device), spec["batch_size"], spec["shapes"] == "tiny")
    _refuse_zero_inputs(built.inputs)
    result["workload_info"] = {
        "family": workload.family, "description": workload.description,
        "input_shapes": [list(x.shape) for x in built.inputs], "dtype": str(workload.dtype),
        "flops": built.flops, "bytes_moved": built.bytes_moved, "parameters": built.parameters,
    }
    reference = built.fn(*built.inputs).clone()

    stages.enter("prepare")
    call_fn = mode.prepare(built.fn, built.inputs)

    def call():
        return call_fn(*built.inputs)

    stages.enter("first calls")
    first_calls = []
    for _ in range(FIRST_CALLS):
        start = backend.clock()
        call()
        first_calls.append(backend.clock() - start)
    result["compile"] = {"cold_first_call_s": first_calls[0], "warm_first_call_s": None,
                         "cold_first_calls_s": first_calls}

    stages.enter("correctness")
    rel_error = output_error(call().clone(), reference)
    result["correctness"] = {"reference": "eager", "rel_error": rel_error,
                             "tolerance": workload.tolerance,
                             "passed": bool(rel_error <= workload.tolerance)}

    stages.enter("timing")
    backend.reset_peak_memory()
    timing = measure(call, backend, budget_s=spec["budget_s"], known_call_s=first_calls[-1])
    result["timing"] = timing.__dict__ | {"samples": list(timing.samples)}
    result["memory"] = {"peak_device_bytes": backend.peak_memory(), "peak_rss_bytes": None}

    stages.enter("profiler")
    result["activity"] = activity(call, backend, PROFILED_CALLS, timing.wall_per_call_s).__dict__

    if mode.compiled:
        result["dynamo"] = dynamo_counters(log).__dict__

    stages.enter("probes")
    found = {}
    if backend.name == "cuda" and mode.name in CUDA_GRAPH_MODES and workload.family in (
            "launch-overhead", "matmul"):
        found["held-output-overwrite"] = probes.held_output_overwrite(call_fn, built.inputs)
        if mode.compiled:
            found["cudagraph-mark-step-begin"] = probes.mark_step_begin(call_fn, built.inputs)
    if backend.name == "cuda" and mode.name == "eager" and workload.family in ("matmul", "mlp"):
        found["tf32-matmul"] = probes.tf32_matmul(built, backend)
    if mode.name == "default" and workload.name == "trivial-call":
        found["recompile-on-new-shape"] = probes.recompile_on_new_shape(call_fn, built.inputs, log)
    if found:
        result["probes"] = found

    if mode.compiled:
        stages.enter("warm compile")
        result["compile"]["warm_first_call_s"] = _warm_first_call(mode, built, backend)
    stages.enter("done")
    del result["stage"]


def main(argv: list[str]) -> int:
    spec_path, result_path = Path(argv[0]), Path(argv[1])
    spec = json.loads(spec_path.read_text())
    result: dict = {"status": "ok", "reason": None}
    started = time.perf_counter()
    try:
        with torch.no_grad():
            run(spec, result)
    except torch.cuda.OutOfMemoryError as error:
        result.update(status="oom", reason=f"during {result.pop('stage', '?')}: {_one_line(error)}")
    except Exception as error:  # noqa: BLE001 - every failure becomes this case's status
        result.update(status="error", reason=f"during {result.pop('stage', '?')}: {_one_line(error)}")
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux, bytes on macOS
    result.setdefault("memory", {"peak_device_bytes": None})
    result["memory"]["peak_rss_bytes"] = peak_kib if sys.platform == "darwin" else peak_kib * 1024
    result["duration_s"] = time.perf_counter() - started
    result["stage_s"] = result.get("stage_s", {}) | {"import": started - IMPORT_STARTED}
    partial = result_path.with_suffix(".partial")
    partial.write_text(json.dumps(result))
    os.replace(partial, result_path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
