"""The claims ledger (report/claims.yaml) is well-formed data: every claim names a seed
and a line, a metric and a test from the shared vocabulary, and workloads that exist;
every contradiction names claims that exist. Where the seeds are checked out beside the
repository (../shared/seeds), the cited files and lines must exist there too."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from report import ledger

ROOT = Path(__file__).resolve().parents[1]
LEDGER = ROOT / "report" / "claims.yaml"
SEEDS = ROOT.parent / "shared" / "seeds"

# The vocabulary (metrics, test kinds, modes, fields) and the workload names are checked
# by report/ledger/, which judges the claims. Families are listed here: only the
# workload modules (which import torch) define them.
FAMILIES = {"launch-overhead", "matmul", "matmul-softmax", "elementwise", "entropy", "mlp",
            "conv", "vit", "train", "dynamic", "matmul-sweep", "warmup", "model"}
SEED = re.compile(r"^\d{3}$|^doc$")
# The sixth source, PyTorch's own documentation of its modes, kept as data in the repository.
DOCUMENTATION = ROOT / "report" / "mode-options.yaml"


def load(path: Path = LEDGER) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def seed_files() -> dict[str, Path] | None:
    """Seed number -> file, or None where the seeds are not checked out (CI)."""
    if not SEEDS.is_dir():
        return None
    found = {p.name[:3]: p for p in sorted(SEEDS.glob("*.txt")) if SEED.match(p.name[:3])}
    return {**found, "doc": DOCUMENTATION}


def claim_problems(claim: dict, seeds: dict[str, Path] | None) -> list[str]:
    """Everything wrong with one claim, as readable lines (empty: well-formed): the
    ledger's own validation, the seed citation, and the workload and family names."""
    if not isinstance(claim, dict):
        return [f"{claim!r}: not a mapping"]
    cid = claim.get("id", "?")
    problems = [f"{cid}: {p}" for p in ledger.claim_problems(claim)]
    if problems and not set(ledger.CLAIM_KEYS) <= set(claim):
        return problems
    seed, line = claim["seed"], claim["line"]
    if seeds is not None and isinstance(seed, str) and SEED.match(seed):
        if seed not in seeds:
            problems.append(f"{cid}: seed {seed} names no file in {SEEDS}")
        elif isinstance(line, int) and not isinstance(line, bool):
            lines = seeds[seed].read_text(encoding="utf-8").splitlines()
            if not 1 <= line <= len(lines):
                problems.append(f"{cid}: line {line} is outside seed {seed} ({len(lines)} lines)")
            elif not lines[line - 1].strip():
                problems.append(f"{cid}: line {line} of seed {seed} is blank")
    conditions = claim["conditions"] if isinstance(claim["conditions"], dict) else {}
    problems += [f"{cid}: unknown family {name!r}" for name in conditions.get("families") or []
                 if name not in FAMILIES]
    return problems


def contradiction_problems(item: dict, ids: set[str]) -> list[str]:
    if not isinstance(item, dict) or set(item) != {"id", "title", "claims", "question"}:
        return [f"{item!r}: needs exactly id, title, claims, question"]
    problems = []
    named = item["claims"]
    if not isinstance(named, list) or len(set(named)) < 2:
        problems.append(f"{item['id']}: names fewer than two distinct claims")
    else:
        problems += [f"{item['id']}: unknown claim {c!r}" for c in named if c not in ids]
    for key in ("title", "question"):
        if not isinstance(item[key], str) or not item[key].strip():
            problems.append(f"{item['id']}: empty {key}")
    return problems


LEDGER_DATA = load()
CLAIMS = LEDGER_DATA["claims"]
CONTRADICTIONS = LEDGER_DATA["contradictions"]


def test_top_level_keys():
    assert set(LEDGER_DATA) == {"claims", "contradictions", "seeds"}


def test_every_cited_seed_is_described():
    assert set(LEDGER_DATA["seeds"]) == {c["seed"] for c in CLAIMS}


