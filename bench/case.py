"""Measure one case: `bench.case.main([SPEC.json, RESULT.json])`.

The runner's long-lived parent imports this module once, together with torch, Dynamo and
Inductor, and forks one child per case that calls `main`; `python -m bench.case SPEC RESULT`
does the same in a process of its own. So importing it must neither initialise CUDA nor
compile anything: all of that happens inside `main`.

The spec holds the CaseKey fields and `budget_s`. The result holds `status`, `reason`,
`duration_s` and the sections of `bench.records.MEASURED_SECTIONS` it got to, in the
record's own field shapes. Every stage adds to the result as it finishes, so whatever was
measured before a failure is still written out.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import math
import os
import resource
import sys
import time
from pathlib import Path

import torch

from bench import probes
from bench.backends import BACKENDS, Backend
from bench.host import Fingerprint, Probe
from bench.modes import MODES, Mode
from bench.observe import CompilerLog, activity, dynamo_counters, output_error, snapshot
from bench.timer import measure
from bench.workloads import Built, Workload, lookup

FIRST_CALLS = 3
HOST_PROBE_BLOCKS = 6  # after the case, about 0.1 s: the host's speed as this process saw it
# Activity counts are the same every call: profile up to five calls, fewer when calls are
# slow, since the profiler itself slows them down severalfold.
PROFILED_CALLS, PROFILE_BUDGET_S = 5, 0.5
# Records hold finite numbers only: an output with NaN or inf is this far off.
NON_FINITE_ERROR = 1e30


class Unsupported(Exception):
    """The mode cannot run this workload at all; the case is recorded as unsupported."""


def _one_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0][:300] if text else ''}".rstrip(": ")


def _unsupported(workload: Workload, mode: Mode) -> str | None:
    if workload.varying_shapes and mode.traits.cuda_graphs and not mode.compiled:
        return (f"{mode.name} replays one captured graph with fixed shapes; {workload.name} "
                f"changes its batch every call")
    return None


def _dtype(spec: dict) -> str:
    return spec.get("dtype", "float32")


def _build(workload: Workload, device: torch.device, spec: dict, reference: bool = False) -> Built:
    """The workload as the case measures it, in its key's dtype, or as the float64 reference."""
    torch.manual_seed(0)  # external factories may draw their weights from the global seed
    size, tiny = spec["batch_size"], spec["shapes"] == "tiny"
    if reference:
        return workload.build(device, size, tiny, torch.float64)
    return workload.build_in(_dtype(spec), device, size, tiny)


def _refuse_zero_inputs(built: Built) -> None:
    for inputs in built.all_input_sets:
        for x in inputs:
            if x.count_nonzero().item() == 0:
                raise ValueError("refusing to time on an all-zero input")


def _workload_info(workload: Workload, built: Built, spec: dict) -> dict:
    dtype = torch.bfloat16 if _dtype(spec) == "bfloat16" else workload.dtype
    return {
        "family": workload.family, "description": workload.description,
        "input_shapes": [list(x.shape) for x in built.inputs], "dtype": str(dtype),
        "flops": built.flops, "bytes_moved": built.bytes_moved, "parameters": built.parameters,
        "training": workload.training, "axis": workload.axis,
        "batch_cycle": list(workload.batch_cycle),
        "settings": dict(built.settings), "libraries": dict(built.libraries),
    }


def _correctness(workload: Workload, built: Built, call_fn, device: torch.device,
                 spec: dict) -> tuple[dict | None, list[dict]]:
    """Check one more call on each input set against the same workload built in float64.

    A training workload's float64 copy starts from the same weights and takes as many
    steps as the measured one has (its on-device counter says how many). A failed check
    is a result (passed=False), never an error of the case.
    """
    outputs = [snapshot(call_fn(*inputs)) for inputs in built.all_input_sets]
    steps = int(built.steps.item()) if built.steps is not None else 1
    try:
        reference = _build(workload, device, spec, reference=True)
        if built.steps is not None:
            for _ in range(steps):
                expected = [reference.fn(*reference.inputs)]
        else:
            expected = [reference.fn(*inputs) for inputs in reference.all_input_sets]
        expected = [snapshot(out) for out in expected]
    except Exception as error:  # noqa: BLE001 - a model that cannot run in float64
        return None, [probes.no_float64_reference(_one_line(error))]
    del reference
    notes = []
    try:
        error = max(output_error(out, ref) for out, ref in zip(outputs, expected, strict=True))
    except ValueError as mismatch:  # a wrong output shape
        error = NON_FINITE_ERROR
        notes.append(probes.result("correctness", f"the output cannot be compared with the "
                                   f"float64 reference: {_one_line(mismatch)}", "wrong-shape"))
    if not math.isfinite(error):
        error = NON_FINITE_ERROR
        notes.append(probes.result("correctness", "the output holds NaN or inf", "non-finite"))
    tolerance = workload.tolerance_for(_dtype(spec))
    return {"reference": "float64", "rel_error": min(error, NON_FINITE_ERROR),
            "tolerance": tolerance, "passed": bool(error <= tolerance)}, notes


