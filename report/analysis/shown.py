"""What the site shows: the newest record of each process, the processes of a case, and one
row per case with the median of its process medians and their spread."""

from __future__ import annotations

from typing import Any

import pandas as pd

from bench.host.model import probe_of
from bench.stats import paired_speedup
from bench.workloads.registry import STREAM_FAMILY, STREAMS
from report.analysis.loading import PROCESS, _oldest_to_newest
from report.analysis.ordering import ordered
from report.analysis.vocabulary import (
    BASELINE,
    CASE,
    DEVICE_BOUND,
    LAUNCH_BOUND,
    PAIRED_BASELINES,
    POINT,
    PROCESS_TAGS,
    SHOWN_SHAPES,
)


def is_stream(records: pd.DataFrame) -> pd.Series:
    """Whether each record is of a shape stream: it has a stream section, or its workload
    is of the streams' family (a failed record may carry neither section nor family, so a
    registered stream's name counts too). A stream's steady median is taken after every
    shape was seen and its compile time is spread over the stream: figures that answer
    another question than a fixed-shape case's, which only the varying-shapes page
    (report/shapes) reads, through `latest(records, streams=True)`."""
    return (records["strategy"].notna() | (records["family"] == STREAM_FAMILY)
            | records["workload"].isin(STREAMS))


def fixed_seed(records: pd.DataFrame) -> pd.DataFrame:
    """The seed-shape records of fixed shapes: every table but the varying-shapes page's
    starts from these (`is_stream` says why a stream is apart)."""
    return records[(records["shapes"] == SHOWN_SHAPES) & ~is_stream(records)]


def latest(records: pd.DataFrame, streams: bool = False) -> pd.DataFrame:
    """Seed-shape records of fixed shapes (of shape streams, `is_stream`, with `streams`),
    and of each process (case, tag, repeat index) the newest; ties on `started_at` go by
    TIE_RULE, whatever the files are called. Repeat indices beyond the newest run's
    `repeats` are dropped too: they belong to an older run of the case. Every table of
    fixed-shape figures (the shown records, the cases, the published figures) is built
    from this one, so a stream's records appear in none of them."""
    seed = (records[(records["shapes"] == SHOWN_SHAPES) & is_stream(records)] if streams
            else fixed_seed(records))
    key = [*CASE, "tag", "process_timing"]
    newest = _oldest_to_newest(seed).drop_duplicates(PROCESS, keep="last")
    planned = newest.groupby(key, dropna=False)["repeats"].transform("last")
    kept = newest[newest["repeat"] < planned]
    return kept.sort_index()


def processes(shown: pd.DataFrame) -> pd.DataFrame:
    """The isolated records that are processes of a case: tags `main` and `rerun-N`."""
    return shown[shown["tag"].str.match(PROCESS_TAGS) & (shown["process_timing"] == "isolated")]


def built_headers(count: object) -> bool:
    """Whether a process's CompileTimes.headers_built says its first calls built any of
    Inductor's precompiled headers (None or NaN: not recorded, so not known to have)."""
    return isinstance(count, int | float) and count == count and count > 0


def kept_beside_header_builds(built: list) -> list[bool]:
    """Which of one case's processes count toward its figures that include their first
    calls, given how many of Inductor's precompiled headers each built there
    (CompileTimes.headers_built; None: not recorded). Building them is a cost only a
    machine's first C++ compile pays: a process that built some is left out, unless every
    process of the case did. One figure never mixes the two."""
    building = [built_headers(b) for b in built]
    return [True] * len(built) if all(building) else [not b for b in building]


def without_header_builds(procs: pd.DataFrame) -> pd.Series:
    """`kept_beside_header_builds` for every case (CASE) of `procs`, as a mask."""
    built = (pd.to_numeric(procs["headers_built"], errors="coerce").astype("float64")
             if "headers_built" in procs else pd.Series(float("nan"), index=procs.index))
    if procs.empty or not built.gt(0).any():
        return pd.Series(True, index=procs.index)
    # by position: a frame of the newest records may repeat index labels
    cases: dict[tuple, list[int]] = {}
    for row, key in enumerate(zip(*(procs[c].astype(str) for c in CASE), strict=True)):
        cases.setdefault(key, []).append(row)
    values, mask = built.tolist(), [True] * len(procs)
    for rows_of_case in cases.values():
        kept = kept_beside_header_builds([values[r] for r in rows_of_case])
        for r, keep in zip(rows_of_case, kept, strict=True):
            mask[r] = keep
    return pd.Series(mask, index=procs.index)


