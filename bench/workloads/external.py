"""Bring your own model: a workload from a `package.module:factory` spec.

Contract
--------
`python -m bench --workload my_package.models:factory` imports `my_package.models` (it
must be importable: run from the folder that holds it, or put it on PYTHONPATH) and calls

    factory(device: torch.device, batch_size: int) -> (model, inputs)

- `model` is a `torch.nn.Module` or any callable. A Module is put in eval mode and its
  parameters are counted; the case calls `model(*inputs)` under `torch.no_grad()`.
- `inputs` is a tensor, or a tuple or list of tensors, on `device`.
- The model returns a tensor, or a tuple, list or dict of tensors.
- The factory must accept `torch.device("cpu")`: before anything is measured, the runner
  checks the spec in a child process of its own, which imports the module and calls
  `factory(torch.device("cpu"), 1)` once, within the case timeout (`--timeout`). The
  runner itself never imports your module: a factory that exits, hangs or floods its
  output ends only that child, and the run stops with one line naming the spec. Each
  case process then imports it again and calls it on the device measured.
- The workload's name is the spec itself and its family is "external". It is measured at
  the batch sizes given with `--batch-size`, or at batch 1. `--shapes tiny` changes
  nothing for it. FLOPs and bytes moved are unknown (None).
- Correctness: the output is compared with a float64 reference that calls the factory
  again (with the same seed, `torch.manual_seed(0)`) and casts the model's floating-point
  parameters and buffers and the floating-point inputs to float64. A relative L2 error of
  1e-3 passes. If the model cannot run in float64 (a plain function holding float32
  weights, say), the record has no correctness section and a "float64-reference" probe
  says why.

Each way a spec can fail raises `UnknownWorkload` with one line that names the spec: the
module cannot be imported, it has no such attribute, the factory raises, it returns
something other than a (model, inputs) pair, or the inputs are not tensors; and, in the
runner's check, the checking process exits or is killed, or runs out of time.
"""

from __future__ import annotations

import functools
import importlib
import json
import os
import re
import shutil
import time
from pathlib import Path

import torch

from bench.records import unsafe_name
from bench.workloads.base import Built, Workload, count_parameters
from bench.workloads.registry import UnknownWorkload

TOLERANCE = 1e-3
CHECK_DEVICE = torch.device("cpu")
_SPEC = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")
PAIR = ("a (model, inputs) pair: model an nn.Module or callable, inputs a tensor or a "
        "tuple/list of tensors")


class BadSpec(UnknownWorkload):
    """A `package.module:factory` spec that does not give a usable workload."""


def _first_line(error: BaseException) -> str:
    lines = str(error).strip().splitlines()
    return f"{type(error).__name__}: {lines[0][:300]}" if lines else type(error).__name__


def _describe(value: object) -> str:
    if isinstance(value, tuple | list):
        return f"a {type(value).__name__} of {len(value)}"
    return f"a {type(value).__module__}.{type(value).__qualname__}".replace("builtins.", "")


def check_syntax(spec: str) -> None:
    """BadSpec unless `spec` is written package.module:factory, fit for a file name."""
    if not _SPEC.match(spec):
        raise BadSpec(f"workload {spec!r}: a workload of your own is written "
                      f"package.module:factory, e.g. examples.byom.tiny_models:factory")
    why = unsafe_name(spec)  # the report names pages and charts after it
    if why:
        raise BadSpec(f"workload {spec!r}: the spec {why}")


