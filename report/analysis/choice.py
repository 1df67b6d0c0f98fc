"""Which mode, for a number of calls per process: the one rule behind the chooser, the
guide's points and the quick answers."""

from __future__ import annotations

import pandas as pd

from report.analysis.derived import ranges_overlap
from report.analysis.ordering import _plain, mode_rank, ordered
from report.analysis.vocabulary import BASELINE, POINT

# The calls per process the chooser, the guide and the pages answer for: a reader's number
# of calls rounds down to one of these, so every answer on the site is one of a few.
CALLS_STEPS = (100, 1_000, 10_000, 100_000, 1_000_000)
CALLS_ANSWERED = 100_000  # where a reader names no number: the quick answers, the guide's points
CHOICE = ("mode", "speedup", "speedup_lo", "speedup_hi", "cold_calls", "compiling",
          "cuda_graphs", "ratio_bound", "processes", "timing", "leases", "hosts")


def choose(table: pd.DataFrame, calls: float) -> pd.DataFrame:
    """Per point of a published table: the mode fastest once its cold compile is paid back
    within `calls` calls in one process (eager always is; a mode without a known compile
    time or slower than eager never is), ranked by its published speedup over eager.

    Columns: POINT, `backend`, the chosen mode's CHOICE figures, the runner-up's with the
    suffix `_runner_up` (None where only one mode qualifies), `margin` (chosen speedup /
    runner-up's - 1), `tie` (their speedup ranges overlap: the spread cannot tell them
    apart), `host_dependent` (the chosen ratio grows on a slower host), `calls`, and
    `not_paid`: the faster modes left out because they need more calls, each as
    (mode, speedup, cold_calls)."""
    ok = table[table["ok"].eq(True) & table["speedup"].notna()]
    paid = ok["cold_calls"].astype(float) <= calls
    eligible = ok[(ok["mode"] == BASELINE) | paid.fillna(False)].copy()
    eligible["_rank"] = eligible["mode"].map(mode_rank)
    eligible = eligible.sort_values(["speedup", "_rank"], ascending=[False, True], kind="stable")
    keep = [*POINT, "backend", *CHOICE]
    ranked = eligible[keep].groupby(POINT, dropna=False, sort=False)
    best, second = ranked.nth(0), ranked.nth(1)
    out = best.merge(second.drop(columns="backend"), on=POINT, how="left",
                     suffixes=("", "_runner_up"))
    out["margin"] = out["speedup"] / out["speedup_runner_up"] - 1.0
    out["tie"] = ranges_overlap(out["speedup_lo"], out["speedup_hi"], out["speedup_lo_runner_up"],
                                out["speedup_hi_runner_up"]).where(out["mode_runner_up"].notna(),
                                                                   False).astype(bool)
    out["host_dependent"] = out["ratio_bound"].eq("host-dependent")
    out["calls"] = calls
    faster = ok.merge(out[[*POINT, "speedup"]], on=POINT, suffixes=("", "_chosen"))
    faster = faster[faster["speedup"] > faster["speedup_chosen"]]
    left = {}
    for key, group in faster.groupby(POINT, dropna=False, sort=False):
        left[tuple(_plain(v) for v in key)] = [
            (m, float(sp), None if pd.isna(c) else float(c))
            for m, sp, c in zip(group["mode"], group["speedup"], group["cold_calls"], strict=True)]
    out["not_paid"] = [left.get(tuple(_plain(v) for v in key), [])
                       for key in zip(*(out[c] for c in POINT), strict=True)]
    return ordered(out).reset_index(drop=True)


def calls_step(calls: float) -> int:
    """The largest of CALLS_STEPS at or below `calls` (the smallest below it)."""
    return max([c for c in CALLS_STEPS if c <= calls] or [CALLS_STEPS[0]])
