"""Choosing a mode: for every measured case the fastest mode and what it costs, and
which mode won most often for launch-bound, mixed and device-bound eager runs."""

from __future__ import annotations

import pandas as pd

from report import analysis
from report.analysis import BASELINE, Environment, rows
from report.site import Site

UNPROFILED = "not profiled"  # backends without a GPU busy fraction (CPU)
CLASSES = ("launch-bound", "mixed", "device-bound", UNPROFILED)


def render(site: Site) -> None:
    data = site.data
    table = data.speedups
    eager = table[table["mode"] == BASELINE][[*analysis.POINT, "busy_fraction", "median_s"]]
    best = analysis.fastest(data.cases)
    best = best[best["mode_runner_up"].notna()].merge(
        eager, on=analysis.POINT, suffixes=("", "_eager"))
    best = best.assign(**{"class": analysis.boundedness(best["busy_fraction_eager"])
                          .fillna(UNPROFILED)})
    # The fastest and the runner-up against eager, and the fastest mode's break-even.
    speedup = {tuple(r[c] for c in (*analysis.POINT, "mode")): r for r in rows(table)}
    for side, suffix in (("speedup", ""), ("runner_up_speedup", "_runner_up")):
        keys = zip(*(best[c] for c in analysis.POINT), best["mode" + suffix], strict=True)
        best[side + "_row"] = [speedup.get(tuple(None if pd.isna(v) else v for v in k))
                               for k in keys]
        best[side] = [r["speedup"] if r else None for r in best[side + "_row"]]
    best["break_even"] = analysis.break_even(best["cold_first_call_s"],
                                             best["median_s_eager"] - best["median_s"])
    spread = analysis.spreads(data.cases)

    def build(env: Environment):
        here = best[(best["env_id"] == env.env_id) & best["speedup"].notna()]
        if here.empty:
            return None
        moves = analysis.move_summary(spread[spread["env_id"] == env.env_id])
        classes = []
        for name in CLASSES:
            members = here[here["class"] == name]
            if members.empty:
                continue
            wins = members["mode"].value_counts()
            of = table.merge(members[analysis.POINT], on=analysis.POINT)
            speedups = {mode: {"median": of.loc[of["mode"] == mode, "speedup"].median(),
                               "count": int(of.loc[of["mode"] == mode, "speedup"].notna().sum())}
                        for mode in data.modes}
            classes.append({"name": name, "cases": len(members),
                            "wins": sorted(((m, int(c)) for m, c in wins.items()),
                                           key=lambda kv: (-kv[1], kv[0])),
                            "speedups": speedups})
        return {"rows": rows(here), "classes": classes,
                "move": moves["median_spread"] if moves else None}

    site.page("analysis/guide.md", "guide.md.j2", backends=site.by_backend(build),
              modes=data.modes)