def load_factory(spec: str):
    check_syntax(spec)
    module_name, attribute = spec.split(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise BadSpec(f"workload {spec!r}: cannot import module {module_name!r}: "
                      f"{_first_line(error)}") from None
    except Exception as error:  # noqa: BLE001 - any error while importing user code
        raise BadSpec(f"workload {spec!r}: importing module {module_name!r} raised "
                      f"{_first_line(error)}") from None
    factory = getattr(module, attribute, None)
    if factory is None:
        raise BadSpec(f"workload {spec!r}: module {module_name!r} has no attribute "
                      f"{attribute!r}")
    if not callable(factory):
        raise BadSpec(f"workload {spec!r}: {module_name}.{attribute} is {_describe(factory)}, "
                      f"not a callable factory(device, batch_size)")
    return factory


def call_factory(spec: str, factory, device: torch.device, batch_size: int):
    """(model, inputs as a tuple) from the factory, or BadSpec saying what went wrong."""
    try:
        made = factory(device, batch_size)
    except Exception as error:  # noqa: BLE001 - any error in user code
        raise BadSpec(f"workload {spec!r}: factory({device.type!r} device, batch_size="
                      f"{batch_size}) raised {_first_line(error)}") from None
    if not isinstance(made, tuple | list) or len(made) != 2:
        raise BadSpec(f"workload {spec!r}: factory returned {_describe(made)}, expected {PAIR}")
    model, inputs = made
    if not callable(model):
        raise BadSpec(f"workload {spec!r}: factory returned a model that is {_describe(model)}, "
                      f"not callable; expected {PAIR}")
    if isinstance(inputs, torch.Tensor):
        inputs = (inputs,)
    if not isinstance(inputs, tuple | list) or not inputs:
        raise BadSpec(f"workload {spec!r}: factory's inputs are {_describe(inputs)}, expected "
                      f"a tensor or a non-empty tuple/list of tensors")
    for i, x in enumerate(inputs):
        if not isinstance(x, torch.Tensor):
            raise BadSpec(f"workload {spec!r}: factory's inputs must be tensors, but input {i} "
                          f"is {_describe(x)}")
    return model, tuple(inputs)


def _to(x: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    return x.to(dtype) if x.is_floating_point() else x


def _dtype_of(model, inputs: tuple[torch.Tensor, ...]) -> torch.dtype:
    tensors = [*inputs]
    if isinstance(model, torch.nn.Module):
        tensors = [*model.parameters(), *tensors]
    return next((t.dtype for t in tensors if t.is_floating_point()), torch.float32)


def resolve(spec: str) -> Workload:
    """The Workload a spec names: the one `check` vouched for in a child process, or else
    (in a case process, or a test) checked here by calling its factory once on the CPU."""
    return _checked.get(spec) or _resolve(spec)


@functools.cache
def _resolve(spec: str) -> Workload:
    """The Workload a spec names, checked by calling its factory once on the CPU, in this
    process. Cached: a case process imports and checks a spec once."""
    factory = load_factory(spec)
    with torch.random.fork_rng(devices=[]):  # a build right after draws as if unchecked
        model, inputs = call_factory(spec, factory, CHECK_DEVICE, 1)
    own_dtype = _dtype_of(model, inputs)

    def build(device: torch.device, batch_size: int | None, tiny: bool,
              dtype: torch.dtype) -> Built:
        model, inputs = call_factory(spec, factory, device, batch_size or 1)
        if isinstance(model, torch.nn.Module):
            model = model.eval()
        if dtype != own_dtype:
            if isinstance(model, torch.nn.Module):
                model = model.to(dtype=dtype)
            inputs = tuple(_to(x, dtype) for x in inputs)
        parameters = count_parameters(model) if isinstance(model, torch.nn.Module) else 0
        return Built(model, inputs, flops=None, bytes_moved=None, parameters=parameters)

    kind = type(model).__name__
    return _workload(spec, f"your model {kind} from {spec}, called as model(*inputs) with "
                     f"{len(inputs)} input(s) from factory(device, batch_size)", build, own_dtype)


def _workload(spec: str, description: str, build, dtype: torch.dtype) -> Workload:
    return Workload(spec, "external", description, build, batch_sizes=(1,),
                    quick_batch_sizes=(1,), dtype=dtype, tolerance=TOLERANCE)


# ---- the runner's check, in a child process ------------------------------------------------
# The runner never imports a model of your own or calls its factory: a factory that exits,
# hangs or floods its output would take the runner with it. `check` does both in a child
# process, as a case is run, and keeps what planning needs; each case process imports the
# spec again (see `resolve`).

_checked: dict[str, Workload] = {}
LOG_TAIL_BYTES = 4096  # of the check's output, for the message; the rest is never read


def check(spec: str, timeout_s: float) -> Workload:
    """The Workload `spec` names, its factory checked in a child process given `timeout_s`;
    BadSpec, one line naming the spec, if the check fails, dies or runs out of time."""
    from bench import pool  # standard library only; imported here to keep this module light

    check_syntax(spec)
    scratch = pool.new_scratch()
    try:
        out, log = scratch / "check.json", scratch / "log.txt"
        # The case processes find user modules through the runner's folder; so does the check.
        path = os.pathsep.join(p for p in (os.getcwd(), os.environ.get("PYTHONPATH")) if p)
        child = pool.Launcher("spawn").start(
            ["bench.workloads.external:check_main", spec, str(out)],
            pool.ChildSetup(os.getpid(), {"PYTHONPATH": path}), log)
        deadline = time.monotonic() + timeout_s
        while child.poll() is None and time.monotonic() < deadline:
            pool.wait_any([child], deadline - time.monotonic())
        if child.poll() is None:
            child.kill()
            raise BadSpec(f"workload {spec!r}: importing it and calling factory('cpu' device, "
                          f"batch_size=1) took longer than {timeout_s:g} s (--timeout)")
        found = json.loads(out.read_text()) if out.exists() else None
        if found is None:
            code = child.returncode
            how = f"was killed by signal {-code}" if code < 0 else f"exited with code {code}"
            last = _last_line(log)
            raise BadSpec(f"workload {spec!r}: the process checking it {how} before "
                          f"factory('cpu' device, batch_size=1) returned"
                          + (f"; its last output: {last}" if last else ""))
        if "error" in found:
            raise BadSpec(found["error"])
        dtype = getattr(torch, found["dtype"].removeprefix("torch."))
        _checked[spec] = _workload(spec, found["description"], _build_in_case(spec), dtype)
        return _checked[spec]
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _build_in_case(spec: str):
    def build(device: torch.device, batch_size: int | None, tiny: bool,
              dtype: torch.dtype) -> Built:
        return _resolve(spec).build(device, batch_size, tiny, dtype)

    return build


def _last_line(log: Path) -> str:
    try:
        with open(log, "rb") as f:
            f.seek(max(0, os.fstat(f.fileno()).st_size - LOG_TAIL_BYTES))
            tail = f.read().decode(errors="replace")
    except OSError:
        return ""
    return next((line.strip()[:300] for line in reversed(tail.splitlines()) if line.strip()), "")


def check_main(args: list[str]) -> int:
    """The child's side of `check`: resolve the spec here, write what planning needs."""
    spec, out = args
    try:
        workload = _resolve(spec)
        found = {"description": workload.description, "dtype": str(workload.dtype)}
    except BadSpec as error:
        found = {"error": str(error)}
    Path(out).write_text(json.dumps(found))
    return 0
