"""The published-figures table: every figure a page, answer, the chooser or the export
shows, chosen once per environment, case and mode."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from report.analysis.derived import speedups, with_break_even
from report.analysis.ordering import ordered, rows
from report.analysis.shown import (
    ISOLATED,
    LATENCY,
    lease_of,
    paired_latencies,
    processes,
    with_paired_latencies,
)
from report.analysis.vocabulary import BASELINE, CASE, DEFAULT_DTYPE, DTYPE

# The one rule that decides which processes a case publishes. Paired processes time every
# mode in alternating rounds beside eager, so where they exist the speedup, the latency and
# its spread all come from them, and a row's latency and speedup rest on the same processes.
PUBLISHED_RULE = ("a case publishes the figures of its paired processes where one or more "
                  "paired processes timed it beside eager, else those of its isolated processes; "
                  "a ratio of two modes divides the medians of paired processes that timed "
                  "both, else the medians of both modes' isolated processes, never one of each")
PUBLISHED_LATENCY = [*LATENCY, "medians_s", "iqr_s", "iqr_ratio"]
# The columns of the published table beyond the case's own: what every page, answer, the
# chooser and the export may show.
FIGURES = ("timing", "processes", "leases", "hosts", "isolated_processes", "paired_processes",
           "latency_s", "latency_lo_s", "latency_hi_s", "latency_base_s", "speedup", "speedup_lo",
           "speedup_hi", "saving_s", "bound", "ratio_bound", "cold_compile_s", "warm_compile_s",
           "cold_calls", "warm_calls", "peak_device_bytes", "peak_rss_bytes", "compiling")


def publishes_paired(case_rows: pd.DataFrame) -> pd.Series:
    """PUBLISHED_RULE, per case row of `with_paired`: whether it publishes paired figures."""
    column = f"paired_{BASELINE}_processes"
    if column not in case_rows:
        return pd.Series(False, index=case_rows.index, dtype=bool)
    return (pd.to_numeric(case_rows[column], errors="coerce").fillna(0) >= 1).astype(bool)


def _provenance(procs: pd.DataFrame, name: str) -> pd.DataFrame:
    """Per case: how many ok processes of one kind, on how many leases and host names."""
    ok = procs[procs["ok"]]
    ok = ok.assign(_lease=lease_of(ok), _host=ok["hostname"].where(ok["hostname"].notna(),
                                                                    ok["machine"]))
    return ok.groupby(CASE, dropna=False).agg(
        **{f"{name}_processes": ("_lease", "size"), f"{name}_leases": ("_lease", "nunique"),
           f"{name}_hosts": ("_host", "nunique")}).reset_index()


def published_cases(isolated_cases: pd.DataFrame, isolated: pd.DataFrame,
                    paired: pd.DataFrame) -> pd.DataFrame:
    """`isolated_cases` (`with_paired` of `cases`) with their latency figures (median_s,
    lo_s, hi_s, n_processes, medians_s, iqr_ratio, spread) taken from the processes
    PUBLISHED_RULE picks: `timing` says which ("paired" or "isolated"), `processes`,
    `leases` and `hosts` what they rest on, `isolated_processes` and `paired_processes`
    how many of each the case has. Compile times, memory and Dynamo counters stay those of
    the isolated processes: paired processes do not measure them."""
    figures = paired.assign(iqr_ratio=paired["iqr_s"] / paired["median_s"])
    out = with_paired_latencies(isolated_cases, paired_latencies(figures, PUBLISHED_LATENCY))
    use = publishes_paired(out) & out["n_processes_paired"].notna()
    out = pd.concat([out, pd.DataFrame({f"{column}_isolated": out[column] for column in ISOLATED},
                                       index=out.index)], axis=1)
    for column in PUBLISHED_LATENCY:
        out[column] = out[column].where(~use, out[f"{column}_paired"])
    out["n_processes"] = out["n_processes"].astype(int)
    out = out.drop(columns=[f"{column}_paired" for column in PUBLISHED_LATENCY]).copy()
    out["spread"] = ((out["hi_s"] - out["lo_s"]) / out["lo_s"]).where(out["n_processes"] >= 2)
    out["timing"] = use.map({True: "paired", False: "isolated"}).where(out["ok"])
    for part in (_provenance(processes(isolated), "isolated"), _provenance(paired, "paired")):
        out = out.merge(part, on=CASE, how="left")
    for name in ("isolated", "paired"):
        out[f"{name}_processes"] = out[f"{name}_processes"].fillna(0).astype(int)
    out["processes"] = out["n_processes"].where(out["ok"], 0)
    out["leases"] = out["paired_leases"].where(use, out["isolated_leases"])
    out["hosts"] = out["paired_hosts"].where(use, out["isolated_hosts"])
    out = out.drop(columns=[f"{n}_{f}" for n in ("isolated", "paired") for f in ("leases", "hosts")])
    return out.reset_index(drop=True)


def published(case_rows: pd.DataFrame) -> pd.DataFrame:
    """The published-figures table: one row per environment, case and mode (CASE, with
    `backend`), every figure a page shows, each chosen once, here.

    From `published_cases` rows: the case's columns, then FIGURES: its latency with spread
    (`latency_s`, `latency_lo_s`, `latency_hi_s`) and eager's median that its speedup
    divides (`latency_base_s`); its speedup over eager with spread (`speedup`,
    `speedup_lo`, `speedup_hi`: paired round ratios where paired processes timed both,
    else ratios of both sides' isolated medians, never one of each; `timing` says which)
    and the time saved per call (`saving_s`); `bound` (`bound_of` the
    case) and `ratio_bound` (whether the speedup carries to another host); cold and warm
    compile times (`cold_compile_s`, `warm_compile_s`: the first call, for every mode that
    is not eager); `cold_calls`/`warm_calls`, the calls after which each is paid back;
    memory; `compiling`, whether the mode runs torch.compile (the hand-captured CUDA graph
    does not); and provenance (`timing`, `processes`, `leases`, `hosts`). The `compare`
    columns (`speedup_lo`, `pairings`, `settled`, `holds`, ...) come with it."""
    table = speedups(case_rows)
    out = table.assign(
        latency_s=table["median_s"], latency_lo_s=table["lo_s"], latency_hi_s=table["hi_s"],
        latency_base_s=table["latency_base_s"],
        cold_compile_s=table["cold_first_call_s"].where(table["mode"] != BASELINE),
        warm_compile_s=table["warm_first_call_s"].where(table["mode"] != BASELINE),
        compiling=table["compiled"].fillna(False).astype(bool))
    # Paired, the speedup rests on the paired processes that timed the mode beside eager;
    # else on the fewer side of isolated processes (compare's `compared_processes`).
    out["processes"] = out["compared_processes"].fillna(0).astype(int)
    out = with_break_even(out)
    out.loc[out["mode"] == BASELINE, ["cold_calls", "warm_calls"]] = np.nan
    return ordered(out).reset_index(drop=True)


def row_of(table: pd.DataFrame, env_id: str, workload: str, batch: int | None, mode: str,
           dtype: str = DEFAULT_DTYPE) -> dict[str, Any] | None:
    """One row of a published table (None when that case was not measured)."""
    here = table[(table["env_id"] == env_id) & (table["workload"] == workload)
                 & (table["mode"] == mode) & (table[DTYPE] == dtype)]
    here = here[here["batch_size"].isna()] if batch is None else here[here["batch_size"] == batch]
    return rows(here)[0] if len(here) else None
