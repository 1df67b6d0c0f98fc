"""Launch overhead and CUDA graphs: per-kernel cost, per-call floor, overhead anatomy,
and the batch size where CUDA graphs stop helping."""

from __future__ import annotations

from report import charts, formatting, metrics
from report.dataset import Dataset, Environment
from report.pages.common import by_backend
from report.site import Site
from report.vocabulary import BASELINE_MODE, TRIVIAL_CALL, chain_length

PAGE = "analysis/launch-overhead.md"
GRAPH_MODE = "cuda-graph"
# Each pair is (mode, baseline): what a CUDA graph adds on top of the same compiled code.
CROSSOVER_PAIRS = (("reduce-overhead", BASELINE_MODE), ("reduce-overhead", "default"),
                   ("max-autotune", "max-autotune-no-cudagraphs"))


def chains(data: Dataset) -> list[tuple[str, int]]:
    found = [(w, chain_length(w)) for w in data.workloads if chain_length(w)]
    return sorted(found, key=lambda pair: pair[1])


def per_kernel_view(site: Site, data: Dataset, env: Environment) -> dict | None:
    lengths = chains(data)
    rows = []
    for mode in data.modes:
        cells = []
        for workload, n in lengths:
            result = data.get(env.env_id, workload, mode, None)
            cells.append({"n": n, "result": result, "per_kernel": metrics.per_call(result, n),
                          "kernels": metrics.activity(result, "device_kernels_per_call")})
        if any(c["result"] for c in cells):
            rows.append({"mode": mode, "cells": cells})
    if not rows:
        return None
    series = {row["mode"]: [charts.Point(c["n"], c["per_kernel"] / 1e-6)
                            for c in row["cells"] if c["per_kernel"] is not None]
              for row in rows}
    series = {mode: points for mode, points in series.items() if points}
    chart = None
    if series:
        target, link = site.chart_path(PAGE, f"launch/per-kernel-{env.env_id}")
        title = f"Cost per kernel in a chain of N\n{env.label}"
        charts.line_chart(target, title=title, xlabel="kernels in the chain (N)",
                          ylabel="median per call / N (µs, log scale)", series=series,
                          colors={m: charts.mode_color(m) for m in series}, xbase=10)
        chart = {"link": link, "alt": f"Line chart of median latency divided by N, in "
                 f"microseconds, for chains of N tiny kernels on {env.label}, one line per mode."}
    return {"rows": rows, "lengths": [n for _, n in lengths], "chart": chart,
            "headline": headline_per_kernel(data, env)}


def floor_view(site: Site, data: Dataset, env: Environment) -> dict | None:
    results = [r for mode in data.modes if (r := data.get(env.env_id, TRIVIAL_CALL, mode, None))]
    if not results:
        return None
    rows = [{"mode": r.mode, "result": r,
             "repeats": data.repeats(env.env_id, TRIVIAL_CALL, r.mode, None)} for r in results]
    timed = [r for r in results if r.ok and r.timing]
    chart = None
    if timed:
        unit, scale = charts.time_unit([r.timing["q3_s"] for r in timed])
        target, link = site.chart_path(PAGE, f"launch/floor-{env.env_id}")
        title = f"Per-call floor ({TRIVIAL_CALL})\n{env.label}"
        charts.bar_chart(target, title=title, xlabel=f"median latency per call ({unit})",
                         bars=[(r.mode, charts.Point(0, r.timing["median_s"] / scale,
                                                     r.timing["q1_s"] / scale,
                                                     r.timing["q3_s"] / scale)) for r in timed],
                         colors={r.mode: charts.mode_color(r.mode) for r in timed})
        lowest = min(timed, key=lambda r: (r.median_s, r.mode))
        chart = {"link": link, "alt": f"Bar chart of the median latency of a trivial call in "
                 f"each mode on {env.label}; lowest: {lowest.mode}, "
                 f"{formatting.seconds(lowest.median_s)}."}
    return {"rows": rows, "chart": chart, "repeated": any(row["repeats"] for row in rows)}


