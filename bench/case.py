"""Measure one case: `bench.case.main([SPEC.json, RESULT.json])`.

The runner's long-lived parent imports this module once, together with torch, Dynamo and
Inductor, and forks one child per case that calls `main`; `python -m bench.case SPEC RESULT`
does the same in a process of its own. So importing it must neither initialise CUDA nor
compile anything: all of that happens inside `main`.

It is asked a `bench.spec.Spec` (the case and its timing budget) and measures through
`bench.core`, as a paired process does. The result holds `status`, `reason`, `duration_s`
and the sections of `bench.records.MEASURED_SECTIONS` it got to, in the record's own
field shapes. Every stage adds to the result as it finishes, so whatever was
measured before a failure is still written out.
"""

from __future__ import annotations

import contextlib
import resource
import sys
import time
from pathlib import Path

import torch

from bench import core, probes
from bench.backends import BACKENDS, Backend
from bench.host.probe import Fingerprint, Probe
from bench.modes import MODES, Mode
from bench.observe import CompilerLog, dynamo_counters, headers_built, precompiled_headers
from bench.shapes.measure import StreamCalls, turn_caches_off
from bench.spec import Spec, write_result
from bench.timer import measure
from bench.workloads import Built, Workload, lookup

FIRST_CALLS = 3
HOST_PROBE_BLOCKS = 6  # after the case, about 0.1 s: the host's speed as this process saw it


class Unsupported(Exception):
    """The mode cannot run this workload at all; the case is recorded as unsupported."""


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


def run(spec: Spec, result: dict) -> None:
    key = spec.key
    backend, mode = BACKENDS[key.backend], MODES[key.mode]
    workload = lookup(key.workload)
    reason = core.unsupported(workload, mode, alone=True) or workload.dtype_refusal(key.dtype)
    if reason:
        raise Unsupported(reason)
    measure_case = _measure_stream if workload.stream is not None else _measure
    # Inference runs without autograd; a training step needs it.
    with contextlib.nullcontext() if workload.training else torch.no_grad():
        measure_case(spec, result, workload, mode, backend)


def _measure(spec: Spec, result: dict, workload: Workload, mode: Mode, backend: Backend) -> None:
    device = torch.device(backend.device)
    stages = Stages(result)
    log = CompilerLog.install()
    fingerprint = Fingerprint(backend)
    backend.reset_peak_memory()  # the case's own peak, from the build on

    stages.enter("build")
    built = core.build(workload, device, spec.key)
    core.refuse_zero_inputs(built)
    result["workload_info"] = core.workload_info(workload, built, spec.key)

    stages.enter("prepare")
    call_fn = mode.prepare(built.fn, built.inputs)
    call = core.Cycle(call_fn, built)

    stages.enter("first calls")
    # Every shape of a cycle once, so each recompile shows in the first calls.
    first = max(FIRST_CALLS, len(call))
    curve = workload.curve_calls(backend.name, spec.key.shapes == "tiny")
    latencies, headers = [], precompiled_headers()
    for number in range(max(first, 1 + curve)):
        if number == first:
            stages.enter("warm-up curve")
        start = backend.clock()  # synchronizes, so each latency is one whole call
        call.one()
        latencies.append(backend.clock() - start)
    result["compile"] = {"cold_first_call_s": latencies[0], "warm_first_call_s": None,
                         "cold_first_calls_s": latencies[:first],
                         "headers_built": headers_built(headers)}
    if curve:
        result["warmup"] = {"latencies_s": latencies[1:1 + curve]}

    stages.enter("correctness")
    result["correctness"], notes = core.check_against_float64(workload, built, call_fn, device,
                                                                spec.key)

    stages.enter("timing")
    setup_peaks = (backend.peak_memory(), backend.peak_reserved())  # capture and recording included
    backend.reset_peak_memory()
    known = latencies[-1] if len(call) == 1 else None  # a cycle's first calls include recompiles
    timing = measure(call, backend, budget_s=spec.budget_s, known_call_s=known,
                     inner_calls=len(call))
    result["timing"] = timing.__dict__ | {"samples": list(timing.samples)}
    timed_peaks = (backend.peak_memory(), backend.peak_reserved())
    result["memory"] = memory(backend, setup_peaks, timed_peaks)

    stages.enter("profiler")
    result["activity"] = core.profile(call, backend, timing.wall_per_call_s, len(call))

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
    _time_the_host(result, stages, fingerprint, backend)


