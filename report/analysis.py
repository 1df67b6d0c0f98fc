"""The analysis layer: every record in one DataFrame, and the table operations pages need.

Records are read through `bench.records`, the one definition of a record, and each
becomes one row with flattened columns: a section's fields keep their own names
(`median_s`, `cold_first_call_s`, `busy_fraction`, `machine`, `repeat`, `compiled`, ...),
so a field added to a record appears here as a column without any change. Two names
change: `ModeTraits.description` becomes `mode_description` (`description` is the
workload's) and `WarmupCurve.latencies_s` becomes `warmup_s`.

The layers, each a function of the one before:

- `load(results_dir)`: every record, one row each, with `source` ("file:line").
- `latest(records)`: what the site shows: seed shapes only, and of a process measured
  twice (same case, tag and repeat index) the newest record.
- `cases(latest)`: one row per case (env, workload, mode, batch, shapes). A case's
  processes are its records under tag `main` and `rerun-N` (v1 reruns were exactly
  that: the same case in another process) and every repeat of a v2 run. The published
  figure is the median of the per-process medians (`median_s`), with their minimum and
  maximum (`lo_s`, `hi_s`) and their number (`n_processes`).
  Records under any other tag are not processes of the case: `alone` and `busy` hold
  the concurrency check's subset, measured with one worker with the host's other GPUs
  idle and busy, and set against each other and against the case's processes by
  `concurrency`.
- `compare`, `fastest`, `spreads`, `crossovers`, `compile_summary`, `boundedness`,
  `concurrency`: derived tables, each documented where it is defined.

Nothing here lists modes or their traits: they come from the records' `mode_traits`
columns. Workloads follow the registry's order (`workload_rank`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.util
import math
import os
import pickle
import re
import socket
import sys
import time
import types
import typing
import weakref
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from bench.modes import MODES
from bench.records import Environment as RecordEnvironment
from bench.records import MalformedRecord, Record, read_records, read_results_file
from bench.stats import paired_speedup

BASELINE = "eager"  # the mode every "speedup" is measured against
EXTERNAL_FAMILY = "external"  # WorkloadInfo.family of a workload given as package.module:factory
MODEL_FAMILY = "model"  # WorkloadInfo.family of the real models (timm, transformers)
# Cases carry paired ratios against these two always, and against any other mode that a
# paired process timed beside them (claims compare max-autotune with reduce-overhead, say).
PAIRED_BASELINES = ("eager", "default")
SHOWN_SHAPES = "seed"  # "tiny" records are test-sized runs, counted and left out
BACKENDS = ("cuda", "cpu", "mps")  # every backend gets a tab, measured or not
PROCESS_TAGS = re.compile(r"^(main|rerun-\d+)$")  # records under these tags are processes of one case
ALONE_TAG = "alone"  # the concurrency check's subset, measured with one worker (`--gpus 1`)
BUSY_TAG = "busy"  # the same subset on the same GPU while another runner keeps the rest busy
CONCURRENT_SIDES = ("busy", "main")  # what `concurrency` sets against the alone side
# CaseKey.dtype (the precision the case ran in) becomes the column DTYPE: the workload
# section already has a `dtype`. Records from before it ran in DEFAULT_DTYPE.
DTYPE, DEFAULT_DTYPE = "case_dtype", "float32"
CASE = ["env_id", "workload", "mode", "batch_size", "shapes", DTYPE]
POINT = ["env_id", "workload", "batch_size", "shapes", DTYPE]  # a case without its mode
ENV_FIELDS = tuple(f.name for f in dataclasses.fields(RecordEnvironment))
RENAMED = {("key", "dtype"): DTYPE, ("mode_traits", "description"): "mode_description",
           ("warmup", "latencies_s"): "warmup_s",
           ("process", "timing"): "process_timing", ("host", "cpu_model"): "host_cpu_model"}
MEANINGFUL_GAIN = 0.05  # gains below this are not called wins
MOVED = 0.10  # a case whose process medians differ by more than this moved
UNSTABLE_IQR_RATIO = 0.10  # in-run IQR / median above this marks a process unstable
LAUNCH_BOUND, DEVICE_BOUND = 0.5, 0.8  # GPU busy-fraction bands of the overhead anatomy
NEVER = math.inf  # break-even when the mode is not faster than eager
# A speedup whose lowest and highest process pairing differ by more than this factor rests
# on a process that a quiet rerun would contradict (a loaded machine): it answers nothing.
OUTLIER_SPREAD = 10.0


def outlier(lo: float | None, hi: float | None) -> bool:
    """Whether a speedup's range says one of its processes was far off (OUTLIER_SPREAD)."""
    return (lo is not None and hi is not None and not (lo != lo or hi != hi) and lo > 0
            and hi / lo > OUTLIER_SPREAD)


def _registry() -> types.ModuleType | None:
    """bench/workloads/registry.py (standard library only), read from its file: importing
    `bench.workloads` would build every workload and import torch. None if there is none."""
    known = sys.modules.get("bench.workloads.registry")
    if known is not None:
        return known
    spec = importlib.util.find_spec("bench.workloads")
    path = Path(spec.submodule_search_locations[0]) / "registry.py" if spec else None
    if path is None or not path.exists():
        return None
    found = importlib.util.spec_from_file_location("report._workload_registry", path)
    module = importlib.util.module_from_spec(found)
    found.loader.exec_module(module)
    return module


_REGISTRY = _registry()
# The one sort key for workloads; without a registry, names sort alphabetically.
WORKLOAD_ORDER: tuple[str, ...] = tuple(_REGISTRY.ORDER) if _REGISTRY else ()
# The real models the registry holds: the model page lists them, measured or not.
MODEL_WORKLOADS: tuple[str, ...] = tuple(getattr(_REGISTRY, "MODELS", ()))
MODE_ORDER = tuple(MODES)  # bench/modes.py's order; only for sorting


class ResultsError(ValueError):
    """A results folder that cannot be read; the message is one line naming file:line."""


# ---- records -> one DataFrame ----------------------------------------------------------

def _is_section(hint: Any) -> type | None:
    options = typing.get_args(hint) if typing.get_origin(hint) in (typing.Union,
                                                                  types.UnionType) else (hint,)
    found = [o for o in options if dataclasses.is_dataclass(o)]
    return found[0] if found else None


def _columns() -> list[tuple[str, str | None, str, Any]]:
    """(record field, section field or None, column, type hint) for every column."""
    out, seen = [], {}
    for f in dataclasses.fields(Record):
        hint = typing.get_type_hints(Record)[f.name]
        section = _is_section(hint)
        fields = ([(g.name, typing.get_type_hints(section)[g.name])
                   for g in dataclasses.fields(section)] if section else [(None, hint)])
        for name, sub_hint in fields:
            column = RENAMED.get((f.name, name), name or f.name)
            if column in seen and column != "backend":  # key.backend == env.backend, validated
                raise TypeError(f"column {column!r} comes from {seen[column]} and {f.name}")
            seen[column] = f.name
            out.append((f.name, name, column, sub_hint))
    return out


COLUMNS = _columns()
_INTEGER = [c for _, _, c, h in COLUMNS if h is int or typing.get_args(h) == (int, type(None))]


def _row(source: str, record: Record) -> dict[str, Any]:
    row: dict[str, Any] = {"source": source}
    for field, name, column, _ in COLUMNS:
        value = getattr(record, field)
        row[column] = value if name is None or value is None else getattr(value, name)
    return row


def frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """One DataFrame from `_row` dicts, with integer columns kept integer (nullable)."""
    df = pd.DataFrame(rows, columns=list(dict.fromkeys(["source", *(c for _, _, c, _ in COLUMNS)])))
    for column in _INTEGER:
        df[column] = df[column].astype("Int64")
    df["started_at"] = pd.to_datetime(df["started_at"], utc=True, format="ISO8601")
    df["ok"] = df["status"] == "ok"
    df[DTYPE] = df[DTYPE].fillna(DEFAULT_DTYPE) if DTYPE in df else DEFAULT_DTYPE
    # Text as plain objects, in one block: pandas 3 gives every text column an array of its
    # own, and selecting rows then costs a call per column, which made filtering the
    # wide tables most of a rebuild.
    text = {c: object for c, kind in df.dtypes.items() if isinstance(kind, pd.StringDtype)}
    return df.astype(text).copy()


