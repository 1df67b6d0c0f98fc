"""Environments: each one's fields and a label no other environment shares."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Any

import pandas as pd

from bench.modes import MODES, not_separately
from report.analysis.vocabulary import BASELINE, ENV_FIELDS


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
    # Each mode without a record here that was left to its twin, which has records here,
    # with why in one line (bench/modes.py states which modes build the same kernels where).
    not_separately: tuple[tuple[str, str], ...] = ()

    def field(self, name: str) -> str:
        """A field's values, joined: one value in all but rare cases."""
        return ", ".join(dict(self.fields).get(name, ()))


def _text(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA:
        return "not recorded"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def environments(shown: pd.DataFrame, case_rows: pd.DataFrame,
                 paired: pd.DataFrame | None = None) -> dict[str, Environment]:
    """Each environment of `shown`, by env_id, with a label no other one shares. Its days
    span its paired processes (`paired`) too: the figures a page prints from them were
    measured on those days."""
    # One pass over the columns, each value as a Series yields it: a groupby reading every
    # field of every group was most of the load with ten thousand environments.
    seen: dict[str, list[set[str]]] = {}
    for env_id, *values in zip(shown["env_id"], *(shown[name] for name in ENV_FIELDS),
                               strict=True):
        sets = seen.get(env_id)
        if sets is None:
            sets = seen[env_id] = [set() for _ in ENV_FIELDS]
        for found, value in zip(sets, values, strict=True):
            found.add(_text(value))
    fields = {env_id: {name: tuple(sorted(found))
                       for name, found in zip(ENV_FIELDS, sets, strict=True)}
              for env_id, sets in seen.items()}
    dated = shown[["env_id", "started_at"]]
    if paired is not None and len(paired):
        dated = pd.concat([dated, paired.loc[paired["env_id"].isin(seen), ["env_id",
                                                                           "started_at"]]])
    days = dated.groupby("env_id")["started_at"].agg(["min", "max"])
    labels = _unique_labels(fields, {env_id: (str(first)[:10], str(last)[:10])
                                     for env_id, first, last in days.itertuples()})
    repeated = set(case_rows.loc[case_rows["n_processes"] > 1, "env_id"])
    if f"paired_{BASELINE}_processes" in case_rows:  # speedups from several paired processes
        repeated |= set(case_rows.loc[case_rows[f"paired_{BASELINE}_processes"] > 1, "env_id"])
    counts = shown["env_id"].value_counts()
    modes = shown.groupby("env_id")["mode"].agg(set)
    return {env_id: Environment(env_id, f["backend"][0], labels[env_id], tuple(f.items()),
                                int(counts[env_id]), env_id in repeated,
                                left_to_twins(modes[env_id], f["backend"][0]))
            for env_id, f in sorted(fields.items())}


def left_to_twins(measured: set[str], backend: str) -> tuple[tuple[str, str], ...]:
    """Each mode absent from `measured` whose twin on `backend` is measured, with why it is
    not measured apart from it; a mode measured, or with no twin there, is not named (an
    absent mode is otherwise plainly not measured)."""
    return tuple((name, not_separately(name, twin)) for name, mode in MODES.items()
                 if name not in measured and (twin := mode.twin_on(backend)) is not None
                 and twin.mode in measured)


def _device_text(fields: dict[str, tuple[str, ...]]) -> str:
    """What a reader recognises: the GPU type, or the CPU model with its core count."""
    if fields["backend"] == ("cpu",) and fields["cpu_count"] != ("not recorded",):
        return f"{', '.join(fields['cpu_model'])}, {'/'.join(fields['cpu_count'])} cores"
    return ", ".join(fields["device_name"])


def _unique_labels(fields_by_id: dict[str, dict[str, tuple[str, ...]]],
                   days: dict[str, tuple[str, str]]) -> dict[str, str]:
    """A name a reader picks an environment by: the device, the torch release, the host
    class (the machine name) and the days it was measured, 'NVIDIA H200 · torch 2.11.0 ·
    lent-h200 · 2026-11-23 to 2026-11-27'; the env_id only where two still read the same
    (the guide's chooser names environments the same way)."""
    labels = {}
    for env_id, f in fields_by_id.items():
        first, last = days[env_id]
        labels[env_id] = " · ".join((_device_text(f), f"torch {', '.join(f['torch'])}",
                                     ", ".join(f["machine"]),
                                     first if first == last else f"{first} to {last}"))
    clash = Counter(labels.values())
    return {env_id: f"{label} · {env_id}" if clash[label] > 1 else label
            for env_id, label in labels.items()}