def counted_cold(procs: pd.DataFrame) -> pd.Series:
    """Whether each process's cold_first_call_s counts toward its case's cold first call: its
    compile caches were cold, and `without_header_builds` among the cold ones."""
    cold = procs["cache"].eq("cold").to_numpy()
    counted = cold.copy()
    counted[cold] = without_header_builds(procs[cold]).to_numpy()
    return pd.Series(counted, index=procs.index)


def paired_processes(shown: pd.DataFrame) -> pd.DataFrame:
    """The ok records of paired processes under the process tags (`main`, `rerun-N`)."""
    return shown[shown["tag"].str.match(PROCESS_TAGS) & (shown["process_timing"] == "paired")
                 & shown["ok"]]


def probe_us(op_s: Any) -> float | None:
    """A process's probe (bench/host/model.py `probe_of`, the median of its eager-op blocks)
    in microseconds, over its values that are numbers; None without one. statistics, not a
    pandas Series: this runs once per process, and the Series cost most of the A/B pages'
    time."""
    values = ([v for v in op_s if v is not None and v == v]
              if op_s is not None and not isinstance(op_s, float) else [])
    return float(probe_of(values) * 1e6) if values else None


def lease_of(df: pd.DataFrame) -> pd.Series:
    """Which lease of a machine a record ran on: its host name and boot id (records from
    before the host section say their machine name and None)."""
    host = df["hostname"].where(df["hostname"].notna(), df["machine"])
    return host.astype(str) + "/" + df["boot_id"].fillna("?").astype(str)


LATENCY = ["median_s", "lo_s", "hi_s", "n_processes"]
# The latency figures a case keeps from its isolated processes, as `<column>_isolated`,
# where it publishes paired ones (report.analysis.published): a ratio of two cases that
# were not timed in the same processes divides these, never one paired median by an
# isolated one.
ISOLATED = ("median_s", "lo_s", "hi_s", "n_processes")


def isolated(table: pd.DataFrame, column: str, side: str = "") -> pd.Series:
    """The isolated figure `column` (one of ISOLATED) of each row, with a merge's `side`
    suffix: `<column>_isolated<side>` where the table keeps one, else the column itself
    (a table of isolated cases alone)."""
    kept = f"{column}_isolated{side}"
    return table[kept] if kept in table else table[f"{column}{side}"]
# What a mode saves per call, and the two medians behind it (`compare`).
SAVING = ("saving_s", "saving_lo_s", "saving_hi_s", "latency_base_s", "latency_s")


def paired_latencies(paired: pd.DataFrame, columns: list[str] = LATENCY) -> pd.DataFrame:
    """One row per case (CASE) from its paired processes (`paired_processes`): each process's
    own median of the mode, summarised as `cases` does the isolated ones (`columns` of
    `cases`' timing figures: `median_s` over processes, `lo_s`/`hi_s`, `n_processes`). A
    paired process times the mode in rounds beside the others, so these figures stand for
    the same case under paired timing. A column `_TIMING` does not name is the median over
    processes."""
    figures = {c: _TIMING.get(c, (c, "median")) for c in columns}
    return paired.groupby(CASE, dropna=False).agg(**figures).reset_index()


def with_paired_latencies(table: pd.DataFrame, paired: pd.DataFrame) -> pd.DataFrame:
    """`table` (case rows) with each case's `paired_latencies` beside it, as `<column>_paired`."""
    return table.merge(paired, on=CASE, how="left", suffixes=("", "_paired"))


