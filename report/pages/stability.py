"""Spread across processes: how far a case's median moves from one independent process
to the next, and processes whose in-run IQR is large against their median."""

from __future__ import annotations

from report import analysis
from report.analysis import Environment, ordered, processes, rows
from report.site import Site


def render(site: Site) -> None:
    data = site.data
    repeated = analysis.spreads(data.cases)
    procs = processes(data.shown)
    procs = procs[procs["ok"]].assign(ratio=lambda d: d["iqr_s"] / d["median_s"])

    def spread(env: Environment):
        here = repeated[repeated["env_id"] == env.env_id]
        if here.empty:
            return None
        return {"rows": rows(here), "summary": analysis.move_summary(here),
                "by_mode": rows(analysis.by_mode(here))}

    def unstable(env: Environment):
        here = procs[procs["env_id"] == env.env_id]
        if here.empty:
            return None
        flagged = here[here["ratio"] > analysis.UNSTABLE_IQR_RATIO]
        flagged = ordered(flagged, "tag", "repeat").sort_values("ratio", ascending=False,
                                                                kind="stable")
        return {"rows": rows(flagged), "timed": len(here)}

    site.page("analysis/stability.md", "stability.md.j2",
              repeated=site.by_backend(spread), unstable=site.by_backend(unstable))
