"""Shapes shared by pages: backend tabs that hold one block per environment."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from report.dataset import Dataset, Environment
from report.vocabulary import BASELINE_MODE


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
