"""The one order of workloads, modes and batches on every page, and rows as plain dicts."""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable
from typing import Any

import pandas as pd

from report.analysis.vocabulary import MODE_ORDER, WORKLOAD_ORDER


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
    # One conversion of the whole frame to Python objects (numpy's numbers become Python's
    # in it), then `_plain` per cell: selecting the columns one by one cost more than the
    # rest of a page for the small frames pages convert once per environment.
    if df.empty:
        return []
    columns = list(df.columns)
    return [dict(zip(columns, map(_plain, values), strict=True))
            for values in df.to_numpy(dtype=object)]


def by_env(df: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """`df` split by environment, in one pass."""
    return {} if df.empty else dict(iter(df.groupby("env_id", sort=False)))


_PER_FRAME: dict[tuple[int, Any], tuple[weakref.ref, Any]] = {}


def per_frame(df: pd.DataFrame, key: Any, compute: Callable[[pd.DataFrame], Any]) -> Any:
    """`compute(df)`, once per frame and `key` while the frame lives: what pages derive
    from a whole table once per environment (its parts, its modes, its choices) is then
    derived once. The tables are never changed in place once built (`Data`)."""
    entry = _PER_FRAME.get((id(df), key))
    if entry is None or entry[0]() is not df:
        entry = _PER_FRAME[(id(df), key)] = (weakref.ref(df), compute(df))
    return entry[1]


def forget() -> None:
    """Drop what `per_frame` keeps: the site build calls it after each page, so that what
    one page derived (a conversion of a whole table to dicts is large) is not kept for the
    next; a frame the next page asks about again is split again."""
    _PER_FRAME.clear()


def env_rows(df: pd.DataFrame, env_id: str) -> list[dict[str, Any]]:
    """`rows(of_env(df, env_id))`, from one conversion of the whole table: a page that walks
    every environment filters the dicts in Python, where a pandas selection of a small wide
    frame cost milliseconds each. The dicts are shared by every caller: read, never change."""
    return per_frame(df, "rows_by_env", _rows_by_env).get(env_id, [])


def _rows_by_env(df: pd.DataFrame) -> dict[str, list[dict[str, Any]]]:
    found: dict[str, list[dict[str, Any]]] = {}
    for row in rows(df):
        found.setdefault(row["env_id"], []).append(row)
    return found


def of_env(df: pd.DataFrame, env_id: str) -> pd.DataFrame:
    """The rows of `df` for one environment. Each frame is split by environment once and
    the parts are kept while it lives: pages ask every wide table once per environment,
    and a boolean mask over all its columns each time cost seconds per build."""
    part = per_frame(df, "by_env", by_env).get(env_id)
    # A shallow copy, so that a caller adding a column changes its own frame only.
    return df.iloc[0:0] if part is None else part.copy(deep=False)
