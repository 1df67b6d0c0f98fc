"""Shape-stream records (bench/shapes) as table operations: one row per case, figures taken
over its processes, and per stream the strategy and mode that serve it soonest and with the
lowest p99. Figures come from records alone; what none measured stays None ("not measured").

A case is a stream workload at one batch, dtype and mode in one environment; its processes
each made the stream's calls in order from a fresh start. Per process: the total of the
first pass (compiles included), its running total call by call, the p50 and p99 of the
steady calls, the growth of reserved memory per size the callable ran at. Per case: the
median over processes of each, and the sizes any process ran eager at the recompile limit.
"""

from __future__ import annotations

import statistics
from itertools import accumulate
from typing import Any

import pandas as pd

from bench.modes import MODES
from bench.shapes.strategies import COMPILE_MODES, STRATEGIES
from report import formatting
from report.analysis import (
    DTYPE,
    PROCESS_TAGS,
    Data,
    Environment,
    environments,
    latest,
    rows,
    without_header_builds,
)

CASE = ["env_id", "workload", "batch_size", DTYPE, "mode"]
STREAM = ["env_id", "workload", "batch_size", DTYPE]
EAGER = "eager"
# Where the running totals are read for the page's "total time against calls".
CHECKPOINTS = (1, 10, 25)


def stream_records(records: pd.DataFrame) -> pd.DataFrame:
    """Of every record (`Data.records`), the newest isolated record of each process of a
    shape stream, failed ones included (they carry no stream section, so a case whose
    every process failed shows with its status and reason): the analysis layer's shown
    tables leave streams out (report.analysis.shown.latest), so this page reads them here.
    Processes of a case only (tags `main`, `rerun-N`): an A/B group's are its sides', read
    by report/shapes/releases.py. A stream's first pass compiles, so a process that built
    Inductor's precompiled headers there is left out where its case has others
    (analysis.without_header_builds)."""
    found = latest(records, streams=True)
    found = found[(found["process_timing"] == "isolated") & found["tag"].str.match(PROCESS_TAGS)]
    return found[without_header_builds(found)]


def quantile(samples, q: float) -> float:
    ordered = sorted(samples)
    if len(ordered) == 1:
        return ordered[0]
    return statistics.quantiles(ordered, n=100, method="inclusive")[round(q * 100) - 1]


def _median(values) -> float | None:
    known = [v for v in values if v is not None and not pd.isna(v)]
    return statistics.median(known) if known else None


def _running(processes: list[dict]) -> list[float]:
    """The running total of the first pass, call by call: at each call the median over
    processes of each call's time, summed up to it."""
    per_call = zip(*(p["first_pass_s"] for p in processes), strict=True)
    return list(accumulate(statistics.median(calls) for calls in per_call))


def _graph_memory(process: dict) -> float | None:
    """Reserved memory grown during the calls at each size the callable ran at (first and
    steady passes), per size."""
    grown = [c.reserved_growth_bytes for c in process["per_size"]]
    if not grown or any(g is None for g in grown):
        return None
    return sum(grown) / len(grown)


def _recordings(process: dict) -> int | None:
    counts = [c.cudagraph_recordings for c in process["per_size"]]
    return None if not counts or any(c is None for c in counts) else sum(counts)


def _new_shape_s(process: dict) -> float | None:
    """The median first call at a size after the first size: what a new shape costs once
    the process is up."""
    later = [c.first_call_s for c in process["per_size"][1:]]
    return statistics.median(later) if later else None