def load(results_dir: Path, warn=None) -> pd.DataFrame:
    """Every record under `results_dir` (searched recursively for *.jsonl), one row each,
    in file then line order. A missing folder is empty. A malformed line raises
    ResultsError naming `file:line`; a torn last line is skipped with a warning."""
    results_dir = Path(results_dir)
    rows: list[dict[str, Any]] = []
    if results_dir.exists() and not results_dir.is_dir():
        raise ResultsError(f"{results_dir}: not a directory")
    for path in sorted(results_dir.rglob("*.jsonl")) if results_dir.exists() else []:
        try:
            rows.extend(_file_rows(path, warn))
        except MalformedRecord as error:
            raise ResultsError(str(error)) from None
    return _warn_ties(frame(rows), warn)


def load_file(path: Path, warn=None) -> pd.DataFrame:
    """Every record of the one results file `path`, as `load` reads a folder."""
    try:
        found = _file_rows(Path(path), warn)
    except MalformedRecord as error:
        raise ResultsError(str(error)) from None
    return _warn_ties(frame(found), warn)


# Parsed rows of each results file, by content: validating every record was the largest
# fixed cost of a rebuild, and a committed results file rarely changes between builds.
ROWS_CACHE = Path(".cache/report-rows")
ROWS_CACHE_DAYS = 14  # an entry no build has read for this long is removed


def _parser_version() -> str:
    sources = [Path(sys.modules[name].__file__).read_bytes() for name in ("bench.records", __name__)]
    return hashlib.sha256(b"\0".join([sys.version.encode(), *sources])).hexdigest()[:16]


def _file_rows(path: Path, warn) -> list[dict[str, Any]]:
    """`_row` of every record of `path`, parsed once per content (a file with a torn
    last line is parsed every time, so that its warning is given every time)."""
    data = read_results_file(path)
    key = hashlib.sha256(data + _parser_version().encode()).hexdigest()[:32]
    cached = ROWS_CACHE / f"{key}.pickle"
    try:
        rows = pickle.loads(cached.read_bytes())
        os.utime(cached)  # read now: kept by the next prune
        return [{**row, "source": f"{path}:{row['source'].rsplit(':', 1)[1]}"} for row in rows]
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, KeyError, IndexError):
        pass
    warned = []
    rows = [_row(f"{path}:{n}", r) for n, r in _numbered(path, lambda m: warned.append(m))]
    for message in warned:
        (warn or _warn)(message)
    if not warned:
        try:
            ROWS_CACHE.mkdir(parents=True, exist_ok=True)
            partial = cached.with_suffix(f".{os.getpid()}.part")
            partial.write_bytes(pickle.dumps(rows, protocol=pickle.HIGHEST_PROTOCOL))
            partial.replace(cached)
            _prune_rows_cache()
        except OSError:
            pass  # a read-only checkout builds as well, only slower
    return rows


def _prune_rows_cache() -> None:
    """Remove what no build has read for ROWS_CACHE_DAYS: each change to a results file
    leaves its old content's entry behind."""
    stale = time.time() - ROWS_CACHE_DAYS * 86400
    for entry in ROWS_CACHE.glob("*.pickle"):
        try:
            if entry.stat().st_mtime < stale:
                entry.unlink()
        except OSError:
            pass  # another build removed it first


def _numbered(path: Path, warn):
    """Records of `path` with their line numbers (blank lines keep their numbers)."""
    numbers = [n for n, raw in enumerate(read_results_file(path).split(b"\n")[:-1], start=1)
               if raw.strip()]
    return zip(numbers, list(read_records(path, warn=warn)), strict=True)


# ---- ordering --------------------------------------------------------------------------

def workload_rank(name: str) -> tuple:
    """Registry order first; names it does not hold (external models) after, by name."""
    if name in WORKLOAD_ORDER:
        return (0, WORKLOAD_ORDER.index(name), "")
    return (1, 0, name)


def mode_rank(name: str) -> tuple:
    return (0, MODE_ORDER.index(name), "") if name in MODE_ORDER else (1, 0, name)


def ordered(df: pd.DataFrame, *after: str, batch_first: bool = False) -> pd.DataFrame:
    """Rows in page order: workload, mode, batch (unbatched first; with `batch_first`,
    batch before mode), then the `after` columns."""
    if df.empty:
        return df
    keys = pd.DataFrame({
        "_w": df["workload"].map(workload_rank).to_numpy(),
        "_m": df["mode"].map(mode_rank).to_numpy(),
        "_b": df["batch_size"].map(lambda b: (0, 0) if pd.isna(b) else (1, int(b))).to_numpy(),
        **{column: df[column].array for column in after}})
    by = ["_w", "_b", "_m"] if batch_first else ["_w", "_m", "_b"]
    # Sort the narrow keys and take the rows once: the frames are wide, and joining the
    # keys to them and dropping them again copied every column twice.
    return df.take(keys.sort_values([*by, *after], kind="stable").index)


def _plain(value: Any) -> Any:
    kind = type(value)
    if kind is float:
        return None if value != value else value
    if kind is str or kind is int or kind is bool:
        return value
    if value is None or value is pd.NA or value is pd.NaT or (isinstance(value, float)
                                                              and math.isnan(value)):
        return None
    return value.item() if hasattr(value, "item") and not isinstance(value, tuple | str) else value


def rows(df: pd.DataFrame) -> list[dict[str, Any]]:
    """Rows as plain dicts for templates: missing values are None, numbers are Python's."""
    # One object array for the whole frame: DataFrame.to_dict boxes every cell through
    # pandas, and taking a wide case table column by column cost more than the cells.
    if df.empty:
        return []
    columns = list(df.columns)
    return [dict(zip(columns, map(_plain, row), strict=True)) for row in df.to_numpy(dtype=object)]


