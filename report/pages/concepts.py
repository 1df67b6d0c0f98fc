"""Concept pages: explanations in prose, with every quoted figure from the records.

One set of facts per environment is computed here and shared by all concept
templates; each template quotes the facts it needs, or says "not measured".
"""

from __future__ import annotations

from report import metrics
from report.dataset import Dataset, Environment
from report.pages.common import by_backend, eager_of
from report.pages.launch_overhead import headline_per_kernel
from report.site import Site
from report.vocabulary import TRIVIAL_CALL, natural_key

PAGES = (
    ("concepts/three-costs.md", "concepts/three-costs.md.j2"),
    ("concepts/torchdynamo.md", "concepts/torchdynamo.md.j2"),
    ("concepts/fx-and-aotautograd.md", "concepts/fx-and-aotautograd.md.j2"),
    ("concepts/torchinductor.md", "concepts/torchinductor.md.j2"),
    ("concepts/cuda-graphs.md", "concepts/cuda-graphs.md.j2"),
    ("concepts/compile-modes.md", "concepts/compile-modes.md.j2"),
)
COMPILED = "default"  # the mode that shows what Inductor alone does
GRAPHED = "reduce-overhead"


def fusion_rows(data: Dataset, env: Environment) -> list[dict]:
    """Per workload at its representative batch: eager against default compile."""
    rows = []
    for workload in data.workloads:
        batch = data.representative_batch(workload)
        eager = eager_of(data, env.env_id, workload, batch)
        compiled = data.get(env.env_id, workload, COMPILED, batch)
        graphed = data.get(env.env_id, workload, GRAPHED, batch)
        if not (eager and eager.ok) and not (compiled and compiled.ok):
            continue
        rows.append({
            "workload": workload, "batch": batch,
            "eager_kernels": metrics.activity(eager, "device_kernels_per_call"),
            "compiled_kernels": metrics.activity(compiled, "device_kernels_per_call"),
            "eager_ops": metrics.activity(eager, "cpu_ops_per_call"),
            "compiled_ops": metrics.activity(compiled, "cpu_ops_per_call"),
            "speedup": metrics.speedup(eager, compiled),
            "eager_gbps": metrics.gbytes_per_s(eager),
            "compiled_gbps": metrics.gbytes_per_s(compiled),
            "compiled_memory": (compiled.memory or {}).get("peak_device_bytes")
            if compiled and compiled.ok else None,
            "graphed_memory": (graphed.memory or {}).get("peak_device_bytes")
            if graphed and graphed.ok else None,
        })
    return rows


def best_fusion(rows: list[dict]) -> dict | None:
    """The clearest fusion example: the largest drop in kernels per call."""
    candidates = [r for r in rows if r["eager_kernels"] and r["compiled_kernels"]]
    if not candidates:
        return None
    return max(candidates, key=lambda r: (r["eager_kernels"] / r["compiled_kernels"],
                                          r["workload"]))


def mode_rows(data: Dataset, env: Environment) -> list[dict]:
    """Per mode: how often it is the fastest, its median cold compile, its call floor."""
    fastest_counts = dict.fromkeys(data.modes, 0)
    contested = 0
    for workload in data.workloads:
        batch = data.representative_batch(workload)
        timed = [r for mode in data.modes
                 if (r := data.get(env.env_id, workload, mode, batch)) and r.median_s]
        if timed:
            contested += 1
            fastest_counts[min(timed, key=lambda r: (r.median_s, r.mode)).mode] += 1
    rows = []
    for mode in data.modes:
        results = data.results(env_id=env.env_id, mode=mode)
        if not results:
            continue
        cold = [t for r in results if (t := metrics.compile_time(r, "cold")) is not None]
        floor = data.get(env.env_id, TRIVIAL_CALL, mode, None)
        rows.append({"mode": mode, "fastest": fastest_counts[mode], "contested": contested,
                     "cold": metrics.middle(cold), "floor": floor,
                     "ok": sum(1 for r in results if r.ok), "total": len(results)})
    return rows


def dynamo_totals(data: Dataset, env: Environment) -> dict | None:
    compiled = [r for r in data.results(env_id=env.env_id) if r.ok and r.dynamo]
    if not compiled:
        return None
    return {
        "cases": len(compiled),
        "graph_breaks": sum(r.dynamo["graph_breaks"] for r in compiled),
        "with_breaks": sum(1 for r in compiled if r.dynamo["graph_breaks"]),
        "recompiles": sum(r.dynamo["recompiles"] for r in compiled),
        "with_recompiles": sum(1 for r in compiled if r.dynamo["recompiles"]),
        "single_graph": sum(1 for r in compiled if r.dynamo["unique_graphs"] == 1),
        "cudagraph_skips": sum(1 for r in compiled if r.dynamo["cudagraph_skips"]),
    }


def env_facts(data: Dataset, env: Environment) -> dict | None:
    if not data.results(env_id=env.env_id):
        return None
    rows = fusion_rows(data, env)
    return {
        "per_kernel": headline_per_kernel(data, env),
        "floor": {mode: r for mode in data.modes
                  if (r := data.get(env.env_id, TRIVIAL_CALL, mode, None))},
        "fusion": rows,
        "best_fusion": best_fusion(rows),
        "modes": mode_rows(data, env),
        "dynamo": dynamo_totals(data, env),
        "probes": {name: [r for r in data.results(env_id=env.env_id) if name in r.probes]
                   for name in ("held-output-overwrite", "cudagraph-mark-step-begin",
                                "recompile-on-new-shape")},
    }


def render(site: Site) -> None:
    facts = by_backend(site.data, lambda env: env_facts(site.data, env))
    torch_versions = sorted({v for env in site.data.environments.values()
                             for v in dict(env.fields)["torch"]}, key=natural_key)
    for path, template in PAGES:
        site.page(path, template, facts=facts, compiled=COMPILED,
                  graphed=GRAPHED, trivial=TRIVIAL_CALL, torch_versions=torch_versions)
