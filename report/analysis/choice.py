"""Which mode, for a number of calls per process: the one rule behind the chooser, the
guide's tables and flow, the workload pages and the quick answers."""

from __future__ import annotations

import math

import pandas as pd

from report.analysis.derived import ranges_overlap
from report.analysis.ordering import _plain, mode_rank, of_env, ordered, per_frame
from report.analysis.vocabulary import BASELINE, MEANINGFUL_GAIN, POINT

# The calls per process the chooser, the guide and the pages answer for: a reader's number
# of calls rounds down to one of these, so every answer on the site is one of a few. 200 is
# the home page's question of a short-lived process.
CALLS_STEPS = (100, 200, 1_000, 10_000, 100_000, 1_000_000)
CALLS_ANSWERED = 100_000  # where a reader names no number: the quick answers, the guide's points
# A lead is a tie when the two modes' process ranges overlap AND it is below this: the gain
# the guide calls a win. A lead outside the spread but smaller is still no reason to pay more.
TIE_BELOW = MEANINGFUL_GAIN
CHOICE = ("mode", "speedup", "speedup_lo", "speedup_hi", "cold_calls", "cold_compile_s",
          "compiling", "cuda_graphs", "ratio_bound", "processes", "timing", "leases", "hosts")


def ties(speedup: float, lo: float, hi: float, other: float, other_lo: float,
         other_hi: float) -> bool:
    """Whether a lead of `speedup` over `other` is a tie: their ranges overlap and the lead
    is below TIE_BELOW."""
    overlap = ranges_overlap(pd.Series([lo]), pd.Series([hi]), pd.Series([other_lo]),
                             pd.Series([other_hi])).iloc[0]
    return bool(overlap) and speedup / other - 1.0 < TIE_BELOW


def cost(mode: str, cold_calls: float | None, cold_compile_s: float | None) -> tuple[float, float]:
    """What one mode costs before it pays, smaller first: the calls until its cold compile
    is paid back, then the compile time; eager costs nothing, an unknown cost is infinite."""
    if mode == BASELINE:
        return 0.0, 0.0
    missing = [math.inf if v is None or v != v else float(v) for v in (cold_calls, cold_compile_s)]
    return missing[0], missing[1]


def choose(table: pd.DataFrame, calls: float) -> pd.DataFrame:
    """Per point of a published table: the mode fastest once its cold compile is paid back
    within `calls` calls in one process (eager always is; a mode without a known compile
    time or slower than eager never is), ranked by its published speedup over eager. Where
    the lead over the runner-up is a tie (their speedup ranges overlap AND the lead is
    below TIE_BELOW), the cheaper of the two (fewer calls to pay back, then less compile
    time; eager is cheapest) is named first: the faster one buys nothing measurable.

    Columns: POINT, `backend`, the chosen mode's CHOICE figures, the runner-up's with the
    suffix `_runner_up` (None where only one mode qualifies), `margin` (chosen speedup /
    runner-up's - 1: below 0 where a tie named the cheaper, slower side first), `tie`,
    `host_dependent` (the chosen ratio grows on a slower host), `calls`, and `not_paid`:
    the faster modes left out because they need more calls, each as (mode, speedup,
    cold_calls)."""
    ok = table[table["ok"].eq(True) & table["speedup"].notna()]
    paid = (ok["mode"] == BASELINE) | (ok["cold_calls"].astype(float) <= calls).fillna(False)
    eligible = ok[paid].copy()
    eligible["_rank"] = eligible["mode"].map(mode_rank)
    eligible = eligible.sort_values(["speedup", "_rank"], ascending=[False, True], kind="stable")
    keep = [*POINT, "backend", *(c for c in CHOICE if c in table.columns)]
    ranked = eligible[keep].groupby(POINT, dropna=False, sort=False)
    best, second = ranked.nth(0), ranked.nth(1)
    out = best.merge(second.drop(columns="backend"), on=POINT, how="left",
                     suffixes=("", "_runner_up")).reset_index(drop=True)
    lead = out["speedup"].astype(float) / out["speedup_runner_up"].astype(float) - 1.0
    overlap = ranges_overlap(out["speedup_lo"], out["speedup_hi"], out["speedup_lo_runner_up"],
                             out["speedup_hi_runner_up"])
    out["tie"] = (overlap & (lead < TIE_BELOW)).where(out["mode_runner_up"].notna(),
                                                      False).astype(bool)
    compile_s = "cold_compile_s" if "cold_compile_s" in out else "cold_calls"  # tests' tables lack it

    def costs(suffix: str) -> list[tuple[float, float]]:
        return [cost(*found) for found in zip(*(out[c + suffix] for c in (
            "mode", "cold_calls", compile_s)), strict=True)]

    swap = out["tie"] & pd.Series([other < first for first, other in zip(
        costs(""), costs("_runner_up"), strict=True)], index=out.index, dtype=bool)
    for column in (c for c in keep if c not in (*POINT, "backend")):
        first, other = out[column].copy(), out[f"{column}_runner_up"].copy()
        out[column] = first.where(~swap, other).astype(first.dtype)
        out[f"{column}_runner_up"] = other.where(~swap, first)
    out["margin"] = out["speedup"].astype(float) / out["speedup_runner_up"].astype(float) - 1.0
    out["host_dependent"] = out["ratio_bound"].eq("host-dependent")
    out["calls"] = calls
    late = ok[~paid].merge(out[[*POINT, "speedup"]], on=POINT, suffixes=("", "_chosen"))
    late = late[late["speedup"] > late["speedup_chosen"]]
    left = {}
    for key, group in late.groupby(POINT, dropna=False, sort=False):
        left[tuple(_plain(v) for v in key)] = [
            (m, float(sp), None if pd.isna(c) else float(c))
            for m, sp, c in zip(group["mode"], group["speedup"], group["cold_calls"], strict=True)]
    out["not_paid"] = [left.get(tuple(_plain(v) for v in key), [])
                       for key in zip(*(out[c] for c in POINT), strict=True)]
    return ordered(out).reset_index(drop=True)


def calls_step(calls: float) -> int:
    """The largest of CALLS_STEPS at or below `calls` (the smallest below it)."""
    return max([c for c in CALLS_STEPS if c <= calls] or [CALLS_STEPS[0]])


def chosen_in(table: pd.DataFrame, calls: float, env_id: str) -> pd.DataFrame:
    """`choose(of_env(table, env_id), calls)`, from one choice over the whole table (each
    point is chosen on its own), made once while the table lives: pages ask per environment."""
    return of_env(per_frame(table, ("choose", calls), lambda t: choose(t, calls)), env_id)