def cases(records: pd.DataFrame) -> list[dict[str, Any]]:
    """One dict per case: its processes' figures, medians over them, and its failures."""
    found = stream_records(records)
    out = []
    for key, group in found.groupby(CASE, dropna=False, sort=False):
        every = rows(group)
        ok = [r for r in every if r["ok"]]
        first = ok[0] if ok else every[0]
        # A failed process has no stream section: its mode's table entry names the strategy.
        mode = MODES.get(key[-1])
        case = {c: None if pd.isna(v) else v for c, v in zip(CASE, key, strict=True)} | {
            "backend": first["backend"], "stream": first["stream"],
            "distribution": first["distribution"], "seed": first["seed"],
            "varying_dim": first["varying_dim"],
            "strategy": first["strategy"] or (mode.strategy if mode else None),
            "compile_mode": first["compile_mode"] or (mode.compile_mode if mode else None),
            "processes": len(ok),
            "failed": [{"status": r["status"], "reason": r["reason"]}
                       for r in every if not r["ok"]], "ok": False}
        # Processes of another stream (a changed draw) are not medians of this one.
        same = [r for r in ok if list(r["sizes"]) == list(first["sizes"] or ())]
        if not same:
            out.append(case)
            continue
        sizes = list(same[0]["sizes"])
        running = _running(same)
        case |= {
            "ok": True, "calls": len(sizes), "low": min(sizes), "high": max(sizes),
            "distinct": len(set(sizes)), "running_s": running, "total_s": running[-1],
            "p50_s": _median(quantile(r["samples"], 0.5) for r in same),
            "p99_s": _median(quantile(r["samples"], 0.99) for r in same),
            "new_shape_s": _median(_new_shape_s(r) for r in same),
            "recompiles": max((r["recompiles"] or 0) for r in same),
            "graph_breaks": max((r["graph_breaks"] or 0) for r in same),
            "guard_failures": max(r["guard_failures"] for r in same),
            "recompile_limit": same[0]["recompile_limit"],
            "fell_back": sorted({c.size for r in same for c in r["per_size"] if c.fell_back}),
            "graph_sizes": len(same[0]["per_size"]),
            # The sizes the callable ran at: a strategy that pads runs above the request.
            "ran_at": sorted(c.size for c in same[0]["per_size"]),
            "recordings": _median(_recordings(r) for r in same),
            # A mode that records CUDA graphs on CUDA, where no count is "not recorded".
            "records_graphs": first["backend"] == "cuda" and key[-1] in MODES
                              and MODES[key[-1]].traits.cuda_graphs,
            "memory_per_shape_bytes": _median(_graph_memory(r) for r in same),
            "peak_bytes": _median(r["case_peak_reserved_bytes"] if r["backend"] == "cuda"
                                  else r["peak_rss_bytes"] for r in same),
            "passed": all(r["passed"] is True for r in same),
            "rel_error": _median(r["rel_error"] for r in same),
            # Each process's own figures, for the claims ledger to judge process by process.
            "per_process": {
                "recompiles": [r["recompiles"] or 0 for r in same],
                "graph_breaks": [r["graph_breaks"] or 0 for r in same],
                "guard_failures": [r["guard_failures"] for r in same],
                "fell_back": [sum(c.fell_back for c in r["per_size"]) for r in same],
                "passed": [r["passed"] is True for r in same],
                "p99_s": [quantile(r["samples"], 0.99) for r in same],
                "total_s": [sum(r["first_pass_s"]) for r in same]}}
        out.append(case)
    return out


def break_even(case: dict, eager: dict | None) -> int | None:
    """The first call after which the case's running total is at or below eager's, or None
    where that never happens within the stream (or eager was not measured)."""
    if not (case.get("ok") and eager and eager.get("ok")) or case["calls"] != eager["calls"]:
        return None
    for call, (mine, theirs) in enumerate(zip(case["running_s"], eager["running_s"],
                                              strict=True), start=1):
        if mine <= theirs:
            return call
    return None


def mode_rank(mode: str) -> int:
    order = list(MODES)
    return order.index(mode) if mode in order else len(order)


