"""Bring your own model: a `package.module:factory` spec becomes a workload, and each way
a spec can be wrong gives its own one-line error naming the spec."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from test_bench_case import as_record, run_case

from bench.workloads import UnknownWorkload, lookup
from bench.workloads.external import resolve

EXAMPLE = "examples.byom.tiny_models:factory"


@pytest.fixture(autouse=True)
def fixtures_importable(monkeypatch):
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parent))


def error_of(spec: str) -> str:
    with pytest.raises(UnknownWorkload) as caught:
        lookup(spec)
    message = str(caught.value)
    assert "\n" not in message
    assert repr(spec) in message
    return message


def test_a_module_that_cannot_be_imported_names_the_module_and_the_cause():
    message = error_of("byom_fixtures.missing_dependency:factory")
    assert "cannot import module 'byom_fixtures.missing_dependency'" in message
    assert "No module named 'atlas_package_that_is_not_installed'" in message


def test_a_module_that_does_not_exist_names_the_module():
    message = error_of("byom_fixtures.no_such_module:factory")
    assert "cannot import module 'byom_fixtures.no_such_module'" in message


def test_a_missing_attribute_names_it():
    message = error_of("examples.byom.tiny_models:no_factory_here")
    assert "module 'examples.byom.tiny_models' has no attribute 'no_factory_here'" in message


def test_a_factory_that_raises_gives_the_error_type_and_first_line():
    message = error_of("byom_fixtures.raises:factory")
    assert "factory('cpu' device, batch_size=1) raised FileNotFoundError: no checkpoint" in message


def test_a_factory_returning_the_wrong_type_says_what_it_returned_and_what_is_expected():
    message = error_of("byom_fixtures.wrong_type:factory")
    assert "factory returned a torch.nn.modules.linear.Linear" in message
    assert "expected a (model, inputs) pair" in message


def test_inputs_that_are_not_tensors_are_named():
    message = error_of("byom_fixtures.not_tensors:factory")
    assert "factory's inputs must be tensors, but input 0 is a list" in message


def test_the_five_errors_are_told_apart():
    phrases = {"byom_fixtures.missing_dependency:factory": "cannot import module",
               "examples.byom.tiny_models:nothing": "has no attribute",
               "byom_fixtures.raises:factory": ") raised ",
               "byom_fixtures.wrong_type:factory": "factory returned",
               "byom_fixtures.not_tensors:factory": "inputs must be tensors"}
    for spec, phrase in phrases.items():
        message = error_of(spec)
        assert [p for p in phrases.values() if p in message] == [phrase], message


def test_a_malformed_spec_says_how_to_write_one():
    assert "package.module:factory" in error_of("examples.byom.tiny_models:")


def test_the_example_resolves_to_an_external_workload():
    workload = lookup(EXAMPLE)
    assert workload is resolve(EXAMPLE)  # resolved once per process
    assert workload.name == EXAMPLE
    assert workload.family == "external"
    assert workload.sizes("full", "cuda") == workload.sizes("quick", "cpu") == (1,)
    assert workload.tolerance == 1e-3
    built = workload.build(torch.device("cpu"), 4, False, torch.float32)
    assert not built.fn.training  # put in eval mode
    assert built.inputs[0].shape == (4, 64)
    assert built.parameters == sum(p.numel() for p in built.fn.parameters())
    assert built.flops is None and built.bytes_moved is None


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["eager", "default"])
def test_the_example_measures_end_to_end(tmp_path, mode):
    record = as_record(run_case(tmp_path, EXAMPLE, mode, batch_size=1, shapes="seed"))
    assert record.status == "ok", record.reason
    assert record.workload_info.family == "external"
    assert record.correctness.reference == "float64"
    assert record.correctness.passed


def test_several_outputs_and_integer_inputs_are_compared_as_a_whole(tmp_path):
    record = as_record(run_case(tmp_path, "byom_fixtures.two_outputs:factory", batch_size=2))
    assert record.status == "ok", record.reason
    assert record.correctness.passed
    assert record.workload_info.input_shapes == ((2, 5), (2, 1))


def test_a_model_that_cannot_run_in_float64_has_no_correctness_and_says_why(tmp_path):
    record = as_record(run_case(tmp_path, "byom_fixtures.float32_only:factory", batch_size=1))
    assert record.status == "ok", record.reason
    assert record.correctness is None
    (probe,) = record.probes
    assert probe.name == "float64-reference"
    assert probe.outcome == "unavailable"
    assert "RuntimeError" in probe.summary
