"""Concept pages: explanations in prose, with every quoted figure from the records.

One set of facts per environment is computed here and shared by all concept
templates; each template quotes the facts it needs, or says "not measured".
"""

from __future__ import annotations

import math

from report import analysis
from report.analysis import Environment, of_env, rows
from report.site import Site

PAGES = ("three-costs", "torchdynamo", "fx-and-aotautograd", "torchinductor", "cuda-graphs",
         "compile-modes")
PROBES = ("held-output-overwrite", "cudagraph-mark-step-begin", "recompile-on-new-shape")


def fusion_rows(at, compiled: str | None, graphed: str | None) -> list[dict]:
    """Per workload at its representative batch: eager against `compiled` (Inductor alone),
    with `graphed` (Inductor plus CUDA graphs) for its memory."""
    by = {(r["workload"], r["mode"]): r for r in rows(at)}
    found = []
    for workload in dict.fromkeys(at["workload"]):
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
    wins = best["mode"].value_counts()
    by_mode = dict(iter(of_env(data.cases, env_id).groupby("mode", sort=False)))
    found = []
    for mode in data.modes:
        mine = by_mode.get(mode)
        if mine is None:
            continue
        floor = mine[mine["workload"] == analysis.TRIVIAL]
        cold = mine["cold_first_call_s"].median()
        found.append({"mode": mode, "fastest": int(wins.get(mode, 0)), "contested": len(best),
                      "cold": None if cold != cold else float(cold),
                      "floor": rows(floor)[0] if len(floor) else None,
                      "ok": int(mine["ok"].sum()), "total": len(mine)})
    return found


def env_facts(site: Site, env: Environment, at, probes, compiled_mode, graphed) -> dict | None:
    data = site.data
    cases = of_env(data.cases, env.env_id)
    if cases.empty:
        return None
    here = of_env(at, env.env_id)
    mine = of_env(probes, env.env_id)
    fusion = fusion_rows(here, compiled_mode, graphed)
    compiled = cases[cases["ok"] & cases["unique_graphs"].notna()]
    with_kernels = [r for r in fusion if r["eager_kernels"] and r["compiled_kernels"]]
    floor = rows(cases[cases["workload"] == analysis.TRIVIAL])
    return {
        "per_kernel": analysis.headline_per_kernel(data.cases, env.env_id),
        "floor": {r["mode"]: r for r in floor},
        "fusion": fusion,
        # The clearest fusion example: the largest drop in kernels per call.
        "best_fusion": max(with_kernels, default=None, key=lambda r: (
            r["eager_kernels"] / r["compiled_kernels"], r["workload"])),
        "modes": mode_rows(data, env.env_id, at),
        "dynamo": None if compiled.empty else {
            "cases": len(compiled), "graph_breaks": int(compiled["graph_breaks"].sum()),
            "with_breaks": int((compiled["graph_breaks"] > 0).sum()),
            "recompiles": int(compiled["recompiles"].sum()),
            "with_recompiles": int((compiled["recompiles"] > 0).sum()),
            "single_graph": int((compiled["unique_graphs"] == 1).sum())},
        "probes": {name: rows(mine[mine["probe"] == name]) for name in PROBES},
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
