"""One point of a claim in one environment (Comparison), one claim in one environment
(Judgement), and the structured region a verdict carries (Region)."""

from __future__ import annotations

from dataclasses import dataclass

from report.ledger.schema import Rule
from report.ledger.values import missing

HOLDS, EXCEEDS, FAILS, DEPENDS, UNSETTLED = "holds", "exceeds", "fails", "depends", "unsettled"
NOT_TESTABLE, NOT_MEASURED = "not testable here", "not measured"
VERDICTS = (HOLDS, EXCEEDS, FAILS, DEPENDS, UNSETTLED, NOT_TESTABLE, NOT_MEASURED)
MIN_PROCESSES = 2  # a comparison resting on fewer processes a side is never settled


@dataclass(frozen=True)
class HostRegion:
    """Where a host-dependent speedup meets the claim, by the point's host model
    (report.analysis.host): among the probes it was fitted on (`lo_us`–`hi_us`, what one eager
    op cost in each paired process), where the model's band clears the claim's lower
    bound (`holds`) and, for a stated range or point, its upper one (`exceeds`); for an
    upper bound alone ("below X"), where the band's low end reaches it (`fails`). Each is
    SpeedupModel.region's answer: "above" or "below" a probe (µs), "everywhere", "nowhere"
    or "mixed"."""

    batch: int | None
    holds: tuple[str, float | None] | None  # None: the claim has no lower bound
    lo_us: float
    hi_us: float
    processes: int
    exceeds: tuple[str, float | None] = ("nowhere", None)
    fails: tuple[str, float | None] = ("nowhere", None)


@dataclass(slots=True)  # dozens per environment: no __dict__ each (issue 94)
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
    outcome: str = ""  # holds, fails or exceeds (a range or a point passed above)
    busy: float | None = None  # the baseline's busy fraction (one-sided: the mode's)
    bound: str | None = None  # what bounds the ratio (analysis.ratio_bound), where known
    host_us: float | None = None  # the host probe: what one eager op costs there, µs
    host_region: HostRegion | None = None  # a host-dependent speedup: where it meets the claim
    floor: float | None = None  # warm-up: eager's figure at the same point, the noise floor
    allowance: float | None = None  # extra-kernels: the input copies the harness adds
    field_absent: bool = False  # both cases ran, but their records lack the quantity
    note: str = ""  # why not measured, or what it rests on
    unsettled_because: str = ""  # an aggregate's: what else could still change its answer
    evidence: tuple[str, str] = ("", "")  # (page, anchor)


def judged(comparison: Comparison, values: list[float], agrees) -> None:
    """The comparison's answer, the range over its combinations of processes, and whether
    it is settled: every combination gives the same answer (for a range or a point, the
    same side of it), and no side rests on a single process."""
    values = [v for v in values if not missing(v)]
    comparison.lo = min(values) if values else None
    comparison.hi = max(values) if values else None
    comparison.agrees = agrees(comparison.figure)
    if comparison.agrees is None:
        return
    if isinstance(agrees, Rule):
        comparison.side = agrees.side(comparison.figure)
        if agrees.banded:
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
        isinstance(agrees, Rule) and agrees.exceeds_side
        and comparison.side == agrees.exceeds_side) else FAILS)


@dataclass(frozen=True)
class Region:
    """One stretch of a workload's points with one answer, as data: the home page, the
    quick answers and the seed pages format it. `lo`/`hi` are the figures there (in the
    judgement's unit), `busy` the boundedness of the baseline, `host_us` the range of
    what one eager op cost on the hosts (the host probe), `processes` the fewest a side,
    `host_regions` where each host-dependent point would meet the claim."""

    workload: str
    outcome: str  # holds, exceeds or fails
    settled: bool
    axis: str
    first: int | None  # the size axis from ... to (None: a workload without one)
    last: int | None
    lo: float | None
    hi: float | None
    bounds: tuple[str, ...] = ()
    host_us: tuple[float, float] | None = None
    processes: tuple[int, int] | None = None
    host_regions: tuple[HostRegion, ...] = ()  # its host-dependent points' host regions


@dataclass(slots=True)  # about a hundred per environment: no __dict__ each
class Judgement:
    """A claim in one environment."""

    env_id: str | None
    label: str  # the environment, or a backend without any environment
    backend: str
    verdict: str
    # Empty ones are the shared (): most judgements have no comparison, region or evidence,
    # and an empty list each was a fifth of the judged ledger's memory (issue 94).
    comparisons: list[Comparison] | tuple[()] = ()
    condition: str = ""  # depends: where it flips; unsettled: which comparisons
    # The verdict its comparisons' median answers give, settled or not: for an unsettled
    # verdict, the way it leans (holds, exceeds, fails, or depends where they differ).
    leans: str = ""
    settled_condition: str = ""  # depends: where it flips, over the settled comparisons alone
    short: str = ""  # a short form of the condition for summary tables
    figure: float | None = None  # the key figure (single-figure tests) ...
    lo: float | None = None
    hi: float | None = None
    n: int = 0
    figure_range: tuple[float, float] | None = None  # ... or the range over comparisons
    unit: str = ""
    crossing: int | None = None  # crossover: the size where the mode's answer changes
    region: str = ""  # where each answer holds, in words (from `regions`)
    regions: list[Region] | tuple[()] = ()  # ... as data
    direction: str = ""  # a ratio claim: on how many points the ratio goes the claimed way
    size: str = ""  # ... and how many fall within, above or below the stated size
    reason: str = ""  # not measured / not testable: what is missing
    evidence: list[tuple[str, str, str]] | tuple[()] = ()  # (text, page, anchor)

    @property
    def measured(self) -> list[Comparison]:
        return [c for c in self.comparisons if c.agrees is not None]
