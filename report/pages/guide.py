"""Choosing a mode: for every measured case the fastest mode and what it costs, and
which mode won most often for launch-bound, mixed and device-bound eager runs."""

from __future__ import annotations

from collections import Counter

from report import metrics
from report.dataset import Dataset, Environment
from report.pages.common import by_backend, eager_of, move_summary, repeated_cases
from report.site import Site

UNPROFILED = "not profiled"  # backends without a GPU busy fraction (CPU)
CLASSES = ("launch-bound", "mixed", "device-bound", UNPROFILED)


def median_move(data: Dataset, env: Environment) -> float | None:
    moves = move_summary(repeated_cases(data, env))
    return moves["median_spread"] if moves else None


def case_row(data: Dataset, env: Environment, workload: str, batch: int | None) -> dict | None:
    eager = eager_of(data, env.env_id, workload, batch)
    timed = [r for mode in data.modes
             if (r := data.get(env.env_id, workload, mode, batch)) and r.median_s is not None]
    if eager is None or eager.median_s is None or len(timed) < 2:
        return None
    ranked = sorted(timed, key=lambda r: (r.median_s, r.mode))
    best, runner_up = ranked[0], ranked[1]
    margin = metrics.speedup(runner_up, best) - 1.0
    cold = metrics.compile_time(best, "cold")
    busy = metrics.activity(eager, "busy_fraction")
    return {
        "workload": workload, "batch": batch, "eager": eager, "best": best,
        "runner_up": runner_up, "speedup": metrics.speedup(eager, best),
        "runner_up_speedup": metrics.speedup(eager, runner_up), "margin": margin,
        # Overlapping interquartile ranges: within one run the two cannot be told apart.
        "tie": best.timing["q3_s"] >= runner_up.timing["q1_s"],
        # Where eager itself is fastest the page prints "none" for both.
        "cold": cold, "break_even": metrics.break_even_calls(cold, eager, best),
        "class": metrics.boundedness(busy) or UNPROFILED,
    }


def class_summary(data: Dataset, env: Environment, rows: list[dict]) -> list[dict]:
    summary = []
    for name in CLASSES:
        members = [row for row in rows if row["class"] == name]
        if not members:
            continue
        wins = Counter(row["best"].mode for row in members)
        speedups = {}
        for mode in data.modes:
            values = [s for row in members
                      if (s := metrics.speedup(row["eager"], data.get(
                          env.env_id, row["workload"], mode, row["batch"]))) is not None]
            speedups[mode] = {"median": metrics.middle(values), "count": len(values)}
        summary.append({"name": name, "cases": len(members),
                        "wins": sorted(wins.items(), key=lambda kv: (-kv[1], kv[0])),
                        "speedups": speedups})
    return summary


def render(site: Site) -> None:
    data = site.data

    def build(env: Environment):
        move = median_move(data, env)
        rows = [row for workload in data.workloads for batch in data.batches(workload)
                if (row := case_row(data, env, workload, batch))]
        if not rows:
            return None
        return {"rows": rows, "classes": class_summary(data, env, rows), "move": move}

    site.page("analysis/guide.md", "guide.md.j2", backends=by_backend(data, build),
              modes=data.modes)
