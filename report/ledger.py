"""The claims ledger judged against the records: one verdict per claim and environment.

`report/claims.yaml` holds the claims as data (its header comment defines the test
vocabulary); `load_ledger` reads and validates it, and `judge(ledger, data)` judges each
claim in every environment whose backend it is about (`any`: every environment).

How a verdict is reached
------------------------
A claim's test names a mode, usually a baseline, and the cases it is about (workloads or
families, training or inference, optionally a batch range). In one environment each
*point* (workload, batch) gives one comparison: a figure (a speedup, a ratio of two
modes' counters, a field of one mode, a share of a gain, an added compile time, calls to
break even) computed from the medians over processes, and the answer of the claim's rule
for it. Every combination of the sides' processes is judged too (for speedups, the range
analysis.compare gives: every pairing of processes, or the paired ratios where the
records were timed paired): a comparison is *settled* only where every combination gives
the same answer and no side rests on fewer than MIN_PROCESSES processes (issue 20: a
verdict on one process is never settled).

- **holds** / **fails**: every measured comparison is settled and agrees / disagrees.
- **exceeds**: a claim that states a range (`at_least` with `at_most`), every comparison
  settled and above the range: the effect is real and larger than claimed.
- **depends**: the settled comparisons disagree with each other. The condition is
  searched for, in this order: along each workload's size axis (batch, or n for a sweep),
  where the answer must flip once and in the same direction on every workload that flips;
  then along the work per call (FLOPs) over all points; then by family. Where none of
  these splits the answers cleanly, the condition is "holds in N of M cases".
- **unsettled**: the settled comparisons agree, but some comparison is not settled.
- **not testable here**: the ledger marks the claim untestable and names what is missing.
- **not measured**: no comparison the claim needs has records in this environment, or
  the quantity is one that no record carries yet (LATER_MEMORY).

Each judged verdict carries its region (`region_text`): per workload along its size axis,
where each answer holds, with the figures, the baseline's boundedness and the processes.

Derived figures (not record fields):
- `per_launch_overhead_s`: the least-squares slope of a mode's median latency against
  the chain length N of the launch-chain-N workloads: the cost one more launch adds.
- `warmup_calls_to_steady`: the compiling call plus the calls of the warm-up curve's
  initial transient (`steady_index`): a call is slow where it is more than STEADY_BAND
  slower than the median of the LEVEL_WINDOW calls after it, and the transient ends at
  the first of STEADY_RUN consecutive calls that are not slow, so later blips and level
  shifts do not count. Eager's figure is kept beside each mode's as the noise floor.
- `mean_kernel_s`: device-busy time per call / kernels per call.
- `idle_s_per_call`: median latency less device-busy time per call.
"""

from __future__ import annotations

import itertools
import math
import re
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from bench.modes import MODES  # torch-free: the modes' names and traits
from report import analysis, formatting

LEDGER = Path(__file__).with_name("claims.yaml")

HOLDS, EXCEEDS, FAILS, DEPENDS, UNSETTLED = "holds", "exceeds", "fails", "depends", "unsettled"
NOT_TESTABLE, NOT_MEASURED = "not testable here", "not measured"
VERDICTS = (HOLDS, EXCEEDS, FAILS, DEPENDS, UNSETTLED, NOT_TESTABLE, NOT_MEASURED)
DOES_NOT_APPLY = "—"  # a claim about another backend, in summary tables

STEADY_BAND = 0.10  # warm-up: a call within 10% of the level that follows it is steady
LEVEL_WINDOW = 20  # warm-up: a call's level is the median of the next 20 calls
STEADY_RUN = 5  # warm-up: steady from the first of 5 consecutive steady calls
MIN_PROCESSES = 2  # a comparison resting on fewer processes a side is never settled
MAX_COMBINATIONS = 4096  # beyond this, settledness is judged on the extreme combinations

# ---- the vocabulary of claims.yaml ------------------------------------------------------

CLAIM_KEYS = ("id", "seed", "line", "paraphrase", "figures", "metric", "conditions", "test",
              "testable", "missing")
METRICS = ("speedup", "per-launch-overhead", "kernels-per-call", "launches-per-call",
           "busy-fraction", "cold-compile-time", "warm-compile-time", "memory", "correctness",
           "recompiles", "warmup-calls")
BACKENDS = ("cuda", "cpu", "mps", "any")
KINDS = ("speedup", "ratio-metric", "absolute", "compile-ratio", "compile-extra", "break-even",
         "crossover", "share-of-gain", "fixed-vs-varying", "correctness", "none")
# Memory over the whole case, CUDA-graph capture included (case_*), and reserved memory
# during timing: not every record carries them; where none does, they are not measured.
LATER_MEMORY = ("case_peak_device_bytes", "case_peak_reserved_bytes", "peak_reserved_bytes")
RATIO_METRICS = ("device_kernels_per_call", "launches_per_call", "busy_fraction",
                 "peak_device_bytes", *LATER_MEMORY, "idle_s_per_call")
RECORD_FIELDS = ("cold_first_call_s", "warm_first_call_s", "busy_fraction", "recompiles",
                 "rel_error", "peak_device_bytes", *LATER_MEMORY)
DERIVED_FIELDS = ("per_launch_overhead_s", "warmup_calls_to_steady", "mean_kernel_s",
                  "idle_s_per_call")
ABSOLUTE_FIELDS = RECORD_FIELDS + DERIVED_FIELDS
COMPARATORS = ("at_least", "below", "within")  # and at_most, only beside at_least: a range
CONDITION_KEYS = ("backend", "training", "workloads", "families", "batch", "note")
TEST_KEYS = ("kind", "mode", "baseline", "metric", "field", "at_least", "at_most", "below",
             "within", "value", "tolerance", "aggregate", "axis", "above", "reference",
             "fixed", "fixed_batch")
IDLE = "idle"  # share-of-gain's reference: the baseline's idle time per call
CONTRADICTION_KEYS = ("id", "title", "claims", "question")
ID = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
SEED = re.compile(r"^\d{3}$")

# What the evidence for a figure is, as (page relative to docs/, anchor).
EVIDENCE_ANCHOR = {"speedup": "latency", "break-even": "compile-time",
                   "cold_first_call_s": "compile-time", "warm_first_call_s": "compile-time",
                   "compile-ratio": "compile-time", "recompiles":
                   "graph-breaks-recompiles-and-cuda-graph-skips", "correctness": "correctness",
                   "rel_error": "correctness", "warmup_calls_to_steady": ""}
LAUNCH_PAGE = ("analysis/launch-overhead.md", "cost-per-kernel")


class LedgerError(ValueError):
    """claims.yaml cannot be used; the message is one line naming the claim."""


@dataclass(frozen=True)
class Test:
    kind: str
    mode: str | None = None
    baseline: str | None = None
    metric: str | None = None  # ratio-metric: the record column compared
    field: str | None = None  # absolute: the record field or derived figure
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

    @property
    def ratio(self) -> bool:
        """Judged as a ratio of two modes, where a direction is implied by the figure."""
        return self.kind in ("speedup", "ratio-metric", "compile-ratio", "fixed-vs-varying")

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


# ---- loading and validation ----------------------------------------------------------------

