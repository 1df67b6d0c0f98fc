"""Run-to-run spread across tags, and cases whose IQR is large against their median."""

from __future__ import annotations

from report import metrics
from report.dataset import Environment
from report.pages.common import by_backend, move_summary, repeated_cases
from report.site import Site


def moves_by_mode(rows: list[dict], modes: list[str]) -> list[dict]:
    """Median and largest move per mode: whether a mode's timings repeat at all."""
    found = []
    for mode in modes:
        spreads = [row["spread"] for row in rows
                   if row["mode"] == mode and row["spread"] is not None]
        if spreads:
            found.append({"mode": mode, "cases": len(spreads),
                          "median": metrics.middle(spreads), "largest": max(spreads)})
    return found


def render(site: Site) -> None:
    data = site.data

    def repeated(env: Environment):
        rows = repeated_cases(data, env)
        if not rows:
            return None
        tags = [t for t in data.tags if any(t in row["by_tag"] for row in rows)]
        return {"rows": rows, "tags": tags, "summary": move_summary(rows),
                "by_mode": moves_by_mode(rows, data.modes)}

    def unstable(env: Environment):
        rows = [r for r in data.results(env_id=env.env_id, tag=None) if metrics.is_unstable(r)]
        rows.sort(key=lambda r: (-metrics.iqr_ratio(r), r.workload, r.mode, r.tag))
        timed = [r for r in data.results(env_id=env.env_id, tag=None) if r.median_s]
        if not timed:
            return None
        return {"rows": [{"result": r, "ratio": metrics.iqr_ratio(r)} for r in rows],
                "timed": len(timed)}

    site.page("analysis/stability.md", "stability.md.j2",
              repeated=by_backend(data, repeated), unstable=by_backend(data, unstable))