def round_ratios(paired: pd.DataFrame) -> pd.DataFrame:
    """One row per paired process, mode and baseline (every pair of its modes): `ratio`,
    the median over its rounds of baseline time / mode time (above 1 the mode is
    faster), `rounds` it rests on, its `lease`, `probe_us`, the process's median eager
    per-op cost (bench/host/probe.py), the process's own medians of the two (`base_s`, `mode_s`)
    and `saving_s`, the time per call the mode saves there: the baseline's median less
    that median over `ratio`, so that it is positive exactly where the ratio is above 1."""
    columns = [*POINT, "backend", "mode", "baseline", "ratio", "rounds", "lease", "probe_us", "group",
               "base_s", "mode_s", "saving_s"]
    # Plain lists and one row per process taken at once: iterating the groups as frames and
    # reading each one's first row through pandas was most of this function's time.
    rows_of: dict[Any, list[int]] = {}
    for index, group in enumerate(paired["group"].tolist()):
        if not pd.isna(group):  # groupby leaves out records without a group
            rows_of.setdefault(group, []).append(index)
    shared = [*POINT, "backend", "lease", "op_s", "group"]
    firsts = paired.assign(lease=lease_of(paired)).take([rows[0] for rows in rows_of.values()])
    modes, rounds, medians = (paired[c].tolist() for c in ("mode", "round_s", "median_s"))
    found = []
    for first, rows in zip(firsts[shared].to_numpy(dtype=object), rows_of.values(), strict=True):
        first = dict(zip(shared, first, strict=True))
        probe = probe_us(first["op_s"])
        times = {modes[i]: rounds[i] for i in rows}
        median_of = {modes[i]: medians[i] for i in rows}
        for baseline, base_s in times.items():
            for mode, mode_s in times.items():
                ratio = paired_speedup(base_s, mode_s)
                found.append({**{c: first[c] for c in POINT}, "backend": first["backend"],
                              "mode": mode, "baseline": baseline, "ratio": ratio,
                              "rounds": min(len(base_s), len(mode_s)), "lease": first["lease"],
                              "probe_us": probe, "group": first["group"],
                              "base_s": median_of[baseline], "mode_s": median_of[mode],
                              "saving_s": median_of[baseline] * (1.0 - 1.0 / ratio)
                              if ratio else None})
    return pd.DataFrame(found, columns=columns)


def shown_round_ratios(shown_paired: pd.DataFrame, records: pd.DataFrame) -> pd.DataFrame:
    """`round_ratios` of the shown paired processes (`paired_processes` of `latest`), each
    shown mode against the other modes of its own process. A newer paired run that timed
    fewer of a point's modes (a sentinel run after a full one) supersedes only those; a mode
    it left out keeps its older process, and is compared with the baseline timed in that
    process, not with the newer run's."""
    ratios = round_ratios(paired_processes(records[records["group"].isin(set(shown_paired["group"]))]))
    shown = set(zip(shown_paired["group"], shown_paired["mode"], strict=True))
    keep = pd.Series([(group, mode) in shown or (group, baseline) in shown for group, mode, baseline
                      in zip(ratios["group"], ratios["mode"], ratios["baseline"], strict=True)],
                     index=ratios.index, dtype=bool)
    return ratios[keep].reset_index(drop=True)


def paired_speedups(ratios: pd.DataFrame) -> pd.DataFrame:
    """Per point, mode and baseline: `speedup`, the median over processes of their round
    ratios; `speedup_lo`/`speedup_hi`, the smallest and largest process; `processes`,
    `leases`, `rounds` (the fewest any process had), `host_probe_us` (median), and the
    time saved per call as `saving_s` (the median baseline less it over the median ratio, so
    that it is positive exactly where `speedup` is above 1), `saving_lo_s`/`saving_hi_s`
    (smallest and largest process), with the medians over processes of their own medians behind it
    (`latency_base_s`, `latency_s`)."""
    key = [*POINT, "mode", "baseline"]
    table = ratios.groupby(key, dropna=False).agg(
        speedup=("ratio", "median"), speedup_lo=("ratio", "min"), speedup_hi=("ratio", "max"),
        processes=("ratio", "size"), leases=("lease", "nunique"), rounds=("rounds", "min"),
        host_probe_us=("probe_us", "median"),
        saving_lo_s=("saving_s", "min"), saving_hi_s=("saving_s", "max"),
        latency_base_s=("base_s", "median"), latency_s=("mode_s", "median")).reset_index()
    # The saving of the median ratio, not the median of the savings: over an even number of
    # processes the two medians are means, and a mean of ratios above 1 can sit beside a
    # mean of savings below 0, a mode "faster" that never pays back its compile.
    table.insert(table.columns.get_loc("saving_lo_s"), "saving_s",
                 table["latency_base_s"] * (1.0 - 1.0 / table["speedup"]))
    return table


