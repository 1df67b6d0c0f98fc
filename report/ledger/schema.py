"""The vocabulary of report/claims.yaml as frozen dataclasses, and the checks that hold
whatever a test's kind (modes, comparators, conditions).

What a test kind needs besides the keys common to every test (its validation, its unit,
its comparison) lives in its entry of `report.ledger.kinds.KINDS`, which reads this
vocabulary; report/ledger/loader.py checks claims.yaml against both and loads it."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.modes import MODES  # torch-free: the modes' names and traits
from report import analysis

LEDGER = Path(__file__).resolve().parents[1] / "claims.yaml"

CLAIM_KEYS = ("id", "seed", "line", "paraphrase", "figures", "metric", "conditions", "test",
              "testable", "missing")
METRICS = ("speedup", "per-launch-overhead", "kernels-per-call", "launches-per-call",
           "busy-fraction", "idle-time", "cold-compile-time", "warm-compile-time", "memory",
           "correctness", "recompiles", "warmup-calls", "mode-options")
BACKENDS = ("cuda", "cpu", "mps", "any")
# A stated point (`about`: within its tolerance, at least POINT_TOLERANCE), a lower bound
# (`at_least`, with `at_most`: a range), an upper bound (`below`) or "no change" (`within`).
COMPARATORS = ("about", "at_least", "below", "within")
POINT_TOLERANCE = 0.25  # a point holds within ±25%, or within the seed's own spread if wider
CONDITION_KEYS = ("backend", "training", "workloads", "families", "batch", "note")
TEST_KEYS = ("kind", "mode", "baseline", "metric", "field", "about", "at_least", "at_most",
             "below", "within", "value", "tolerance", "aggregate", "axis", "above",
             "reference", "fixed", "fixed_batch", "option", "launches")
CONTRADICTION_KEYS = ("id", "title", "claims", "question")
SEED_KEYS = ("claims", "contradictions", "seeds")
ID = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
DOC_SEED = "doc"  # PyTorch's own documentation of its modes (report/mode-options.yaml)
SEED = re.compile(r"^\d{3}$|^doc$")  # a seed document, or the documentation


class LedgerError(ValueError):
    """claims.yaml cannot be used; the message is one line naming the claim."""


# What a larger figure of a test's quantity is: more of the effect the claim states, or
# more of a cost (each kind in report/ledger/kinds says which).
EFFECT, COST = "effect", "cost"


@dataclass(frozen=True)
class Rule:
    """lo <= figure (or lo < figure) and figure < hi (or figure <= hi). A range or a
    point is judged by side (`banded`): a figure past it on the side where the effect is
    larger than stated (`exceeds_side`: 1 above, -1 below, 0 none: a cost) is exceeded,
    not failed."""

    lo: float | None = None
    hi: float | None = None
    lo_strict: bool = False
    hi_inclusive: bool = False
    stated: float | None = None  # the figure the claim states (a range: its low end)
    stated_hi: float | None = None  # a range: its high end
    comparator: str = ""  # about, at_least, below, within or range
    direction: str = ""  # "faster" / "slower": the direction a ratio implies, if any
    banded: bool = False  # a range or a point: the side of the band is the answer
    exceeds_side: int = 0  # where past the band the effect is larger than stated

    @property
    def range(self) -> bool:
        return self.banded

    def __call__(self, x: float | None) -> bool | None:
        if x is None or (isinstance(x, float) and math.isnan(x)):
            return None
        return self.side(x) == 0

    def side(self, x: float) -> int:
        """0 where the figure agrees, -1 below the lower bound, 1 above the upper one."""
        if self.lo is not None and not (x > self.lo if self.lo_strict else x >= self.lo):
            return -1
        if self.hi is not None and not (x <= self.hi if self.hi_inclusive else x < self.hi):
            return 1
        return 0


@dataclass(frozen=True)
class Test:
    kind: str
    mode: str | None = None
    baseline: str | None = None
    metric: str | None = None  # ratio-metric: the record column compared
    field: str | None = None  # absolute: the record field or derived figure
    about: float | None = None  # a stated point
    at_least: float | None = None
    at_most: float | None = None  # with at_least: the claim states a range
    below: float | None = None  # a comparator; for crossover, the side (see `side`)
    within: float | None = None
    value: float | None = None
    tolerance: float = 0.0
    aggregate: str | None = None
    axis: str | None = None
    above: float | None = None
    reference: str | None = None  # share-of-gain: the mode whose gain is the whole, or idle
    fixed: str | None = None  # fixed-vs-varying: the fixed-shape workload ...
    fixed_batch: int | None = None  # ... at the batch matching the varying one's work
    launches: int | None = None  # overhead-ratio: against the baseline's cost of this many launches
    option: str | None = None  # mode-option: the Inductor option the documentation names

    @property
    def range(self) -> bool:
        return self.at_least is not None and self.at_most is not None


@dataclass(frozen=True)
class Claim:
    id: str
    seed: str
    line: int
    paraphrase: str
    figures: str
    metric: str
    backend: str
    training: bool
    workloads: tuple[str, ...]
    families: tuple[str, ...]
    batch_range: tuple[int | None, int | None] | None  # inclusive (at_least, at_most)
    batch_text: str
    note: str
    test: Test
    testable: bool
    missing: str

    def judged_on(self, backend: str) -> bool:
        return self.backend in ("any", backend)


@dataclass(frozen=True)
class Contradiction:
    id: str
    title: str
    claims: tuple[str, ...]
    question: str


@dataclass(frozen=True)
class Ledger:
    claims: tuple[Claim, ...]
    contradictions: tuple[Contradiction, ...]
    seeds: tuple[tuple[str, str], ...] = ()  # (seed, what the document is), in order

    def claim(self, claim_id: str) -> Claim:
        return next(c for c in self.claims if c.id == claim_id)


def number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def mode_problems(test: dict, key: str) -> list[str]:
    if test.get(key) not in MODES:
        return [f"{key} {test.get(key)!r} is not one of {', '.join(MODES)}"]
    if key == "baseline" and test.get("baseline") == test.get("mode"):
        return ["baseline and mode are the same"]
    return []


def comparator_problems(test: dict, ratio: bool) -> list[str]:
    """One stated figure, each read as claims.yaml's header says."""
    stated = [k for k in COMPARATORS if k in test]
    problems = []
    if "at_most" in test and (stated != ["at_least"] or not number(test["at_most"]) or
                              not number(test["at_least"]) or
                              test["at_most"] <= test["at_least"]):
        problems.append("at_most goes only with a smaller at_least (a range)")
    if len(stated) != 1:
        return [*problems, f"needs exactly one of {', '.join(COMPARATORS)}, has {stated}"]
    if not number(test[stated[0]]):
        problems.append(f"{stated[0]} is not a number")
    elif stated[0] == "within" and not ratio and not number(test.get("value")):
        problems.append("`within` of one mode's figure needs a numeric `value`")
    elif stated[0] != "within" and "tolerance" not in test:
        problems.append("a stated figure needs a tolerance")
    elif stated[0] == "about" and not (number(test.get("tolerance")) and
                                       test["tolerance"] >= POINT_TOLERANCE):
        problems.append(f"a point (`about`) needs a tolerance of at least {POINT_TOLERANCE}")
    return problems


def condition_problems(conditions: Any) -> list[str]:
    if not isinstance(conditions, dict):
        return ["conditions is not a mapping"]
    problems = []
    if conditions.get("backend") not in BACKENDS:
        problems.append(f"backend {conditions.get('backend')!r} is not one of "
                        f"{', '.join(BACKENDS)}")
    if not isinstance(conditions.get("training"), bool):
        problems.append("conditions.training is not a boolean")
    for key in ("workloads", "families"):
        names = conditions.get(key, [])
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            problems.append(f"conditions.{key} is not a list of names")
    for name in conditions.get("workloads") or []:
        if isinstance(name, str) and name not in analysis.WORKLOAD_ORDER:
            problems.append(f"unknown workload {name!r} (not in bench/workloads/registry.py)")
    batch = conditions.get("batch")
    if batch is not None and not (isinstance(batch, dict) and batch and
                                  set(batch) <= {"at_least", "at_most", "text"} and
                                  all(isinstance(batch[k], int) for k in batch if k != "text")):
        problems.append("conditions.batch is not a mapping of at_least/at_most (integers) "
                        "and text")
    unknown = sorted(set(conditions) - set(CONDITION_KEYS))
    if unknown:
        problems.append(f"unexpected condition keys {unknown}")
    return problems