def test_at_least_45_claims():
    assert len(CLAIMS) >= 45


def test_ids_are_unique():
    ids = [c["id"] for c in CLAIMS]
    assert len(ids) == len(set(ids)), sorted({i for i in ids if ids.count(i) > 1})


def test_every_claim_is_well_formed():
    seeds = seed_files()
    problems = [p for claim in CLAIMS for p in claim_problems(claim, seeds)]
    assert not problems, "\n".join(problems)


def test_every_seed_is_cited():
    """Each of the five seeds contributes claims; the ledger does not skip a document."""
    assert {c["seed"] for c in CLAIMS} >= {"000", "001", "002", "003", "004"}


@pytest.mark.skipif(not SEEDS.is_dir(), reason="the seeds are not checked out beside the repo")
def test_seed_folder_has_the_cited_files():
    assert set(seed_files()) >= {c["seed"] for c in CLAIMS}


def test_contradictions():
    ids = {c["id"] for c in CLAIMS}
    assert len(CONTRADICTIONS) >= 4
    contradiction_ids = [item["id"] for item in CONTRADICTIONS]
    assert len(contradiction_ids) == len(set(contradiction_ids))
    problems = [p for item in CONTRADICTIONS for p in contradiction_problems(item, ids)]
    assert not problems, "\n".join(problems)


# The checks above must be able to fail: each broken entry below is caught.

GOOD = next(c for c in CLAIMS if c["id"] == "vit-small-ro-36pct")


def broken(**changes) -> dict:
    claim = {**GOOD, "conditions": dict(GOOD["conditions"]), "test": dict(GOOD["test"])}
    for key, value in changes.items():
        section, _, sub = key.partition("__")
        if sub:
            if value is None:
                claim[section].pop(sub, None)
            else:
                claim[section][sub] = value
        elif value is None:
            claim.pop(section)
        else:
            claim[section] = value
    return claim


def test_the_reference_claim_is_good():
    assert claim_problems(GOOD, seed_files()) == []


@pytest.mark.parametrize("changes", [
    {"figures": None},  # a key missing
    {"seed": 1},  # YAML's unquoted 001 reads as the integer 1
    {"seed": "9999"},
    {"line": 0},
    {"metric": "throughput"},
    {"conditions__backend": "rocm"},
    {"conditions__workloads": ["vit-huge"]},
    {"conditions__families": ["transformers"]},
    {"test__kind": "vibes"},
    {"test__mode": "turbo"},
    {"test__baseline": "reduce-overhead"},  # same as the mode
    {"test__tolerance": None},  # a stated figure without a tolerance
    {"test__within": 0.05},  # two comparators
    {"testable": False},  # untestable with nothing named missing
    {"missing": "MPS hardware"},  # testable, yet something is missing
    {"id": "Not Kebab"},
    {"test__at_most": 1.2},  # a range whose top is below its bottom
    {"test__at_least": None, "test__below": 2.0, "test__at_most": 3.0},  # at_most alone
])
def test_a_broken_claim_is_caught(changes):
    assert claim_problems(broken(**changes), seed_files())


@pytest.mark.skipif(not SEEDS.is_dir(), reason="the seeds are not checked out beside the repo")
@pytest.mark.parametrize("changes", [{"seed": "007"}, {"line": 100_000}])
def test_a_wrong_citation_is_caught(changes):
    assert claim_problems(broken(**changes), seed_files())


def test_a_broken_contradiction_is_caught():
    ids = {c["id"] for c in CLAIMS}
    assert contradiction_problems({"id": "x", "title": "t", "question": "q",
                                   "claims": ["vit-small-ro-36pct"]}, ids)
    assert contradiction_problems({"id": "x", "title": "t", "question": "q",
                                   "claims": ["vit-small-ro-36pct", "no-such-claim"]}, ids)
    assert not contradiction_problems({"id": "x", "title": "t", "question": "q",
                                       "claims": ["vit-small-ro-36pct", "ro-beats-ma"]}, ids)
