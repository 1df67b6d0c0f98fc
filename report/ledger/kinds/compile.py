"""Compile time: the calls for a mode to break even with eager (its cold first call over
what it saves per call), and the compile time a mode adds over another."""

from __future__ import annotations

import pandas as pd

from report import analysis
from report.ledger.comparison import Comparison, judged
from report.ledger.values import as_float, combine, median


def _calls(cold: float, saving: float) -> float:
    return float(analysis.break_even(pd.Series([cold]), pd.Series([saving])).iloc[0])


def break_even(judge, here, env_id, test, agrees) -> list[Comparison]:
    out = []
    for row in judge.pair_rows(here, test.mode, analysis.BASELINE):
        comparison = judge.point(row, "break-even")
        cold, base, mine = (row.get(k) for k in ("cold_first_call_s_v", "median_s_v_base",
                                                 "median_s_v"))
        sides = [s if isinstance(s, tuple) else () for s in (cold, base, mine)]
        comparison.processes = (len(sides[2]), len(sides[1]))
        both = row["ok"] is True and row["ok_base"] is True
        if not both or not all(sides):
            comparison.note = (judge.why_missing(row, test, "median_s") if not both
                               else "no cold compile time")
            out.append(comparison)
            continue
        comparison.busy = as_float(row.get("busy_fraction_base"))
        comparison.figure = _calls(median(sides[0]), row["saving_s"])
        if row.get("paired") is True:  # saved per call as timed side by side, per process
            n = int(row["pairings"])
            comparison.processes, comparison.paired = (n, n), True
            savings = (float(row["saving_lo_s"]), float(row["saving_hi_s"]))
            values, comparison.n = combine([sides[0], savings], _calls)
        else:
            values, comparison.n = combine(sides, lambda c, e, m: _calls(c, e - m))
        judged(comparison, values, agrees)
        out.append(comparison)
    return out


def compile_extra(judge, here, env_id, test, agrees) -> list[Comparison]:
    """The difference of the two modes' cold first calls, per point."""
    out = []
    for row in judge.pair_rows(here, test.mode, test.baseline):
        comparison = judge.point(row, "cold_first_call_s")
        found = judge.sides(row, test, "cold_first_call_s", comparison)
        if found is not None:
            mine, base = found
            comparison.figure = median(mine) - median(base)
            values, comparison.n = combine([mine, base], lambda m, b: m - b)
            judged(comparison, values, agrees)
        out.append(comparison)
    return out
