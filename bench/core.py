"""The measurement core that both kinds of case process call: an isolated one (bench/case.py)
and a paired one (bench/paired.py).

Build a workload in its case's dtype, refuse inputs that would time nothing, cycle through
its input sets, check the output against a float64 build, and profile a few calls. What
one call costs and how long a block of calls takes come from bench/timer.py, which both
call too. Importing it touches no device.
"""

from __future__ import annotations

import itertools
import math
import subprocess
import sys
from collections.abc import Callable

import torch

from bench import probes
from bench.backends import Backend
from bench.modes import Mode
from bench.observe import activity, output_error, snapshot
from bench.records import CaseKey
from bench.shapes.strategies import STRATEGIES
from bench.workloads import Built, Workload

# Records hold finite numbers only: an output with NaN or inf is this far off.
NON_FINITE_ERROR = 1e30
# Activity counts are the same every call: profile up to five calls, fewer when calls are
# slow, since the profiler itself slows them down severalfold.
PROFILED_CALLS, PROFILE_BUDGET_S = 5, 0.5


def one_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0][:300] if text else ''}".rstrip(": ")


# What torch says in a forked child whenever its parent asked the CUDA runtime anything, as
# the runner's `torch.cuda.is_available()` does where NVML cannot answer (no driver): it
# hides the host's own reason, which only a fresh process can get from torch.
FORKED_CUDA = "Cannot re-initialize CUDA in forked subprocess"


def failure(error: BaseException) -> str:
    """`error` in one line; for the forked child's CUDA error on a host where CUDA is not
    available, the host's reason, as torch gives it to a fresh process."""
    if FORKED_CUDA not in str(error) or torch.cuda.is_available():
        return one_line(error)  # CUDA works here: the fork is the cause
    try:
        fresh = subprocess.run([sys.executable, "-c", "import torch; torch.cuda.init()"],
                               capture_output=True, text=True, timeout=300,
                               stdin=subprocess.DEVNULL)
        said = [line for line in fresh.stderr.splitlines() if line.strip()]
        why = said[-1].strip()[:300] if fresh.returncode and said else "no reason given"
    except (OSError, subprocess.SubprocessError) as failed:
        why = f"no reason found ({one_line(failed)})"
    return f"CUDA is not available on this host (torch.cuda.is_available() is False): {why}"


def unsupported(workload: Workload, mode: Mode, alone: bool = False) -> str | None:
    """Why `mode` cannot run `workload` at all, or None. A shape stream is measured from a
    fresh process of its own (`alone`, bench/shapes): a paired process refuses it."""
    if workload.varying_shapes and mode.traits.cuda_graphs and not mode.compiled:
        return (f"{mode.name} replays one captured graph with fixed shapes; {workload.name} "
                f"changes its batch every call")
    if workload.stream is not None:
        if not alone:
            return (f"{workload.name} is a shape stream, measured in fresh processes of its "
                    f"own (--timing isolated), never beside other modes")
        return STRATEGIES[mode.strategy].lacks()
    return None


def build(workload: Workload, device: torch.device, key: CaseKey,
          reference: bool = False) -> Built:
    """The workload as the case measures it, in its key's dtype, or as the float64 reference."""
    torch.manual_seed(0)  # external factories may draw their weights from the global seed
    tiny = key.shapes == "tiny"
    if reference:
        return workload.build(device, key.batch_size, tiny, torch.float64)
    return workload.build_in(key.dtype, device, key.batch_size, tiny)


def refuse_zero_inputs(built: Built) -> None:
    for inputs in built.all_input_sets:
        for x in inputs:
            if x.count_nonzero().item() == 0:
                raise ValueError("refusing to time on an all-zero input")


def workload_info(workload: Workload, built: Built, key: CaseKey) -> dict:
    """The record's workload_info section."""
    dtype = torch.bfloat16 if key.dtype == "bfloat16" else workload.dtype
    return {
        "family": workload.family, "description": workload.description,
        "input_shapes": [list(x.shape) for x in built.inputs], "dtype": str(dtype),
        "flops": built.flops, "bytes_moved": built.bytes_moved, "parameters": built.parameters,
        "training": workload.training, "axis": workload.axis,
        "batch_cycle": list(workload.batch_cycle),
        "settings": dict(built.settings), "libraries": dict(built.libraries),
    }


class Cycle:
    """The prepared callable on the built input sets, one set after the other: `one()` makes
    one workload call; calling the cycle makes `len(cycle)` of them, a whole cycle of batch
    sizes where shapes vary, so timing it and dividing by its length is per workload call."""

    def __init__(self, call_fn: Callable, built: Built) -> None:
        self.call_fn, self.length = call_fn, len(built.all_input_sets)
        self._turn = itertools.cycle(built.all_input_sets)

    def __len__(self) -> int:
        return self.length

    def one(self):
        return self.call_fn(*next(self._turn))

    def __call__(self):
        for _ in range(self.length - 1):
            self.one()
        return self.one()


def check_against_float64(workload: Workload, built: Built, call_fn, device: torch.device,
                          key: CaseKey) -> tuple[dict | None, list[dict]]:
    """Check one more call on each input set against the same workload built in float64:
    the correctness section (None where no float64 build runs) and the probes that say why.

    A training workload's float64 copy starts from the same weights and takes as many
    steps as the measured one has (its on-device counter says how many). A failed check
    is a result (passed=False), never an error of the case.
    """
    outputs = [snapshot(call_fn(*inputs)) for inputs in built.all_input_sets]
    steps = int(built.steps.item()) if built.steps is not None else 1
    try:
        reference = build(workload, device, key, reference=True)
        if built.steps is not None:
            for _ in range(steps):
                expected = [reference.fn(*reference.inputs)]
        else:
            expected = [reference.fn(*inputs) for inputs in reference.all_input_sets]
        expected = [snapshot(out) for out in expected]
    except Exception as error:  # noqa: BLE001 - a model that cannot run in float64
        return None, [probes.no_float64_reference(one_line(error))]
    del reference
    notes = []
    try:
        error = max(output_error(out, ref) for out, ref in zip(outputs, expected, strict=True))
    except ValueError as mismatch:  # a wrong output shape
        error = NON_FINITE_ERROR
        notes.append(probes.result("correctness", f"the output cannot be compared with the "
                                   f"float64 reference: {one_line(mismatch)}", "wrong-shape"))
    if not math.isfinite(error):
        error = NON_FINITE_ERROR
        notes.append(probes.result("correctness", "the output holds NaN or inf", "non-finite"))
    tolerance = workload.tolerance_for(key.dtype)
    return {"reference": "float64", "rel_error": min(error, NON_FINITE_ERROR),
            "tolerance": tolerance, "passed": bool(error <= tolerance)}, notes


def profile(call, backend: Backend, wall_per_call_s: float, inner_calls: int) -> dict:
    """The activity section: a few profiled calls of `call` (each `inner_calls` workload
    calls), their busy fraction taken against `wall_per_call_s` from the timing."""
    cycle_s = wall_per_call_s * inner_calls
    calls = max(1, min(PROFILED_CALLS, math.ceil(PROFILE_BUDGET_S / cycle_s)))
    return activity(call, backend, calls, wall_per_call_s, inner_calls=inner_calls).__dict__