def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def test_problems(test: Any, testable: bool) -> list[str]:
    """What is wrong with a claim's `test` mapping (empty: usable)."""
    if not isinstance(test, dict):
        return ["test is not a mapping"]
    kind = test.get("kind")
    if kind not in KINDS:
        return [f"test kind {kind!r} is not one of {', '.join(KINDS)}"]
    unknown = sorted(set(test) - set(TEST_KEYS))
    if unknown:
        return [f"unexpected test keys {unknown}"]
    if kind == "none":
        return ["test kind none on a testable claim"] if testable else []
    problems = []
    if test.get("mode") not in MODES:
        problems.append(f"mode {test.get('mode')!r} is not one of {', '.join(MODES)}")
    if kind in ("speedup", "ratio-metric", "crossover", "compile-ratio", "compile-extra",
                "share-of-gain"):
        if test.get("baseline") not in MODES:
            problems.append(f"baseline {test.get('baseline')!r} is not one of {', '.join(MODES)}")
        elif test.get("baseline") == test.get("mode"):
            problems.append("baseline and mode are the same")
    if kind == "ratio-metric" and test.get("metric") not in RATIO_METRICS:
        problems.append(f"ratio metric {test.get('metric')!r} is not one of "
                        f"{', '.join(RATIO_METRICS)}")
    if kind == "absolute" and test.get("field") not in ABSOLUTE_FIELDS:
        problems.append(f"absolute field {test.get('field')!r} is not one of "
                        f"{', '.join(ABSOLUTE_FIELDS)}")
    if kind == "share-of-gain" and test.get("reference") not in (*MODES, IDLE):
        problems.append(f"share-of-gain reference {test.get('reference')!r} is neither a "
                        f"mode nor {IDLE}")
    if kind == "fixed-vs-varying" and not (
            test.get("fixed") in analysis.WORKLOAD_ORDER and isinstance(test.get("fixed_batch"), int)):
        problems.append("fixed-vs-varying needs `fixed` (a workload) and `fixed_batch` (an integer)")
    if kind == "crossover":
        if test.get("axis") not in ("batch", "n"):
            problems.append(f"crossover axis {test.get('axis')!r} is neither batch nor n")
        sides = [k for k in ("above", "below") if k in test]
        if len(sides) != 1 or not _number(test[sides[0]]):
            problems.append("crossover needs exactly one numeric `above` or `below`")
    elif kind != "correctness":
        stated = [k for k in COMPARATORS if k in test]
        if "at_most" in test and (stated != ["at_least"] or not _number(test["at_most"]) or
                                  not _number(test["at_least"]) or
                                  test["at_most"] <= test["at_least"]):
            problems.append("at_most goes only with a smaller at_least (a range)")
        if len(stated) != 1:
            problems.append(f"needs exactly one of {', '.join(COMPARATORS)}, has {stated}")
        elif not _number(test[stated[0]]):
            problems.append(f"{stated[0]} is not a number")
        elif stated[0] == "within" and kind == "absolute" and not _number(test.get("value")):
            problems.append("absolute `within` needs a numeric `value`")
        elif stated[0] != "within" and "tolerance" not in test:
            problems.append("a stated figure needs a tolerance")
        if "aggregate" in test and (kind != "speedup" or test["aggregate"] != "max"):
            problems.append("aggregate is `max`, on speedup tests only")
    if "tolerance" in test and not (_number(test["tolerance"]) and test["tolerance"] >= 0):
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
        problems.append(f"seed {raw['seed']!r} is not a quoted 3-digit string")
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
    if not isinstance(data, dict) or not {"claims", "contradictions"} <= set(data) <= {
            "claims", "contradictions", "seeds"}:
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


# ---- rules ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Rule:
    """When one figure agrees with the claim: lo <= figure (or lo < figure) and
    figure < hi (or figure <= hi). The stated figure and the direction are kept for words.
    A range claim (`range`) that a figure passes above is exceeded, not failed."""

    lo: float | None = None
    hi: float | None = None
    lo_strict: bool = False
    hi_inclusive: bool = False
    stated: float | None = None  # the figure the claim states (a range: its low end)
    stated_hi: float | None = None  # a range: its high end
    comparator: str = ""  # at_least, below, within or range
    direction: str = ""  # "faster" / "slower": the direction a ratio implies, if any
    range: bool = False

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


def rule(test: Test) -> Rule:
    """The claims.yaml header's reading of at_least / at_most / below / within with
    tolerance and, for ratios, the direction."""
    t = test.tolerance or 0.0
    if test.within is not None:
        ref = test.value if test.kind == "absolute" else 1.0
        return Rule(lo=ref - test.within * ref, hi=ref + test.within * ref, hi_inclusive=True,
                    stated=ref, comparator="within")
    if test.at_least is not None:
        x = test.at_least
        lo, strict, direction = x * (1 - t), False, ""
        if test.ratio and x > 1 and lo <= 1:
            lo, strict, direction = 1.0, True, "faster" if test.kind == "speedup" else "above"
        if test.range:
            return Rule(lo=lo, lo_strict=strict, hi=test.at_most * (1 + t), hi_inclusive=True,
                        stated=x, stated_hi=test.at_most, comparator="range",
                        direction=direction, range=True)
        return Rule(lo=lo, lo_strict=strict, stated=x, comparator="at_least",
                    direction=direction)
    if test.below is not None:
        x = test.below
        hi, direction = x * (1 + t), ""
        if test.ratio and x <= 1 and hi > 1:
            hi, direction = 1.0, "slower" if test.kind == "speedup" else "below"
        return Rule(hi=hi, stated=x, comparator="below", direction=direction)
    return Rule(lo=1.0, lo_strict=True, hi=None)  # correctness and crossover judge otherwise


# ---- per-process values -------------------------------------------------------------------------

def steady_index(curve: tuple[float, ...] | list[float]) -> int | None:
    """Calls of the warm-up curve in its initial transient: the index of the first call
    that starts STEADY_RUN consecutive steady calls, where a call is steady unless it is
    slower than its level (the median of the LEVEL_WINDOW calls after it) by more than
    STEADY_BAND. Only the start counts: a blip or a shift of the level later in the
    curve (clocks, the host) is not warm-up, and a call faster than its level is not slow.
    None where the curve is too short to judge; the whole curve where it never settles."""
    if curve is None or len(curve) < LEVEL_WINDOW + STEADY_RUN:
        return None
    series = pd.Series(list(curve), dtype=float)
    # The median of calls i+1 .. i+LEVEL_WINDOW, for each call i that has them all.
    level = series[::-1].rolling(LEVEL_WINDOW).median()[::-1].shift(-1)
    slow = (series > (1 + STEADY_BAND) * level).to_numpy()
    judged = len(series) - LEVEL_WINDOW
    for i in range(judged - STEADY_RUN + 1):
        if not slow[i:i + STEADY_RUN].any():
            return i
    return len(series)


def warmup_calls(curve) -> float | None:
    """warmup_calls_to_steady: the compiling call plus the curve's calls before steady."""
    index = steady_index(curve)
    return None if index is None else float(1 + index)


PAIRED_CHECKS = ("rel_error", "passed")
# What a paired process measures as an isolated one does (bench/paired.py): its float64
# check, and the profiler's counts with the figures derived from them.
PAIRED_FIGURES = (*PAIRED_CHECKS, "device_kernels_per_call", "launches_per_call", "busy_fraction",
                  "mean_kernel_s", "idle_s_per_call")


