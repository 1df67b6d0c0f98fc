"""Shapes shared by pages: backend tabs that hold one block per environment."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from typing import Any

from report import metrics
from report.dataset import Dataset, Environment
from report.vocabulary import BASELINE_MODE, batch_key


def by_backend(data: Dataset, build: Callable[[Environment], dict[str, Any] | None]
               ) -> list[dict[str, Any]]:
    """[{name, envs: [{env, ...build(env)}]}] for every backend, measured or not.

    `build` may return None for an environment with nothing to show on that page;
    the environment is then left out of the tab, and a tab left empty says so.
    """
    backends = []
    for backend in data.backends:
        envs = []
        for env in data.envs(backend):
            view = build(env)
            if view is not None:
                envs.append({"env": env, **view})
        backends.append({"name": backend, "envs": envs})
    return backends


def eager_of(data: Dataset, env_id: str, workload: str, batch: int | None):
    return data.get(env_id, workload, BASELINE_MODE, batch)


def workload_label(data: Dataset, workload: str, batch: int | None) -> str:
    batched = data.batches(workload) != [None]
    return f"{workload} (batch {batch})" if batched and batch is not None else workload


def repeated_cases(data: Dataset, env: Environment) -> list[dict[str, Any]]:
    """Cases of `env` recorded under more than one tag, in page order, with their spread."""
    cases = defaultdict(dict)
    for r in data.results(env_id=env.env_id, tag=None):
        cases[(r.workload, r.mode, r.batch_size)][r.tag] = r
    rows = []
    for (workload, mode, batch), by_tag in cases.items():
        if len(by_tag) < 2:
            continue
        spread = metrics.relative_spread(
            [r.median_s for r in by_tag.values() if r.median_s is not None])
        rows.append({"workload": workload, "mode": mode, "batch": batch, "by_tag": by_tag,
                     "spread": spread,
                     "moved": spread is not None and spread > metrics.MOVED_BETWEEN_RUNS})
    rank = {name: i for i, name in enumerate(data.workloads)}
    modes = {name: i for i, name in enumerate(data.modes)}
    rows.sort(key=lambda row: (rank[row["workload"]], modes[row["mode"]],
                               batch_key(row["batch"])))
    return rows


def move_summary(rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """How many repeated cases moved between runs, the median move and the largest, and
    the median IQR / median of the same records within their own run."""
    compared = [row for row in rows if row["spread"] is not None]
    if not compared:
        return None
    in_run = [ratio for row in compared for r in row["by_tag"].values()
              if (ratio := metrics.iqr_ratio(r)) is not None]
    median_spread = metrics.middle([row["spread"] for row in compared])
    median_in_run = metrics.middle(in_run) if in_run else None
    return {"compared": len(compared), "moved": sum(row["moved"] for row in compared),
            "median_spread": median_spread, "median_in_run_iqr": median_in_run,
            # Moves well beyond the in-run IQR: that IQR is no error bar across runs.
            "in_run_understates": median_in_run is not None
            and median_spread > 2 * median_in_run,
            "largest": max(compared, key=lambda row: row["spread"])}
