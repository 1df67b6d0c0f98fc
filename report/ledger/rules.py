"""When one figure agrees with a claim: the stated figure, its tolerance and, for a ratio
of two modes, the direction it implies. What the kind says of its figure (a ratio of two
modes or not, what a larger figure is) comes from the kinds table, which sits below."""

from __future__ import annotations

from report.ledger.kinds import KINDS, larger_of
from report.ledger.schema import EFFECT, Rule, Test


def _lower(test: Test, x: float, t: float) -> tuple[float, bool, str]:
    """X less its tolerance, or for a ratio claiming a gain, "above 1" with no slack."""
    lo = x * (1 - t)
    if KINDS[test.kind].ratio and x > 1 and lo <= 1:
        return 1.0, True, "faster" if test.kind == "speedup" else "above"
    return lo, False, ""


def _effect_side(test: Test, stated: float) -> int:
    """Where past its band the claim's effect is larger than stated: for a ratio of two
    modes, away from 1 on the side it states (a speedup grows upwards; a loss or a
    reduction below 1 downwards: "71x fewer" is exceeded by 100x fewer, not by 1.0x); for
    any other quantity, above where larger is the effect (`kinds.larger_of`: a share removed,
    compile time a claim calls slow), and nowhere where it is a cost (a latency, an
    overhead, idle time): past a cost's point on either side the claim fails."""
    if KINDS[test.kind].ratio:
        return -1 if stated < 1 else 1
    return 1 if larger_of(test) == EFFECT else 0


def rule(test: Test) -> Rule:
    """The claims.yaml header's reading of about / at_least / at_most / below / within
    with tolerance and, for ratios, the direction."""
    t, ratio = test.tolerance or 0.0, KINDS[test.kind].ratio
    if test.within is not None:
        ref = 1.0 if ratio else test.value  # a ratio: "no change"
        return Rule(lo=ref - test.within * ref, hi=ref + test.within * ref, hi_inclusive=True,
                    stated=ref, comparator="within")
    if test.about is not None:
        lo, strict, direction = _lower(test, test.about, t)
        hi = test.about * (1 + t)
        if ratio and test.about < 1 and hi >= 1:
            hi, direction = 1.0, "slower" if test.kind == "speedup" else "below"
        return Rule(lo=lo, lo_strict=strict, hi=hi, hi_inclusive=hi != 1.0 or not direction,
                    stated=test.about, comparator="about", direction=direction,
                    banded=True, exceeds_side=_effect_side(test, test.about))
    if test.at_least is not None:
        lo, strict, direction = _lower(test, test.at_least, t)
        if test.range:
            return Rule(lo=lo, lo_strict=strict, hi=test.at_most * (1 + t), hi_inclusive=True,
                        stated=test.at_least, stated_hi=test.at_most, comparator="range",
                        direction=direction, banded=True,
                        exceeds_side=_effect_side(test, test.at_least))
        return Rule(lo=lo, lo_strict=strict, stated=test.at_least, comparator="at_least",
                    direction=direction)
    if test.below is not None:
        x = test.below
        hi, direction = x * (1 + t), ""
        if ratio and x <= 1 and hi > 1:
            hi, direction = 1.0, "slower" if test.kind == "speedup" else "below"
        return Rule(hi=hi, stated=x, comparator="below", direction=direction)
    return Rule(lo=1.0, lo_strict=True, hi=None)  # correctness and crossover judge otherwise
