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

    The two leaders are set against each other head to head where paired processes timed
    both (`head_to_head`): each published speedup pools its own processes, often from other
    hosts, so their quotient is no ratio of the two modes. There the leader is the one
    faster in those processes, the lead their median ratio, and a tie a lead below
    TIE_BELOW that some process reversed or met.

    Columns: POINT, `backend`, the chosen mode's CHOICE figures, the runner-up's with the
    suffix `_runner_up` (None where only one mode qualifies), `margin` (how much faster the
    chosen mode runs than the runner-up, less 1: head to head where paired processes timed
    both, their number in `margin_processes`, else chosen speedup / runner-up's with
    `margin_processes` None; below 0 where a tie named the cheaper, slower side first), `tie`,
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
    # Head to head, the runner-up may be the faster one: it leads then.
    _swap(out, keep, head_to_head(eligible, out)["ratio"] < 1.0)
    h2h = head_to_head(eligible, out)
    lead = _lead(out, h2h)
    overlap = ranges_overlap(out["speedup_lo"], out["speedup_hi"], out["speedup_lo_runner_up"],
                             out["speedup_hi_runner_up"]).where(h2h["ratio"].isna(), h2h["lo"] <= 1.0)
    out["tie"] = (overlap & (lead < TIE_BELOW)).where(out["mode_runner_up"].notna(),
                                                      False).astype(bool)
    compile_s = "cold_compile_s" if "cold_compile_s" in out else "cold_calls"  # tests' tables lack it

    def costs(suffix: str) -> list[tuple[float, float]]:
        return [cost(*found) for found in zip(*(out[c + suffix] for c in (
            "mode", "cold_calls", compile_s)), strict=True)]

    swap = out["tie"] & pd.Series([other < first for first, other in zip(
        costs(""), costs("_runner_up"), strict=True)], index=out.index, dtype=bool)
    _swap(out, keep, swap)
    h2h = head_to_head(eligible, out)
    out["margin"] = _lead(out, h2h)
    out["margin_processes"] = h2h["processes"]
    out["host_dependent"] = out["ratio_bound"].eq("host-dependent")
    out["calls"] = calls
    late = ok[~paid].merge(out[[*POINT, "speedup", "mode"]], on=POINT, suffixes=("", "_chosen"))
    # Faster than the chosen mode head to head where paired processes timed both.
    beside_chosen = head_to_head(late, late.rename(columns={"mode_chosen": "mode_runner_up"}))
    faster = (late["speedup"] > late["speedup_chosen"]).where(beside_chosen["ratio"].isna(),
                                                               beside_chosen["ratio"] > 1.0)
    late = late[faster.astype(bool)]
    left = {}
    for key, group in late.groupby(POINT, dropna=False, sort=False):
        left[tuple(_plain(v) for v in key)] = [
            (m, float(sp), None if pd.isna(c) else float(c))
            for m, sp, c in zip(group["mode"], group["speedup"], group["cold_calls"], strict=True)]
    out["not_paid"] = [left.get(tuple(_plain(v) for v in key), [])
                       for key in zip(*(out[c] for c in POINT), strict=True)]
    return ordered(out).reset_index(drop=True)


def _swap(out: pd.DataFrame, keep: list[str], swap: pd.Series) -> None:
    """Exchange the chosen mode's CHOICE figures with the runner-up's where `swap` holds."""
    for column in (c for c in keep if c not in (*POINT, "backend")):
        first, other = out[column].copy(), out[f"{column}_runner_up"].copy()
        out[column] = first.where(~swap, other).astype(first.dtype)
        out[f"{column}_runner_up"] = other.where(~swap, first)


def _lead(out: pd.DataFrame, h2h: pd.DataFrame) -> pd.Series:
    """How much faster the chosen mode ran than the runner-up, less 1: head to head where
    paired processes timed both (`h2h`), else its speedup over the runner-up's."""
    pooled = out["speedup"].astype(float) / out["speedup_runner_up"].astype(float)
    return pooled.where(h2h["ratio"].isna(), h2h["ratio"]) - 1.0


def head_to_head(table: pd.DataFrame, pairs: pd.DataFrame) -> pd.DataFrame:
    """Per row of `pairs` (POINT, `mode`, `mode_runner_up`): how many times faster `mode` ran
    than `mode_runner_up` in the paired processes that timed both, from `table`'s row of
    `mode` and its `paired_<runner-up>_*` columns (`shown.with_paired`): `ratio` (their
    median), `lo`/`hi` (the smallest and largest process) and `processes`; NaN where no
    paired process timed the two together."""
    index = {(*(_plain(v) for v in key), mode): i for i, (key, mode) in enumerate(zip(
        zip(*(table[c] for c in POINT), strict=True), table["mode"], strict=True))}
    figures = {"ratio": "speedup", "lo": "speedup_lo", "hi": "speedup_hi", "processes": "processes"}
    found = []
    for key, mode, other in zip(zip(*(pairs[c] for c in POINT), strict=True), pairs["mode"],
                                pairs["mode_runner_up"], strict=True):
        at = index.get((*(_plain(v) for v in key), mode))
        row = {}
        if at is not None and isinstance(other, str):
            for name, figure in figures.items():
                column = f"paired_{other}_{figure}"
                row[name] = table[column].iloc[at] if column in table else math.nan
        found.append(row)
    out = pd.DataFrame(found, index=pairs.index, columns=list(figures)).astype(float)
    return out.where(out["processes"] >= 1)


def calls_step(calls: float) -> int:
    """The largest of CALLS_STEPS at or below `calls` (the smallest below it)."""
    return max([c for c in CALLS_STEPS if c <= calls] or [CALLS_STEPS[0]])


def chosen_in(table: pd.DataFrame, calls: float, env_id: str) -> pd.DataFrame:
    """`choose(of_env(table, env_id), calls)`, from one choice over the whole table (each
    point is chosen on its own), made once while the table lives: pages ask per environment."""
    return of_env(per_frame(table, ("choose", calls), lambda t: choose(t, calls)), env_id)