def _probes(workload: Workload, mode: Mode, backend: Backend, built: Built, call_fn,
            log: CompilerLog) -> list[dict]:
    found = []
    graphs = mode.traits.cuda_graphs
    if backend.name == "cuda" and graphs and workload.family in ("launch-overhead", "matmul"):
        found.append(probes.held_output_overwrite(call_fn, built.inputs))
        if mode.compiled:
            found.append(probes.mark_step_begin(call_fn, built.inputs))
    if (backend.name == "cuda" and not mode.compiled and not graphs
            and workload.family in ("matmul", "mlp")):
        found.append(probes.tf32_matmul(built, backend))
    if mode.name == "default" and workload.name == "trivial-call":
        found.append(probes.recompile_on_new_shape(call_fn, built.inputs, log))
    return found


def _warm_first_call(mode: Mode, built: Built, backend: Backend) -> float:
    torch._dynamo.reset()
    clear = getattr(torch._inductor.utils, "clear_inductor_caches", None)
    if clear is not None:
        clear()
    fresh = mode.prepare(built.fn, built.inputs)
    start = backend.clock()
    fresh(*built.inputs)
    return backend.clock() - start


def _most(*values: int | None) -> int | None:
    known = [v for v in values if v is not None]
    return max(known) if known else None


def memory(backend: Backend, setup: tuple[int | None, int | None],
           timed: tuple[int | None, int | None]) -> dict:
    """Peaks during timing (the allocator's peak is reset just before it) and over the
    whole case: `setup` was read before that reset, and the peak since it is read now."""
    return {"peak_device_bytes": timed[0], "peak_rss_bytes": None, "peak_reserved_bytes": timed[1],
            "case_peak_device_bytes": _most(setup[0], timed[0], backend.peak_memory()),
            "case_peak_reserved_bytes": _most(setup[1], timed[1], backend.peak_reserved())}


def profile(call, backend: Backend, wall_per_call_s: float, inner_calls: int) -> dict:
    """The activity section: a few profiled calls of `call` (each `inner_calls` workload
    calls), their busy fraction taken against `wall_per_call_s` from the timing."""
    cycle_s = wall_per_call_s * inner_calls
    calls = max(1, min(PROFILED_CALLS, math.ceil(PROFILE_BUDGET_S / cycle_s)))
    return activity(call, backend, calls, wall_per_call_s, inner_calls=inner_calls).__dict__


class Stages:
    """Names the stage in progress (for error reasons) and keeps each stage's duration."""

    def __init__(self, result: dict) -> None:
        self.result, self.current, self.began = result, None, time.perf_counter()
        result["stages_s"] = {}

    def enter(self, name: str | None) -> None:
        now = time.perf_counter()
        if self.current is not None:
            self.result["stages_s"][self.current] = now - self.began
        self.current, self.began = name, now
        self.result["stage"] = name


def run(spec: dict, result: dict) -> None:
    backend, mode = BACKENDS[spec["backend"]], MODES[spec["mode"]]
    workload = lookup(spec["workload"])
    reason = _unsupported(workload, mode) or workload.dtype_refusal(_dtype(spec))
    if reason:
        raise Unsupported(reason)
    # Inference runs without autograd; a training step needs it.
    with contextlib.nullcontext() if workload.training else torch.no_grad():
        _measure(spec, result, workload, mode, backend)


