"""Order statistics: quartiles interpolate linearly between order statistics."""

from __future__ import annotations

import statistics

import pytest

from bench.stats import quartiles, relative_error, summarize


def test_odd_count_quartiles_interpolate_between_order_statistics():
    assert quartiles([3.0, 1.0, 2.0]) == (1.5, 2.0, 2.5)


def test_even_count_quartiles_interpolate_between_order_statistics():
    assert quartiles([4.0, 1.0, 3.0, 2.0]) == (1.75, 2.5, 3.25)


def test_quartiles_ignore_sample_order():
    samples = [5.0, 0.5, 9.0, 2.0, 7.5, 1.0, 3.0]
    assert quartiles(samples) == quartiles(sorted(samples)) == quartiles(samples[::-1])


def test_single_sample_is_every_quartile():
    assert quartiles([4.2]) == (4.2, 4.2, 4.2)


def test_no_samples_raises():
    with pytest.raises(ValueError, match="no samples"):
        quartiles([])
    with pytest.raises(ValueError, match="no samples"):
        summarize([])


@pytest.mark.parametrize("samples", [[1.0, 2.0], [3e-6, 1e-6, 2e-6], [0.1, 0.3, 0.2, 0.7, 0.4, 0.6]])
def test_median_equals_statistics_median(samples):
    assert quartiles(samples)[1] == statistics.median(samples)


def test_summary_on_known_samples():
    assert summarize([1.0, 2.0, 3.0, 4.0, 10.0]) == {
        "median_s": 3.0, "q1_s": 2.0, "q3_s": 4.0, "iqr_s": 2.0, "min_s": 1.0, "count": 5,
    }


def test_summary_of_one_sample_has_zero_spread():
    assert summarize([7e-6]) == {
        "median_s": 7e-6, "q1_s": 7e-6, "q3_s": 7e-6, "iqr_s": 0.0, "min_s": 7e-6, "count": 1,
    }


def test_relative_error_falls_back_to_absolute_for_zero_reference():
    assert relative_error(1.0, 4.0) == 0.25
    assert relative_error(0.5, 0.0) == 0.5
