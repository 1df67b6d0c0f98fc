"""When one figure agrees with a claim: the stated figure, its tolerance and, for a ratio
of two modes, the direction it implies."""

from __future__ import annotations

import math
from dataclasses import dataclass

from report.ledger.schema import Test

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


def _lower(test: Test, x: float, t: float) -> tuple[float, bool, str]:
    """X less its tolerance, or for a ratio claiming a gain, "above 1" with no slack."""
    lo = x * (1 - t)
    if test.ratio and x > 1 and lo <= 1:
        return 1.0, True, "faster" if test.kind == "speedup" else "above"
    return lo, False, ""


def _effect_side(test: Test, stated: float) -> int:
    """Where past its band the claim's effect is larger than stated: for a ratio of two
    modes, away from 1 on the side it states (a speedup grows upwards; a loss or a
    reduction below 1 downwards: "71x fewer" is exceeded by 100x fewer, not by 1.0x); for
    any other quantity, above where larger is the effect (`Test.larger`: a share removed,
    compile time a claim calls slow), and nowhere where it is a cost (a latency, an
    overhead, idle time): past a cost's point on either side the claim fails."""
    if test.ratio:
        return -1 if stated < 1 else 1
    return 1 if test.larger == EFFECT else 0


def rule(test: Test) -> Rule:
    """The claims.yaml header's reading of about / at_least / at_most / below / within
    with tolerance and, for ratios, the direction."""
    t = test.tolerance or 0.0
    if test.within is not None:
        ref = 1.0 if test.ratio else test.value  # a ratio: "no change"
        return Rule(lo=ref - test.within * ref, hi=ref + test.within * ref, hi_inclusive=True,
                    stated=ref, comparator="within")
    if test.about is not None:
        lo, strict, direction = _lower(test, test.about, t)
        hi = test.about * (1 + t)
        if test.ratio and test.about < 1 and hi >= 1:
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
        if test.ratio and x <= 1 and hi > 1:
            hi, direction = 1.0, "slower" if test.kind == "speedup" else "below"
        return Rule(hi=hi, stated=x, comparator="below", direction=direction)
    return Rule(lo=1.0, lo_strict=True, hi=None)  # correctness and crossover judge otherwise