def streams(records: pd.DataFrame) -> list[dict[str, Any]]:
    """Per stream (environment, workload, batch, dtype): its cases in mode order, each with
    its break-even against eager, and the cases that answer first: the least total time
    over the stream's calls, and the lowest p99 once every shape is seen, among the cases
    whose every process passed the float64 check."""
    found = cases(records)
    grouped: dict[tuple, list[dict]] = {}
    for case in found:
        grouped.setdefault(tuple(case[c] for c in STREAM), []).append(case)
    out = []
    for key, members in grouped.items():
        members.sort(key=lambda c: mode_rank(c["mode"]))
        eager = next((c for c in members if c["mode"] == EAGER), None)
        for case in members:
            case["break_even"] = break_even(case, eager) if case["mode"] != EAGER else None
            case["vs_eager"] = (eager["total_s"] / case["total_s"]
                                if case.get("ok") and eager and eager.get("ok") else None)
        good = [c for c in members if c.get("ok") and c["passed"]]
        measured = next((c for c in members if c.get("ok")), members[0])
        out.append(dict(zip(STREAM, key, strict=True)) | {
            "backend": measured["backend"], "stream": measured["stream"],
            "distribution": measured["distribution"], "seed": measured["seed"],
            "varying_dim": measured["varying_dim"], "low": measured.get("low"),
            "high": measured.get("high"), "calls": measured.get("calls"),
            "cases": members, "eager": eager,
            "soonest": min(good, key=lambda c: c["total_s"], default=None),
            "steadiest": min(good, key=lambda c: c["p99_s"], default=None),
            "checkpoints": [n for n in CHECKPOINTS if n < (measured.get("calls") or 0)]})
        out[-1]["answer"] = answer(out[-1])
    return out


def answer(stream: dict[str, Any]) -> dict[str, str | None]:
    """The answer for one stream as text, the one definition the page's first screen and the
    guide's chooser print: the inputs; the mode that serves the stream soonest (compiles
    included) with its strategy, its total and eager's; the mode with the lowest p99 once
    every shape is seen, with its strategy, its p99 and eager's, the call from which it has
    cost no more than eager, and the reserved memory its graphs took per size it ran at.
    A mode none measured is None; a figure none measured, "not measured"."""
    soonest, steadiest, eager = stream["soonest"], stream["steadiest"], stream["eager"]
    eager_ok = eager if eager and eager.get("ok") else None
    cpu = stream["backend"] == "cpu"
    if steadiest is None:
        pays_off = formatting.NOT_MEASURED
    elif steadiest["mode"] == EAGER:
        pays_off = "—"
    elif steadiest["break_even"] is not None:
        pays_off = formatting.calls(steadiest["break_even"])
    else:
        pays_off = "not within the stream"
    memory = steadiest["memory_per_shape_bytes"] if steadiest else None
    return {
        "inputs": (f"{stream['varying_dim']} {formatting.number(stream['low'])}–"
                   f"{formatting.number(stream['high'])}, {formatting.number(stream['calls'])} calls"
                   if stream["calls"] else formatting.NOT_MEASURED),
        "soonest": soonest["mode"] if soonest else None,
        "soonest_strategy": soonest["strategy"] if soonest else None,
        "soonest_total": formatting.seconds(soonest["total_s"] if soonest else None),
        "eager_total": formatting.seconds(eager_ok["total_s"] if eager_ok else None),
        "steadiest": steadiest["mode"] if steadiest else None,
        "steadiest_strategy": steadiest["strategy"] if steadiest else None,
        "steadiest_p99": formatting.seconds(steadiest["p99_s"] if steadiest else None),
        "eager_p99": formatting.seconds(eager_ok["p99_s"] if eager_ok else None),
        "pays_off": pays_off,
        "memory": ("not applicable (CPU)" if memory is None and cpu
                   else formatting.binary_bytes(memory))}


def stream_environments(data: Data) -> dict[str, Environment]:
    """Every environment with stream records, by env_id: the site's own where it has
    fixed-shape records too (the site's environments are built from those alone), else one
    built from its stream records."""
    records = stream_records(data.records)
    if not len(records):
        return {}
    processes = records[records["ok"]].groupby(CASE, dropna=False).size().rename(
        "n_processes").reset_index()
    own = environments(records, processes)
    return {env_id: data.environments.get(env_id, env) for env_id, env in own.items()}


def strategy_words() -> list[dict[str, str]]:
    """Each strategy and what it does, as bench/shapes states it."""
    return [{"name": s.name, "description": s.description} for s in STRATEGIES.values()]


MODES_MEASURED = ("eager", *COMPILE_MODES)
