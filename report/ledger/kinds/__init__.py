"""Every test kind of claims.yaml, one entry each, as bench/modes.py keeps the modes: what
it validates beyond the common keys, the unit of its figure, what its figure is (`words`,
formatted by the pages) and the function that gives its comparisons in one environment.

A comparison function takes (judge, here, env_id, test, agrees): the Judge, the claim's
cases in the environment (`here`, every mode), the test and its rule; it returns one
Comparison per point. Adding a kind is one entry here, its function and its test."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from report.ledger.kinds import compile as compile_
from report.ledger.kinds import docs, kernels, launch, paired, shapes, share, single, streams
from report.ledger.schema import COST, EFFECT, Test


def _fine(test: dict) -> list[str]:
    return []


@dataclass(frozen=True)
class Kind:
    name: str
    compare: Callable | None  # None: nothing to compare (kind none)
    unit: str | Callable[[Test], str]
    words: str  # what the figure is; {mode}, {baseline} and the test's other keys fill it
    baseline: bool = False  # needs a baseline mode
    stated: bool = True  # takes one stated figure (about, at_least, below or within)
    ratio: bool = False  # a ratio of two modes: a stated gain implies a direction
    scoped: bool = True  # judged on the claim's cases (False: on the environment as a whole)
    validate: Callable[[dict], list[str]] = _fine
    agrees: Callable[[Test], Callable] | None = None  # None: the stated figure's rule
    crossover: bool = False  # judged by where the answer flips, not point by point
    # Judged on the claim's shape-stream cases (report.shapes.data.cases), which the
    # fixed-shape tables leave out, in every environment that measured streams.
    streams: bool = False
    rule_words: str = ""  # a kind without a stated figure: when it holds, in words
    # What a larger figure is (schema.EFFECT or schema.COST, or a function of the test): where
    # past a stated point the claim is exceeded rather than failed (rules._effect_side). A
    # ratio of two modes grows its effect away from 1, on the side it states.
    larger: str | Callable[[Test], str] = EFFECT


KINDS: dict[str, Kind] = {k.name: k for k in (
    Kind("speedup", paired.speedup, "ratio", paired.SPEEDUP_WORDS, baseline=True, ratio=True,
         validate=paired.aggregate_problems),
    Kind("ratio-metric", paired.ratio_metric, "ratio", "{metric} of {mode} divided by that of "
         "{baseline}, at each measured point", baseline=True, ratio=True,
         validate=paired.metric_problems),
    Kind("compile-ratio", paired.compile_ratio, "ratio", "the cold first call of {mode} "
         "divided by that of {baseline}, at each measured point", baseline=True, ratio=True),
    Kind("crossover", paired.crossover, "ratio", "along {axis}, the speedup of {mode} over "
         "{baseline} (above 1: {mode} wins)", baseline=True, stated=False,
         validate=paired.crossover_problems, agrees=lambda test: paired.wins, crossover=True),
    Kind("absolute", single.absolute, single.unit, "{field} of {mode}, at each measured point",
         validate=single.field_problems, larger=single.larger),
    Kind("correctness", single.correctness, "pass", "whether {mode} matches the case's "
         "reference output within its tolerance in every process, at each measured point",
         stated=False, agrees=lambda test: single.passes,
         rule_words="it holds where every process passes"),
    Kind("break-even", compile_.break_even, "calls", "calls for {mode} to break even with "
         "eager: its cold first call / (eager median − {mode} median), never where it is not "
         "faster, at each measured point", larger=COST),
    Kind("compile-extra", compile_.compile_extra, "seconds", "the compile time {mode} adds "
         "over {baseline}: its cold first call less {baseline}'s, at each measured point",
         baseline=True, larger=EFFECT),
    Kind("share-of-gain", share.share, "fraction", share.WORDS, baseline=True,
         validate=share.reference_problems, larger=EFFECT),
    Kind("fixed-vs-varying", shapes.fixed_vs_varying, "ratio", "{mode} on the varying-shape "
         "workload against {mode} on {fixed} at batch {fixed_batch} (varying median / fixed "
         "median; above 1, fixed shapes run faster)", ratio=True, validate=shapes.problems),
    Kind("launch-chain", launch.chains, "seconds", launch.WORDS, scoped=False,
         validate=launch.problems, larger=COST),
    Kind("overhead-ratio", launch.ratio, "ratio", "{field} of {mode} divided by that of "
         "{baseline} (where the claim names a number of launches, by {baseline}'s per-launch "
         "overhead times that many), each fitted over the launch chains", baseline=True,
         ratio=True, scoped=False, validate=launch.ratio_problems),
    Kind("extra-kernels", kernels.extra, "extra kernels", kernels.WORDS, baseline=True,
         stated=False, agrees=lambda test: kernels.within_copies,
         rule_words="it holds where the extra kernels are no fewer than none and no more than "
         "the inputs the graph copies, so that the work kernels are unchanged"),
    Kind("mode-option", docs.option, "pass", docs.WORDS, stated=False, scoped=False,
         validate=docs.problems, agrees=lambda test: single.passes,
         rule_words="it holds where the options of the environment's torch release set it "
         "(where the claim names a baseline, with nothing else changed from the baseline's)"),
    Kind("stream-absolute", streams.absolute, streams.unit, streams.WORDS,
         validate=streams.problems, streams=True),
    Kind("stream-ratio", streams.ratio, "ratio", streams.RATIO_WORDS, baseline=True,
         ratio=True, validate=streams.ratio_problems, streams=True),
    Kind("none", None, "count", "no test: the records hold no quantity that could judge this "
         "claim", stated=False, rule_words="its verdict is not testable here"),
)}


def unit_of(test: Test) -> str:
    """How a test's figure reads: ratio, seconds, fraction, count, bytes, calls, pass."""
    unit = KINDS[test.kind].unit
    return unit(test) if callable(unit) else unit


def larger_of(test: Test) -> str:
    """What a larger figure of the test's quantity is: schema.EFFECT or schema.COST."""
    larger = KINDS[test.kind].larger
    return larger(test) if callable(larger) else larger


def words_of(test: Test) -> str:
    """What the test's figure is, in words (plain text: the page marks names up)."""
    keys = {k: getattr(test, k) for k in Test.__dataclass_fields__}
    return KINDS[test.kind].words.format(**keys, largest="The largest" if test.aggregate
                                         else "The")
