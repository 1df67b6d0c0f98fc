"""Concept pages: explanations in prose, with every quoted figure from the records.

One set of facts per environment is computed here and shared by all concept
templates; each template quotes the facts it needs, or says "not measured".
"""

from __future__ import annotations

import math
import statistics
from collections import Counter

from report import analysis
from report.analysis import Environment, env_rows
from report.site import Site

PAGES = ("three-costs", "torchdynamo", "fx-and-aotautograd", "torchinductor", "cuda-graphs",
         "compile-modes")
PROBES = ("held-output-overwrite", "cudagraph-mark-step-begin", "recompile-on-new-shape")


def fusion_rows(here: list[dict], compiled: str | None, graphed: str | None) -> list[dict]:
    """Per workload at its representative batch (`here`: published rows of one
    environment): eager against `compiled` (Inductor alone), with `graphed` (Inductor plus
    CUDA graphs) for its memory."""
    by = {(r["workload"], r["mode"]): r for r in here}
    found = []
    for workload in dict.fromkeys(r["workload"] for r in here):
        e, c, g = (by.get((workload, mode)) for mode in (analysis.BASELINE, compiled, graphed))
        if not (e and e["ok"]) and not (c and c["ok"]):
            continue

        def get(row, column):
            return row[column] if row and row["ok"] else None

        found.append({
            "workload": workload, "batch": (e or c)["batch_size"], "speedup": c,
            "eager_kernels": get(e, "device_kernels_per_call"),
            "compiled_kernels": get(c, "device_kernels_per_call"),
            "eager_ops": get(e, "cpu_ops_per_call"), "compiled_ops": get(c, "cpu_ops_per_call"),
            "eager_gbps": get(e, "gbps"), "compiled_gbps": get(c, "gbps"),
            "compiled_memory": get(c, "peak_device_bytes"),
            "graphed_memory": get(g, "peak_device_bytes")})
    return found


def mode_rows(data, env_id: str, at) -> list[dict]:
    """Per mode: how often it is the fastest at the representative batches (`at`: published
    rows, of every environment), by the site's one rule (`analysis.choose` at any number of
    calls: a tie names the cheaper mode), its median cold compile, its per-call floor."""
    best = analysis.chosen_in(at, math.inf, env_id)
    wins = Counter(best["mode"].tolist())
    by_mode: dict[str, list[dict]] = {}
    for r in env_rows(data.cases, env_id):
        by_mode.setdefault(r["mode"], []).append(r)
    found = []
    for mode in data.modes:
        mine = by_mode.get(mode)
        if not mine:
            continue
        colds = [r["cold_first_call_s"] for r in mine if r["cold_first_call_s"] is not None]
        found.append({"mode": mode, "fastest": wins.get(mode, 0), "contested": len(best),
                      "cold": float(statistics.median(colds)) if colds else None,
                      "floor": next((r for r in mine if r["workload"] == analysis.TRIVIAL), None),
                      "ok": sum(r["ok"] is True for r in mine), "total": len(mine)})
    return found


def _counted(found: list[dict], column: str, cases: str) -> dict[str, int]:
    """The sum of `column` over `found` and how many rows have any (missing counts none)."""
    values = [r[column] or 0 for r in found]
    return {column: int(sum(values)), cases: sum(v > 0 for v in values)}


def env_facts(site: Site, env: Environment, at, probes, compiled_mode, graphed) -> dict | None:
    # In Python over each environment's rows, converted once per table: pandas selections
    # of the small per-environment frames made this page's time grow faster than linearly.
    data = site.data
    cases = env_rows(data.cases, env.env_id)
    if not cases:
        return None
    fusion = fusion_rows(env_rows(at, env.env_id), compiled_mode, graphed)
    compiled = [r for r in cases if r["ok"] is True and r["unique_graphs"] is not None]
    with_kernels = [r for r in fusion if r["eager_kernels"] and r["compiled_kernels"]]
    chained = analysis.chains({r["workload"] for r in cases})
    mine = env_rows(probes, env.env_id)
    return {
        "per_kernel": analysis.headline_per_kernel(data.cases, env.env_id) if chained else None,
        "floor": {r["mode"]: r for r in cases if r["workload"] == analysis.TRIVIAL},
        "fusion": fusion,
        # The clearest fusion example: the largest drop in kernels per call.
        "best_fusion": max(with_kernels, default=None, key=lambda r: (
            r["eager_kernels"] / r["compiled_kernels"], r["workload"])),
        "modes": mode_rows(data, env.env_id, at),
        "dynamo": None if not compiled else {
            "cases": len(compiled), **_counted(compiled, "graph_breaks", "with_breaks"),
            **_counted(compiled, "recompiles", "with_recompiles"),
            "single_graph": sum(r["unique_graphs"] == 1 for r in compiled)},
        "probes": {name: [r for r in mine if r["probe"] == name] for name in PROBES},
    }


def render(site: Site) -> None:
    data = site.data
    at = data.representative()
    at = at.assign(gbps=at["bytes_moved"] / at["median_s"] / 1e9)
    probes = analysis.probes(data.shown)
    # The mode that shows what Inductor alone does, and the one that adds CUDA graphs to it.
    compiled = analysis.mode_with(data.cases, compiled=True)
    graphed = analysis.mode_with(data.cases, compiled=True, cuda_graphs=True)
    facts = site.by_backend(lambda env: env_facts(site, env, at, probes, compiled, graphed))
    torch_versions = sorted({v for env in data.environments.values()
                             for v in dict(env.fields)["torch"]},
                            # (0, n) before (1, text): "2.11.0+cu128" beside "2.11.0"
                            key=lambda v: [(0, int(p)) if p.isdigit() else (1, p)
                                           for p in v.split(".")])
    for name in PAGES:
        site.page(f"concepts/{name}.md", f"concepts/{name}.md.j2", facts=facts,
                  compiled=compiled, graphed=graphed, trivial=analysis.TRIVIAL,
                  torch_versions=torch_versions)
