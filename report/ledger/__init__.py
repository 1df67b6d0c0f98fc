"""The claims ledger judged against the records: one verdict per claim and environment.

`report/claims.yaml` holds the claims as data (its header comment defines the test
vocabulary); `load_ledger` reads and validates it, and `judge(ledger, data)` judges each
claim in every environment whose backend it is about (`any`: every environment).

The package, one job per module:
- schema: the claims.yaml vocabulary as frozen dataclasses (a stated figure's Rule
  among them) and the checks common to every test;
- kinds: the table of test kinds (validation, unit, words, comparison function), one
  module per family of kinds;
- loader: claims.yaml checked against the schema and the kinds, and loaded;
- rules: when one figure agrees with a stated point, bound, range or "no change";
- values: per-process values of every case and the figures derived from a record;
- comparison: Comparison (one point), Judgement (one environment), Region (as data);
- judge: the Judge (scope, the helpers the kinds share, one claim in one environment);
- verdicts: holds / exceeds / fails / depends / unsettled, with regions;
- words: figures and regions in words; results: the whole ledger and what other pages read.

How a verdict is reached: at each point (workload, batch) of the claim in one environment
the kind gives a figure from the medians over processes and the rule's answer. Every
combination of the sides' processes is judged too (paired ratios where the records were
timed paired): a comparison is *settled* only where every combination gives the same
answer and no side rests on fewer than MIN_PROCESSES processes. All settled and agreeing:
holds; above a stated range or point: exceeds; disagreeing: fails; settled answers that
differ: depends (where it flips: the size axis, then FLOPs, then a count); some not
settled: unsettled. Every judged verdict carries its regions (`Judgement.regions`)."""

from report.ledger.comparison import (
                                      DEPENDS,
                                      EXCEEDS,
                                      FAILS,
                                      HOLDS,
                                      MIN_PROCESSES,
                                      NOT_MEASURED,
                                      NOT_TESTABLE,
                                      UNSETTLED,
                                      VERDICTS,
                                      Comparison,
                                      Judgement,
                                      Region,
)
from report.ledger.judge import Judge
from report.ledger.kinds import KINDS, Kind, larger_of, unit_of, words_of
from report.ledger.loader import claim_problems, load_ledger, parse_ledger, test_problems
from report.ledger.results import (
                                      DOES_NOT_APPLY,
                                      SEED_PAGE,
                                      ClaimResult,
                                      counts,
                                      judge,
                                      results_for,
                                      seed_page,
                                      shown_regions,
                                      site_ledger,
                                      verdict_table,
                                      where,
)
from report.ledger.rules import rule
from report.ledger.schema import (
                                      CLAIM_KEYS,
                                      COMPARATORS,
                                      COST,
                                      DOC_SEED,
                                      EFFECT,
                                      LEDGER,
                                      POINT_TOLERANCE,
                                      Claim,
                                      Contradiction,
                                      Ledger,
                                      LedgerError,
                                      Rule,
                                      Test,
)
from report.ledger.values import (
                                      ABSOLUTE_FIELDS,
                                      DERIVED_FIELDS,
                                      LATER_MEMORY,
                                      LEVEL_WINDOW,
                                      MUCH_SLOWER,
                                      RATIO_METRICS,
                                      STEADY_BAND,
                                      STEADY_RUN,
                                      process_values,
                                      steady_index,
                                      warmup_calls,
)
from report.ledger.verdicts import depends_condition
from report.ledger.words import figure_text, span_text

__all__ = [
    "ABSOLUTE_FIELDS", "CLAIM_KEYS", "COMPARATORS", "COST", "DEPENDS", "DERIVED_FIELDS",
    "DOC_SEED", "DOES_NOT_APPLY", "EFFECT", "EXCEEDS", "FAILS", "HOLDS", "KINDS", "LATER_MEMORY", "LEDGER",
    "LEVEL_WINDOW", "MIN_PROCESSES", "MUCH_SLOWER", "NOT_MEASURED", "NOT_TESTABLE", "POINT_TOLERANCE",
    "RATIO_METRICS", "SEED_PAGE", "STEADY_BAND", "STEADY_RUN", "UNSETTLED", "VERDICTS",
    "Claim", "ClaimResult", "Comparison", "Contradiction", "Judge", "Judgement", "Kind",
    "Ledger", "LedgerError", "Region", "Rule", "Test", "claim_problems", "counts",
    "depends_condition", "figure_text", "judge", "larger_of", "load_ledger", "parse_ledger",
    "process_values", "results_for", "rule", "seed_page", "shown_regions", "site_ledger",
    "span_text",
    "steady_index", "test_problems", "unit_of", "verdict_table", "warmup_calls", "where",
    "words_of"]
