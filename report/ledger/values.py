"""Per-process values of every case: what makes a comparison settled or not, and the
figures derived from a process's record (warm-up calls, mean kernel time, idle time,
how slow its later first calls still were)."""

from __future__ import annotations

import itertools
import math
import statistics
from typing import Any

import pandas as pd

from report import analysis
from report.analysis.loading import WRITTEN

STEADY_BAND = 0.10  # warm-up: a call within 10% of the level that follows it is steady
LEVEL_WINDOW = 20  # warm-up: a call's level is the median of the next 20 calls
STEADY_RUN = 5  # warm-up: steady from the first of 5 consecutive steady calls
# A first call "much slower" than the steady level takes more than twice as long: the seed
# that counts "a couple" of much slower calls prints 0.88 s, 102 µs and 59 µs against a
# 45 µs median, and calls the first two of them much slower.
MUCH_SLOWER = 2.0
MAX_COMBINATIONS = 4096  # beyond this, settledness is judged on the extreme combinations
# Memory over the whole case, CUDA-graph capture included (case_*), and reserved memory
# during timing: not every record carries them; where none does, they are not measured.
LATER_MEMORY = ("case_peak_device_bytes", "case_peak_reserved_bytes", "peak_reserved_bytes")
RATIO_METRICS = ("device_kernels_per_call", "launches_per_call", "busy_fraction",
                 "peak_device_bytes", *LATER_MEMORY, "idle_s_per_call", "first_call_ratio")
RECORD_FIELDS = ("cold_first_call_s", "warm_first_call_s", "busy_fraction", "recompiles",
                 "rel_error", "peak_device_bytes", "graph_launches_per_call", *LATER_MEMORY)
DERIVED_FIELDS = ("per_launch_overhead_s", "per_graph_overhead_s", "warmup_calls_to_steady",
                  "mean_kernel_s", "idle_s_per_call", "idle_fraction", "first_calls_much_slower",
                  "first_call_ratio")
ABSOLUTE_FIELDS = RECORD_FIELDS + DERIVED_FIELDS

def steady_index(curve: tuple[float, ...] | list[float]) -> int | None:
    """Calls of the warm-up curve in its initial transient: the index of the first call
    that starts STEADY_RUN consecutive steady calls, where a call is steady unless it is
    slower than its level (the median of the LEVEL_WINDOW calls after it) by more than
    STEADY_BAND. Only the start counts: a blip or a shift of the level later in the
    curve (clocks, the host) is not warm-up, and a call faster than its level is not slow.
    None where the curve is too short to judge; the whole curve where it never settles."""
    if curve is None or len(curve) < LEVEL_WINDOW + STEADY_RUN:
        return None
    series = pd.Series(list(curve), dtype=float)
    # The median of calls i+1 .. i+LEVEL_WINDOW, for each call i that has them all.
    level = series[::-1].rolling(LEVEL_WINDOW).median()[::-1].shift(-1)
    slow = (series > (1 + STEADY_BAND) * level).to_numpy()
    judged = len(series) - LEVEL_WINDOW
    for i in range(judged - STEADY_RUN + 1):
        if not slow[i:i + STEADY_RUN].any():
            return i
    return len(series)


def warmup_calls(curve) -> float | None:
    """warmup_calls_to_steady: the compiling call plus the curve's calls before steady."""
    index = steady_index(curve)
    return None if index is None else float(1 + index)


PAIRED_CHECKS = ("rel_error", "passed")
# What a paired process measures as an isolated one does (bench/paired.py): its float64
# check, and the profiler's counts with the figures derived from them.
PAIRED_FIGURES = (*PAIRED_CHECKS, "device_kernels_per_call", "launches_per_call", "busy_fraction",
                  "mean_kernel_s", "idle_s_per_call", "idle_fraction")


