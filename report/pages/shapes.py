"""Varying shapes: per device, which strategy and mode serve a stream of shapes soonest and
with the lowest p99, and what each costs (report/shapes/data.py sums the records up)."""

from __future__ import annotations

import pandas as pd

from bench.workloads.registry import STREAMS
from report.analysis import Environment, environments
from report.shapes import data as shapes
from report.site import Site

PAGE = "analysis/shapes.md"


def stream_environments(site: Site, found: list[dict]) -> dict[str, Environment]:
    """Every environment with stream records: the site's own where it has fixed-shape records
    too (its environments are built from those alone), else one built from the streams."""
    records = shapes.stream_records(site.data.records)
    processes = pd.DataFrame([{"env_id": c["env_id"], "n_processes": c["processes"]}
                              for s in found for c in s["cases"]],
                             columns=["env_id", "n_processes"])
    own = environments(records, processes) if len(records) else {}
    return {env_id: site.data.environments.get(env_id, env) for env_id, env in own.items()}


def render(site: Site) -> None:
    found = shapes.streams(site.data.records)
    by_env = stream_environments(site, found)
    views = []
    for backend in site.data.backends:
        envs = sorted((e for e in by_env.values() if e.backend == backend), key=lambda e: e.label)
        mine = [{"env": env, "streams": [s for s in found if s["env_id"] == env.env_id]}
                for env in envs]
        views.append({"name": backend, "envs": [
            v | {"missing": [w for w in STREAMS if w not in {s["workload"] for s in v["streams"]}]}
            for v in mine]})
    site.page(PAGE, "shapes.md.j2", backends=views, strategies=shapes.strategy_words(),
              every_stream=list(STREAMS))
