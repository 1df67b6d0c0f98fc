"""One mode on a varying-shape workload against the same mode on a fixed-shape one at
the batch that does the same work per call: varying median / fixed median."""

from __future__ import annotations

from report import analysis
from report.ledger.comparison import Comparison, judged
from report.ledger.values import as_float, combine, median


def problems(test: dict) -> list[str]:
    if not (test.get("fixed") in analysis.WORKLOAD_ORDER and isinstance(test.get("fixed_batch"), int)):
        return ["fixed-vs-varying needs `fixed` (a workload) and `fixed_batch` (an integer)"]
    return []


def fixed_vs_varying(judge, here, env_id, test, agrees) -> list[Comparison]:
    c = judge.env_cases(env_id)
    fixed = c[(c["workload"] == test.fixed) & (c["batch_size"] == test.fixed_batch) &
              (c["mode"] == test.mode)]
    out = []
    for row in judge.mode_rows(here, test.mode):
        comparison = judge.point(row, "speedup")
        comparison.workload = f"{row['workload']} against {test.fixed} at batch {test.fixed_batch}"
        mine = row.get("median_s_v")
        mine = mine if isinstance(mine, tuple) and row["ok"] else ()
        base = fixed["median_s_v"].iloc[0] if len(fixed) and fixed["ok"].iloc[0] else ()
        base = base if isinstance(base, tuple) else ()
        comparison.processes = (len(base), len(mine))
        if not mine or not base:
            comparison.note = (f"no {test.mode} record of {test.fixed} at batch "
                               f"{test.fixed_batch}" if not base else
                               f"no {test.mode} record of {row['workload']}")
            out.append(comparison)
            continue
        comparison.busy = as_float(fixed["busy_fraction"].iloc[0])
        comparison.figure = median(mine) / median(base)
        values, comparison.n = combine([mine, base], lambda v, f: v / f)
        judged(comparison, values, agrees)
        out.append(comparison)
    return out
