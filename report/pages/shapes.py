"""Varying shapes: per device, which strategy and mode serve a stream of shapes soonest and
with the lowest p99, and what each costs (report/shapes/data.py sums the records up)."""

from __future__ import annotations

from bench.workloads.registry import STREAMS
from report.releases.vocabulary import MIN_EFFECT
from report.shapes import data as shapes
from report.shapes import releases
from report.site import Site

PAGE = "analysis/shapes.md"


def render(site: Site) -> None:
    found = shapes.streams(site.data.records)
    by_env = shapes.stream_environments(site.data)
    views = []
    for backend in site.data.backends:
        envs = sorted((e for e in by_env.values() if e.backend == backend), key=lambda e: e.label)
        mine = [{"env": env, "streams": [s for s in found if s["env_id"] == env.env_id]}
                for env in envs]
        views.append({"name": backend, "envs": [
            v | {"missing": [w for w in STREAMS if w not in {s["workload"] for s in v["streams"]}]}
            for v in mine]})
    site.page(PAGE, "shapes.md.j2", backends=views, strategies=shapes.strategy_words(),
              every_stream=list(STREAMS), releases=releases.groups(site.data.records),
              figures=releases.FIGURES, judged=releases.JUDGED, called=releases.CALLED,
              min_effect=1 + MIN_EFFECT)