def process_values(shown: pd.DataFrame, paired: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per case (analysis.CASE), the values of every ok process, as tuples: what makes a
    comparison settled or not. Isolated processes (`shown`) give every figure; paired ones
    (`paired`: analysis.paired_processes) give the figures they measure too (PAIRED_FIGURES).
    Columns end in `_v`; `cold_first_call_s_v` holds only
    processes whose compile caches were cold, as in analysis.cases. Derived per process:
    warm-up calls, mean kernel time (busy time / kernels) and idle time per call
    (median − busy time). A column no record carries (LATER_MEMORY in older records)
    gives empty tuples."""
    procs = analysis.processes(shown)
    procs = _with_kernel_figures(procs[procs["ok"]].copy())
    for column in LATER_MEMORY:
        if column not in procs.columns:
            procs[column] = None
    procs["warmup_calls_to_steady"] = procs["warmup_s"].map(
        lambda c: warmup_calls(c) if isinstance(c, (tuple, list)) else None)
    procs["cold_first_call_s"] = procs["cold_first_call_s"].where(procs["cache"] == "cold")
    columns = list(dict.fromkeys([
        "median_s", "warm_first_call_s", "rel_error", "passed", "recompiles",
        "peak_device_bytes", *RATIO_METRICS, "warmup_calls_to_steady", "mean_kernel_s",
        "cold_first_call_s"]))
    if procs.empty:
        return pd.DataFrame(columns=[*analysis.CASE, *(f"{c}_v" for c in columns)])

    def values(s: pd.Series) -> tuple:
        return tuple(v.item() if hasattr(v, "item") else v for v in s if not _missing(v))

    shared = [*analysis.CASE, *PAIRED_FIGURES]
    both = procs[shared] if paired is None or paired.empty else pd.concat(
        [procs[shared], _with_kernel_figures(paired.copy())[shared]])
    out = procs.groupby(analysis.CASE, dropna=False)[
        [c for c in columns if c not in PAIRED_FIGURES]].agg(values).join(
        both.groupby(analysis.CASE, dropna=False)[list(PAIRED_FIGURES)].agg(values),
        how="outer")[columns]
    # a case with paired processes alone has no other figure
    out = out.map(lambda v: v if isinstance(v, tuple) else ())
    return out.rename(columns=lambda c: f"{c}_v").reset_index()


def _with_kernel_figures(procs: pd.DataFrame) -> pd.DataFrame:
    """Per process: mean kernel time (busy time / kernels) and idle time per call (median
    − busy time), where the profiler measured the device."""
    busy = pd.to_numeric(procs["device_busy_s_per_call"], errors="coerce")
    kernels = pd.to_numeric(procs["device_kernels_per_call"], errors="coerce")
    procs["mean_kernel_s"] = (busy / kernels.where(kernels > 0)).astype(float)
    procs["idle_s_per_call"] = (procs["median_s"] - busy).astype(float)
    return procs


def _missing(value: Any) -> bool:
    return value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value))


def _float(value: Any) -> float | None:
    return None if _missing(value) else float(value)


def _median(values: tuple) -> float | None:
    clean = [float(v) for v in values if not _missing(v)]
    return float(statistics.median(clean)) if clean else None  # as pandas: (a + b) / 2


def _records(df: pd.DataFrame) -> list[dict[str, Any]]:
    """The rows of `df` as dicts of the values `iterrows` gives, without building a Series
    per row of a wide frame (judging the ledger walks a few thousand)."""
    columns = list(df.columns)
    return [dict(zip(columns, values, strict=True)) for values in df.to_numpy(dtype=object)]


# ---- comparisons --------------------------------------------------------------------------

@dataclass
class Comparison:
    """One point of a claim in one environment."""

    workload: str
    batch: int | None
    axis: str  # "batch" or "n": what `batch` measures
    family: str
    flops: float | None
    figure: float | None = None
    lo: float | None = None  # smallest and largest over the combinations of processes
    hi: float | None = None
    n: int = 0  # combinations judged (pairings of processes)
    processes: tuple[int, ...] = ()  # processes behind each side, mode first
    agrees: bool | None = None  # None: not measured
    settled: bool | None = None
    single: bool = False  # a side rests on one process: never settled
    paired: bool = False  # both modes timed in each of the processes (`processes` twice the same)
    side: int = 0  # 0 agrees; -1 below the rule's lower bound; 1 above its upper bound
    outcome: str = ""  # holds, fails or exceeds (a range passed above)
    busy: float | None = None  # the baseline's busy fraction (one-sided: the mode's)
    bound: str | None = None  # what bounds the ratio (analysis.ratio_bound), where known
    floor: float | None = None  # warm-up: eager's figure at the same point, the noise floor
    field_absent: bool = False  # both cases ran, but their records lack the quantity
    note: str = ""  # why not measured, or what it rests on
    unsettled_because: str = ""  # an aggregate's: what else could still change its answer
    evidence: tuple[str, str] = ("", "")  # (page, anchor)


def _combine(sides: list[tuple], f) -> tuple[list[float], int]:
    """f over every combination of one value per side (the extremes only, past
    MAX_COMBINATIONS, which suffices for the monotone figures used here)."""
    count = math.prod(len(s) for s in sides)
    if count > MAX_COMBINATIONS:
        sides = [tuple({min(s), max(s)}) for s in sides]
    return [f(*combo) for combo in itertools.product(*sides)], count


def _judged(comparison: Comparison, values: list[float], agrees) -> None:
    """The comparison's answer, the range over its combinations of processes, and whether
    it is settled: every combination gives the same answer (for a range claim, the same
    side of the range), and no side rests on a single process."""
    values = [v for v in values if not _missing(v)]
    comparison.lo = min(values) if values else None
    comparison.hi = max(values) if values else None
    comparison.agrees = agrees(comparison.figure)
    if comparison.agrees is None:
        return
    if isinstance(agrees, Rule):
        comparison.side = agrees.side(comparison.figure)
        if agrees.range:
            comparison.settled = {agrees.side(v) for v in values} <= {comparison.side}
        else:
            comparison.settled = {agrees(v) for v in values} <= {comparison.agrees}
    else:
        comparison.side = 0 if comparison.agrees else -1
        comparison.settled = {agrees(v) for v in values} <= {comparison.agrees}
    comparison.single = bool(comparison.processes) and min(comparison.processes) < MIN_PROCESSES
    if comparison.single:
        comparison.settled = False
    comparison.outcome = (HOLDS if comparison.agrees else EXCEEDS if (
        isinstance(agrees, Rule) and agrees.range and comparison.side == 1) else FAILS)


@dataclass
class Judgement:
    """A claim in one environment."""

    env_id: str | None
    label: str  # the environment, or a backend without any environment
    backend: str
    verdict: str
    comparisons: list[Comparison] = field(default_factory=list)
    condition: str = ""  # depends: where it flips; unsettled: which comparisons
    short: str = ""  # a short form of the condition for summary tables
    figure: float | None = None  # the key figure (single-figure tests) ...
    lo: float | None = None
    hi: float | None = None
    n: int = 0
    figure_range: tuple[float, float] | None = None  # ... or the range over comparisons
    unit: str = ""
    crossing: int | None = None  # crossover: the size where the mode's answer changes
    region: str = ""  # where each answer holds: workload, batch, figures, boundedness, processes
    direction: str = ""  # a ratio claim: on how many points the ratio goes the claimed way
    size: str = ""  # ... and how many fall within, above or below the stated size
    reason: str = ""  # not measured / not testable: what is missing
    evidence: list[tuple[str, str, str]] = field(default_factory=list)  # (text, page, anchor)

    @property
    def measured(self) -> list[Comparison]:
        return [c for c in self.comparisons if c.agrees is not None]


def unit_of(test: Test) -> str:
    """How a test's figure reads: ratio, seconds, fraction, count, bytes, calls, pass."""
    if test.kind in ("speedup", "ratio-metric", "compile-ratio", "crossover", "fixed-vs-varying"):
        return "ratio"
    if test.kind == "share-of-gain":
        return "fraction"
    if test.kind == "compile-extra":
        return "seconds"
    if test.kind == "break-even" or test.field == "warmup_calls_to_steady":
        return "calls"
    if test.kind == "correctness":
        return "pass"
    if test.field in ("peak_device_bytes", *LATER_MEMORY):
        return "bytes"
    return {"cold_first_call_s": "seconds", "warm_first_call_s": "seconds",
            "per_launch_overhead_s": "seconds", "mean_kernel_s": "seconds",
            "idle_s_per_call": "seconds", "busy_fraction": "fraction",
            "rel_error": "number"}.get(test.field, "count")


def figure_text(value: float | None, unit: str) -> str:
    """One figure in its unit, or "not measured"."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return formatting.NOT_MEASURED
    if unit == "ratio":
        return f"{formatting.sig(value)}×"
    if unit == "seconds":
        return formatting.seconds(value)
    if unit == "fraction":
        return formatting.percent(value)
    if unit == "bytes":
        return formatting.binary_bytes(value)
    if unit == "calls":
        count = formatting.calls(value)
        return count if math.isinf(value) else f"{count} {'call' if value == 1 else 'calls'}"
    if unit == "pass":
        return "pass" if value else "fail"
    return formatting.number(value)


def span_text(lo: float, hi: float, unit: str) -> str:
    """"1.7–3.0×", or one figure where lo and hi read the same."""
    a, b = figure_text(lo, unit), figure_text(hi, unit)
    if a == b:
        return a
    if lo < 0:  # a dash would read as a minus sign
        return f"{a} to {b}"
    if unit == "ratio":
        return f"{formatting.sig(lo)}–{b}"
    if unit == "calls":
        return f"{a} to never" if math.isinf(hi) else f"{formatting.calls(lo)}–{b}"
    return f"{a}–{b}"


KEPT = ("ok", "status", "median_s", "lo_s", "hi_s", "n_processes", "env_repeated", "flops",
        "cold_first_call_s", *RATIO_METRICS)


def _point_keys(frame: pd.DataFrame) -> list[tuple]:
    """analysis.POINT of each row, hashable and with every missing value as None."""
    return [tuple(None if _missing(v) else v for v in row)
            for row in frame[analysis.POINT].to_numpy(dtype=object)]


class Judge:
    """Judges claims against one analysed Data (report.analysis.Data)."""

    def __init__(self, data: analysis.Data):
        self.data = data
        self.cases = data.cases
        self.values = process_values(data.shown, data.paired)
        self._pairs: dict[tuple[str, str], dict[str, pd.DataFrame]] = {}
        # Only the columns judging reads: compare() merges whole rows, and narrow rows
        # keep a full ledger to a second or so.
        paired = [c for c in self.cases.columns if c.startswith("paired_")]  # compare() uses them
        keep = [c for c in dict.fromkeys([*analysis.CASE, *KEPT, "bound", *paired])
                if c in self.cases.columns]
        narrow = self.cases[keep]
        self.with_values = (narrow.merge(self.values, on=analysis.CASE, how="left")
                            if not narrow.empty else narrow)
        # Split once: hundreds of claim-by-environment lookups each filtered the whole table.
        self._by_env = analysis.by_env(self.with_values)

    @classmethod
    def of(cls, data: analysis.Data) -> Judge:
        """The one Judge of a site build: the claims pages and the home page judge against
        the same data, and its per-process values take seconds to gather."""
        return data.memo(cls, lambda: cls(data))

    # -- scope ------------------------------------------------------------------------------
    def workloads(self, claim: Claim) -> list[str]:
        """The measured workloads a claim is about, in registry order."""
        out = []
        for w in self.data.workloads:
            info = self.data.workload_info(w) or {}
            if not (w in claim.workloads or self.data.family(w) in claim.families):
                continue
            if bool(info.get("training") or False) != claim.training:
                continue
            out.append(w)
        return out

    def points(self, claim: Claim, env_id: str) -> pd.DataFrame:
        """Cases of `env_id` in the claim's scope (every mode)."""
        c = self._by_env.get(env_id)
        if c is None:
            return self.with_values.iloc[:0]
        here = c[c["workload"].isin(self.workloads(claim))]
        if claim.batch_range:
            lo, hi = claim.batch_range
            b = here["batch_size"]
            keep = b.isna() | ((b >= (lo or 0)) & (b <= (hi if hi is not None else math.inf)))
            here = here[keep]
        return here

    def pairs(self, here: pd.DataFrame, mode: str, baseline: str) -> pd.DataFrame:
        """analysis.compare of `mode` and `baseline` at the points of `here`; computed once
        per pair of modes over every environment, since many claims share them (compare
        works row by row, so one environment's rows are what it would give alone)."""
        key = (mode, baseline)
        if key not in self._pairs:
            self._pairs[key] = {env_id: (rows, _point_keys(rows)) for env_id, rows in
                                analysis.by_env(analysis.compare(self.with_values, mode,
                                                               baseline)).items()}
        found = self._pairs[key].get(here["env_id"].iloc[0])
        if found is None:
            return here.iloc[:0]
        rows, keys = found
        wanted = set(_point_keys(here))
        return rows[[k in wanted for k in keys]]

    def _comparison(self, row: pd.Series, anchor_key: str) -> Comparison:
        workload = row["workload"]
        info = self.data.workload_info(workload) or {}
        batch = None if _missing(row["batch_size"]) else int(row["batch_size"])
        flops = row.get("flops")
        anchor = EVIDENCE_ANCHOR.get(anchor_key, "memory-and-device-activity")
        return Comparison(workload=workload, batch=batch, axis=info.get("axis") or "batch",
                          family=self.data.family(workload),
                          flops=None if _missing(flops) else float(flops),
                          evidence=(f"workloads/{workload}.md", anchor))

    # -- per-point tests -----------------------------------------------------------------------
    def _two_sided(self, here: pd.DataFrame, test: Test, column: str, agrees) -> list[Comparison]:
        """mode against baseline per point; `column` is median_s (speedup: baseline / mode)
        or a counter (ratio-metric: mode / baseline)."""
        pairs = self.pairs(here, test.mode, test.baseline)
        speedup = column == "median_s"
        out = []
        for row in _records(pairs):
            comparison = self._comparison(row, "speedup" if speedup else column)
            sides = self._sides(row, test, column, comparison)
            if sides is None:
                out.append(comparison)
                continue
            mine, base = sides
            comparison.busy = _float(row.get("busy_fraction_base"))
            ratio_bound = row.get("ratio_bound")
            comparison.bound = ratio_bound if isinstance(ratio_bound, str) else None
            if speedup:
                # compare()'s figure and range: the extremes over every pairing of
                # processes, or the paired ratios where the records were timed paired.
                comparison.figure = float(row["speedup"])
                values = [float(row["speedup_lo"]), float(row["speedup_hi"])]
                comparison.n = int(row["pairings"]) if not _missing(row.get("pairings")) else 0
                if row.get("paired") is True:  # both modes timed in each of n processes
                    comparison.processes = (comparison.n, comparison.n)
                    comparison.paired = True
            else:
                m, b = _median(mine), _median(base)
                if not b:
                    comparison.note = f"{test.baseline} has {column} 0"
                    out.append(comparison)
                    continue
                comparison.figure = m / b
                values, comparison.n = _combine(
                    [mine, base], lambda x, y: x / y if y else math.nan)
            _judged(comparison, values, agrees)
            out.append(comparison)
        return out

    def _one_sided(self, here: pd.DataFrame, test: Test, column: str, agrees) -> list[Comparison]:
        out = []
        for row in _records(here[here["mode"] == test.mode]):
            comparison = self._comparison(row, column)
            mine = row.get(f"{column}_v")
            mine = mine if isinstance(mine, tuple) else ()
            comparison.processes = (len(mine),)
            if not row["ok"] or not mine:
                comparison.note = (f"{test.mode}: {row['status']}" if not row["ok"]
                                   else f"no {column} in the records")
                comparison.field_absent = bool(row["ok"])
                out.append(comparison)
                continue
            comparison.busy = _float(row.get("busy_fraction"))
            if column == "warmup_calls_to_steady" and test.mode != analysis.BASELINE:
                comparison.floor = self._floor(here, row, column)
            if column == "passed":
                comparison.figure = float(all(mine))
                values, comparison.n = [float(v) for v in mine], len(mine)
            else:
                comparison.figure = _median(mine)
                values, comparison.n = [float(v) for v in mine], len(mine)
            _judged(comparison, values, agrees)
            out.append(comparison)
        return out

    def _break_even(self, here: pd.DataFrame, test: Test, agrees) -> list[Comparison]:
        pairs = self.pairs(here, test.mode, analysis.BASELINE)
        out = []
        for row in _records(pairs):
            comparison = self._comparison(row, "break-even")
            cold = row.get("cold_first_call_s_v")
            mine, base = row.get("median_s_v"), row.get("median_s_v_base")
            sides = [s if isinstance(s, tuple) else () for s in (cold, base, mine)]
            comparison.processes = (len(sides[2]), len(sides[1]))
            if not (row["ok"] is True and row["ok_base"] is True) or not all(sides):
                comparison.note = (_why_missing(row, test, "median_s") if not
                                   (row["ok"] is True and row["ok_base"] is True)
                                   else "no cold compile time")
                out.append(comparison)
                continue

            def calls(c, saving):
                return float(analysis.break_even(pd.Series([c]), pd.Series([saving])).iloc[0])

            comparison.busy = _float(row.get("busy_fraction_base"))
            comparison.figure = calls(_median(sides[0]), row["saving_s"])
            if row.get("paired") is True:  # saved per call as timed side by side, per process
                n = int(row["pairings"])
                comparison.processes, comparison.paired = (n, n), True
                savings = (float(row["saving_lo_s"]), float(row["saving_hi_s"]))
                values, comparison.n = _combine([sides[0], savings], calls)
            else:
                values, comparison.n = _combine(sides, lambda c, e, m: calls(c, e - m))
            _judged(comparison, values, agrees)
            out.append(comparison)
        return out

    def _floor(self, here: pd.DataFrame, row: pd.Series, column: str) -> float | None:
        """Eager's figure at the point of `row`: what the metric reads with nothing to warm."""
        same = here[(here["mode"] == analysis.BASELINE) & (here["workload"] == row["workload"])]
        values = [v for found in same[f"{column}_v"] if isinstance(found, tuple) for v in found]
        return _median(tuple(values))

    def _sides(self, row: pd.Series, test: Test, column: str, comparison: Comparison
               ) -> tuple[tuple, tuple] | None:
        """The mode's and the baseline's per-process values of `column` at `row`, or None
        (with the comparison's note saying why)."""
        mine, base = row.get(f"{column}_v"), row.get(f"{column}_v_base")
        mine = mine if isinstance(mine, tuple) else ()
        base = base if isinstance(base, tuple) else ()
        comparison.processes = (len(mine), len(base))
        if not (row["ok"] is True and row["ok_base"] is True) or not mine or not base:
            comparison.note = _why_missing(row, test, column)
            comparison.field_absent = row["ok"] is True and row["ok_base"] is True
            return None
        return mine, base

    def _compile_extra(self, here: pd.DataFrame, test: Test, agrees) -> list[Comparison]:
        """The compile time `mode` adds over `baseline`: the difference of their cold
        first calls, per point."""
        out = []
        for row in _records(self.pairs(here, test.mode, test.baseline)):
            comparison = self._comparison(row, "cold_first_call_s")
            found = self._sides(row, test, "cold_first_call_s", comparison)
            if found is not None:
                mine, base = found
                comparison.figure = _median(mine) - _median(base)
                values, comparison.n = _combine([mine, base], lambda m, b: m - b)
                _judged(comparison, values, agrees)
            out.append(comparison)
        return out

    def _share(self, here: pd.DataFrame, test: Test, agrees) -> list[Comparison]:
        """The share of a gain that `mode` achieves: (baseline − mode) / (baseline −
        reference), with latencies; where the reference is `idle`, the whole is the
        baseline's idle time per call (its latency less its device-busy time)."""
        pairs = self.pairs(here, test.mode, test.baseline)
        if test.reference != IDLE:
            ref = self.pairs(here, test.reference, test.baseline)[
                [*analysis.POINT, "ok", "median_s_v"]].rename(
                columns={"ok": "ok_ref", "median_s_v": "whole_v"})
            pairs = pairs.merge(ref, on=analysis.POINT, how="left")
        else:
            pairs = pairs.assign(ok_ref=pairs["ok_base"], whole_v=pairs["idle_s_per_call_v_base"])
        out = []
        for row in _records(pairs):
            comparison = self._comparison(row, "speedup")
            found = self._sides(row, test, "median_s", comparison)
            whole = row.get("whole_v")
            whole = whole if isinstance(whole, tuple) else ()
            if found is not None and not whole:
                comparison.note = (f"no idle time for {test.baseline}" if test.reference == IDLE
                                   else f"no {test.reference} record")
                found = None
            if found is None:
                out.append(comparison)
                continue
            mine, base = found
            comparison.processes = (*comparison.processes, len(whole))
            comparison.busy = _float(row.get("busy_fraction_base"))

            def share(m, b, w):
                # A reference that gains less than a meaningful margin has no benefit to share.
                whole = (b - w) if test.reference != IDLE else w
                least = analysis.MEANINGFUL_GAIN * b if test.reference != IDLE else 0.0
                return (b - m) / whole if whole > least else math.nan

            comparison.figure = share(_median(mine), _median(base), _median(whole))
            if _missing(comparison.figure):
                comparison.figure = None
                comparison.note = (f"{test.reference} gains less than "
                                   f"{analysis.MEANINGFUL_GAIN:.0%} over {test.baseline} here"
                                   if test.reference != IDLE else f"{test.baseline} has no idle time")
                out.append(comparison)
                continue
            values, comparison.n = _combine([mine, base, whole], share)
            _judged(comparison, values, agrees)
            out.append(comparison)
        return out

    def _fixed_vs_varying(self, here: pd.DataFrame, env_id: str, test: Test, agrees
                          ) -> list[Comparison]:
        """`mode` on the varying-shape workload against `mode` on the fixed-shape one at
        the batch that does the same work per call: varying median / fixed median (above 1,
        fixed shapes run faster)."""
        c = self._by_env.get(env_id, self.with_values.iloc[:0])
        fixed = c[(c["workload"] == test.fixed) &
                  (c["batch_size"] == test.fixed_batch) & (c["mode"] == test.mode)]
        out = []
        for row in _records(here[here["mode"] == test.mode]):
            comparison = self._comparison(row, "speedup")
            comparison.workload = f"{row['workload']} against {test.fixed} at batch {test.fixed_batch}"
            mine = row.get("median_s_v")
            mine = mine if isinstance(mine, tuple) and row["ok"] else ()
            base = fixed["median_s_v"].iloc[0] if len(fixed) and fixed["ok"].iloc[0] else ()
            base = base if isinstance(base, tuple) else ()
            comparison.processes = (len(base), len(mine))
            if not mine or not base:
                comparison.note = (f"no {test.mode} record of {test.fixed} at batch "
                                   f"{test.fixed_batch}" if not base else
                                   f"no {test.mode} record of {row['workload']}")
                out.append(comparison)
                continue
            comparison.busy = _float(fixed["busy_fraction"].iloc[0])
            comparison.figure = _median(mine) / _median(base)
            values, comparison.n = _combine([mine, base], lambda v, f: v / f)
            _judged(comparison, values, agrees)
            out.append(comparison)
        return out

    # -- single-figure tests ----------------------------------------------------------------
    def _per_launch(self, env_id: str, test: Test, agrees) -> list[Comparison]:
        """The slope of median latency against chain length N over the launch chains."""
        chains = analysis.per_kernel(self._by_env.get(env_id, self.with_values.iloc[:0]))
        chains = chains[(chains["mode"] == test.mode) & chains["ok"]]
        comparison = Comparison(workload=", ".join(chains["workload"]) or "launch chains",
                                batch=None, axis="batch", family="launch-overhead", flops=None,
                                evidence=LAUNCH_PAGE)
        sides = [v for v in chains["median_s_v"] if isinstance(v, tuple) and v]
        lengths = [float(n) for n, v in zip(chains["chain"], chains["median_s_v"], strict=True)
                   if isinstance(v, tuple) and v]
        comparison.processes = tuple(len(s) for s in sides)
        if len(set(lengths)) < 2:
            comparison.note = f"needs {test.mode} on two or more launch-chain-N workloads"
            return [comparison]

        def slope(*latencies):
            return _slope(lengths, latencies)

        comparison.figure = slope(*[_median(s) for s in sides])
        values, comparison.n = _combine(sides, slope)
        _judged(comparison, values, agrees)
        return [comparison]

    def _aggregate_max(self, items: list[Comparison], agrees) -> list[Comparison]:
        """"Up to X": the largest speedup over the claim's cases is the one figure."""
        measured = [c for c in items if c.figure is not None]
        if not measured:
            return items
        best = max(measured, key=lambda c: c.figure)
        top = Comparison(workload=best.workload, batch=best.batch, axis=best.axis,
                         family=best.family, flops=best.flops, figure=best.figure,
                         lo=best.lo, hi=best.hi, n=best.n, processes=best.processes,
                         evidence=best.evidence,
                         note=f"the largest of {len(measured)} cases")
        top.agrees = agrees(best.figure)
        top.outcome = HOLDS if top.agrees else FAILS
        top.busy, top.single = best.busy, best.single
        # Settled if the answer cannot change: some case of two or more processes a side
        # holds in every pairing, or none holds in any pairing and none rests on one.
        if any(c.lo is not None and agrees(c.lo) and not c.single for c in measured):
            top.settled = top.agrees is True
            return [top]
        reach = [c for c in measured if c.hi is not None and agrees(c.hi)]
        single = [c for c in measured if c.single]
        top.settled = not reach and not single
        if top.settled:
            return [top]
        if top.agrees:  # it holds on too few processes, and no case settles it
            because = [f"no case of {MIN_PROCESSES} or more processes a side reaches the claim "
                       "in every pairing of its processes"]
        else:  # it fails, but another case could still turn out to reach the claim
            because = []
            if reach:
                because.append(f"the range{'s' if len(reach) > 1 else ''} of "
                               f"{_points(reach, 3)} reach{'es' if len(reach) == 1 else ''} "
                               "the claim")
            if single:
                because.append(f"{len(single)} of the {len(measured)} cases rest on one "
                               f"process a side ({_points(single, 3)})")
        top.unsettled_because = "; ".join(because)
        return [top]

    # -- one claim in one environment -----------------------------------------------------
    def comparisons(self, claim: Claim, env_id: str) -> list[Comparison]:
        test = claim.test
        agrees = rule(test)
        here = self.points(claim, env_id)
        if test.kind == "absolute" and test.field == "per_launch_overhead_s":
            return self._per_launch(env_id, test, agrees)
        if here.empty:
            return []
        if test.kind == "speedup":
            found = self._two_sided(here, test, "median_s", agrees)
            return self._aggregate_max(found, agrees) if test.aggregate == "max" else found
        if test.kind == "ratio-metric":
            return self._two_sided(here, test, test.metric, agrees)
        if test.kind == "compile-ratio":
            return self._two_sided(here, test, "cold_first_call_s", agrees)
        if test.kind == "absolute":
            return self._one_sided(here, test, test.field, agrees)
        if test.kind == "correctness":
            return self._one_sided(here, test, "passed", lambda x: None if _missing(x)
                                   else bool(x))
        if test.kind == "break-even":
            return self._break_even(here, test, agrees)
        if test.kind == "crossover":
            return self._two_sided(here, test, "median_s", lambda x: None if _missing(x)
                                   else x > 1.0)
        if test.kind == "compile-extra":
            return self._compile_extra(here, test, agrees)
        if test.kind == "share-of-gain":
            return self._share(here, test, agrees)
        if test.kind == "fixed-vs-varying":
            return self._fixed_vs_varying(here, env_id, test, agrees)
        raise LedgerError(f"claim {claim.id}: test kind {test.kind} cannot be judged")

    def judge(self, claim: Claim, env: analysis.Environment) -> Judgement:
        out = Judgement(env.env_id, env.label, env.backend, NOT_MEASURED,
                        unit=unit_of(claim.test))
        if claim.test.kind != "none":
            out.comparisons = self.comparisons(claim, env.env_id)
        measured = out.measured
        if not claim.testable and (claim.test.kind == "none" or not measured):
            out.verdict, out.reason = NOT_TESTABLE, claim.missing
            return out
        if not measured:
            out.reason = self._missing_reason(claim, out.comparisons)
            if out.comparisons and all(c.field_absent for c in out.comparisons):
                quantity = _quantity(claim.test)
                if quantity in LATER_MEMORY and env.backend == "cuda":
                    # A CUDA field newer than these records: it can be measured, it was not.
                    out.reason = f"no record of these cases carries {quantity} yet"
                    return out
                # The cases ran, but this backend's records never hold the quantity
                # (device memory or kernel counts on a CPU).
                out.verdict = NOT_TESTABLE
                out.reason = f"the {env.backend} records hold no {quantity}"
            return out
        if claim.test.kind == "crossover":
            _crossover(claim.test, out)
        else:
            _verdict(out, rule(claim.test))
            out.region = region_text(out)
            out.short = out.region
            out.direction, out.size = direction_and_size(claim.test, out)
        _summarise(out)
        return out


    def _missing_reason(self, claim: Claim, comparisons: list[Comparison]) -> str:
        if not comparisons:
            if claim.test.kind == "absolute" and claim.test.field == "per_launch_overhead_s":
                return "no launch-chain records"
            scope = ", ".join(claim.workloads) or f"a workload of family {', '.join(claim.families)}"
            return f"no records of {scope} here"
        notes = sorted({c.note for c in comparisons if c.note})
        return "; ".join(notes) or "no comparison has both sides measured"


def _quantity(test: Test) -> str:
    return test.metric or test.field or ("cold first call" if test.kind in (
        "compile-ratio", "break-even") else "latency")


def _why_missing(row: pd.Series, test: Test, column: str) -> str:
    parts = []
    for side, mode in (("", test.mode), ("_base", test.baseline or analysis.BASELINE)):
        ok = row.get(f"ok{side}")
        if ok is not True and not _missing(row.get(f"status{side}")):
            parts.append(f"{mode}: {row[f'status{side}']}")
        elif ok is not True:
            parts.append(f"no {mode} record")
        elif not isinstance(row.get(f"{column}_v{side}"), tuple) or not row.get(f"{column}_v{side}"):
            parts.append(f"no {column} for {mode}")
    return "; ".join(parts)


def _slope(x: list[float], y) -> float:
    """Least-squares slope of y on x."""
    mx, my = sum(x) / len(x), sum(y) / len(y)
    den = sum((a - mx) ** 2 for a in x)
    return sum((a - mx) * (b - my) for a, b in zip(x, y, strict=True)) / den


# ---- verdicts -------------------------------------------------------------------------------

def _point(c: Comparison) -> str:
    if c.batch is None:
        return c.workload
    return f"{c.workload} at {c.axis} {c.batch}"


def _points(items: list[Comparison], limit: int = 8) -> str:
    """"mlp at batch 1, vit16x6x384 at batch 2, 4 and 8": a workload's points named once."""
    named = []
    for (workload, axis), run in itertools.groupby(items[:limit], lambda c: (c.workload, c.axis)):
        run = list(run)
        if len(run) == 1 or any(c.batch is None for c in run):
            named += [_point(c) for c in run]
            continue
        *first, last = [_num(c.batch) for c in run]
        named.append(f"{workload} at {axis} {', '.join(first)} and {last}")
    more = f", plus {len(items) - limit} more" if len(items) > limit else ""
    return ", ".join(named) + more


def _verdict(out: Judgement, rule_: Rule) -> None:
    measured = out.measured
    settled = [c for c in measured if c.settled]
    unsettled = [c for c in measured if not c.settled]
    outcomes = {c.outcome for c in settled}
    if len(outcomes) > 1:
        out.verdict = DEPENDS
        out.condition = depends_condition(settled, rule_.range)[0]
        if unsettled:
            out.condition += f"; unsettled: {_points(unsettled)}"
    elif unsettled:
        out.verdict = UNSETTLED
        single = [c for c in unsettled if c.single]
        split = [c for c in unsettled if not c.single]
        parts = [c.unsettled_because for c in split if c.unsettled_because]
        split = [c for c in split if not c.unsettled_because]
        if split:
            parts.append(f"the processes disagree on {len(split)} of {len(measured)} "
                         f"comparisons: {_points(split)}")
        if single:
            parts.append("every comparison rests on one process a side" if len(single) == len(
                measured) else f"{len(single)} of {len(measured)} comparisons rest on one "
                f"process a side: {_points(single)}")
        out.condition = "; ".join(parts)
    else:
        out.verdict = outcomes.pop()


def _bound(busy: float | None) -> str | None:
    return None if busy is None else analysis.boundedness(pd.Series([busy])).iloc[0]


def _run_text(label: str, items: list[Comparison], unit: str) -> str:
    """One stretch of a workload's points with the same answer: where, the figures, how
    busy the baseline kept the device, and the fewest processes a side."""
    batches = [c.batch for c in items if c.batch is not None]
    where = ""
    if batches:
        a, b = min(batches), max(batches)
        where = f" at {items[0].axis} {_num(a)}" + (f"–{_num(b)}" if b != a else "")
    figures = [c.figure for c in items if c.figure is not None]
    details = [span_text(min(figures), max(figures), unit)] if figures else []
    bounds = [b for b in dict.fromkeys(c.bound or _bound(c.busy) for c in items) if b]
    if bounds:
        details.append("/".join(bounds))
    procs = sorted({min(c.processes) for c in items if c.processes})
    if procs:
        details.append(f"{procs[0]}{'–' + str(procs[-1]) if len(procs) > 1 else ''} proc.")
    return f"{label}{where} ({', '.join(details)})" if details else f"{label}{where}"


def region_text(out: Judgement) -> str:
    """Where each answer holds, workload by workload along its size axis: "vit16x6x384:
    holds at batch 1–2 (1.7–3.0×, launch-bound, 3 proc.), fails at batch 16–32 (…)"."""
    groups: dict[str, list[Comparison]] = {}
    for c in out.measured:
        groups.setdefault(c.workload, []).append(c)
    parts = []
    for workload, items in groups.items():
        runs: list[tuple[str, list[Comparison]]] = []
        for c in sorted(items, key=lambda c: (c.batch is None, c.batch or 0)):
            label = c.outcome if c.settled else f"unsettled, leans {c.outcome}"
            if runs and runs[-1][0] == label:
                runs[-1][1].append(c)
            else:
                runs.append((label, [c]))
        parts.append(f"{workload}: {', '.join(_run_text(lb, cs, out.unit) for lb, cs in runs)}")
    because = [c.unsettled_because for c in out.measured if c.unsettled_because]
    return "; ".join(parts) + "".join(f". Not settled: {b}" for b in because)


def direction_and_size(test: Test, out: Judgement) -> tuple[str, str]:
    """A ratio claim with a stated size, judged twice: on how many points the ratio goes
    the claimed way at all, and on how many its size is within, above or below the
    stated figure (with tolerance)."""
    r = rule(test)
    figures = [c.figure for c in out.measured if c.figure is not None]
    if (not test.ratio or test.aggregate or r.stated is None or r.comparator == "within"
            or not figures):
        return "", ""
    gain = r.comparator in ("at_least", "range")
    word = ({True: "faster", False: "slower"} if test.kind in ("speedup", "fixed-vs-varying")
            else {True: "above 1", False: "below 1"})[gain]
    right = sum(1 for f in figures if (f > 1 if gain else f < 1))
    direction = f"{word} at {right} of {len(figures)} points"
    sides = {side: sum(1 for f in figures if r.side(f) == side) for side in (-1, 0, 1)}
    band = (f"{formatting.sig(r.lo)}–{formatting.sig(r.hi)}×" if r.range else
            f"{'>' if r.lo_strict else '≥'} {formatting.sig(r.lo)}×"
            if r.lo is not None else f"< {formatting.sig(r.hi)}×")
    size = f"{band} at {sides[0]} of {len(figures)}"
    if sides[1]:
        size += f", above at {sides[1]}"
    if sides[-1]:
        size += f", below at {sides[-1]}"
    return direction, size


def _num(x: float) -> str:
    return f"{int(x)}" if float(x).is_integer() else f"{x:g}"


def _flops(x: float) -> str:
    for unit, scale in (("TFLOP", 1e12), ("GFLOP", 1e9), ("MFLOP", 1e6), ("kFLOP", 1e3)):
        if x >= scale:
            return f"{x / scale:.3g} {unit}"
    return f"{x:.3g} FLOP"


def _runs(items: list[tuple[float, int]]) -> list[tuple[int, float, float]] | None:
    """(x, side) sorted by x, as runs (side, first x, last x), or None unless the sides
    only ever rise or only ever fall: one threshold between two answers, or two around
    the band of a `within` rule."""
    runs: list[list] = []
    for x, side in items:
        if runs and runs[-1][0] == side:
            runs[-1][2] = x
        else:
            runs.append([side, x, x])
    sides = [r[0] for r in runs]
    if sides != sorted(sides) and sides != sorted(sides, reverse=True):
        return None
    return [tuple(r) for r in runs]


SIDE_WORDS = {0: "holds", -1: "fails", 1: "fails"}
BAND_WORDS = {0: "holds", -1: "below the band", 1: "above the band"}
RANGE_WORDS = {0: "holds", -1: "falls short", 1: "exceeds"}


def _runs_text(runs, axis: str, words: dict[int, str]) -> str:
    parts = []
    for i, (side, first, last) in enumerate(runs):
        if i == 0:
            parts.append(f"{words[side]} for {axis} ≤ {_num(last)}")
        elif i == len(runs) - 1:
            parts.append(f"{words[side]} from {axis} {_num(first)}")
        elif first == last:
            parts.append(f"{words[side]} at {axis} {_num(first)}")
        else:
            parts.append(f"{words[side]} for {axis} {_num(first)} to {_num(last)}")
    return ", ".join(parts)


def depends_condition(settled: list[Comparison], in_range: bool = False) -> tuple[str, str]:
    """Where settled comparisons that disagree flip: (condition, short form).

    First along each workload's own size axis (batch, or n for a sweep): every workload
    must be constant or flip monotonically; then along the work per call (FLOPs) over
    every point; otherwise "holds in N of M cases"."""
    band = any(c.side == 1 for c in settled) and any(c.side == -1 for c in settled)
    words = RANGE_WORDS if in_range else BAND_WORDS if band else SIDE_WORDS
    by_workload: dict[str, list[Comparison]] = {}
    for c in settled:
        by_workload.setdefault(c.workload, []).append(c)
    flips, constant, ok = [], {}, True
    for workload, items in by_workload.items():
        answers = {c.side for c in items} if in_range else {c.agrees for c in items}
        if len(answers) == 1:
            constant.setdefault(items[0].outcome, []).append(workload)
            continue
        sized = sorted(items, key=lambda c: c.batch if c.batch is not None else -1)
        runs = _runs([(c.batch, c.side) for c in sized]) if all(
            c.batch is not None for c in sized) else None
        if runs is None:
            ok = False
            break
        flips.append(f"{_runs_text(runs, sized[0].axis, words)} ({workload})")
    if ok:
        parts = list(flips)
        constant = dict(sorted(constant.items(), key=lambda kv: (HOLDS, EXCEEDS, FAILS).index(kv[0])))
        parts += [f"{outcome} throughout on {', '.join(names)}"
                  for outcome, names in constant.items()]
        if flips:
            more = f" (+{len(parts) - 1} more)" if len(parts) > 1 else ""
            return "; ".join(parts), parts[0] + more
        counts = ", ".join(f"{outcome} on {len(names)}" for outcome, names in constant.items())
        return "; ".join(parts), f"by workload: {counts}"
    if all(c.flops is not None for c in settled):
        ordered = sorted(settled, key=lambda c: c.flops)
        runs = _runs([(c.flops, c.side) for c in ordered])
        if runs is not None and len(runs) == 2:
            (a, _, last), (b, first, _) = runs
            lo = next(c for c in ordered if c.flops == last)
            hi = next(c for c in ordered if c.flops == first)
            text = (f"{words[a]} up to {_flops(last)} per call ({_point(lo)}), "
                    f"{words[b]} from {_flops(first)} ({_point(hi)})")
            return text, text
    yes = [c for c in settled if c.agrees]
    text = (f"holds in {len(yes)} of {len(settled)} cases, with no single threshold: "
            f"{', '.join(_point(c) for c in yes)}")
    return text, f"holds in {len(yes)} of {len(settled)} cases"


def _crossover(test: Test, out: Judgement) -> None:
    """Where `mode` stops losing to `baseline` along the axis (`above`: it wins from the
    crossover on; `below`: it wins up to it), against the stated value and its band."""
    points = sorted((c for c in out.measured if c.batch is not None), key=lambda c: c.batch)
    if not points:
        out.verdict, out.reason = NOT_MEASURED, f"no {test.axis} axis in the records"
        return
    above = test.above is not None
    stated = test.above if above else test.below
    band = (stated / (1 + test.tolerance), stated * (1 + test.tolerance))
    xs = [c.batch for c in points]
    axis = test.axis

    def judge(wins: list[bool]) -> tuple[bool, str, int | None]:
        won = [i for i, w in enumerate(wins) if w]
        if not won:
            span = f"{xs[0]} to {xs[-1]}" if len(xs) > 1 else f"{xs[0]}, the only one measured"
            return False, f"{test.mode} never beats {test.baseline} ({axis} {span})", None
        if above:
            i = won[0]
            if not all(wins[i:]):
                return False, f"{test.mode} beats {test.baseline} at some {axis} but not from one on", None
            lost = f", loses at {axis} {xs[i - 1]}" if i else f" (the smallest {axis} measured)"
            text = f"{test.mode} beats {test.baseline} from {axis} {xs[i]}{lost}"
            return band[0] <= xs[i] <= band[1], text, xs[i]
        i = won[-1]
        if not all(wins[:i + 1]):
            return False, f"{test.mode} beats {test.baseline} at some {axis} but not up to one", None
        lost = (f", loses from {axis} {xs[i + 1]}" if i + 1 < len(xs)
                else f" (the largest {axis} measured)")
        text = f"{test.mode} beats {test.baseline} up to {axis} {xs[i]}{lost}"
        return band[0] <= xs[i] <= band[1], text, xs[i]

    answers = [bool(c.agrees) for c in points]
    verdict, text, crossing = judge(answers)
    unsettled = [i for i, c in enumerate(points) if not c.settled][:12]
    outcomes = set()
    for flips in itertools.product((False, True), repeat=len(unsettled)):
        trial = list(answers)
        for i, flip in zip(unsettled, flips, strict=True):
            trial[i] = trial[i] != flip
        outcomes.add(judge(trial)[0])
    out.condition = out.short = text
    out.crossing = crossing
    if len(outcomes) > 1:
        out.verdict = UNSETTLED
        out.condition += f"; unsettled at {axis} {', '.join(str(points[i].batch) for i in unsettled)}"
    else:
        out.verdict = HOLDS if verdict else FAILS


def _summarise(out: Judgement) -> None:
    """The key figure: the one comparison's figure with its spread, or the range of the
    figures over the claim's comparisons."""
    measured = [c for c in out.measured if c.figure is not None]
    if len(measured) == 1:
        c = measured[0]
        out.figure, out.lo, out.hi, out.n = c.figure, c.lo, c.hi, c.n
    elif measured:
        figures = [c.figure for c in measured]
        out.figure_range = (min(figures), max(figures))
    seen = []
    for c in out.comparisons:
        if (c.workload, c.evidence) not in [(s[0], (s[1], s[2])) for s in seen] and c.evidence[0]:
            seen.append((c.workload, *c.evidence))
    out.evidence = seen


# ---- the whole ledger --------------------------------------------------------------------------

@dataclass
class ClaimResult:
    claim: Claim
    judgements: list[Judgement]

    def verdict_in(self, env_id: str) -> Judgement | None:
        return next((j for j in self.judgements if j.env_id == env_id), None)


def judge(ledger: Ledger, data: analysis.Data, by: Judge | None = None) -> list[ClaimResult]:
    """Every claim in every environment of its backend. A backend with no environment
    gets one judgement with env_id None: not testable (the ledger says why) or not
    measured. `by` is a Judge of `data` already built (a site build's `Judge.of`)."""
    judge_ = Judge(data) if by is None else by
    envs = sorted(data.environments.values(), key=lambda e: (e.backend, e.label))
    results = []
    for claim in ledger.claims:
        found = [judge_.judge(claim, env) for env in envs if claim.judged_on(env.backend)]
        if not found:
            backend = claim.backend
            verdict = NOT_TESTABLE if not claim.testable else NOT_MEASURED
            reason = claim.missing if not claim.testable else f"no {backend} environment"
            found = [Judgement(None, f"{backend}: no environment", backend, verdict,
                               unit=unit_of(claim.test), reason=reason)]
        results.append(ClaimResult(claim, found))
    return results


def counts(results: list[ClaimResult], data: analysis.Data) -> pd.DataFrame:
    """Verdicts per environment: one row per environment label, a column per verdict."""
    rows = [{"env": j.label, "verdict": j.verdict} for r in results for j in r.judgements]
    if not rows:
        return pd.DataFrame(columns=["env", *VERDICTS])
    table = pd.DataFrame(rows).pivot_table(index="env", columns="verdict", aggfunc="size",
                                           fill_value=0)
    return table.reindex(columns=list(VERDICTS), fill_value=0).reset_index()


# ---- shared with other pages -------------------------------------------------------------------

SEED_PAGE = "analysis/claims/seed-{seed}.md"  # where report/pages/ledger.py puts each seed's claims


def seed_page(seed: str) -> str:
    return SEED_PAGE.format(seed=seed)


def site_ledger(data: analysis.Data) -> Ledger:
    """report/claims.yaml, read once per site build."""
    return data.memo("ledger", load_ledger)


def results_for(data: analysis.Data, book: Ledger | None = None) -> list[ClaimResult]:
    """The ledger judged against `data`, once per site build: the home page, its answers
    and the claims pages all read these results, and judging is seconds of work."""
    book = site_ledger(data) if book is None else book
    judged_book, results = data.memo("claims", lambda: (book, judge(book, data, Judge.of(data))))
    return results if judged_book == book else judge(book, data, Judge.of(data))


def verdict_table(data: analysis.Data, results: list[ClaimResult] | None = None
                  ) -> dict[str, Any]:
    """Verdicts per environment label, for summary tables on other pages (the home page).
    An environment of a backend the claim is not about reads DOES_NOT_APPLY ("—"), not
    "not measured"; `href` is the claim's section, docs-relative."""
    results = results_for(data) if results is None else results
    envs = [env for backend in data.backends for env in data.envs(backend)]
    rows = []
    for r in results:
        if not any(j.env_id for j in r.judgements):
            continue
        mine = {j.env_id: j.verdict for j in r.judgements if j.env_id}
        rows.append({"claim": {"said": r.claim.paraphrase, "slug": r.claim.id,
                               "href": f"{seed_page(r.claim.seed)}#{r.claim.id}"},
                     "verdicts": {e.label: mine.get(e.env_id, DOES_NOT_APPLY)
                                  if r.claim.judged_on(e.backend) else DOES_NOT_APPLY
                                  for e in envs}})
    return {"rows": rows, "labels": [e.label for e in envs]}
