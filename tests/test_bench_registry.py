"""The workload registry: every workload is registered once, in ORDER, and builds tiny on CPU."""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys

import pytest
import torch

import bench.workloads
from bench.backends import BACKENDS
from bench.workloads import WORKLOADS, UnknownWorkload, Workload, lookup, optional
from bench.workloads.registry import ORDER, STREAMS

CPU = torch.device("cpu")


def defined_workloads() -> list[Workload]:
    """Every Workload object bound at module level in bench/workloads/*.py."""
    found = []
    for info in pkgutil.iter_modules(bench.workloads.__path__, "bench.workloads."):
        module = importlib.import_module(info.name)
        found += [v for v in vars(module).values() if isinstance(v, Workload)]
    return list({id(w): w for w in found}.values())


def tiny(workload: Workload, dtype: torch.dtype | None = None):
    gone = optional.missing(workload.requires)
    if gone:
        pytest.skip(f"{workload.name} needs {', '.join(gone)}, which is not installed")
    size = workload.sizes("full", "cpu")[0]
    return workload.build(CPU, size, True, dtype or workload.dtype)


def test_every_defined_workload_is_registered_under_its_own_name():
    defined = defined_workloads()
    assert len(defined) == len(WORKLOADS)
    for workload in defined:
        assert WORKLOADS.get(workload.name) is workload, workload.name


def test_registry_follows_the_torch_free_order():
    assert list(WORKLOADS) == list(ORDER)
    assert len(set(ORDER)) == len(ORDER)


def test_the_registry_order_imports_without_torch():
    code = ("import sys; from bench.workloads.registry import ORDER; "
            "assert ORDER and 'torch' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_lookup_finds_registered_workloads_and_names_the_valid_ones_otherwise():
    assert lookup("mlp") is WORKLOADS["mlp"]
    with pytest.raises(UnknownWorkload, match=r"unknown workload 'nope' \(valid: trivial-call, "):
        lookup("nope")


@pytest.mark.parametrize("name", list(WORKLOADS))
def test_every_quick_size_is_in_the_full_sweep_of_every_backend(name):
    workload = WORKLOADS[name]
    for backend in BACKENDS:
        full = workload.sizes("full", backend)
        assert full, backend
        assert set(workload.sizes("quick", backend)) <= set(full), backend


@pytest.mark.parametrize("name", list(WORKLOADS))
def test_sizes_are_positive_or_absent(name):
    workload = WORKLOADS[name]
    sizes = {s for backend in BACKENDS for s in workload.sizes("full", backend)}
    assert sizes == {None} or all(isinstance(s, int) and s > 0 for s in sizes)
    assert workload.axis in ("batch", "n")
    assert all(b > 0 for b in workload.batch_cycle)


@pytest.mark.parametrize("name", list(WORKLOADS))
def test_tiny_build_on_cpu_has_finite_inputs_with_no_all_zero_tensor(name):
    workload = WORKLOADS[name]
    built = tiny(workload)
    for inputs in built.all_input_sets:
        assert inputs
        for x in inputs:
            assert x.device.type == "cpu"
            # Token ids stay integers; every floating-point input has the workload's dtype.
            assert x.dtype == workload.dtype or not x.is_floating_point()
            assert x.count_nonzero().item() > 0
            assert torch.isfinite(x).all()


@pytest.mark.parametrize("name", list(WORKLOADS))
def test_tiny_build_on_cpu_gives_a_finite_tensor(name):
    workload = WORKLOADS[name]
    built = tiny(workload)
    with torch.set_grad_enabled(workload.training):
        out = built.fn(*built.inputs)
    assert isinstance(out, torch.Tensor)
    assert out.numel() > 0
    assert torch.isfinite(out).all()


@pytest.mark.parametrize("name", list(WORKLOADS))
def test_tiny_build_declares_positive_work(name):
    built = tiny(WORKLOADS[name])
    assert built.flops is None or built.flops > 0
    assert built.bytes_moved is None or built.bytes_moved > 0
    assert built.parameters >= 0


@pytest.mark.parametrize("name", list(WORKLOADS))
def test_tiny_build_is_deterministic(name):
    workload = WORKLOADS[name]
    first, second = tiny(workload), tiny(workload)
    for a, b in zip(first.inputs, second.inputs, strict=True):
        assert torch.equal(a, b)


@pytest.mark.parametrize("name", list(WORKLOADS))
def test_a_float64_build_holds_the_same_values(name):
    """The case's float64 reference starts from exactly the data it measures."""
    workload = WORKLOADS[name]
    ours, double = tiny(workload), tiny(workload, torch.float64)
    for a, b in zip(ours.inputs, double.inputs, strict=True):
        assert b.dtype == (torch.float64 if a.is_floating_point() else a.dtype)
        assert torch.equal(a.to(b.dtype), b)
    if isinstance(ours.fn, torch.nn.Module):
        for a, b in zip(ours.fn.parameters(), double.fn.parameters(), strict=True):
            assert torch.equal(a.double(), b)


def test_only_batch_cycles_and_shape_streams_have_varying_shapes():
    varying = {w.name for w in WORKLOADS.values() if w.varying_shapes}
    assert varying == {"dynamic-mlp", *STREAMS}
    assert {w.name for w in WORKLOADS.values() if w.stream} == set(STREAMS)
    built = tiny(WORKLOADS["dynamic-mlp"])
    batches = [inputs[0].shape[0] for inputs in built.all_input_sets]
    assert tuple(batches) == WORKLOADS["dynamic-mlp"].batch_cycle


def test_training_workloads_count_their_steps():
    for workload in WORKLOADS.values():
        if optional.missing(workload.requires):
            continue
        built = tiny(workload)
        assert (built.steps is not None) == workload.training, workload.name
        if workload.training:
            built.fn(*built.inputs)
            built.fn(*built.inputs)
            assert built.steps.item() == 2


def test_matmul_sweep_sizes_are_matrix_sizes():
    sweep = WORKLOADS["matmul-sweep"]
    assert sweep.axis == "n"
    assert sweep.sizes("full", "cuda") == (64, 128, 256, 512, 1024, 2048, 4096)
    assert max(sweep.sizes("full", "cpu")) == 2048
    assert sweep.sizes("quick", "cuda") == (1024,)
    assert sweep.sizes("quick", "cpu") == ()  # matmul-128 is the quick profile's CPU matmul
    assert "matrix size" in sweep.description


def test_only_the_warmup_workload_records_a_curve():
    curves = {w.name: w.curve_calls("cuda", False) for w in WORKLOADS.values()
              if w.curve_calls("cuda", False)}
    assert curves == {"warmup-vit16x6x384": 2000}
    warmup = WORKLOADS["warmup-vit16x6x384"]
    assert warmup.curve_calls("cpu", False) == 300
    assert warmup.curve_calls("cuda", True) == 50


def test_the_full_profile_autotunes_vits_at_batches_1_8_and_32_only():
    from bench.runner import plan
    from bench.workloads import WORKLOADS

    vits = [name for name in WORKLOADS if name.startswith("vit") and "x" in name]
    cases = plan("cuda", vits, ["default", "max-autotune"], "full", None, "seed", "main")
    autotuned = {(c.workload, c.batch_size) for c in cases if c.mode == "max-autotune"}
    default = {(c.workload, c.batch_size) for c in cases if c.mode == "default"}
    assert autotuned == {(v, b) for v in vits for b in (1, 8, 32)}
    assert len(default) > len(autotuned)