# What judging reads of a case (analysis.compare merges whole rows).
KEPT = ("ok", "status", "median_s", "lo_s", "hi_s", "n_processes", "env_repeated", "flops",
        "cold_first_call_s", "timing", *(f"{c}_isolated" for c in analysis.ISOLATED),
        *RATIO_METRICS)


def judged_cases(data: analysis.Data) -> pd.DataFrame:
    """The float32 cases of `data` (the columns judging reads) with their per-process values
    (`process_values`). The seeds' figures are float32 (the one bfloat16 figure is a
    training claim the records cannot test): a bfloat16 case is another precision, never one
    more point or process of a float32 comparison, so every kind sees float32 cases alone."""
    paired = [c for c in data.cases.columns if c.startswith("paired_")]
    keep = [c for c in dict.fromkeys([*analysis.CASE, *KEPT, "bound", *paired])
            if c in data.cases.columns]
    narrow = data.cases.loc[data.cases[analysis.DTYPE] == analysis.DEFAULT_DTYPE, keep]
    if narrow.empty:
        return narrow
    return narrow.merge(process_values(data.shown, data.paired), on=analysis.CASE, how="left")


def process_values(shown: pd.DataFrame, paired: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per case (analysis.CASE), the values of every ok process, as tuples: what makes a
    comparison settled or not. Isolated processes (`shown`) give every figure; paired ones
    (`paired`: analysis.paired_processes) give the figures they measure too (PAIRED_FIGURES).
    Columns end in `_v`; `cold_first_call_s_v` holds only
    processes whose compile caches were cold, as in analysis.cases. Derived per process:
    warm-up calls, mean kernel time (busy time / kernels) and idle time per call
    (median − busy time). A column no record carries (LATER_MEMORY in older records)
    gives empty tuples."""
    procs = analysis.processes(shown)
    procs = _with_kernel_figures(procs[procs["ok"]].copy())
    if WRITTEN in procs:
        # A version 1 record's peak includes the workspace cuBLAS allocates on a first
        # matmul (32 MiB, an eager matmul-softmax "using" 270x reduce-overhead's memory):
        # not the memory the claims are about, so no memory claim reads it.
        procs.loc[procs[WRITTEN].eq(1).fillna(False).astype(bool), "peak_device_bytes"] = None
    for column in (*LATER_MEMORY, "graph_launches_per_call", "op_s"):
        if column not in procs.columns:
            procs[column] = None
    # The host probe: what one trivial eager op cost this process, in µs.
    procs["host_probe_us"] = procs["op_s"].map(analysis.probe_us)
    procs["warmup_calls_to_steady"] = procs["warmup_s"].map(
        lambda c: warmup_calls(c) if isinstance(c, (tuple, list)) else None)
    procs["first_calls_much_slower"] = [
        first_calls_much_slower(calls, median) for calls, median in
        zip(procs.get("cold_first_calls_s", pd.Series(None, index=procs.index)),
            procs["median_s"], strict=True)]
    procs["first_call_ratio"] = [  # how much slower the process's first call is than its level
        calls[0] / level if isinstance(calls, (tuple, list)) and calls and not missing(level)
        and level > 0 else None for calls, level in
        zip(procs.get("cold_first_calls_s", pd.Series(None, index=procs.index)),
            procs["median_s"], strict=True)]
    procs["cold_first_call_s"] = procs["cold_first_call_s"].where(analysis.counted_cold(procs))
    # Idle time of the isolated processes alone: what their medians' saving is set against
    # (a saving of isolated medians over idle time pooled with paired processes mixes runs).
    procs["isolated_idle_s_per_call"] = procs["idle_s_per_call"]
    columns = list(dict.fromkeys([
        "median_s", "warm_first_call_s", "rel_error", "passed", "recompiles",
        "isolated_idle_s_per_call",
        "peak_device_bytes", *RATIO_METRICS, "warmup_calls_to_steady", "mean_kernel_s", "idle_fraction",
        "cold_first_call_s", "first_calls_much_slower", "graph_launches_per_call",
        "host_probe_us"]))
    if procs.empty:
        return pd.DataFrame(columns=[*analysis.CASE, *(f"{c}_v" for c in columns)])

    def values(s: pd.Series) -> tuple:
        return tuple(v.item() if hasattr(v, "item") else v for v in s if not missing(v))

    shared = [*analysis.CASE, *PAIRED_FIGURES]
    both = procs[shared] if paired is None or paired.empty else pd.concat(
        [procs[shared], _with_kernel_figures(paired.copy())[shared]])
    out = procs.groupby(analysis.CASE, dropna=False)[
        [c for c in columns if c not in PAIRED_FIGURES]].agg(values).join(
        both.groupby(analysis.CASE, dropna=False)[list(PAIRED_FIGURES)].agg(values),
        how="outer")[columns]
    # a case with paired processes alone has no other figure
    out = out.map(lambda v: v if isinstance(v, tuple) else ())
    return out.rename(columns=lambda c: f"{c}_v").reset_index()


def _with_kernel_figures(procs: pd.DataFrame) -> pd.DataFrame:
    """Per process: mean kernel time (busy time / kernels), idle time per call (median
    − busy time) and the idle share (1 − busy fraction), where the profiler measured the
    device."""
    busy = pd.to_numeric(procs["device_busy_s_per_call"], errors="coerce")
    kernels = pd.to_numeric(procs["device_kernels_per_call"], errors="coerce")
    procs["mean_kernel_s"] = (busy / kernels.where(kernels > 0)).astype(float)
    procs["idle_s_per_call"] = (procs["median_s"] - busy).astype(float)
    # The share of the call the device sat idle: what a claim about idle gaps states.
    procs["idle_fraction"] = (1.0 - pd.to_numeric(procs["busy_fraction"], errors="coerce")
                              ).astype(float)
    return procs


def missing(value: Any) -> bool:
    return value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value))


def as_float(value: Any) -> float | None:
    return None if missing(value) else float(value)


def median(values: tuple) -> float | None:
    clean = [float(v) for v in values if not missing(v)]
    return float(statistics.median(clean)) if clean else None  # as pandas: (a + b) / 2


def records(df: pd.DataFrame) -> list[dict[str, Any]]:
    """The rows of `df` as dicts of the values `iterrows` gives, without building a Series
    per row of a wide frame (judging the ledger walks a few thousand)."""
    columns = list(df.columns)
    return [dict(zip(columns, values, strict=True)) for values in df.to_numpy(dtype=object)]




def first_calls_much_slower(first_calls: Any, level: Any) -> float | None:
    """Of a process's first calls (the compiling one first), how many come before the
    first that is no longer much slower: within MUCH_SLOWER times its steady median. Read
    from the record's own first calls, so it counts from the compiling call, as a user
    does; the whole count plus one where every one of them is still much slower."""
    if not isinstance(first_calls, (tuple, list)) or not first_calls or missing(level):
        return None
    for i, call in enumerate(first_calls):
        if call <= MUCH_SLOWER * float(level):
            return float(i)
    return float(len(first_calls) + 1)


def combine(sides: list[tuple], f) -> tuple[list[float], int]:
    """f over every combination of one value per side (the extremes only, past
    MAX_COMBINATIONS, which suffices for the monotone figures used here)."""
    count = math.prod(len(s) for s in sides)
    if count > MAX_COMBINATIONS:
        sides = [tuple({min(s), max(s)}) for s in sides]
    return [f(*combo) for combo in itertools.product(*sides)], count


def slope_and_intercept(x: list[float], y) -> tuple[float, float]:
    """Least-squares line of y on x."""
    mx, my = sum(x) / len(x), sum(y) / len(y)
    den = sum((a - mx) ** 2 for a in x)
    slope = sum((a - mx) * (b - my) for a, b in zip(x, y, strict=True)) / den
    return slope, my - slope * mx
