"""Which records the site shows, and how to look them up.

Rules, each applied once here so that no page re-decides them:
- only `seed` shapes are shown; `tiny` records are counted and left out;
- records with the same case key in the same environment: the newest wins;
- environments (env_id) are never merged; each gets its own label;
- the `main` tag feeds every page; other tags only feed the stability page.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any

from report.load import Result
from report.schema import SECTIONS
from report.vocabulary import (
    BACKENDS,
    FAMILIES,
    MAIN_TAG,
    MODES,
    SHOWN_SHAPES,
    batch_key,
    natural_key,
    ordered,
)

ENV_FIELDS = tuple(SECTIONS["env"])


@dataclass(frozen=True)
class Environment:
    env_id: str
    backend: str
    label: str  # unique among the environments on the site
    # Every env field with each distinct value seen in its records: fields outside
    # the env_id identity (git commit, TF32 flags) can differ between runs.
    fields: tuple[tuple[str, tuple[str, ...]], ...]
    record_count: int

    def value(self, name: str) -> str:
        return ", ".join(dict(self.fields)[name])


def case_key(result: Result) -> tuple:
    return (result.env_id, result.backend, result.workload, result.mode, result.batch_size,
            result.shapes, result.tag)


def newest_per_case(results: list[Result]) -> tuple[list[Result], int]:
    """Keep the newest record of each case; ties go to the later file and line so
    the choice never depends on anything but the files. Returns (kept, dropped)."""
    newest: dict[tuple, Result] = {}
    for result in results:
        key = case_key(result)
        if key not in newest or result.started_at >= newest[key].started_at:
            newest[key] = result
    kept = sorted(newest.values(), key=_display_order)
    return kept, len(results) - len(kept)


def _display_order(result: Result) -> tuple:
    return (result.backend, result.env_id, natural_key(result.workload), result.mode,
            batch_key(result.batch_size), result.tag)


def _text(value: Any) -> str:
    if value is None:
        return "not recorded"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def environments(results: list[Result]) -> dict[str, Environment]:
    by_id: dict[str, list[Result]] = defaultdict(list)
    for result in results:
        by_id[result.env_id].append(result)
    draft = {}
    for env_id, group in by_id.items():
        fields = tuple(
            (name, tuple(sorted({_text(r.env[name]) for r in group})))
            for name in ENV_FIELDS
        )
        draft[env_id] = (group[0].backend, dict(fields), fields, len(group))
    labels = _unique_labels({env_id: d[1] for env_id, d in draft.items()})
    return {
        env_id: Environment(env_id, backend, labels[env_id], fields, count)
        for env_id, (backend, _, fields, count) in sorted(draft.items())
    }


def _unique_labels(fields_by_id: dict[str, dict[str, tuple[str, ...]]]) -> dict[str, str]:
    """'NVIDIA H100 80GB HBM3 · torch 2.11.0'; only labels that clash grow the machine
    name, and then the env_id, so two environments never share a label."""
    def joined(fields, names):
        return " · ".join(
            ("torch " if name == "torch" else "") + ", ".join(fields[name]) for name in names
        )

    labels = {env_id: joined(f, ("device_name", "torch")) for env_id, f in fields_by_id.items()}
    for extend in (lambda env_id, label: f"{label} · {joined(fields_by_id[env_id], ('machine',))}",
                   lambda env_id, label: f"{label} · {env_id}"):
        counts = Counter(labels.values())
        labels = {env_id: extend(env_id, label) if counts[label] > 1 else label
                  for env_id, label in labels.items()}
    return labels


def _newest_workload_info(results: list[Result]) -> dict[str, dict[str, Any]]:
    """Each workload's info from the newest record that carries it (failed cases may not)."""
    newest: dict[str, Result] = {}
    for r in results:
        if r.workload_info and (r.workload not in newest
                                or r.started_at >= newest[r.workload].started_at):
            newest[r.workload] = r
    return {name: r.workload_info for name, r in newest.items()}


class Dataset:
    """The records a site is rendered from, with the lookups pages need."""

    def __init__(self, results: list[Result]):
        self.record_count = len(results)
        shown = [r for r in results if r.shapes == SHOWN_SHAPES]
        self.hidden_shapes = dict(sorted(Counter(
            r.shapes for r in results if r.shapes != SHOWN_SHAPES).items()))
        self.latest, self.superseded = newest_per_case(shown)
        self.environments = environments(self.latest)
        self.main = [r for r in self.latest if r.tag == MAIN_TAG]
        self._by_case = {(r.env_id, r.workload, r.mode, r.batch_size): r for r in self.main}
        self.tags = ordered({r.tag for r in self.latest}, (MAIN_TAG,))
        self._info = _newest_workload_info(self.latest)

    # --- vocabularies, derived from the records -------------------------------

    @property
    def backends(self) -> list[str]:
        """Every known backend, measured or not, so a page can say 'not measured'."""
        return ordered(set(BACKENDS) | {e.backend for e in self.environments.values()}, BACKENDS)

    @property
    def modes(self) -> list[str]:
        return ordered(set(MODES) | {r.mode for r in self.latest}, MODES)

    @property
    def workloads(self) -> list[str]:
        names = {r.workload for r in self.latest}
        family_rank = {name: i for i, name in enumerate(
            ordered({self.family(n) for n in names}, FAMILIES))}
        return sorted(names, key=lambda n: (family_rank[self.family(n)], natural_key(n)))

    def envs(self, backend: str) -> list[Environment]:
        return sorted((e for e in self.environments.values() if e.backend == backend),
                      key=lambda e: e.label)

    def batches(self, workload: str) -> list[int | None]:
        return sorted({r.batch_size for r in self.latest if r.workload == workload},
                      key=batch_key)

    def representative_batch(self, workload: str) -> int | None:
        """Batch 1 where measured, else the smallest: one batch per workload on summaries."""
        batches = self.batches(workload)
        if 1 in batches:
            return 1
        return batches[0] if batches else None

    # --- per-workload facts ----------------------------------------------------

    def workload_info(self, workload: str) -> dict[str, Any] | None:
        return self._info.get(workload)

    def family(self, workload: str) -> str:
        info = self.workload_info(workload)
        return info["family"] if info else "other"

    # --- lookups ------------------------------------------------------------------

    def get(self, env_id: str, workload: str, mode: str, batch: int | None) -> Result | None:
        return self._by_case.get((env_id, workload, mode, batch))

    def repeats(self, env_id: str, workload: str, mode: str, batch: int | None) -> list[Result]:
        """The same case measured again on purpose, under tags other than `main`."""
        return [r for r in self.latest if r.tag != MAIN_TAG and r.env_id == env_id
                and (r.workload, r.mode, r.batch_size) == (workload, mode, batch)]

    def results(self, *, env_id: str | None = None, workload: str | None = None,
                mode: str | None = None, tag: str | None = MAIN_TAG) -> list[Result]:
        source = self.latest if tag is None else [r for r in self.latest if r.tag == tag]
        return [r for r in source
                if (env_id is None or r.env_id == env_id)
                and (workload is None or r.workload == workload)
                and (mode is None or r.mode == mode)]