def _time_the_host(result: dict, stages: Stages, fingerprint: Fingerprint,
                   backend: Backend) -> None:
    """The host probe, after everything the process measured, and the stages closed."""
    stages.enter("host probe")
    probe = Probe(backend)
    for _ in range(HOST_PROBE_BLOCKS):
        probe.block()
    result["host"] = fingerprint.host(probe)
    stages.enter(None)
    del result["stage"]


def _measure_stream(spec: Spec, result: dict, workload: Workload, mode: Mode,
                    backend: Backend) -> None:
    """A shape stream (bench/shapes/measure.py): its calls in order, compiles included, then
    again with every shape seen, then a few sizes against float64; no profiler."""
    device = torch.device(backend.device)
    stages = Stages(result)
    log = CompilerLog.install()
    fingerprint = Fingerprint(backend)
    backend.reset_peak_memory()

    stages.enter("build")
    built = core.build(workload, device, spec.key)
    core.refuse_zero_inputs(built)
    result["workload_info"] = core.workload_info(workload, built, spec.key)

    stages.enter("prepare")
    turn_caches_off()
    calls = StreamCalls(workload, mode, built, backend, spec.key)

    stages.enter("first pass")
    headers = precompiled_headers()
    result["stream"] = calls.first_pass()
    first = result["stream"]["first_pass_s"]
    result["compile"] = {"cold_first_call_s": first[0], "warm_first_call_s": None,
                         "cold_first_calls_s": first[:FIRST_CALLS],
                         "headers_built": headers_built(headers)}
    if mode.compiled:
        result["dynamo"] = dynamo_counters(log).__dict__

    stages.enter("timing")
    setup_peaks = (backend.peak_memory(), backend.peak_reserved())  # compiles and recordings
    backend.reset_peak_memory()
    result["timing"] = calls.steady(spec.budget_s)
    timed_peaks = (backend.peak_memory(), backend.peak_reserved())
    result["memory"] = memory(backend, setup_peaks, timed_peaks)

    stages.enter("correctness")
    try:
        reference = core.build(workload, device, spec.key, reference=True)
    except Exception as error:  # noqa: BLE001 - a model that cannot be built in float64
        result["probes"] = [probes.no_float64_reference(core.one_line(error))]
    else:
        result["correctness"] = calls.check(reference, workload.tolerance_for(spec.key.dtype))

    _time_the_host(result, stages, fingerprint, backend)


def main(argv: list[str]) -> int:
    spec_path, result_path = Path(argv[0]), Path(argv[1])
    result: dict = {"status": "ok", "reason": None}
    started = time.perf_counter()
    try:
        run(Spec.from_json(spec_path.read_text()), result)
    except Unsupported as why:
        result.update(status="unsupported", reason=str(why))
    except torch.cuda.OutOfMemoryError as error:
        result.update(status="oom", reason=f"during {result.get('stage') or 'setup'}: "
                      f"{core.one_line(error)}")
    except Exception as error:  # noqa: BLE001 - every failure becomes this case's status
        result.update(status="error", reason=f"during {result.get('stage') or 'setup'}: "
                      f"{core.failure(error)}")
    result.pop("stage", None)
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux, bytes on macOS
    result.setdefault("memory", {"peak_device_bytes": None})
    result["memory"]["peak_rss_bytes"] = peak_kib if sys.platform == "darwin" else peak_kib * 1024
    result["duration_s"] = time.perf_counter() - started
    write_result(result_path, result)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
