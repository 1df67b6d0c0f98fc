"""`python -m bench` usage errors: exit status 2, one line on stderr, nothing written."""

from __future__ import annotations

import pytest
from bench_helpers import run_bench

from bench.backends import BACKENDS, available_backends
from bench.modes import MODES
from bench.workloads import WORKLOADS


def assert_one_line_usage_error(result, results_dir) -> str:
    assert result.returncode == 2, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("python -m bench: error: ")
    assert result.stdout == ""
    assert not results_dir.exists()
    return lines[0]


@pytest.mark.parametrize("option, valid", [
    ("--workload", WORKLOADS), ("--mode", MODES), ("--backend", BACKENDS)])
def test_unknown_name_is_one_line_listing_the_valid_names(option, valid, tmp_path):
    results = tmp_path / "results"
    line = assert_one_line_usage_error(
        run_bench(option, "nope", "--results-dir", str(results)), results)
    assert "'nope'" in line
    for name in valid:
        assert name in line


def test_unavailable_backend_is_one_line_listing_the_available_ones(tmp_path):
    here = available_backends()
    missing = [name for name in BACKENDS if name not in here]  # cuda on a CPU-only machine
    if not missing:
        pytest.skip("every backend is available here")
    results = tmp_path / "results"
    line = assert_one_line_usage_error(
        run_bench("--backend", missing[0], "--results-dir", str(results)), results)
    assert f"{missing[0]!r} is not available" in line
    assert line.endswith(f"(available: {', '.join(here)})")


def test_unknown_profile_is_one_line_listing_the_profiles(tmp_path):
    results = tmp_path / "results"
    line = assert_one_line_usage_error(
        run_bench("--profile", "huge", "--results-dir", str(results)), results)
    assert "'huge'" in line and "quick" in line and "full" in line


@pytest.mark.parametrize("value", ["-1", "0", "soon"])
def test_timeout_that_is_not_a_positive_number_is_one_line(value, tmp_path):
    results = tmp_path / "results"
    line = assert_one_line_usage_error(
        run_bench("--timeout", value, "--results-dir", str(results)), results)
    assert "--timeout" in line and value in line


def test_list_names_every_workload_mode_and_backend(tmp_path):
    results = tmp_path / "results"
    result = run_bench("--list", "--results-dir", str(results))
    assert result.returncode == 0, result.stderr
    listed = result.stdout.split()
    for name in [*WORKLOADS, *MODES, *BACKENDS]:
        assert name in listed
    backend_lines = result.stdout.split("backends:\n", 1)[1].splitlines()
    states = dict(line.strip().split(None, 1) for line in backend_lines)
    here = available_backends()
    assert states == {name: "available" if name in here else "not available"
                      for name in BACKENDS}
    assert states["cpu"] == "available"
    assert not results.exists()