def with_paired(case_rows: pd.DataFrame, speedups_table: pd.DataFrame) -> pd.DataFrame:
    """Cases with their paired speedup over each of PAIRED_BASELINES and every other baseline
    in `speedups_table`, as columns `paired_<baseline>_<figure>`; NaN where no paired process
    measured the pair."""
    out = case_rows
    for baseline in dict.fromkeys([*PAIRED_BASELINES, *speedups_table["baseline"]]):
        part = speedups_table[speedups_table["baseline"] == baseline].drop(columns="baseline")
        figures = [c for c in part.columns if c not in (*POINT, "mode")]
        part = part.rename(columns={c: f"paired_{baseline}_{c}" for c in figures})
        out = out.merge(part, on=[*POINT, "mode"], how="left")
    # Paired processes repeat an environment's cases too: a figure resting on one process
    # there is "a single run", not one of an environment that ran everything once.
    paired_repeats = out[f"paired_{BASELINE}_processes"] > 1
    return out.assign(env_repeated=out["env_repeated"]
                      | paired_repeats.groupby(out["env_id"]).transform("any"))


def bound_of(busy: Any, backend: str) -> str | None:
    """The one vocabulary for what sets a time, from the measured GPU busy fraction:
    "launch-bound" below LAUNCH_BOUND (the device waits on the CPU that issues its work:
    eager launches, or the Python bookkeeping around a graph replay), "device-bound" from
    DEVICE_BOUND, "mixed" in between, "cpu" on a CPU backend (the host is the device),
    None without a profile."""
    if backend == "cpu":
        return "cpu"
    if busy is None or pd.isna(busy):
        return None
    return "launch-bound" if busy < LAUNCH_BOUND else "device-bound" if busy >= DEVICE_BOUND else "mixed"


def side_bound(case_rows: pd.DataFrame) -> pd.Series:
    """`bound_of` each case row (its `busy_fraction` and `backend`)."""
    busy = case_rows["busy_fraction"] if "busy_fraction" in case_rows else pd.Series(
        None, index=case_rows.index, dtype=object)
    return pd.Series([bound_of(b, backend) for b, backend in zip(busy, case_rows["backend"],
                                                                   strict=True)],
                     index=case_rows.index, dtype=object)


# Whether a ratio carries to another host follows from what bounds its two sides.
RATIO_BOUND = {("launch-bound", "launch-bound"): "launch-bound", ("cpu", "cpu"): "cpu",
               ("device-bound", "device-bound"): "device-bound",
               ("launch-bound", "device-bound"): "host-dependent",
               ("device-bound", "launch-bound"): "host-dependent"}


def ratio_bound(mode_side: pd.Series, base_side: pd.Series) -> pd.Series:
    """"launch-bound": both sides wait on the host, which cancels in their ratio, so it
    carries over to other hosts; "host-dependent": one side waits on the host and the
    other does not, so the ratio grows on a slower host; "device-bound": neither waits on
    the host; "mixed" otherwise; None where a side has no profile."""
    def one(a, b):
        if a is None or b is None or pd.isna(a) or pd.isna(b):
            return None
        return RATIO_BOUND.get((a, b), "mixed")

    return pd.Series([one(a, b) for a, b in zip(mode_side, base_side, strict=True)],
                     index=mode_side.index, dtype=object)


