"""Order statistics over raw samples. Standard library only."""

from __future__ import annotations

import statistics
from collections.abc import Sequence


def quartiles(samples: Sequence[float]) -> tuple[float, float, float]:
    """(q1, median, q3) with linear interpolation between order statistics."""
    if not samples:
        raise ValueError("no samples")
    if len(samples) == 1:
        only = float(samples[0])
        return only, only, only
    q1, median, q3 = statistics.quantiles(samples, n=4, method="inclusive")
    return q1, median, q3


def summarize(samples: Sequence[float]) -> dict[str, float | int]:
    q1, median, q3 = quartiles(samples)
    return {
        "median_s": median,
        "q1_s": q1,
        "q3_s": q3,
        "iqr_s": q3 - q1,
        "min_s": float(min(samples)),
        "count": len(samples),
    }


def relative_error(diff_norm: float, ref_norm: float) -> float:
    """||out - ref|| / ||ref||, defined as the absolute error when ref is all zeros."""
    return diff_norm / ref_norm if ref_norm > 0 else diff_norm


def round_ratios(baseline_s: Sequence[float], mode_s: Sequence[float]) -> list[float]:
    """Baseline time over mode time, round by round, over the rounds both timed: above 1
    the mode is faster. Both were timed in the same round, so the host state cancels."""
    return [b / m for b, m in zip(baseline_s, mode_s, strict=False)]


def paired_speedup(baseline_s: Sequence[float], mode_s: Sequence[float]) -> float | None:
    """One paired process's speedup: the median of its round ratios."""
    ratios = round_ratios(baseline_s, mode_s)
    return statistics.median(ratios) if ratios else None
