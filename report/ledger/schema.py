"""The vocabulary of report/claims.yaml as frozen dataclasses, and its loader.

What a test kind needs besides the keys common to every test (its validation, its unit,
its comparison) lives in its entry of `report.ledger.kinds.KINDS`."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

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
    def ratio(self) -> bool:
        """Judged as a ratio of two modes, where a direction is implied by the figure."""
        from report.ledger.kinds import KINDS
        return KINDS[self.kind].ratio

    @property
    def larger(self) -> str:
        """What a larger figure is: more of the claimed effect or more cost (rules.EFFECT,
        rules.COST), as the test's kind says."""
        from report.ledger.kinds import larger_of
        return larger_of(self)

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


def test_problems(test: Any, testable: bool) -> list[str]:
    """What is wrong with a claim's `test` mapping (empty: usable)."""
    from report.ledger.kinds import KINDS
    if not isinstance(test, dict):
        return ["test is not a mapping"]
    kind = KINDS.get(test.get("kind"))
    if kind is None:
        return [f"test kind {test.get('kind')!r} is not one of {', '.join(KINDS)}"]
    unknown = sorted(set(test) - set(TEST_KEYS))
    if unknown:
        return [f"unexpected test keys {unknown}"]
    if kind.name == "none":
        return ["test kind none on a testable claim"] if testable else []
    problems = mode_problems(test, "mode")
    if kind.baseline:
        problems += mode_problems(test, "baseline")
    if kind.stated:
        problems += comparator_problems(test, kind.ratio)
    problems += kind.validate(test)
    if "tolerance" in test and not (number(test["tolerance"]) and test["tolerance"] >= 0):
        problems.append("tolerance is not a non-negative number")
    return problems


def claim_problems(raw: Any) -> list[str]:
    """What is wrong with one claim entry (empty: usable). Seed files are not read here:
    tests/test_claims_ledger.py checks the citations against the seeds."""
    if not isinstance(raw, dict):
        return ["not a mapping"]
    if set(raw) != set(CLAIM_KEYS):
        return [f"keys: missing {sorted(set(CLAIM_KEYS) - set(raw))}, "
                f"unexpected {sorted(set(raw) - set(CLAIM_KEYS))}"]
    problems = []
    if not isinstance(raw["id"], str) or not ID.match(raw["id"]):
        problems.append("id is not kebab-case")
    if not isinstance(raw["seed"], str) or not SEED.match(raw["seed"]):
        problems.append(f"seed {raw['seed']!r} is not a quoted 3-digit string or doc")
    if not isinstance(raw["line"], int) or isinstance(raw["line"], bool) or raw["line"] < 1:
        problems.append(f"line {raw['line']!r} is not a positive integer")
    for key in ("paraphrase", "figures", "missing"):
        if not isinstance(raw[key], str):
            problems.append(f"{key} is not a string")
    if isinstance(raw["paraphrase"], str) and len(raw["paraphrase"].split()) < 5:
        problems.append("paraphrase is not a sentence")
    if raw["metric"] not in METRICS:
        problems.append(f"metric {raw['metric']!r} is not one of {', '.join(METRICS)}")
    if not isinstance(raw["testable"], bool):
        problems.append("testable is not a boolean")
    elif raw["testable"] and raw["missing"]:
        problems.append("testable, yet names something missing")
    elif not raw["testable"] and not str(raw["missing"]).strip():
        problems.append("not testable, yet names nothing missing")
    problems += condition_problems(raw["conditions"])
    problems += test_problems(raw["test"], raw["testable"] is True)
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


def _claim(raw: dict) -> Claim:
    c, t = raw["conditions"], raw["test"]
    batch = c.get("batch")
    test = Test(**{k: v for k, v in t.items() if k != "kind"}, kind=t["kind"])
    return Claim(
        id=raw["id"], seed=raw["seed"], line=raw["line"], paraphrase=raw["paraphrase"],
        figures=raw["figures"], metric=raw["metric"], backend=c["backend"],
        training=c["training"], workloads=tuple(c.get("workloads") or ()),
        families=tuple(c.get("families") or ()),
        batch_range=(batch.get("at_least"), batch.get("at_most")) if batch else None,
        batch_text=(batch or {}).get("text", ""), note=c.get("note", ""), test=test,
        testable=raw["testable"], missing=raw["missing"])


def parse_ledger(data: Any, where: str = "claims.yaml") -> Ledger:
    """A Ledger from parsed YAML, or LedgerError naming the first bad entry in one line."""
    if not isinstance(data, dict) or not {"claims", "contradictions"} <= set(data) <= set(SEED_KEYS):
        raise LedgerError(f"{where}: the top level needs `claims` and `contradictions`, and "
                          "may have `seeds`")
    seeds = data.get("seeds") or {}
    if not isinstance(seeds, dict) or not all(
            isinstance(k, str) and SEED.match(k) and isinstance(v, str) for k, v in seeds.items()):
        raise LedgerError(f"{where}: seeds is not a mapping of quoted 3-digit seeds to text")
    claims, seen = [], set()
    for n, raw in enumerate(data["claims"] or [], start=1):
        name = raw.get("id", f"#{n}") if isinstance(raw, dict) else f"#{n}"
        problems = claim_problems(raw)
        if not problems and raw["id"] in seen:
            problems = ["id is used twice"]
        if problems:
            raise LedgerError(f"{where}: claim {name}: {'; '.join(problems)}")
        seen.add(raw["id"])
        claims.append(_claim(raw))
    contradictions = []
    for raw in data["contradictions"] or []:
        name = raw.get("id", "?") if isinstance(raw, dict) else "?"
        if not isinstance(raw, dict) or set(raw) != set(CONTRADICTION_KEYS):
            raise LedgerError(f"{where}: contradiction {name}: needs exactly "
                              f"{', '.join(CONTRADICTION_KEYS)}")
        unknown = [c for c in raw["claims"] if c not in seen]
        if unknown or len(set(raw["claims"])) < 2:
            raise LedgerError(f"{where}: contradiction {name}: names unknown claims {unknown}"
                              if unknown else f"{where}: contradiction {name}: names fewer "
                              "than two distinct claims")
        contradictions.append(Contradiction(raw["id"], raw["title"], tuple(raw["claims"]),
                                            raw["question"]))
    return Ledger(tuple(claims), tuple(contradictions), tuple(sorted(seeds.items())))


def load_ledger(path: Path = LEDGER) -> Ledger:
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    try:
        try:  # libyaml, where present, reads the ledger ten times faster
            data = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        except yaml.YAMLError:
            data = yaml.safe_load(text)  # fails again, in the words of the Python loader
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        at = f":{mark.line + 1}" if mark else ""
        raise LedgerError(f"{path.name}{at}: not valid YAML "
                          f"({getattr(error, 'problem', None) or error})") from None
    return parse_ledger(data, path.name)
