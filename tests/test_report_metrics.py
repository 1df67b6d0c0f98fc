"""Derived numbers: speedup, break-even (including "never"), spread, formatting."""

from __future__ import annotations

import math

import pytest
from fixtures import make_results as fx

from report import formatting, metrics
from report.load import parse_line


def result(mode: str, median_scale: float = 1.0, *, spread: float = 0.04, status: str = "ok"):
    """A parsed record of matmul-128 on ENV_A whose median is scale x eager's."""
    if status != "ok":
        record = fx.failed(fx.ENV_A, "matmul-128", mode, None, status, "reason")
    else:
        record = fx.ok_record(fx.ENV_A, "matmul-128", "eager", None, scale=median_scale,
                              spread=spread)
    return parse_line(record.to_json(), "test:1")


def test_speedup_is_eager_median_over_mode_median():
    eager, faster = result("eager"), result("default", 0.5)
    assert metrics.speedup(eager, faster) == pytest.approx(2.0)
    assert metrics.speedup(faster, eager) == pytest.approx(0.5)


def test_speedup_is_missing_without_a_measured_baseline():
    assert metrics.speedup(None, result("default")) is None
    assert metrics.speedup(result("eager", status="oom"), result("default")) is None
    assert metrics.speedup(result("eager"), result("default", status="error")) is None


def test_break_even_divides_compile_time_by_the_saving_and_rounds_up():
    eager, faster = result("eager"), result("default", 0.75)
    saving = eager.median_s - faster.median_s
    calls = metrics.break_even_calls(10 * saving + 1e-12, eager, faster)
    assert calls == 11.0


def test_break_even_is_never_when_the_mode_is_not_faster():
    eager = result("eager")
    assert metrics.break_even_calls(5.0, eager, result("default", 1.0)) == metrics.NEVER
    assert metrics.break_even_calls(5.0, eager, result("default", 1.3)) == math.inf
    assert formatting.calls(metrics.NEVER) == "never"


def test_break_even_is_not_measured_when_anything_is_missing():
    eager, faster = result("eager"), result("default", 0.5)
    assert metrics.break_even_calls(None, eager, faster) is None
    assert metrics.break_even_calls(5.0, None, faster) is None
    assert metrics.break_even_calls(5.0, eager, result("default", status="timeout")) is None
    assert formatting.calls(None) == "not measured"


def test_large_iqr_marks_a_case_unstable():
    assert metrics.is_unstable(result("eager", spread=0.5))
    assert not metrics.is_unstable(result("eager", spread=0.04))


def test_relative_spread_needs_two_medians():
    assert metrics.relative_spread([1.0, 1.1, 1.05]) == pytest.approx(0.1)
    assert metrics.relative_spread([1.0]) is None


@pytest.mark.parametrize("value,text", [
    (2.5e-6, "2.50 µs"), (0.0123, "12.3 ms"), (3.0, "3.00 s"), (4e-10, "0.400 ns"),
    (None, "not measured"),
])
def test_seconds_pick_a_readable_unit(value, text):
    assert formatting.seconds(value) == text


def test_every_filter_renders_missing_values_as_not_measured():
    for name, fn in formatting.FILTERS.items():
        if name in ("batch", "value"):
            continue  # a missing batch size is "—" by definition; a probe value may be null
        assert fn(None) == "not measured", name


def test_cell_text_cannot_break_a_markdown_table():
    text = formatting.cell("a | b\n<c> *d* [e]")
    assert "|" not in text.replace("\\|", "")
    assert "\n" not in text and "<" not in text
