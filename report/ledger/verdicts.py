"""From a claim's comparisons in one environment to its verdict: holds, exceeds, fails,
depends (with where it flips), unsettled (with why), each with its regions as data."""

from __future__ import annotations

import itertools
import math

import pandas as pd

from report import analysis, formatting
from report.ledger.comparison import (
    DEPENDS,
    EXCEEDS,
    FAILS,
    HOLDS,
    NOT_MEASURED,
    UNSETTLED,
    Comparison,
    Judgement,
    Region,
)
from report.ledger.kinds import KINDS
from report.ledger.rules import rule
from report.ledger.schema import Rule, Test
from report.ledger.words import flops_text, num, point, points, region_text


def settle(test: Test, out: Judgement) -> None:
    """The verdict of a judgement whose comparisons are measured, its regions and key figure."""
    if KINDS[test.kind].crossover:
        crossover(test, out)
    else:
        verdict(out, rule(test))
        out.regions = regions(out)
        out.region = region_text(out.regions, out.unit,
                                 [c.unsettled_because for c in out.measured if c.unsettled_because])
        out.short = out.region
        out.direction, out.size = direction_and_size(test, out)
    summarise(out)


def verdict(out: Judgement, rule_: Rule) -> None:
    measured = out.measured
    settled = [c for c in measured if c.settled]
    unsettled = [c for c in measured if not c.settled]
    outcomes = {c.outcome for c in settled}
    medians = {c.outcome for c in measured}
    out.leans = DEPENDS if len(medians) > 1 else next(iter(medians), "")
    if len(outcomes) > 1:
        out.verdict = DEPENDS
        out.condition = out.settled_condition = depends_condition(
            settled, rule_.banded, rule_.exceeds_side)[0]
        if unsettled:
            out.condition += f"; unsettled: {points(unsettled)}"
    elif unsettled:
        out.verdict = UNSETTLED
        single = [c for c in unsettled if c.single]
        split = [c for c in unsettled if not c.single]
        parts = [c.unsettled_because for c in split if c.unsettled_because]
        split = [c for c in split if not c.unsettled_because]
        if split:
            parts.append(f"the processes disagree on {len(split)} of {len(measured)} "
                         f"comparisons: {points(split)}")
        if single:
            parts.append("every comparison rests on one process a side" if len(single) == len(
                measured) else f"{len(single)} of {len(measured)} comparisons rest on one "
                f"process a side: {points(single)}")
        out.condition = "; ".join(parts)
    else:
        out.verdict = outcomes.pop()


def _bound(busy: float | None) -> str | None:
    return None if busy is None else analysis.boundedness(pd.Series([busy])).iloc[0]


def regions(out: Judgement) -> list[Region]:
    """Workload by workload along its size axis, each stretch of points with one answer:
    its figures, how busy the baseline kept the device, the host, the fewest processes."""
    found = []
    groups: dict[str, list[Comparison]] = {}
    for c in out.measured:
        groups.setdefault(c.workload, []).append(c)
    for workload, items in groups.items():
        runs: list[list[Comparison]] = []
        for c in sorted(items, key=lambda c: (c.batch is None, c.batch or 0)):
            if runs and (runs[-1][0].outcome, runs[-1][0].settled) == (c.outcome, c.settled):
                runs[-1].append(c)
            else:
                runs.append([c])
        found += [_region(workload, run) for run in runs]
    return found


def _region(workload: str, items: list[Comparison]) -> Region:
    batches = [c.batch for c in items if c.batch is not None]
    figures = [c.figure for c in items if c.figure is not None]
    hosts = [c.host_us for c in items if c.host_us is not None]
    procs = [min(c.processes) for c in items if c.processes]
    return Region(workload=workload, outcome=items[0].outcome, settled=bool(items[0].settled),
                  axis=items[0].axis, first=min(batches) if batches else None,
                  last=max(batches) if batches else None,
                  lo=min(figures) if figures else None, hi=max(figures) if figures else None,
                  bounds=tuple(b for b in dict.fromkeys(c.bound or _bound(c.busy) for c in items)
                               if b),
                  host_us=(min(hosts), max(hosts)) if hosts else None,
                  processes=(min(procs), max(procs)) if procs else None,
                  host_regions=tuple(c.host_region for c in items if c.host_region))


