"""Run-to-run spread across tags, and cases whose IQR is large against their median."""

from __future__ import annotations

from collections import defaultdict

from report import metrics
from report.dataset import Environment
from report.pages.common import by_backend
from report.site import Site
from report.vocabulary import batch_key


def render(site: Site) -> None:
    data = site.data

    def repeated(env: Environment):
        cases = defaultdict(dict)
        for r in data.results(env_id=env.env_id, tag=None):
            cases[(r.workload, r.mode, r.batch_size)][r.tag] = r
        rows = []
        for (workload, mode, batch), by_tag in cases.items():
            if len(by_tag) < 2:
                continue
            medians = [r.median_s for r in by_tag.values() if r.median_s is not None]
            rows.append({"workload": workload, "mode": mode, "batch": batch, "by_tag": by_tag,
                         "spread": metrics.relative_spread(medians), "moved": False})
        if not rows:
            return None
        rank = {name: i for i, name in enumerate(data.workloads)}
        modes = {name: i for i, name in enumerate(data.modes)}
        rows.sort(key=lambda row: (rank[row["workload"]], modes[row["mode"]],
                                   batch_key(row["batch"])))
        tags = [t for t in data.tags if any(t in row["by_tag"] for row in rows)]
        compared = [row for row in rows if row["spread"] is not None]
        for row in compared:
            row["moved"] = row["spread"] > metrics.MOVED_BETWEEN_RUNS
        largest = max(compared, key=lambda row: row["spread"], default=None)
        return {"rows": rows, "tags": tags, "compared": len(compared),
                "moved": sum(row["moved"] for row in compared), "largest": largest,
                "median_spread": metrics.middle([row["spread"] for row in compared])}

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
