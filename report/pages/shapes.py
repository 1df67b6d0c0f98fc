"""Varying shapes: per device, which strategy and mode serve a stream of shapes soonest and
with the lowest p99, and what each costs (report/shapes/data.py sums the records up)."""

from __future__ import annotations

from bench.workloads.registry import STREAMS
from report.analysis import Environment
from report.shapes import data as shapes
from report.site import Site

PAGE = "analysis/shapes.md"


def render(site: Site) -> None:
    found = shapes.streams(site.data.shown)

    def build(env: Environment):
        mine = [s for s in found if s["env_id"] == env.env_id]
        if not mine:
            return None
        measured = {s["workload"] for s in mine}
        return {"streams": mine, "missing": [w for w in STREAMS if w not in measured]}

    site.page(PAGE, "shapes.md.j2", backends=site.by_backend(build),
              strategies=shapes.strategy_words(), every_stream=list(STREAMS))