def direction_and_size(test: Test, out: Judgement) -> tuple[str, str]:
    """A ratio claim with a stated size, judged twice: on how many points the ratio goes
    the claimed way at all, and on how many its size is within, above or below the
    stated figure (with tolerance)."""
    r = rule(test)
    figures = [c.figure for c in out.measured if c.figure is not None]
    if (not KINDS[test.kind].ratio or test.aggregate or r.stated is None or r.comparator == "within"
            or not figures):
        return "", ""
    gain = r.comparator in ("at_least", "range") or (r.comparator == "about" and r.stated > 1)
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
# Verbs, as the condition reads after "it": "it falls below the band for batch ≤ 1".
BAND_WORDS = {0: "holds", -1: "falls below the band", 1: "rises above the band"}


def _runs_text(runs, axis: str, words: dict[int, str]) -> str:
    parts = []
    for i, (side, first, last) in enumerate(runs):
        if i == 0:
            parts.append(f"{words[side]} for {axis} ≤ {num(last)}")
        elif i == len(runs) - 1:
            parts.append(f"{words[side]} from {axis} {num(first)}")
        elif first == last:
            parts.append(f"{words[side]} at {axis} {num(first)}")
        else:
            parts.append(f"{words[side]} for {axis} {num(first)} to {num(last)}")
    return ", ".join(parts)


def depends_condition(settled: list[Comparison], in_range: bool = False,
                      exceeds_side: int = 1) -> tuple[str, str]:
    """Where settled comparisons that disagree flip: (condition, short form).

    First along each workload's own size axis (batch, or n for a sweep): every workload
    must be constant or flip monotonically; then along the work per call (FLOPs) over
    every point; otherwise "holds in N of M cases"."""
    band = any(c.side == 1 for c in settled) and any(c.side == -1 for c in settled)
    words = (({0: "holds", exceeds_side: "exceeds", -exceeds_side: "falls short"}
              if exceeds_side else BAND_WORDS) if in_range else BAND_WORDS if band else SIDE_WORDS)
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
            text = (f"{words[a]} up to {flops_text(last)} per call ({point(lo)}), "
                    f"{words[b]} from {flops_text(first)} ({point(hi)})")
            return text, text
    yes = [c for c in settled if c.agrees]
    text = (f"holds in {len(yes)} of {len(settled)} cases, with no single threshold: "
            f"{', '.join(point(c) for c in yes)}")
    return text, f"holds in {len(yes)} of {len(settled)} cases"


def crossover(test: Test, out: Judgement) -> None:
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

    def meets(after: float, upto: float) -> bool:
        """The measured sizes place the crossover in (after, upto]: it agrees with the
        claim where that interval meets the band."""
        return after < band[1] and upto >= band[0]

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
            # The crossover lies after the last loss and at or before the first win.
            return meets(xs[i - 1] if i else -math.inf, xs[i]), text, xs[i]
        i = won[-1]
        if not all(wins[:i + 1]):
            return False, f"{test.mode} beats {test.baseline} at some {axis} but not up to one", None
        lost = (f", loses from {axis} {xs[i + 1]}" if i + 1 < len(xs)
                else f" (the largest {axis} measured)")
        text = f"{test.mode} beats {test.baseline} up to {axis} {xs[i]}{lost}"
        return meets(xs[i], xs[i + 1] if i + 1 < len(xs) else math.inf), text, xs[i]

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
    out.leans = HOLDS if verdict else FAILS
    if len(outcomes) > 1:
        out.verdict = UNSETTLED
        out.condition += f"; unsettled at {axis} {', '.join(str(points[i].batch) for i in unsettled)}"
    else:
        out.verdict = HOLDS if verdict else FAILS


def summarise(out: Judgement) -> None:
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
    out.evidence = seen or ()

