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
- The factory must accept `torch.device("cpu")`: the spec is checked when it is looked
  up by calling `factory(torch.device("cpu"), 1)` once, because the runner's parent
  process must not initialise CUDA. The case then calls it again on the device measured.
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
something other than a (model, inputs) pair, or the inputs are not tensors.
"""

from __future__ import annotations

import functools
import importlib
import re

import torch

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


def load_factory(spec: str):
    if not _SPEC.match(spec):
        raise BadSpec(f"workload {spec!r}: a workload of your own is written "
                      f"package.module:factory, e.g. examples.byom.tiny_models:factory")
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


@functools.cache
def resolve(spec: str) -> Workload:
    """The Workload a spec names, checked by calling its factory once on the CPU.

    Cached: the runner's parent resolves a spec once, and the case processes it forks
    find it here again without importing or calling anything twice."""
    factory = load_factory(spec)
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
    return Workload(
        spec, "external",
        f"your model {kind} from {spec}, called as model(*inputs) with "
        f"{len(inputs)} input(s) from factory(device, batch_size)",
        build, batch_sizes=(1,), quick_batch_sizes=(1,), dtype=own_dtype, tolerance=TOLERANCE)
