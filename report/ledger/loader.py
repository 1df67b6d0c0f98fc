"""claims.yaml read and checked: each claim against the schema's vocabulary and its test
against the kinds table; LedgerError names the first bad entry in one line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from report.ledger.kinds import KINDS
from report.ledger.schema import (
    CLAIM_KEYS,
    CONTRADICTION_KEYS,
    ID,
    LEDGER,
    METRICS,
    SEED,
    SEED_KEYS,
    TEST_KEYS,
    Claim,
    Contradiction,
    Ledger,
    LedgerError,
    Test,
    comparator_problems,
    condition_problems,
    mode_problems,
    number,
)


def test_problems(test: Any, testable: bool) -> list[str]:
    """What is wrong with a claim's `test` mapping (empty: usable)."""
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