def _measure(spec: dict, result: dict, workload: Workload, mode: Mode, backend: Backend) -> None:
    device = torch.device(backend.device)
    stages = Stages(result)
    log = CompilerLog.install()
    fingerprint = Fingerprint(backend)
    backend.reset_peak_memory()  # the case's own peak, from the build on

    stages.enter("build")
    built = _build(workload, device, spec)
    _refuse_zero_inputs(built)
    result["workload_info"] = _workload_info(workload, built, spec)

    stages.enter("prepare")
    call_fn = mode.prepare(built.fn, built.inputs)
    sets = built.all_input_sets
    turn = itertools.cycle(sets)

    def call_one():
        return call_fn(*next(turn))

    def call():  # a whole cycle where shapes vary; the timer divides by len(sets)
        for _ in range(len(sets) - 1):
            call_one()
        return call_one()

    stages.enter("first calls")
    # Every shape of a cycle once, so each recompile shows in the first calls.
    first = max(FIRST_CALLS, len(sets))
    curve = workload.curve_calls(backend.name, spec["shapes"] == "tiny")
    latencies = []
    for number in range(max(first, 1 + curve)):
        if number == first:
            stages.enter("warm-up curve")
        start = backend.clock()  # synchronizes, so each latency is one whole call
        call_one()
        latencies.append(backend.clock() - start)
    result["compile"] = {"cold_first_call_s": latencies[0], "warm_first_call_s": None,
                         "cold_first_calls_s": latencies[:first]}
    if curve:
        result["warmup"] = {"latencies_s": latencies[1:1 + curve]}

    stages.enter("correctness")
    result["correctness"], notes = _correctness(workload, built, call_fn, device, spec)

    stages.enter("timing")
    setup_peaks = (backend.peak_memory(), backend.peak_reserved())  # capture and recording included
    backend.reset_peak_memory()
    known = latencies[-1] if len(sets) == 1 else None  # a cycle's first calls include recompiles
    timing = measure(call, backend, budget_s=spec["budget_s"], known_call_s=known,
                     inner_calls=len(sets))
    result["timing"] = timing.__dict__ | {"samples": list(timing.samples)}
    timed_peaks = (backend.peak_memory(), backend.peak_reserved())
    result["memory"] = memory(backend, setup_peaks, timed_peaks)

    stages.enter("profiler")
    result["activity"] = profile(call, backend, timing.wall_per_call_s, len(sets))

    if mode.compiled:
        result["dynamo"] = dynamo_counters(log).__dict__

    stages.enter("probes")
    found = notes + _probes(workload, mode, backend, built, call_fn, log)
    if found:
        result["probes"] = found

    result["memory"] = memory(backend, setup_peaks, timed_peaks)  # the profiler and probes call it too

    if mode.compiled:
        stages.enter("warm compile")
        result["compile"]["warm_first_call_s"] = _warm_first_call(mode, built, backend)
    stages.enter("host probe")
    probe = Probe(backend)
    for _ in range(HOST_PROBE_BLOCKS):
        probe.block()
    result["host"] = fingerprint.host(probe)
    stages.enter(None)
    del result["stage"]


def main(argv: list[str]) -> int:
    spec_path, result_path = Path(argv[0]), Path(argv[1])
    spec = json.loads(spec_path.read_text())
    result: dict = {"status": "ok", "reason": None}
    started = time.perf_counter()
    try:
        run(spec, result)
    except Unsupported as why:
        result.update(status="unsupported", reason=str(why))
    except torch.cuda.OutOfMemoryError as error:
        result.update(status="oom", reason=f"during {result.get('stage') or 'setup'}: "
                      f"{_one_line(error)}")
    except Exception as error:  # noqa: BLE001 - every failure becomes this case's status
        result.update(status="error", reason=f"during {result.get('stage') or 'setup'}: "
                      f"{_one_line(error)}")
    result.pop("stage", None)
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux, bytes on macOS
    result.setdefault("memory", {"peak_device_bytes": None})
    result["memory"]["peak_rss_bytes"] = peak_kib if sys.platform == "darwin" else peak_kib * 1024
    result["duration_s"] = time.perf_counter() - started
    write_result(result_path, result)
    return 0


def write_result(path: Path, result: dict, **empty) -> None:
    """Write `result` whole (through a rename, so the runner never reads half of it); a
    NaN or inf that slipped into a figure makes it an error that says so. `empty` gives
    the fields such an error result still needs."""
    try:
        text = json.dumps(result, allow_nan=False)
    except ValueError as error:
        text = json.dumps({**empty, "status": "error", "duration_s": result["duration_s"],
                           "reason": f"the result is not valid JSON: {error}"})
    partial = path.with_suffix(".partial")
    partial.write_text(text)
    os.replace(partial, path)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
