"""The share of a gain that a mode achieves: (baseline − mode) / (baseline − reference),
what the mode saves per call over what the reference saves. Where both savings were
timed paired (analysis.compare's saving_s, per paired process), they come from those
processes; otherwise from the isolated medians. Against `idle`, the whole is the
baseline's idle time per call (its latency less its device-busy time) in the same isolated
processes as the medians."""

from __future__ import annotations

import math

from report import analysis
from report.ledger.comparison import Comparison, judged
from report.ledger.values import as_float, combine, median

IDLE = "idle"  # the reference that is the baseline's idle time per call
WORDS = "the share of {reference}'s gain over {baseline} that {mode} achieves"


def reference_problems(test: dict) -> list[str]:
    from bench.modes import MODES
    if test.get("reference") not in (*MODES, IDLE):
        return [f"share-of-gain reference {test.get('reference')!r} is neither a mode nor {IDLE}"]
    return []


def _paired_savings(row: dict, prefix: str) -> tuple[float, float, float] | None:
    if row.get(f"{prefix}paired") is not True:
        return None
    return tuple(float(row[f"{prefix}{k}"]) for k in ("saving_s", "saving_lo_s", "saving_hi_s"))


def _with_reference(judge, test):
    """The pairs of mode and baseline over every environment, each with the reference's
    figures at its point beside it (`ref_`...): merged once, not per environment."""
    keep = [*analysis.POINT, "ok", "median_s_v", "paired", "pairings", "saving_s",
            "saving_lo_s", "saving_hi_s"]
    ref = judge.compared(test.reference, test.baseline)
    ref = ref[[c for c in keep if c in ref.columns]].rename(
        columns={c: f"ref_{c}" for c in keep if c not in analysis.POINT})
    return judge.compared(test.mode, test.baseline).merge(ref, on=analysis.POINT, how="left")


def share(judge, here, env_id, test, agrees) -> list[Comparison]:
    found_rows = (judge.pair_rows(here, test.mode, test.baseline) if test.reference == IDLE
                  else judge.rows_at(here, ("share", test.mode, test.reference, test.baseline),
                                     lambda: _with_reference(judge, test)))
    out = []
    for row in found_rows:
        comparison = judge.point(row, "speedup")
        found = judge.sides(row, test, "median_s", comparison)
        # The latencies compared are the isolated processes' medians: so is the idle time.
        whole = (row.get("ref_median_s_v") if test.reference != IDLE
                 else row.get("isolated_idle_s_per_call_v_base"))
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
        comparison.busy = as_float(row.get("busy_fraction_base"))
        least = analysis.MEANINGFUL_GAIN * median(base) if test.reference != IDLE else 0.0

        def of(saved, gained, least=least):
            # A reference that gains less than a meaningful margin has no benefit to share.
            return saved / gained if gained > least else math.nan

        mode_saved, ref_saved = _paired_savings(row, ""), _paired_savings(row, "ref_")
        if mode_saved and ref_saved:  # the savings as timed side by side, per process
            n = min(int(row["pairings"]), int(row["ref_pairings"]))
            comparison.processes, comparison.paired = (n, n, n), True
            comparison.figure = of(mode_saved[0], ref_saved[0])
            values, comparison.n = combine([mode_saved[1:], ref_saved[1:]], of)
        else:
            def of_latencies(m, b, w):
                return of(b - m, (b - w) if test.reference != IDLE else w)

            comparison.figure = of_latencies(median(mine), median(base), median(whole))
            values, comparison.n = combine([mine, base, whole], of_latencies)
        if math.isnan(comparison.figure):
            comparison.figure = None
            comparison.note = (f"{test.reference} gains less than {analysis.MEANINGFUL_GAIN:.0%} "
                               f"over {test.baseline} here" if test.reference != IDLE
                               else f"{test.baseline} has no idle time")
            out.append(comparison)
            continue
        judged(comparison, values, agrees)
        out.append(comparison)
    return out
