"""The bundle pages render from: the records analysed once (`Data`)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pandas as pd

from report.analysis.derived import modes_traits
from report.analysis.environment import Environment, environments
from report.analysis.host import fit as fit_host_models
from report.analysis.host import with_columns as with_host_columns
from report.analysis.ordering import rows, workload_rank
from report.analysis.published import published, published_cases
from report.analysis.shown import (
    cases,
    fixed_seed,
    latest,
    paired_processes,
    paired_speedups,
    shown_round_ratios,
    with_paired,
)
from report.analysis.vocabulary import BACKENDS, DEFAULT_DTYPE, DTYPE, SHOWN_SHAPES


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
        self.superseded = len(fixed_seed(records)) - len(every)
        # The derived tables are copied once built: a copy gathers their columns into one
        # array per type, and pages select rows from them hundreds of times.
        self.shown = every[every["process_timing"] == "isolated"].copy()
        self.paired = paired_processes(every)
        self.ratios = shown_round_ratios(self.paired, records)
        self.paired_speedups = paired_speedups(self.ratios)
        self.isolated_cases = with_paired(cases(self.shown), self.paired_speedups)
        self.cases = published_cases(self.isolated_cases, self.shown, self.paired).copy()
        self.environments = environments(self.shown, self.cases, self.paired)
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
        # The host model (bench/host/model.py): its columns sit beside each modelled speedup.
        self.host_models = fit_host_models(records)
        self.published = with_host_columns(published(self.cases), self.host_models).copy()
        self.speedups = self.published  # every case against eager: the same table
        self._memo: dict[Any, Any] = {}

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
        """Every case at its workload's representative batch in DEFAULT_DTYPE, with its
        speedup over eager (`speedups` columns): the rows of each summary table."""
        table = self.speedups[self.speedups[DTYPE] == DEFAULT_DTYPE]
        wanted = table["workload"].map(self.representative_batch)
        same = (table["batch_size"] == wanted).fillna(False).astype(bool)
        return table[same | (table["batch_size"].isna() & wanted.isna())]


UNPROFILED = "not profiled"  # backends without a GPU busy fraction (CPU)
