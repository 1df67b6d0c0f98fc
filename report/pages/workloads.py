"""One page per workload, an index of them, and the nav entries for MkDocs."""

from __future__ import annotations

from report import charts, formatting, metrics
from report.dataset import Dataset, Environment
from report.load import Result
from report.pages.common import by_backend, eager_of
from report.site import Site
from report.vocabulary import FAMILIES, batch_key, ordered


def mode_order(data: Dataset):
    rank = {mode: i for i, mode in enumerate(data.modes)}
    return lambda r: (rank[r.mode], batch_key(r.batch_size))


def latency_rows(data: Dataset, env: Environment, workload: str) -> list[dict]:
    """Every mode x batch, measured or not, so gaps read "not measured"."""
    rows = []
    for mode in data.modes:
        for batch in data.batches(workload):
            result = data.get(env.env_id, workload, mode, batch)
            eager = eager_of(data, env.env_id, workload, batch)
            rows.append({"mode": mode, "batch": batch, "result": result,
                         "speedup": metrics.speedup(eager, result),
                         "gflops": metrics.gflops(result), "gbps": metrics.gbytes_per_s(result),
                         "iqr_ratio": metrics.iqr_ratio(result)})
    return rows


def latency_chart(site: Site, page: str, data: Dataset, env: Environment, workload: str,
                  ok: list[Result]) -> dict | None:
    timed = [r for r in ok if r.timing]
    if not timed:
        return None
    unit, scale = charts.time_unit([r.timing["q3_s"] for r in timed])
    target, link = site.chart_path(page, f"workloads/{workload}-{env.env_id}")
    title = f"{workload}: median latency\n{env.label}"
    colors = {mode: charts.mode_color(mode) for mode in data.modes}
    fastest = min(timed, key=lambda r: (r.median_s, r.mode))

    def point(r: Result, x: float = 0) -> charts.Point:
        t = r.timing
        return charts.Point(x, t["median_s"] / scale, t["q1_s"] / scale, t["q3_s"] / scale)

    if data.batches(workload) == [None]:
        charts.bar_chart(target, title=title, xlabel=f"median latency per call ({unit})",
                         bars=[(r.mode, point(r)) for r in timed], colors=colors)
        kind = "Bar chart of median latency per call for each mode"
    else:
        series: dict[str, list[charts.Point]] = {}
        for r in timed:
            series.setdefault(r.mode, []).append(point(r, r.batch_size))
        charts.line_chart(target, title=title, xlabel="batch size",
                          ylabel=f"median latency per call ({unit}, log scale)",
                          series=series, colors=colors)
        kind = "Line chart of median latency per call against batch size, one line per mode,"
    where = f" at batch {fastest.batch_size}" if fastest.batch_size is not None else ""
    alt = (f"{kind} for {workload} on {env.label}; error bars span the interquartile range. "
           f"Fastest: {fastest.mode}{where}, {formatting.seconds(fastest.median_s)}.")
    return {"link": link, "alt": alt}


def render_workload(site: Site, workload: str) -> None:
    data = site.data
    page = f"workloads/{workload}.md"

    def build(env: Environment):
        results = sorted(data.results(env_id=env.env_id, workload=workload),
                         key=mode_order(data))
        if not results:
            return None
        ok = [r for r in results if r.ok]
        return {
            "latency": latency_rows(data, env, workload),
            "chart": latency_chart(site, page, data, env, workload, ok),
            "ok": ok,
            "compiled": [r for r in ok if r.compile],
            "dynamo": [r for r in ok if r.dynamo],
            "checked": [r for r in ok if r.correctness],
            "failed": [r for r in results if not r.ok],
        }

    site.page(page, "workload.md.j2", workload=workload, info=data.workload_info(workload),
              family=data.family(workload), batches=data.batches(workload),
              backends=by_backend(data, build))


def families(data: Dataset) -> list[dict]:
    names = ordered({data.family(w) for w in data.workloads}, FAMILIES)
    return [{"family": f, "workloads": [w for w in data.workloads if data.family(w) == f]}
            for f in names]


def render(site: Site) -> None:
    data = site.data
    for workload in data.workloads:
        render_workload(site, workload)
    groups = families(data)
    measured_in = {w: sorted({r.env_id for r in data.results(workload=w)})
                   for w in data.workloads}
    site.page("workloads/index.md", "workloads-index.md.j2", families=groups,
              measured_in=measured_in)
    site.write_workload_nav([{"family": g["family"],
                              "pages": [[w, f"workloads/{w}.md"] for w in g["workloads"]]}
                             for g in groups])
