"""Pitfall probes: small experiments run inside a case whose results become evidence
on the methodology page. Each returns {"summary": one line, "value": ...}."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch

from bench.backends import Backend
from bench.observe import output_error
from bench.timer import measure
from bench.workloads import Built


def held_output_overwrite(call_fn: Callable, inputs: Sequence[torch.Tensor]) -> dict:
    """Keep one call's output, call again with different data, then read the kept output."""
    first = call_fn(*inputs)
    snapshot = first.clone()
    call_fn(*[x + 1.0 for x in inputs])
    try:
        changed = not torch.equal(first, snapshot)
    except RuntimeError as error:
        message = str(error).strip().splitlines()[0][:160]
        return {"summary": f"reading the kept output raised: {message}", "value": "raised"}
    if changed:
        return {"summary": "the kept output silently changed to the next call's result; "
                "clone outputs you keep", "value": "overwritten"}
    return {"summary": "the kept output was unchanged by the next call", "value": "intact"}


def mark_step_begin(call_fn: Callable, inputs: Sequence[torch.Tensor]) -> dict:
    """Same as held_output_overwrite, but marking a new step before each call."""
    torch.compiler.cudagraph_mark_step_begin()
    first = call_fn(*inputs)
    snapshot = first.clone()
    torch.compiler.cudagraph_mark_step_begin()
    call_fn(*[x + 1.0 for x in inputs])
    try:
        changed = not torch.equal(first, snapshot)
    except RuntimeError as error:
        message = str(error).strip().splitlines()[0][:160]
        return {"summary": f"with cudagraph_mark_step_begin(), reading the kept output raised: "
                f"{message}", "value": "raised"}
    state = "silently overwritten" if changed else "unchanged"
    return {"summary": f"with cudagraph_mark_step_begin() before each call the kept output was "
            f"{state}", "value": "overwritten" if changed else "intact"}


def tf32_matmul(built: Built, backend: Backend) -> dict:
    """Eager float32 matmul with TF32 off (PyTorch's default) and on, against float64."""
    reference = built.fn(*[x.double() for x in built.inputs]) if not isinstance(
        built.fn, torch.nn.Module) else None
    if reference is None:
        return {"summary": "not applicable to module workloads", "value": None}
    results = {}
    previous = torch.backends.cuda.matmul.allow_tf32
    try:
        for label, allow in (("off", False), ("on", True)):
            torch.backends.cuda.matmul.allow_tf32 = allow
            out = built.fn(*built.inputs)
            timing = measure(lambda: built.fn(*built.inputs), backend, budget_s=0.3)
            results[label] = (output_error(out, reference), timing.median_s)
    finally:
        torch.backends.cuda.matmul.allow_tf32 = previous
    (err_off, t_off), (err_on, t_on) = results["off"], results["on"]
    return {
        "summary": f"TF32 off: rel. error {err_off:.1e}, median {t_off * 1e6:.1f} us; "
                   f"TF32 on: rel. error {err_on:.1e}, median {t_on * 1e6:.1f} us",
        "value": {"rel_error_off": err_off, "rel_error_on": err_on,
                  "median_s_off": t_off, "median_s_on": t_on},
    }


def recompile_on_new_shape(call_fn: Callable, inputs: Sequence[torch.Tensor], log) -> dict:
    """Call the compiled function with inputs of two new lengths and count recompiles."""
    before = log.recompiles
    for factor in (2, 3):
        call_fn(*[torch.cat([x] * factor) for x in inputs])
    added = log.recompiles - before
    return {"summary": f"calling with two new input lengths caused {added} recompile(s)",
            "value": added}
