"""Pitfall probes: small experiments run inside a case whose results become evidence on
the methodology page. Each returns a dict shaped as `bench.records.ProbeResult`: its
name, a one-line summary, a categorical outcome (or None) and named figures."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch

from bench.backends import Backend
from bench.observe import output_error
from bench.timer import measure
from bench.workloads import Built


def result(name: str, summary: str, outcome: str | None = None,
           figures: dict[str, float] | None = None) -> dict:
    return {"name": name, "summary": summary, "outcome": outcome, "figures": figures or {}}


def _kept_output(name: str, call_fn: Callable, inputs: Sequence[torch.Tensor],
                 mark_step: bool) -> dict:
    prefix = "with cudagraph_mark_step_begin() before each call, " if mark_step else ""
    if mark_step:
        torch.compiler.cudagraph_mark_step_begin()
    first = call_fn(*inputs)
    snapshot = first.clone()
    if mark_step:
        torch.compiler.cudagraph_mark_step_begin()
    call_fn(*[x + 1.0 for x in inputs])
    try:
        changed = not torch.equal(first, snapshot)
    except RuntimeError as error:
        message = str(error).strip().splitlines()[0][:160]
        return result(name, f"{prefix}reading the kept output raised: {message}", "raised")
    if changed:
        return result(name, f"{prefix}the kept output silently changed to the next call's "
                      "result; clone outputs you keep", "overwritten")
    return result(name, f"{prefix}the kept output was unchanged by the next call", "intact")


def held_output_overwrite(call_fn: Callable, inputs: Sequence[torch.Tensor]) -> dict:
    """Keep one call's output, call again with different data, then read the kept output."""
    return _kept_output("held-output-overwrite", call_fn, inputs, mark_step=False)


def mark_step_begin(call_fn: Callable, inputs: Sequence[torch.Tensor]) -> dict:
    """Same as held_output_overwrite, but marking a new step before each call."""
    return _kept_output("cudagraph-mark-step-begin", call_fn, inputs, mark_step=True)


def tf32_matmul(built: Built, backend: Backend) -> dict:
    """Eager float32 matmul with TF32 off (PyTorch's default) and on, against float64."""
    name = "tf32-matmul"
    if isinstance(built.fn, torch.nn.Module):
        return result(name, "not applicable to module workloads")
    reference = built.fn(*[x.double() for x in built.inputs])
    found = {}
    previous = torch.backends.cuda.matmul.allow_tf32
    try:
        for label, allow in (("off", False), ("on", True)):
            torch.backends.cuda.matmul.allow_tf32 = allow
            out = built.fn(*built.inputs)
            timing = measure(lambda: built.fn(*built.inputs), backend, budget_s=0.3)
            found[label] = (output_error(out, reference), timing.median_s)
    finally:
        torch.backends.cuda.matmul.allow_tf32 = previous
    (err_off, t_off), (err_on, t_on) = found["off"], found["on"]
    return result(
        name,
        f"TF32 off: rel. error {err_off:.1e}, median {t_off * 1e6:.1f} us; "
        f"TF32 on: rel. error {err_on:.1e}, median {t_on * 1e6:.1f} us",
        figures={"rel_error_off": err_off, "rel_error_on": err_on,
                 "median_s_off": t_off, "median_s_on": t_on})


def recompile_on_new_shape(call_fn: Callable, inputs: Sequence[torch.Tensor], log) -> dict:
    """Call the compiled function with inputs of two new lengths and count recompiles."""
    before = log.recompiles
    for factor in (2, 3):
        call_fn(*[torch.cat([x] * factor) for x in inputs])
    added = log.recompiles - before
    return result("recompile-on-new-shape",
                  f"calling with two new input lengths caused {added} recompile(s)",
                  figures={"recompiles": added})


def no_float64_reference(error: str) -> dict:
    """The case could not run the workload in float64, so it has no correctness check."""
    return result("float64-reference", f"no correctness check: the float64 reference failed: "
                  f"{error}", "unavailable")
