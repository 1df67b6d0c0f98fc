"""The claims ledger (report/claims.yaml) is well-formed data: every claim names a seed
and a line, a metric and a test from the shared vocabulary, and workloads that exist;
every contradiction names claims that exist. Where the seeds are checked out beside the
repository (../shared/seeds), the cited files and lines must exist there too."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
LEDGER = ROOT / "report" / "claims.yaml"
SEEDS = ROOT.parent / "shared" / "seeds"

CLAIM_KEYS = {"id", "seed", "line", "paraphrase", "figures", "metric", "conditions", "test",
              "testable", "missing"}
METRICS = {"speedup", "per-launch-overhead", "kernels-per-call", "launches-per-call",
           "busy-fraction", "cold-compile-time", "warm-compile-time", "memory", "correctness",
           "recompiles", "warmup-calls"}
BACKENDS = {"cuda", "cpu", "mps", "any"}
# `none` is the ledger's addition (see the comment block of claims.yaml): untestable only.
KINDS = {"speedup", "ratio-metric", "absolute", "compile-ratio", "break-even", "crossover",
         "correctness", "none"}
MODES = {"eager", "default", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune",
         "cuda-graph", "default-dynamic"}
RATIO_METRICS = {"device_kernels_per_call", "launches_per_call", "busy_fraction",
                 "peak_device_bytes"}  # peak_device_bytes: the ledger's addition
ABSOLUTE_FIELDS = {"cold_first_call_s", "warm_first_call_s", "busy_fraction",
                   "per_launch_overhead_s", "recompiles", "rel_error", "peak_device_bytes",
                   "warmup_calls_to_steady"}
COMPARATORS = ("at_least", "below", "within")
WORKLOADS = {
    "trivial-call", "launch-chain-10", "launch-chain-100", "launch-chain-1000",
    "matmul-128", "matmul-512", "matmul-softmax", "elementwise-chain", "entropy", "mlp",
    "conv2d-block", "vit16x6x384", "vit32x12x768", "vit32x18x1024",
    "train-vit16x6x384", "train-mlp", "dynamic-mlp", "matmul-sweep", "warmup-vit16x6x384",
}
FAMILIES = {"launch-overhead", "matmul", "matmul-softmax", "elementwise", "entropy", "mlp",
            "conv", "vit", "train", "dynamic", "matmul-sweep", "warmup"}
ID = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
SEED = re.compile(r"^\d{3}$")


def load(path: Path = LEDGER) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def seed_files() -> dict[str, Path] | None:
    """Seed number -> file, or None where the seeds are not checked out (CI)."""
    if not SEEDS.is_dir():
        return None
    return {p.name[:3]: p for p in sorted(SEEDS.glob("*.txt")) if SEED.match(p.name[:3])}


def claim_problems(claim: dict, seeds: dict[str, Path] | None) -> list[str]:
    """Everything wrong with one claim, as readable lines (empty: well-formed)."""
    if not isinstance(claim, dict):
        return [f"{claim!r}: not a mapping"]
    problems = []
    cid = claim.get("id", "?")

    def bad(text: str) -> None:
        problems.append(f"{cid}: {text}")

    if set(claim) != CLAIM_KEYS:
        missing, extra = CLAIM_KEYS - set(claim), set(claim) - CLAIM_KEYS
        bad(f"keys: missing {sorted(missing)}, unexpected {sorted(extra)}")
        return problems
    if not isinstance(cid, str) or not ID.match(cid):
        bad("id is not kebab-case")
    seed, line = claim["seed"], claim["line"]
    if not isinstance(seed, str) or not SEED.match(seed):
        bad(f"seed {seed!r} is not a quoted 3-digit string")
    elif seeds is not None:
        if seed not in seeds:
            bad(f"seed {seed} names no file in {SEEDS}")
        elif isinstance(line, int):
            lines = seeds[seed].read_text(encoding="utf-8").splitlines()
            if not 1 <= line <= len(lines):
                bad(f"line {line} is outside seed {seed} ({len(lines)} lines)")
            elif not lines[line - 1].strip():
                bad(f"line {line} of seed {seed} is blank")
    if not isinstance(line, int) or isinstance(line, bool) or line < 1:
        bad(f"line {line!r} is not a positive integer")
    for key in ("paraphrase", "figures", "missing"):
        if not isinstance(claim[key], str):
            bad(f"{key} is not a string")
    if isinstance(claim["paraphrase"], str) and len(claim["paraphrase"].split()) < 5:
        bad("paraphrase is not a sentence")
    if claim["metric"] not in METRICS:
        bad(f"metric {claim['metric']!r} not in the vocabulary")
    if not isinstance(claim["testable"], bool):
        bad("testable is not a boolean")
    elif claim["testable"] and claim["missing"]:
        bad("testable, yet names something missing")
    elif not claim["testable"] and not str(claim["missing"]).strip():
        bad("not testable, yet names nothing missing")
    problems += [f"{cid}: {p}" for p in condition_problems(claim["conditions"])]
    problems += [f"{cid}: {p}" for p in spec_problems(claim["test"], claim["testable"])]
    return problems


def condition_problems(conditions) -> list[str]:
    if not isinstance(conditions, dict):
        return ["conditions is not a mapping"]
    problems = []
    if conditions.get("backend") not in BACKENDS:
        problems.append(f"backend {conditions.get('backend')!r} not in {sorted(BACKENDS)}")
    if not isinstance(conditions.get("training"), bool):
        problems.append("conditions.training is not a boolean")
    for name in conditions.get("workloads") or []:
        if name not in WORKLOADS:
            problems.append(f"unknown workload {name!r}")
    for name in conditions.get("families") or []:
        if name not in FAMILIES:
            problems.append(f"unknown family {name!r}")
    unknown = set(conditions) - {"backend", "training", "workloads", "families", "batch", "note"}
    if unknown:
        problems.append(f"unexpected condition keys {sorted(unknown)}")
    return problems


def spec_problems(test, testable: bool) -> list[str]:
    if not isinstance(test, dict):
        return ["test is not a mapping"]
    kind = test.get("kind")
    if kind not in KINDS:
        return [f"test kind {kind!r} not in the vocabulary"]
    problems = []
    if kind == "none":
        if testable:
            problems.append("test kind none on a testable claim")
        return problems
    if test.get("mode") not in MODES:
        problems.append(f"mode {test.get('mode')!r} not in the vocabulary")
    if kind in ("speedup", "ratio-metric", "crossover"):
        if test.get("baseline") not in MODES:
            problems.append(f"baseline {test.get('baseline')!r} not in the vocabulary")
        elif test.get("baseline") == test.get("mode"):
            problems.append("baseline and mode are the same")
    if kind == "ratio-metric" and test.get("metric") not in RATIO_METRICS:
        problems.append(f"ratio metric {test.get('metric')!r} not in the vocabulary")
    if kind == "absolute" and test.get("field") not in ABSOLUTE_FIELDS:
        problems.append(f"absolute field {test.get('field')!r} not in the vocabulary")
    if kind == "crossover":
        if test.get("axis") not in ("batch", "n"):
            problems.append(f"crossover axis {test.get('axis')!r} is neither batch nor n")
        sides = [k for k in ("above", "below") if k in test]
        if len(sides) != 1 or not isinstance(test[sides[0]], (int, float)):
            problems.append("crossover needs exactly one numeric `above` or `below`")
    elif kind in ("speedup", "ratio-metric", "absolute", "compile-ratio", "break-even"):
        stated = [k for k in COMPARATORS if k in test]
        if len(stated) != 1:
            problems.append(f"needs exactly one of {COMPARATORS}, has {stated}")
        elif not isinstance(test[stated[0]], (int, float)) or isinstance(test[stated[0]], bool):
            problems.append(f"{stated[0]} is not a number")
        elif stated[0] == "within" and kind == "absolute" and "value" not in test:
            problems.append("absolute `within` needs a `value`")
        elif stated[0] != "within" and "tolerance" not in test:
            problems.append("a stated figure needs a tolerance")
        if "aggregate" in test and (kind != "speedup" or test["aggregate"] != "max"):
            problems.append("aggregate is `max`, on speedup tests only")
    if "tolerance" in test and not (isinstance(test["tolerance"], (int, float))
                                    and test["tolerance"] >= 0):
        problems.append("tolerance is not a non-negative number")
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
    assert set(LEDGER_DATA) == {"claims", "contradictions"}


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
