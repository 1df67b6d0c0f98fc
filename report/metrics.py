"""Numbers derived from records. Each function returns None when an input is
missing, which pages render as "not measured"; none of them invents a value."""

from __future__ import annotations

import math
from statistics import median

from report.load import Result

NEVER = math.inf  # break-even when the mode is not faster than eager
UNSTABLE_IQR_RATIO = 0.10  # IQR/median above this marks a case unstable
MOVED_BETWEEN_RUNS = 0.10  # a repeated case whose medians differ by more than this moved
# Gains below this are not called wins; the stability page shows how far repeated
# measurements of one case move.
MEANINGFUL_GAIN = 0.05
# Busy-fraction bands for the overhead anatomy: below LAUNCH_BOUND the device idles
# most of each call waiting for the host; above DEVICE_BOUND the host keeps up.
LAUNCH_BOUND = 0.5
DEVICE_BOUND = 0.8


def speedup(baseline: Result | None, result: Result | None) -> float | None:
    """How many times faster than `baseline` (median over median); >1 is faster."""
    if baseline is None or result is None:
        return None
    base, this = baseline.median_s, result.median_s
    if base is None or this is None or this <= 0:
        return None
    return base / this


def break_even_calls(compile_s: float | None, eager: Result | None,
                     result: Result | None) -> float | None:
    """Calls after which compiling pays off: compile time / per-call saving.

    NEVER where the mode is not faster than eager, None where anything is missing.
    """
    if compile_s is None or eager is None or result is None:
        return None
    if eager.median_s is None or result.median_s is None:
        return None
    saving = eager.median_s - result.median_s
    if saving <= 0:
        return NEVER
    return float(math.ceil(compile_s / saving))


def compile_time(result: Result | None, which: str) -> float | None:
    """`which` is "cold" or "warm": the first-call latency, where compilation happens."""
    if result is None or not result.ok or result.compile is None:
        return None
    return result.compile[f"{which}_first_call_s"]


def gflops(result: Result | None) -> float | None:
    flops = (result.workload_info or {}).get("flops") if result else None
    return flops / result.median_s / 1e9 if flops and result.median_s else None


def gbytes_per_s(result: Result | None) -> float | None:
    moved = (result.workload_info or {}).get("bytes_moved") if result else None
    return moved / result.median_s / 1e9 if moved and result.median_s else None


def iqr_ratio(result: Result | None) -> float | None:
    if result is None or result.median_s is None or result.median_s <= 0:
        return None
    return result.timing["iqr_s"] / result.median_s


def is_unstable(result: Result) -> bool:
    ratio = iqr_ratio(result)
    return ratio is not None and ratio > UNSTABLE_IQR_RATIO


def per_call(result: Result | None, n: int | None) -> float | None:
    """Median divided by n: the cost of one of n back-to-back kernels."""
    if result is None or result.median_s is None or not n:
        return None
    return result.median_s / n


def activity(result: Result | None, name: str) -> float | None:
    if result is None or not result.ok or result.activity is None:
        return None
    return result.activity[name]


def relative_spread(values: list[float]) -> float | None:
    """(max - min) / min over repeated medians of one case."""
    if len(values) < 2 or min(values) <= 0:
        return None
    return (max(values) - min(values)) / min(values)


def boundedness(busy_fraction: float | None) -> str | None:
    if busy_fraction is None:
        return None
    if busy_fraction < LAUNCH_BOUND:
        return "launch-bound"
    if busy_fraction >= DEVICE_BOUND:
        return "device-bound"
    return "mixed"


def middle(values: list[float]) -> float | None:
    return median(values) if values else None


def value_range(values: list[float]) -> tuple[float, float] | None:
    return (min(values), max(values)) if values else None