# Per-case aggregation of the ok processes: the figure and its spread, then the rest.
_TIMING = {"median_s": ("median_s", "median"), "lo_s": ("median_s", "min"),
           "hi_s": ("median_s", "max"), "n_processes": ("median_s", "size"),
           "medians_s": ("median_s", tuple), "q1_s": ("q1_s", "median"),
           "q3_s": ("q3_s", "median"), "iqr_s": ("iqr_s", "median"),
           "iqr_ratio": ("iqr_ratio", "median"), "warm_first_call_s": ("warm_first_call_s", "median"),
           "rel_error": ("rel_error", "max"), "passed": ("passed", "all")}
_MEDIAN = ("peak_device_bytes", "peak_rss_bytes", "peak_reserved_bytes", "case_peak_device_bytes",
           "case_peak_reserved_bytes", "device_kernels_per_call", "launches_per_call",
           "graph_launches_per_call", "cpu_ops_per_call", "device_busy_s_per_call",
           "busy_fraction")
_MAX = ("graph_breaks", "recompiles", "unique_graphs", "cudagraph_skips")


def cases(shown: pd.DataFrame) -> pd.DataFrame:
    """One row per case, from its processes (`processes(shown)`).

    Descriptive columns (status, reason, workload info, traits, source, counts per
    sample) come from the newest process. From the ok processes: `median_s` is the
    median of their medians, `lo_s`/`hi_s` the smallest and largest, `n_processes` how
    many, `medians_s` all of them, `spread` (hi - lo) / lo where there are two or more;
    `cold_first_call_s` is the median over processes whose compile caches were cold
    (`counted_cold`), and
    `warm_first_call_s` over all; memory and activity are medians, Dynamo counters the
    largest, `rel_error` the worst and `passed` whether every process passed. A case is
    ok if any process is. `env_repeated` says whether its environment has any case
    resting on more than one process.
    """
    procs = processes(shown).assign(iqr_ratio=lambda d: d["iqr_s"] / d["median_s"])
    if procs.empty:
        return procs.assign(**{c: pd.Series(dtype=object) for c in
                               [*_TIMING, "spread", "env_repeated", "n_failed", "bound"]})
    newest = procs.sort_values("started_at", kind="stable").groupby(
        CASE, dropna=False, sort=False).tail(1)
    ok = procs[procs["ok"]]
    agg = dict(_TIMING, **{c: (c, "median") for c in _MEDIAN}, **{c: (c, "max") for c in _MAX})
    figures = ok.groupby(CASE, dropna=False).agg(**agg).reset_index()
    cold = (ok[counted_cold(ok)].groupby(CASE, dropna=False)["cold_first_call_s"]
            .median().reset_index())
    last_ok = ok.sort_values("started_at", kind="stable").groupby(
        CASE, dropna=False).tail(1)[[*CASE, "cold_first_calls_s", "skip_reasons",
                                     "graph_break_reasons", "count", "calls_per_sample",
                                     "reference", "tolerance"]]
    failed = (procs[~procs["ok"]].groupby(CASE, dropna=False).size()
              .rename("n_failed").reset_index())
    replaced = {*agg, "cold_first_call_s", "cold_first_calls_s", "skip_reasons",
                "graph_break_reasons", "count", "calls_per_sample", "reference", "tolerance"}
    out = newest.drop(columns=[c for c in replaced if c in newest.columns])
    for part in (figures, cold, last_ok, failed):
        out = out.merge(part, on=CASE, how="left")
    out["n_processes"] = out["n_processes"].fillna(0).astype(int)
    out["n_failed"] = out["n_failed"].fillna(0).astype(int)
    out["ok"] = out["n_processes"] > 0
    out.loc[out["ok"], "status"] = "ok"
    out.loc[out["ok"], "reason"] = None
    out["spread"] = (out["hi_s"] - out["lo_s"]) / out["lo_s"]
    out.loc[out["n_processes"] < 2, "spread"] = float("nan")
    out["env_repeated"] = out.groupby("env_id")["n_processes"].transform("max") > 1
    out["bound"] = side_bound(out)
    return ordered(out).reset_index(drop=True)
