"""Records to one DataFrame: every record one row, read through bench.records, with a
cache of parsed rows and the rule that picks one record of a process measured twice."""

from __future__ import annotations

import dataclasses
import hashlib
import os
import pickle
import re
import sys
import time
import types
import typing
from pathlib import Path
from typing import Any

import pandas as pd

from bench import REPO
from bench.records import MalformedRecord, Record, read_records, read_results_file, results_files
from report.analysis.vocabulary import CASE, DEFAULT_DTYPE, DTYPE, RENAMED, ResultsError


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


# The schema version a record was written in, before bench.records upgraded it: what an
# older bench measured differently (a version 1 record's device-memory peak includes the
# library workspaces its first calls allocated) is told apart by it.
WRITTEN = "schema_written"
_VERSION = re.compile(rb'"schema_version"\s*:\s*(\d+)')


def _row(source: str, record: Record, written: int | None = None) -> dict[str, Any]:
    row: dict[str, Any] = {"source": source, WRITTEN: written}
    for field, name, column, _ in COLUMNS:
        value = getattr(record, field)
        row[column] = value if name is None or value is None else getattr(value, name)
    return row


def frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """One DataFrame from `_row` dicts, with integer columns kept integer (nullable)."""
    df = pd.DataFrame(rows, columns=list(dict.fromkeys(["source", WRITTEN,
                                                       *(c for _, _, c, _ in COLUMNS)])))
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
    for path in results_files(results_dir, recursive=True):
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
# In the checkout, as bench's caches are, wherever the command is run from.
ROWS_CACHE = REPO / ".cache" / "report-rows"
ROWS_CACHE_DAYS = 14  # an entry no build has read for this long is removed


def _parser_version() -> str:
    # The vocabulary holds the column renames: a change there changes the rows too.
    sources = [Path(sys.modules[name].__file__).read_bytes()
               for name in ("bench.records", "report.analysis.vocabulary", __name__)]
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
    rows = [_row(f"{path}:{n}", r, v) for n, r, v in _numbered(path, lambda m: warned.append(m))]
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
    """Records of `path` with their line numbers (blank lines keep their numbers) and the
    schema version each was written in (WRITTEN)."""
    lines = [(n, raw) for n, raw in enumerate(read_results_file(path).split(b"\n")[:-1], start=1)
             if raw.strip()]
    written = [int(found.group(1)) if (found := _VERSION.search(raw)) else None
               for _, raw in lines]
    return zip([n for n, _ in lines], list(read_records(path, warn=warn)), written, strict=True)


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