def anatomy_view(site: Site, data: Dataset, env: Environment) -> dict | None:
    cases = [r for r in data.results(env_id=env.env_id)
             if metrics.activity(r, "busy_fraction") is not None and r.median_s]
    if not cases:
        return None
    cases.sort(key=lambda r: (r.activity["busy_fraction"], r.workload, r.mode,
                              r.batch_size or 0))
    series: dict[str, list[charts.Point]] = {}
    for mode in data.modes:
        points = [charts.Point(r.median_s / 1e-3, r.activity["busy_fraction"])
                  for r in cases if r.mode == mode]
        if points:
            series[mode] = points
    target, link = site.chart_path(PAGE, f"launch/busy-{env.env_id}")
    title = f"GPU busy fraction vs latency\n{env.label}"
    charts.scatter_chart(target, title=title, xlabel="median latency per call (ms, log scale)",
                         ylabel="GPU busy fraction (kernel time / wall time)", series=series,
                         colors={m: charts.mode_color(m) for m in series},
                         bands=(metrics.LAUNCH_BOUND, metrics.DEVICE_BOUND))
    rows = [{"result": r, "class": metrics.boundedness(r.activity["busy_fraction"])}
            for r in cases]
    counts = {name: sum(1 for row in rows if row["class"] == name)
              for name in ("launch-bound", "mixed", "device-bound")}
    return {"rows": rows, "counts": counts, "chart": {
        "link": link, "alt": f"Scatter plot of GPU busy fraction against median latency for "
        f"{len(cases)} cases on {env.label}, coloured by mode; the low band marks launch-bound "
        f"cases, the high band device-bound ones."}}


def crossover_view(site: Site, data: Dataset, env: Environment, workload: str) -> dict | None:
    batches = [b for b in data.batches(workload) if b is not None]
    rows = []
    for batch in batches:
        get = {mode: data.get(env.env_id, workload, mode, batch) for mode in data.modes}
        ratios = [metrics.speedup(get.get(base), get.get(mode)) for mode, base in CROSSOVER_PAIRS]
        rows.append({"batch": batch, "results": get, "ratios": ratios})
    if not any(r is not None for row in rows for r in row["ratios"]):
        return None
    stops = []
    for i, (mode, base) in enumerate(CROSSOVER_PAIRS):
        measured = [(row["batch"], row["ratios"][i]) for row in rows
                    if row["ratios"][i] is not None]
        first_not_faster = next((b for b, ratio in measured
                                 if ratio < 1.0 + metrics.MEANINGFUL_GAIN), None)
        stops.append({"mode": mode, "base": base, "measured": bool(measured),
                      "batch": first_not_faster, "batches": [b for b, _ in measured],
                      "of": len(rows)})
    names = [f"{mode} vs {base}" for mode, base in CROSSOVER_PAIRS]
    series = {name: [charts.Point(row["batch"], row["ratios"][i]) for row in rows
                     if row["ratios"][i] is not None] for i, name in enumerate(names)}
    series = {name: points for name, points in series.items() if points}
    target, link = site.chart_path(PAGE, f"launch/crossover-{workload}-{env.env_id}")
    title = f"What CUDA graphs add: {workload}\n{env.label}"
    palette = ("#4c72b0", "#c44e52", "#55a868")
    charts.line_chart(target, title=title, xlabel="batch size",
                      ylabel="speedup (median ratio, log scale)", series=series,
                      colors={name: palette[i % 3] for i, name in enumerate(series)},
                      reference_y=1.0)
    return {"workload": workload, "rows": rows, "stops": stops, "chart": {
        "link": link, "alt": f"Line chart of speedup against batch size for {workload} on "
        f"{env.label}: " + "; ".join(series) + ". The dashed line at 1 marks no gain."}}


def render(site: Site) -> None:
    data = site.data
    batched = [w for w in data.workloads if len([b for b in data.batches(w) if b]) > 1]

    def crossovers(env: Environment):
        views = [v for w in batched if (v := crossover_view(site, data, env, w))]
        return {"workloads": views} if views else None

    site.page(
        PAGE, "launch-overhead.md.j2",
        per_kernel=by_backend(data, lambda env: per_kernel_view(site, data, env)),
        floor=by_backend(data, lambda env: floor_view(site, data, env)),
        anatomy=by_backend(data, lambda env: anatomy_view(site, data, env)),
        crossover=by_backend(data, crossovers),
        chain_names=[w for w, _ in chains(data)], trivial=TRIVIAL_CALL,
        pairs=CROSSOVER_PAIRS, graph_mode=GRAPH_MODE,
        meaningful_gain=metrics.MEANINGFUL_GAIN, batched=batched,
    )


def headline_per_kernel(data: Dataset, env: Environment) -> dict | None:
    """The longest chain with both eager and cuda-graph timings (also quoted by concepts)."""
    for workload, n in reversed(chains(data)):
        eager = data.get(env.env_id, workload, BASELINE_MODE, None)
        graph = data.get(env.env_id, workload, GRAPH_MODE, None)
        e, g = metrics.per_call(eager, n), metrics.per_call(graph, n)
        if e is not None and g is not None:
            return {"n": n, "workload": workload, "eager": e, "graph": g, "ratio": e / g}
    return None