def by_env(df: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """`df` split by environment, in one pass."""
    return {} if df.empty else dict(iter(df.groupby("env_id", sort=False)))


_BY_ENV: dict[int, tuple[weakref.ref, dict[str, pd.DataFrame]]] = {}


def of_env(df: pd.DataFrame, env_id: str) -> pd.DataFrame:
    """The rows of `df` for one environment. Each frame is split by environment once and
    the parts are kept while it lives: pages ask every wide table once per environment,
    and a boolean mask over all its columns each time cost seconds per build."""
    entry = _BY_ENV.get(id(df))
    if entry is None or entry[0]() is not df:
        entry = _BY_ENV[id(df)] = (weakref.ref(df), by_env(df))
    part = entry[1].get(env_id)
    # A shallow copy, so that a caller adding a column changes its own frame only.
    return df.iloc[0:0] if part is None else part.copy(deep=False)


# ---- what the site shows -----------------------------------------------------------------

def latest(records: pd.DataFrame) -> pd.DataFrame:
    """Seed-shape records, and of each process (case, tag, repeat index) the newest; ties
    on `started_at` go by TIE_RULE, whatever the files are called. Repeat indices beyond
    the newest run's `repeats` are dropped too: they belong to an older run of the case."""
    seed = records[records["shapes"] == SHOWN_SHAPES]
    key = [*CASE, "tag", "process_timing"]
    newest = _oldest_to_newest(seed).drop_duplicates(PROCESS, keep="last")
    planned = newest.groupby(key, dropna=False)["repeats"].transform("last")
    kept = newest[newest["repeat"] < planned]
    return kept.sort_index()


# One process of a case: at most one record is shown. An isolated and a paired process
# of one repeat are two processes.
PROCESS = [*CASE, "tag", "process_timing", "repeat"]
TIE_RULE = ("an ok record wins over a failed one, then the longer duration_s, then the one "
            "whose fingerprint (a hash of every figure in it) sorts last")


def _fingerprints(records: pd.DataFrame) -> pd.Series:
    """A hash of each record's content, file and line aside: the last resort of TIE_RULE."""
    content = records.drop(columns="source")
    return pd.Series([hashlib.sha256(repr(tuple(row)).encode()).hexdigest()
                      for row in content.itertuples(index=False)], index=records.index,
                     dtype=object)


def _oldest_to_newest(records: pd.DataFrame) -> pd.DataFrame:
    """`records` by `started_at`; records of one process started at the same time follow
    TIE_RULE, so the last of each process is the one shown."""
    tied = records.duplicated([*PROCESS, "started_at"], keep=False)
    order = records.assign(_fingerprint="")
    order.loc[tied, "_fingerprint"] = _fingerprints(records[tied])
    order = order.sort_values(["started_at", "ok", "duration_s", "_fingerprint"], kind="stable")
    return order.drop(columns="_fingerprint")


def _warn_ties(records: pd.DataFrame, warn=None) -> pd.DataFrame:
    """Warn of every process recorded twice with one `started_at` and different content,
    naming the record TIE_RULE keeps; `records` unchanged."""
    tied = records[records.duplicated([*PROCESS, "started_at"], keep=False)]
    if tied.empty:
        return records
    tied = _oldest_to_newest(tied).assign(_fingerprint=_fingerprints(tied))
    for _, group in tied.groupby(PROCESS, dropna=False, sort=False):
        for _, same_time in group.groupby("started_at", sort=False):
            if same_time["_fingerprint"].nunique() < 2:
                continue  # the same record twice (a copied file): nothing to choose
            kept = same_time.iloc[-1]
            others = ", ".join(same_time["source"].iloc[:-1])
            (warn or _warn)(f"{kept['source']} and {others} record one process "
                            f"({kept['workload']} {kept['mode']} batch {kept['batch_size']}, "
                            f"tag {kept['tag']}, repeat {kept['repeat']}) started at the same "
                            f"time, {kept['started_at'].isoformat()}, with different figures; "
                            f"showing {kept['source']}: {TIE_RULE}")
    return records


def _warn(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr)


def processes(shown: pd.DataFrame) -> pd.DataFrame:
    """The isolated records that are processes of a case: tags `main` and `rerun-N`."""
    return shown[shown["tag"].str.match(PROCESS_TAGS) & (shown["process_timing"] == "isolated")]


def paired_processes(shown: pd.DataFrame) -> pd.DataFrame:
    """The ok records of paired processes under the process tags (`main`, `rerun-N`)."""
    return shown[shown["tag"].str.match(PROCESS_TAGS) & (shown["process_timing"] == "paired")
                 & shown["ok"]]


def lease_of(df: pd.DataFrame) -> pd.Series:
    """Which lease of a machine a record ran on: its host name and boot id (records from
    before the host section say their machine name and None)."""
    host = df["hostname"].where(df["hostname"].notna(), df["machine"])
    return host.astype(str) + "/" + df["boot_id"].fillna("?").astype(str)


LATENCY = ["median_s", "lo_s", "hi_s", "n_processes"]
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
    per-op cost (bench/host.py), the process's own medians of the two (`base_s`, `mode_s`)
    and `saving_s`, the time per call the mode saves there: the baseline's median less
    that median over `ratio`, so that it is positive exactly where the ratio is above 1."""
    found = []
    paired = paired.assign(lease=lease_of(paired))
    for _, group in paired.groupby("group", sort=False):
        first = group.iloc[0]
        probe = first["op_s"]
        probe_us = float(pd.Series(probe).median() * 1e6) if probe else None
        times = dict(zip(group["mode"], group["round_s"], strict=True))
        medians = dict(zip(group["mode"], group["median_s"], strict=True))
        for baseline, base_s in times.items():
            for mode, mode_s in times.items():
                ratio = paired_speedup(base_s, mode_s)
                found.append({**{c: first[c] for c in POINT}, "backend": first["backend"],
                              "mode": mode, "baseline": baseline, "ratio": ratio,
                              "rounds": min(len(base_s), len(mode_s)), "lease": first["lease"],
                              "probe_us": probe_us, "group": first["group"],
                              "base_s": medians[baseline], "mode_s": medians[mode],
                              "saving_s": medians[baseline] * (1.0 - 1.0 / ratio)
                              if ratio else None})
    columns = [*POINT, "backend", "mode", "baseline", "ratio", "rounds", "lease", "probe_us", "group",
               "base_s", "mode_s", "saving_s"]
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
    time saved per call as `saving_s` (median), `saving_lo_s`/`saving_hi_s` (smallest and
    largest process), with the medians over processes of their own medians behind it
    (`latency_base_s`, `latency_s`)."""
    key = [*POINT, "mode", "baseline"]
    return ratios.groupby(key, dropna=False).agg(
        speedup=("ratio", "median"), speedup_lo=("ratio", "min"), speedup_hi=("ratio", "max"),
        processes=("ratio", "size"), leases=("lease", "nunique"), rounds=("rounds", "min"),
        host_probe_us=("probe_us", "median"), saving_s=("saving_s", "median"),
        saving_lo_s=("saving_s", "min"), saving_hi_s=("saving_s", "max"),
        latency_base_s=("base_s", "median"), latency_s=("mode_s", "median")).reset_index()


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
    `cold_first_call_s` is the median over processes whose compile caches were cold, and
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
    cold = (ok[ok["cache"] == "cold"].groupby(CASE, dropna=False)["cold_first_call_s"]
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


# ---- derived tables ----------------------------------------------------------------------

def _judge(ratio: pd.Series, at_least: float | None, below: float | None) -> pd.Series:
    answer = ratio >= at_least if at_least is not None else ratio < below
    return answer.where(ratio.notna())


def compare(cases: pd.DataFrame, mode: str, baseline: str = BASELINE, *,
            at_least: float | None = None, below: float | None = None) -> pd.DataFrame:
    """`mode` against `baseline` at every point (env, workload, batch) where either exists.

    `speedup` is baseline median / mode median (medians over processes; above 1 the
    mode is faster). `speedup_lo`/`speedup_hi` span every pairing of a baseline process
    with a mode process. With a threshold (`at_least`, or `below`; neither means
    "faster": at_least=1), `holds` is the answer of the medians and `settled` whether
    every pairing gives the same answer; `pairings` is how many there were (1: a single
    run on each side, settled by definition but resting on one draw; 0: the baseline
    against itself, exactly 1). Columns of the
    mode's case keep their names; the baseline's carry a `_base` suffix.

    Where paired processes timed both modes (`with_paired`), their figures replace those:
    `speedup` is the median over processes of each one's median round ratio, lo/hi the
    smallest and largest process, `pairings` the number of paired processes, and a
    comparison is `settled` only when every process, on every lease, gives the same answer
    and there are two or more. `paired` says which; `leases`, `rounds` and
    `host_probe_us` come with them. `bound` says whether the ratio carries to another
    host (`ratio_bound`).

    `saving_s` is the time the mode saves per call (baseline median - mode median;
    `saving_lo_s`/`saving_hi_s` over every pairing), with the two medians behind it as
    `latency_base_s` and `latency_s`. Where paired, all five come from the paired
    processes (`paired_speedups`), as the speedup does, so a mode faster than the
    baseline always saves time.
    """
    if at_least is None and below is None:
        at_least = 1.0
    this = cases[cases["mode"] == mode]
    base = cases[cases["mode"] == baseline]
    out = this.merge(base, on=POINT, how="outer", suffixes=("", "_base")).copy()
    out["mode"], out["baseline"] = mode, baseline
    timed = out["ok"].eq(True) & out["ok_base"].eq(True)
    out["speedup"] = (out["median_s_base"] / out["median_s"]).where(timed)
    out["speedup_lo"] = (out["lo_s_base"] / out["hi_s"]).where(timed)
    out["speedup_hi"] = (out["hi_s_base"] / out["lo_s"]).where(timed)
    out["pairings"] = (out["n_processes"] * out["n_processes_base"]).where(timed)
    out["latency_base_s"], out["latency_s"] = out["median_s_base"], out["median_s"]
    out["saving_s"] = (out["median_s_base"] - out["median_s"]).where(timed)
    out["saving_lo_s"] = (out["lo_s_base"] - out["hi_s"]).where(timed)
    out["saving_hi_s"] = (out["hi_s_base"] - out["lo_s"]).where(timed)
    prefix = f"paired_{baseline}_"
    paired = pd.Series(False, index=out.index)
    if f"{prefix}speedup" in out:
        paired = (timed & out[f"{prefix}speedup"].notna()).astype(bool)
        for name in ("speedup", "speedup_lo", "speedup_hi", *SAVING):
            out[name] = out[prefix + name].astype(float).where(paired, out[name])
        out["pairings"] = out[f"{prefix}processes"].astype(float).where(paired, out["pairings"])
        for name in ("leases", "rounds", "host_probe_us"):
            out[name] = out[prefix + name].where(paired)
    out["paired"] = paired
    if mode == baseline:  # the baseline against itself: exactly 1, no pairings to judge
        out.loc[timed, ["speedup", "speedup_lo", "speedup_hi", "pairings"]] = (1.0, 1.0, 1.0, 0)
        out.loc[timed, ["saving_s", "saving_lo_s", "saving_hi_s"]] = 0.0
        out["paired"] = False
    out["holds"] = _judge(out["speedup"], at_least, below)
    lo, hi = _judge(out["speedup_lo"], at_least, below), _judge(out["speedup_hi"], at_least, below)
    out["settled"] = (lo == hi).where(timed)
    out.loc[out["paired"] & (out["pairings"] < 2), "settled"] = False
    out["ratio_bound"] = (ratio_bound(out["bound"], out["bound_base"]) if "bound_base" in out
                          else None)
    out["env_repeated"] = out["env_repeated"].fillna(out["env_repeated_base"])
    return ordered(out).reset_index(drop=True)


def speedups(cases: pd.DataFrame, baseline: str = BASELINE) -> pd.DataFrame:
    """Every case with its speedup over `baseline` at the same point (`compare` columns)."""
    modes = list(cases["mode"].unique()) or [baseline]
    out = pd.concat([compare(cases, mode, baseline) for mode in modes], ignore_index=True)
    return ordered(out[out["ok"].notna()]).reset_index(drop=True)


def fastest(cases: pd.DataFrame, paired: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per point (env, workload, batch) with a timed mode: the fastest mode (lowest median
    over processes; ties broken by name), the runner-up where there is one (columns with
    a `_runner_up` suffix) and the lead (`margin`: runner-up median / fastest median - 1).
    `tie` is true where the lead is inside the spread: some pairing of their processes
    has the runner-up faster.

    Where paired processes timed every ok mode of a point against eager, modes rank by
    that paired speedup instead, and with `paired` (the `paired_speedups` table) the lead
    is the paired ratio of runner-up time over fastest time: `margin` is its median - 1,
    `tie` whether any process found the runner-up as fast or faster, `pairings` how many
    processes there were. `paired_rank` says which points ranked so."""
    timed = cases[cases["ok"]].copy()
    column = f"paired_{BASELINE}_speedup"
    by_paired = (timed.groupby(POINT, dropna=False)[column].transform(lambda s: s.notna().all())
                 if column in timed else pd.Series(False, index=timed.index))
    timed["paired_rank"] = by_paired.astype(bool)
    timed["rank_s"] = timed["median_s"].astype(float)
    if column in timed:
        timed["rank_s"] = (1.0 / timed[column].astype(float)).where(timed["paired_rank"],
                                                                     timed["rank_s"])
    timed = timed.sort_values(["rank_s", "mode"], kind="stable")
    ranked = timed.groupby(POINT, dropna=False, sort=False)
    best, second = ranked.nth(0), ranked.nth(1)
    out = best.merge(second, on=POINT, how="left", suffixes=("", "_runner_up"))
    out["margin"] = out["median_s_runner_up"] / out["median_s"] - 1.0
    out["tie"] = out["hi_s"] >= out["lo_s_runner_up"]
    out["pairings"] = out["n_processes"] * out["n_processes_runner_up"]
    if paired is not None and not paired.empty:
        lead = paired.rename(columns={"mode": "mode_lead", "baseline": "mode_runner_up_lead"})
        out = out.merge(lead[[*POINT, "mode_lead", "mode_runner_up_lead", "speedup", "speedup_lo",
                              "speedup_hi", "processes"]].rename(
                            columns={"speedup": "lead", "speedup_lo": "lead_lo",
                                     "speedup_hi": "lead_hi", "processes": "lead_processes"}),
                        left_on=[*POINT, "mode", "mode_runner_up"],
                        right_on=[*POINT, "mode_lead", "mode_runner_up_lead"], how="left")
        use = (out["paired_rank"].eq(True) & out["lead"].notna()).astype(bool)
        # Ranked by speedup over eager, the two can come out the other way round head to
        # head (inside a tie): the one that wins the direct pairing is the fastest, so that
        # no lead is below 0.
        flip = use & (out["lead"].astype(float) < 1.0)
        for column in best.columns.difference(POINT):
            if f"{column}_runner_up" in out:
                first, second_ = out[column].copy(), out[f"{column}_runner_up"].copy()
                # A flipped row takes the runner-up's value, which exists; keep the
                # fastest's dtype (a count read "3.0 processes" on the home page).
                out[column] = first.where(~flip, second_).astype(first.dtype)
                out[f"{column}_runner_up"] = second_.where(~flip, first)
        inverse = 1.0 / out[["lead", "lead_lo", "lead_hi"]].astype(float)
        out["lead"] = out["lead"].where(~flip, inverse["lead"])
        out["lead_lo"] = out["lead_lo"].where(~flip, inverse["lead_hi"])
        out["margin"] = (out["lead"].astype(float) - 1.0).where(use, out["margin"])
        out["tie"] = (out["lead_lo"].astype(float) <= 1.0).where(use, out["tie"])
        out["pairings"] = out["lead_processes"].astype(float).where(use, out["pairings"])
        out = out.drop(columns=["mode_lead", "mode_runner_up_lead", "lead", "lead_lo", "lead_hi",
                                "lead_processes"])
    return ordered(out).reset_index(drop=True)


TRANSFERS = 0.10  # a figure that moves less than this between leases carries over


def _lease_records(records: pd.DataFrame) -> pd.DataFrame:
    """Every ok seed-shape process record that says which host it ran on, with `lease`."""
    kept = records[(records["shapes"] == SHOWN_SHAPES) & records["ok"]
                   & records["tag"].str.match(PROCESS_TAGS) & records["hostname"].notna()]
    return kept.assign(lease=lease_of(kept))


def leases(records: pd.DataFrame) -> pd.DataFrame:
    """Per environment and lease: when it was first measured, its host name and boot,
    the median of its host-probe figures (`op_us`, `launch_us`) and its ordinal among
    the environment's leases (`number`, 1 first)."""
    kept = _lease_records(records)
    if kept.empty:
        return pd.DataFrame(columns=["env_id", "lease", "first_at", "hostname", "boot_id",
                                     "op_us", "launch_us", "number"])
    def median_us(values) -> float | None:
        flat = [v for tup in values if tup for v in tup]
        return float(pd.Series(flat).median() * 1e6) if flat else None

    out = kept.groupby(["env_id", "lease"]).agg(
        first_at=("started_at", "min"), hostname=("hostname", "first"), boot_id=("boot_id", "first"),
        op_us=("op_s", median_us), launch_us=("launch_s", median_us)).reset_index()
    out = out.sort_values(["env_id", "first_at"], kind="stable")
    out["number"] = out.groupby("env_id").cumcount() + 1
    return out.reset_index(drop=True)


def run_costs(records: pd.DataFrame) -> pd.DataFrame:
    """What measuring cost, per environment and profile: `runs` invocations of
    `python -m bench` (a run cut by --max-minutes and resumed counts each slice), the
    `isolated` and `paired` processes they recorded, and `minutes`, the sum over runs of
    first start to last finish. Machine start-up and copying files are not in the records,
    so not counted. Processes are counted by kind, not runs labelled by one: a paired-timing
    run cut off before its paired processes recorded isolated ones only."""
    kept = records[records["run_id"].notna() & (records["shapes"] == SHOWN_SHAPES)]
    if kept.empty:  # typed like a full table, so callers may use .dt on first_at
        return pd.DataFrame({"env_id": [], "profile": [], "runs": [], "isolated": [],
                             "paired": [], "minutes": [],
                             "first_at": pd.Series(dtype="datetime64[ns, UTC]")})
    is_paired = kept["process_timing"] == "paired"
    kept = kept.assign(
        finished_at=kept["started_at"] + pd.to_timedelta(kept["duration_s"].fillna(0), unit="s"),
        isolated=kept.groupby([*PROCESS, "started_at"], dropna=False).ngroup().where(~is_paired),
        paired=kept["group"].where(is_paired))
    spans = kept.groupby(["env_id", "run_id"]).agg(
        start=("started_at", "min"), end=("finished_at", "max"), profile=("profile", "first"),
        isolated=("isolated", "nunique"), paired=("paired", "nunique")).reset_index()
    spans["minutes"] = (spans["end"] - spans["start"]).dt.total_seconds() / 60
    out = spans.groupby(["env_id", "profile"]).agg(
        runs=("run_id", "nunique"), isolated=("isolated", "sum"), paired=("paired", "sum"),
        minutes=("minutes", "sum"), first_at=("start", "min")).reset_index()
    return out.sort_values(["env_id", "first_at"], kind="stable").reset_index(drop=True)


def across_leases(records: pd.DataFrame, bounds: pd.DataFrame) -> pd.DataFrame:
    """Cases measured on two or more leases of one environment (all records, not only the
    newest), one row per case and lease: the isolated median (`median_s`) and the paired
    speedup over eager (`speedup`, `speedup_lo`, `speedup_hi`, `processes`). Per case,
    `median_move` and `speedup_move` are (largest - smallest) / smallest across leases,
    and `median_transfers`/`speedup_transfers` whether that stays within TRANSFERS.
    `ratio_bound` comes from `bounds` (a `compare` against eager)."""
    kept = _lease_records(records)
    isolated = (kept[kept["process_timing"] == "isolated"].groupby([*CASE, "lease"], dropna=False)
                ["median_s"].median().reset_index())
    ratios = round_ratios(kept[kept["process_timing"] == "paired"].drop(columns="lease"))
    ratios = ratios[(ratios["baseline"] == BASELINE) & (ratios["mode"] != BASELINE)]
    paired = (ratios.groupby([*POINT, "mode", "lease"], dropna=False)
              .agg(speedup=("ratio", "median"), speedup_lo=("ratio", "min"),
                   speedup_hi=("ratio", "max"), processes=("ratio", "size")).reset_index())
    out = isolated.merge(paired, on=[*POINT, "mode", "lease"], how="outer")
    counts = out.groupby(CASE, dropna=False)["lease"].transform("nunique")
    out = out[counts >= 2].copy()
    if out.empty:
        return out.assign(median_move=[], speedup_move=[], median_transfers=[],
                          speedup_transfers=[], number=[], ratio_bound=[])
    for figure in ("median_s", "speedup"):
        name = figure.removesuffix("_s")
        grouped = out.groupby(CASE, dropna=False)[figure]
        # A figure measured on one lease only has nothing to move against: no move, rather
        # than a move of 0 that would count as carrying over.
        out[f"{name}_move"] = (grouped.transform("max") / grouped.transform("min") - 1.0
                               ).where(grouped.transform("count") >= 2)
        out[f"{name}_transfers"] = (out[f"{name}_move"] <= TRANSFERS).where(out[f"{name}_move"].notna())
    numbers = leases(records)[["env_id", "lease", "number", "op_us"]]
    out = out.merge(numbers, on=["env_id", "lease"], how="left")
    out = out.merge(bounds[[*POINT, "mode", "ratio_bound"]], on=[*POINT, "mode"], how="left")
    return ordered(out, "number").reset_index(drop=True)


def paired_against_isolated(shown_all: pd.DataFrame, bounds: pd.DataFrame) -> pd.DataFrame:
    """Per case and lease where both exist: the isolated process's median and the median
    of the paired processes' per-mode medians, `agreement` = paired / isolated - 1, with
    the case's side bound (`bound`: device, graph, host, mixed, cpu)."""
    kept = _lease_records(shown_all)
    key = [*CASE, "lease"]
    iso = kept[kept["process_timing"] == "isolated"].groupby(key, dropna=False)["median_s"].median()
    pair = kept[kept["process_timing"] == "paired"].groupby(key, dropna=False)["median_s"].median()
    out = pd.concat([iso.rename("isolated_s"), pair.rename("paired_s")], axis=1).dropna().reset_index()
    out["agreement"] = out["paired_s"] / out["isolated_s"] - 1.0
    out = out.merge(bounds[[*CASE, "bound"]], on=CASE, how="left")
    return ordered(out).reset_index(drop=True)


def spreads(cases: pd.DataFrame, paired: pd.DataFrame | None = None) -> pd.DataFrame:
    """Published cases (`published_cases`) resting on two or more processes, with `spread`
    = (max - min) / min of their process medians and `moved` where it exceeds MOVED. The
    processes are those the case publishes (`timing`); `paired` is not read (callers from
    before the published table pass it)."""
    out = cases[cases["n_processes"] >= 2].copy()
    out["moved"] = out["spread"] > MOVED
    return out


def _process_range(procs: pd.DataFrame, key: list[str]) -> pd.DataFrame:
    """Per `key`: the median of the process medians, their min and max, their number, the
    largest `workers` (cases the run measured at the same time), the largest `threads`
    (torch's thread count) and when the first process started (`first_at`)."""
    return procs.groupby(key, dropna=False).agg(
        median_s=("median_s", "median"), lo_s=("median_s", "min"), hi_s=("median_s", "max"),
        n_processes=("median_s", "size"), workers=("workers", "max"),
        threads=("torch_threads", "max"), first_at=("started_at", "min")).reset_index()


def ranges_overlap(lo_a: pd.Series, hi_a: pd.Series, lo_b: pd.Series, hi_b: pd.Series) -> pd.Series:
    """Whether two ranges [lo, hi] of process medians overlap; touching ends overlap. The one
    rule for "within the across-process spread" (compare.judge, concurrency)."""
    return (lo_b <= hi_a) & (lo_a <= hi_b)


def concurrency(shown: pd.DataFrame) -> pd.DataFrame:
    """The concurrency check: every case measured alone (tag ALONE_TAG, one worker, the
    host's other GPUs idle), against two concurrent sides in the same environment and
    profile: `busy`, the same subset under tag BUSY_TAG on the same GPU while a second
    runner kept the other GPUs busy (the check proper: one session, one host), and `main`,
    the case's own processes (`processes`) that the main run measured with more than one
    worker. Columns `median_s`, `lo_s`, `hi_s`, `n_processes`, `workers`, `threads` and
    `first_at` of each side carry the suffix `_alone`, `_busy` or `_main`; per concurrent
    side, `measured_<side>` says whether it exists, `ratio_<side>` is its median / alone's,
    and `overlap_<side>` whether the two ranges of process medians overlap (`ranges_overlap`):
    if they do, the difference is within the across-process spread. Alone records run with
    more than one worker are not alone and are left out."""
    ok = shown[shown["ok"]]
    key = [*CASE, "profile"]
    procs = processes(ok)
    sides = {"alone": ok[(ok["tag"] == ALONE_TAG) & (ok["workers"] == 1)],
             "busy": ok[ok["tag"] == BUSY_TAG], "main": procs[procs["workers"] > 1]}
    ranges = {name: _process_range(side, key).add_suffix(f"_{name}").rename(
        columns={f"{k}_{name}": k for k in key}) for name, side in sides.items()}
    out = ranges["alone"].merge(ranges["busy"], on=key, how="left").merge(
        ranges["main"], on=key, how="left")
    for side in CONCURRENT_SIDES:
        measured = out[f"n_processes_{side}"].notna()
        out[f"measured_{side}"] = measured
        out[f"ratio_{side}"] = out[f"median_s_{side}"] / out["median_s_alone"]
        overlap = ranges_overlap(out["lo_s_alone"], out["hi_s_alone"], out[f"lo_s_{side}"],
                                 out[f"hi_s_{side}"])
        out[f"overlap_{side}"] = overlap.astype(object).where(measured, None)
    return ordered(out).reset_index(drop=True)


def move_summary(spread_rows: pd.DataFrame) -> dict[str, Any] | None:
    """How many repeated cases moved, the median and largest move, and the median in-run
    IQR / median of the same cases, to set against it."""
    if spread_rows.empty:
        return None
    largest = spread_rows.sort_values("spread", kind="stable").iloc[-1]
    median_spread = float(spread_rows["spread"].median())
    in_run = spread_rows["iqr_ratio"].median()
    in_run = None if pd.isna(in_run) else float(in_run)
    return {"compared": len(spread_rows), "moved": int(spread_rows["moved"].sum()),
            "median_spread": median_spread, "median_in_run_iqr": in_run,
            "in_run_understates": in_run is not None and median_spread > 2 * in_run,
            "largest": rows(largest.to_frame().T)[0]}


def by_mode(spread_rows: pd.DataFrame) -> pd.DataFrame:
    """Per mode: how many repeated cases, the median and the largest move."""
    out = spread_rows.groupby("mode")["spread"].agg(cases="size", median="median",
                                                    largest="max").reset_index()
    return out.sort_values("mode", key=lambda s: s.map(mode_rank), kind="stable")


def boundedness(busy: pd.Series) -> pd.Series:
    """`bound_of` GPU busy fractions (a CUDA backend)."""
    return pd.Series([bound_of(b, "cuda") for b in busy], index=busy.index, dtype=object)


def break_even_calls(compile_s: np.ndarray, saving_s: np.ndarray) -> np.ndarray:
    """Calls after which compiling pays off: compile time / per-call saving, rounded up;
    NEVER where there is no saving, NaN where anything is missing (float arrays)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        calls = compile_s / np.where(saving_s > 0, saving_s, np.nan)
        # A whole quotient that floating point leaves a hair above (3.0000000000000004)
        # would otherwise cost one more call than it does.
        calls = np.ceil(calls * (1.0 - 1e-12))
    return np.where((saving_s <= 0) & ~np.isnan(compile_s), NEVER, calls)


def break_even(compile_s: pd.Series, saving_s: pd.Series) -> pd.Series:
    """`break_even_calls` of two columns, as a column."""
    def floats(column: pd.Series) -> np.ndarray:
        return pd.to_numeric(column, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    return pd.Series(break_even_calls(floats(compile_s), floats(saving_s)), index=compile_s.index)


def with_break_even(table: pd.DataFrame) -> pd.DataFrame:
    """`speedups` rows with the calls to break even with a cold and with a warm compile
    (`cold_calls`, `warm_calls`), over the time saved per call (`saving_s`)."""
    return table.assign(cold_calls=break_even(table["cold_first_call_s"], table["saving_s"]),
                        warm_calls=break_even(table["warm_first_call_s"], table["saving_s"]))


def graph_pairs(cases: pd.DataFrame) -> list[tuple[str, str]]:
    """What CUDA graphs add on top of the same code: the first compiled graph-replaying mode
    against the baseline, then each such mode against the mode whose traits differ from it
    only in not replaying graphs (from the records' mode traits)."""
    traits = {m: {k: t[k] for k in TRAITS} for m, t in modes_traits(cases).items()}
    graphed = [m for m, t in traits.items() if t["compiled"] and t["cuda_graphs"]]
    pairs = [(graphed[0], BASELINE)] if graphed and BASELINE in traits else []
    return pairs + [(mode, twin) for mode in graphed for twin, t in traits.items()
                    if t == {**traits[mode], "cuda_graphs": False}]


TRAITS = ("compiled", "cuda_graphs", "autotune", "dynamic")


def modes_traits(df: pd.DataFrame) -> dict[str, dict[str, Any]]:
    """Each mode seen, in page order, with its traits and description from its records."""
    if df.empty:
        return {}
    found = df.drop_duplicates("mode", keep="last").set_index("mode")
    return {m: {**{t: bool(found.at[m, t]) for t in TRAITS},
                "mode_description": found.at[m, "mode_description"]}
            for m in sorted(found.index, key=mode_rank)}


def mode_with(df: pd.DataFrame, **traits: bool) -> str | None:
    """The first mode (page order) whose traits are exactly `traits` (others false)."""
    want = {t: traits.get(t, False) for t in TRAITS}
    return next((m for m, t in modes_traits(df).items()
                 if {k: t[k] for k in TRAITS} == want), None)


def crossovers(cases: pd.DataFrame, pairs: list[tuple[str, str]]) -> pd.DataFrame:
    """For every batched case, each pair (mode, base) of `pairs` compared at its batch
    (`compare` rows), named in the column `pair` as "mode vs base"."""
    batched = cases[cases["batch_size"].notna()]
    found = [compare(batched, mode, base).assign(pair=f"{mode} vs {base}") for mode, base in pairs]
    return pd.concat(found or [compare(batched[:0], BASELINE).assign(pair=None)],
                     ignore_index=True)


# The launch-overhead microbenchmarks are found by name: launch-chain-N runs N tiny
# kernels back to back, trivial-call is one tiny op.
TRIVIAL = "trivial-call"
_CHAIN = re.compile(r"^launch-chain-(\d+)$")


def chains(workloads) -> list[str]:
    """The launch-chain-N workloads among `workloads`, shortest chain first."""
    return sorted((w for w in workloads if _CHAIN.match(w)),
                  key=lambda w: int(_CHAIN.match(w).group(1)))


def per_kernel(cases: pd.DataFrame) -> pd.DataFrame:
    """Cases of the launch chains with their timings divided by the chain length N
    (`chain`): the cost of one launch plus one tiny kernel, with its spread."""
    out = cases[cases["workload"].isin(chains(cases["workload"].unique()))].copy()
    out["chain"] = out["workload"].map(lambda w: int(_CHAIN.match(w).group(1)))
    for column in ("median_s", "lo_s", "hi_s"):
        out[column] = out[column] / out["chain"]
    out["per_kernel_s"] = out["median_s"].where(out["ok"])
    return out


def headline_per_kernel(cases: pd.DataFrame, env_id: str) -> dict[str, Any] | None:
    """The longest chain of `env_id` with per-kernel costs in eager and from a replayed
    graph without compilation: {n, workload, eager, graph, ratio}."""
    graph = mode_with(cases, cuda_graphs=True)
    table = per_kernel(of_env(cases, env_id))
    table = table[table["per_kernel_s"].notna()]
    for workload in reversed(chains(table["workload"].unique())):
        costs = table[table["workload"] == workload].set_index("mode")["per_kernel_s"]
        if BASELINE in costs and graph in costs:
            n = int(_CHAIN.match(workload).group(1))
            e, g = float(costs[BASELINE]), float(costs[graph])
            return {"n": n, "workload": workload, "eager": e, "graph": g, "ratio": e / g}
    return None


def compile_summary(cases: pd.DataFrame) -> pd.DataFrame:
    """Per env and mode, over cases with both a cold and a warm first call: their count,
    the median cold and warm first call, and cold / warm."""
    both = cases[cases["cold_first_call_s"].gt(0) & cases["warm_first_call_s"].gt(0)]
    out = both.groupby(["env_id", "mode"]).agg(
        cases=("mode", "size"), cold=("cold_first_call_s", "median"),
        warm=("warm_first_call_s", "median")).reset_index()
    out["ratio"] = out["cold"] / out["warm"]
    return out.sort_values("mode", key=lambda s: s.map(mode_rank), kind="stable")


def probe_value(probe) -> Any:
    """What a probe found, as one value: its outcome, else its figures (a v1 probe's single
    number was upgraded to the figure "value" and is shown as that number)."""
    if probe.outcome is not None:
        return probe.outcome
    if set(probe.figures) == {"value"}:
        value = probe.figures["value"]
        return int(value) if value.is_integer() else value
    return probe.figures or None


def probes(shown: pd.DataFrame) -> pd.DataFrame:
    """One row per probe result of every process: the record's columns plus `probe`,
    `summary` and `value` (`probe_value`)."""
    procs = processes(shown)
    found = [(index, p.name, p.summary, probe_value(p))
             for index, found in zip(procs.index, procs["probes"], strict=True) for p in found]
    table = pd.DataFrame(found, columns=["_index", "probe", "summary", "value"])
    out = procs.drop(columns=["probes"]).merge(table, left_index=True, right_on="_index")
    return ordered(out.drop(columns="_index"), "tag", "repeat")


# ---- the published figures --------------------------------------------------------------

# The one rule that decides which processes a case publishes. Paired processes time every
# mode in alternating rounds beside eager, so where they exist the speedup, the latency and
# its spread all come from them, and a row's latency and speedup rest on the same processes.
PUBLISHED_RULE = ("a case publishes the figures of its paired processes where one or more "
                  "paired processes timed it beside eager, else those of its isolated processes")
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
    (`latency_s`, `latency_lo_s`, `latency_hi_s`) and eager's at the point
    (`latency_base_s`); its speedup over eager with spread (`speedup`, `speedup_lo`,
    `speedup_hi`, from the same processes as the latency: paired round ratios, or ratios of
    isolated medians) and the time saved per call (`saving_s`); `bound` (`bound_of` the
    case) and `ratio_bound` (whether the speedup carries to another host); cold and warm
    compile times (`cold_compile_s`, `warm_compile_s`: the first call, for every mode that
    is not eager); `cold_calls`/`warm_calls`, the calls after which each is paid back;
    memory; `compiling`, whether the mode runs torch.compile (the hand-captured CUDA graph
    does not); and provenance (`timing`, `processes`, `leases`, `hosts`). The `compare`
    columns (`speedup_lo`, `pairings`, `settled`, `holds`, ...) come with it."""
    table = speedups(case_rows)
    out = table.assign(
        latency_s=table["median_s"], latency_lo_s=table["lo_s"], latency_hi_s=table["hi_s"],
        latency_base_s=table["median_s_base"],
        cold_compile_s=table["cold_first_call_s"].where(table["mode"] != BASELINE),
        warm_compile_s=table["warm_first_call_s"].where(table["mode"] != BASELINE),
        compiling=table["compiled"].fillna(False).astype(bool))
    # Paired, the speedup rests on the paired processes that timed the mode beside eager.
    out["processes"] = out["pairings"].where(
        out["paired"], out[["processes", "processes_base"]].min(axis=1)).fillna(0)
    out["processes"] = out["processes"].astype(int)
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


# ---- which mode, for a number of calls ----------------------------------------------------

# The calls per process the chooser, the guide and the pages answer for: a reader's number
# of calls rounds down to one of these, so every answer on the site is one of a few.
CALLS_STEPS = (100, 1_000, 10_000, 100_000, 1_000_000)
CALLS_ANSWERED = 100_000  # where a reader names no number: the quick answers, the guide's points
CHOICE = ("mode", "speedup", "speedup_lo", "speedup_hi", "cold_calls", "compiling",
          "cuda_graphs", "ratio_bound", "processes", "timing", "leases", "hosts")


def choose(table: pd.DataFrame, calls: float) -> pd.DataFrame:
    """Per point of a published table: the mode fastest once its cold compile is paid back
    within `calls` calls in one process (eager always is; a mode without a known compile
    time or slower than eager never is), ranked by its published speedup over eager.

    Columns: POINT, `backend`, the chosen mode's CHOICE figures, the runner-up's with the
    suffix `_runner_up` (None where only one mode qualifies), `margin` (chosen speedup /
    runner-up's - 1), `tie` (their speedup ranges overlap: the spread cannot tell them
    apart), `host_dependent` (the chosen ratio grows on a slower host), `calls`, and
    `not_paid`: the faster modes left out because they need more calls, each as
    (mode, speedup, cold_calls)."""
    ok = table[table["ok"].eq(True) & table["speedup"].notna()]
    paid = ok["cold_calls"].astype(float) <= calls
    eligible = ok[(ok["mode"] == BASELINE) | paid.fillna(False)].copy()
    eligible["_rank"] = eligible["mode"].map(mode_rank)
    eligible = eligible.sort_values(["speedup", "_rank"], ascending=[False, True], kind="stable")
    keep = [*POINT, "backend", *CHOICE]
    ranked = eligible[keep].groupby(POINT, dropna=False, sort=False)
    best, second = ranked.nth(0), ranked.nth(1)
    out = best.merge(second.drop(columns="backend"), on=POINT, how="left",
                     suffixes=("", "_runner_up"))
    out["margin"] = out["speedup"] / out["speedup_runner_up"] - 1.0
    out["tie"] = ranges_overlap(out["speedup_lo"], out["speedup_hi"], out["speedup_lo_runner_up"],
                                out["speedup_hi_runner_up"]).where(out["mode_runner_up"].notna(),
                                                                   False).astype(bool)
    out["host_dependent"] = out["ratio_bound"].eq("host-dependent")
    out["calls"] = calls
    faster = ok.merge(out[[*POINT, "speedup"]], on=POINT, suffixes=("", "_chosen"))
    faster = faster[faster["speedup"] > faster["speedup_chosen"]]
    left = {}
    for key, group in faster.groupby(POINT, dropna=False, sort=False):
        left[tuple(_plain(v) for v in key)] = [
            (m, float(sp), None if pd.isna(c) else float(c))
            for m, sp, c in zip(group["mode"], group["speedup"], group["cold_calls"], strict=True)]
    out["not_paid"] = [left.get(tuple(_plain(v) for v in key), [])
                       for key in zip(*(out[c] for c in POINT), strict=True)]
    return ordered(out).reset_index(drop=True)


def calls_step(calls: float) -> int:
    """The largest of CALLS_STEPS at or below `calls` (the smallest below it)."""
    return max([c for c in CALLS_STEPS if c <= calls] or [CALLS_STEPS[0]])


# ---- environments ------------------------------------------------------------------------

@dataclass(frozen=True)
class Environment:
    env_id: str
    backend: str
    label: str  # unique among the environments on the site
    # Every env field with each distinct value seen: fields outside the env_id identity
    # (git commit, TF32 flags) can differ between runs of one environment.
    fields: tuple[tuple[str, tuple[str, ...]], ...]
    record_count: int
    repeated: bool  # some case here rests on more than one process

    def field(self, name: str) -> str:
        """A field's values, joined: one value in all but rare cases."""
        return ", ".join(dict(self.fields).get(name, ()))


def _text(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA:
        return "not recorded"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def environments(shown: pd.DataFrame, case_rows: pd.DataFrame) -> dict[str, Environment]:
    """Each environment of `shown`, by env_id, with a label no other one shares."""
    fields = {env_id: {name: tuple(sorted({_text(v) for v in group[name]}))
                       for name in ENV_FIELDS}
              for env_id, group in shown.groupby("env_id")}
    labels = _unique_labels(fields)
    repeated = set(case_rows.loc[case_rows["n_processes"] > 1, "env_id"])
    if f"paired_{BASELINE}_processes" in case_rows:  # speedups from several paired processes
        repeated |= set(case_rows.loc[case_rows[f"paired_{BASELINE}_processes"] > 1, "env_id"])
    counts = shown["env_id"].value_counts()
    return {env_id: Environment(env_id, f["backend"][0], labels[env_id], tuple(f.items()),
                                int(counts[env_id]), env_id in repeated)
            for env_id, f in sorted(fields.items())}


def _device_text(fields: dict[str, tuple[str, ...]]) -> str:
    """What a reader recognises: the GPU type, or the CPU model with its core count."""
    if fields["backend"] == ("cpu",) and fields["cpu_count"] != ("not recorded",):
        return f"{', '.join(fields['cpu_model'])}, {'/'.join(fields['cpu_count'])} cores"
    return ", ".join(fields["device_name"])


def _unique_labels(fields_by_id: dict[str, dict[str, tuple[str, ...]]]) -> dict[str, str]:
    """'NVIDIA H100 80GB HBM3 · torch 2.11.0', 'AMD EPYC, 2 cores · torch 2.15.0 · this
    machine' (records measured where the site is built); only labels that clash grow the
    machine name, and then the env_id, so two environments never share a label."""
    def joined(fields, names):
        return " · ".join(("torch " if n == "torch" else "") + ", ".join(fields[n]) for n in names)

    labels = {env_id: " · ".join((_device_text(f), joined(f, ("torch",)), *(
        ("this machine",) if socket.gethostname() in f["machine"] else ())))
        for env_id, f in fields_by_id.items()}
    for extend in (lambda env_id, label: f"{label} · {joined(fields_by_id[env_id], ('machine',))}",
                   lambda env_id, label: f"{label} · {env_id}"):
        counts = Counter(labels.values())
        labels = {env_id: extend(env_id, label) if counts[label] > 1 else label
                  for env_id, label in labels.items()}
    return labels


# ---- the bundle pages render from ----------------------------------------------------------

class Data:
    """The records a site is rendered from, analysed once: `records` (every row), `shown`
    (`latest`), `cases`, `speedups` (every case against eager), `environments`, and the
    vocabularies pages iterate over."""

    def __init__(self, records: pd.DataFrame):
        self.records = records
        self.record_count = len(records)
        self.hidden_shapes = dict(sorted(Counter(
            records.loc[records["shapes"] != SHOWN_SHAPES, "shapes"]).items()))
        every = latest(records)
        self.superseded = int((records["shapes"] == SHOWN_SHAPES).sum()) - len(every)
        # The derived tables are copied once built: a copy gathers their columns into one
        # array per type, and pages select rows from them hundreds of times.
        self.shown = every[every["process_timing"] == "isolated"].copy()
        self.paired = paired_processes(every)
        self.ratios = shown_round_ratios(self.paired, records)
        self.paired_speedups = paired_speedups(self.ratios)
        self.isolated_cases = with_paired(cases(self.shown), self.paired_speedups)
        self.cases = published_cases(self.isolated_cases, self.shown, self.paired).copy()
        self.environments = environments(self.shown, self.cases)
        self.traits = modes_traits(self.shown)
        self.modes = list(self.traits)
        self.workloads = sorted(set(self.shown["workload"]), key=workload_rank)
        self.backends = sorted(set(BACKENDS) | {e.backend for e in self.environments.values()},
                               key=lambda b: (BACKENDS.index(b) if b in BACKENDS else len(BACKENDS), b))
        with_info = self.shown[self.shown["family"].notna()].sort_values("started_at", kind="stable")
        self._info = {w: row for w, row in zip(with_info["workload"], rows(with_info), strict=True)}
        self._batches = {w: sorted({None if pd.isna(b) else int(b) for b in group},
                                   key=lambda b: (0, 0) if b is None else (1, b))
                         for w, group in self.shown.groupby("workload")["batch_size"]}
        self.published = published(self.cases).copy()
        self.speedups = self.published  # every case against eager: the same table
        self._memo: dict[Any, Any] = {}

    def fastest(self) -> pd.DataFrame:
        """`fastest(self.cases)`, computed once: the home page, the guide and the concepts
        pages all read it."""
        return self.memo("fastest", lambda: fastest(self.cases, self.paired_speedups).copy())

    def evidence(self) -> dict:
        """The guide's evidence, computed once (each workload's page opens with its rows of
        `best`): `table` (the published table), `best` (`fastest` per point with a runner-up,
        eager's `class`, the speedups of the fastest and the runner-up and the fastest
        mode's `break_even`) and `spread` (`spreads`)."""
        return self.memo("evidence", lambda: _evidence(self))

    def memo(self, key: Any, compute):
        """`compute()` once per site build: what several pages derive from the same data
        (the judged claims, the guide's flows) is computed by the first that asks."""
        if key not in self._memo:
            self._memo[key] = compute()
        return self._memo[key]

    def envs(self, backend: str) -> list[Environment]:
        return sorted((e for e in self.environments.values() if e.backend == backend),
                      key=lambda e: e.label)

    def batches(self, workload: str) -> list[int | None]:
        return self._batches.get(workload, [])

    def batched(self, workload: str) -> bool:
        return self.batches(workload) != [None]

    def representative_batch(self, workload: str) -> int | None:
        """Batch 1 where measured, else the smallest: one batch per workload on summaries."""
        batches = self.batches(workload)
        return 1 if 1 in batches else (batches[0] if batches else None)

    def workload_info(self, workload: str) -> dict[str, Any] | None:
        """The newest record of `workload` that describes it (failed cases may not)."""
        return self._info.get(workload)

    def family(self, workload: str) -> str:
        info = self.workload_info(workload)
        return info["family"] if info else "other"

    def families(self) -> list[tuple[str, list[str]]]:
        """Families in the order of their first workload, each with its workloads."""
        found: dict[str, list[str]] = {}
        for workload in self.workloads:
            found.setdefault(self.family(workload), []).append(workload)
        return list(found.items())

    def representative(self) -> pd.DataFrame:
        """Every case at its workload's representative batch, with its speedup over eager
        (`speedups` columns): the rows of each summary table."""
        table = self.speedups
        wanted = table["workload"].map(self.representative_batch)
        same = (table["batch_size"] == wanted).fillna(False).astype(bool)
        return table[same | (table["batch_size"].isna() & wanted.isna())]


UNPROFILED = "not profiled"  # backends without a GPU busy fraction (CPU)


def _evidence(data: Data) -> dict:
    table = data.published
    eager = table[table["mode"] == BASELINE][[*POINT, "busy_fraction"]]
    best = data.fastest()
    best = best[best["mode_runner_up"].notna()].merge(eager, on=POINT, suffixes=("", "_eager"))
    best = best.assign(**{"class": boundedness(best["busy_fraction_eager"]).fillna(UNPROFILED)})
    # The fastest and the runner-up against eager, and the fastest mode's break-even.
    speedup = {tuple(r[c] for c in (*POINT, "mode")): r for r in rows(table)}
    for side, suffix in (("speedup", ""), ("runner_up_speedup", "_runner_up")):
        keys = zip(*(best[c] for c in POINT), best["mode" + suffix], strict=True)
        best[side + "_row"] = [speedup.get(tuple(None if pd.isna(v) else v for v in k))
                               for k in keys]
        best[side] = [r["speedup"] if r else None for r in best[side + "_row"]]
    best["compiles"] = best["mode"] != BASELINE
    best["break_even"] = [r["cold_calls"] if r else None for r in best["speedup_row"]]
    best["break_even"] = best["break_even"].astype(float)
    return {"table": table, "best": best, "spread": spreads(data.cases)}
