"""The workload registry: every workload is registered once and builds tiny on CPU."""

from __future__ import annotations

import importlib
import pkgutil

import pytest
import torch

import bench.workloads
from bench.backends import BACKENDS
from bench.workloads import WORKLOADS, Workload


def defined_workloads() -> list[Workload]:
    """Every Workload object bound at module level in bench/workloads/*.py."""
    found = []
    for info in pkgutil.iter_modules(bench.workloads.__path__, "bench.workloads."):
        module = importlib.import_module(info.name)
        found += [v for v in vars(module).values() if isinstance(v, Workload)]
    return list({id(w): w for w in found}.values())


def test_every_defined_workload_is_registered_under_its_own_name():
    defined = defined_workloads()
    assert defined
    for workload in defined:
        assert WORKLOADS.get(workload.name) is workload, workload.name


def test_workload_names_are_unique():
    names = [w.name for w in defined_workloads()]
    assert len(names) == len(set(names))
    assert all(key == w.name for key, w in WORKLOADS.items())


@pytest.mark.parametrize("name", list(WORKLOADS))
def test_full_profile_sweeps_at_least_one_batch_size_on_every_backend(name):
    workload = WORKLOADS[name]
    assert workload.batch_sizes
    for backend in BACKENDS:
        assert workload.sizes("full", backend), backend


@pytest.mark.parametrize("name", list(WORKLOADS))
def test_tiny_build_on_cpu_has_no_all_zero_input(name):
    workload = WORKLOADS[name]
    built = workload.build(torch.device("cpu"), workload.sizes("full", "cpu")[0], True)
    assert built.inputs
    for x in built.inputs:
        assert x.device.type == "cpu"
        assert x.dtype == workload.dtype
        assert x.count_nonzero().item() > 0


@pytest.mark.parametrize("name", list(WORKLOADS))
def test_tiny_build_on_cpu_gives_a_finite_output(name):
    workload = WORKLOADS[name]
    built = workload.build(torch.device("cpu"), workload.sizes("full", "cpu")[0], True)
    with torch.no_grad():
        out = built.fn(*built.inputs)
    assert isinstance(out, torch.Tensor)
    assert out.numel() > 0
    assert torch.isfinite(out).all()


@pytest.mark.parametrize("name", list(WORKLOADS))
def test_tiny_build_declares_positive_work(name):
    workload = WORKLOADS[name]
    built = workload.build(torch.device("cpu"), workload.sizes("full", "cpu")[0], True)
    assert built.flops is None or built.flops > 0
    assert built.bytes_moved is None or built.bytes_moved > 0


@pytest.mark.parametrize("name", list(WORKLOADS))
def test_tiny_build_is_deterministic(name):
    workload = WORKLOADS[name]
    batch = workload.sizes("full", "cpu")[0]
    first = workload.build(torch.device("cpu"), batch, True)
    second = workload.build(torch.device("cpu"), batch, True)
    for a, b in zip(first.inputs, second.inputs, strict=True):
        assert torch.equal(a, b)
