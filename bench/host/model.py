"""The host model: how a host-bound time follows the host probe, and the speedup it predicts
at another host's probe.

Every paired process times the host probe (bench/host/probe.py) in every round, beside its modes.
Where a case's time is set by the CPU that issues its work (the GPU idles most of the call,
a busy fraction below LAUNCH_BOUND), that time grows with the probe's per-op cost from one
process to the next; where the device sets it, it stays put. So, per environment and case,
a host-bound side is a straight line of its per-process median against the process's median
probe, fitted by least squares over every paired process of every lease (`Line`); a
device-bound side stays a figure, the median and range of its processes (`Figure`). A
speedup over eager with one side of each kind (host-dependent), or, on a CPU backend, with
both sides host-bound, is then predicted at probe p as base(p) / mode(p), with a band made
of the line's prediction interval and the figure's range (`SpeedupModel`). A prediction is
refused outside the probe values the lines were fitted on.

The probe of a process is the median of its blocks (bench/host/probe.py's PROBE_CALLS calls each).
A block a preemption cut is left out by the median, while a mode's block, many times
longer, keeps every preemption in its time. On a host with idle cores the two agree; on a
time-sliced one (the process pinned to cores it shares with busy threads) the median reports
the host's cost between preemptions only, so the model, read at it, under-predicts a
host-bound side. The mean of the blocks would count the preemptions, but it also counts
every rare hiccup of a quiet host, and fitted on it fewer held-out leases fall inside their
band, so the median stays the probe. What the median leaves out is kept beside it (`probe_mean_s`): where the
blocks' mean exceeds their median by more than NEAR, preemptions took that much from the
process (`time_sliced`), and a check outside its band there says so.

Standard library only: `python -m bench host` uses it without pandas, and report/ imports it,
so the site and the command predict from one definition. Both hand it rows: a record's
fields under the report's column names (`row_of`).
"""

from __future__ import annotations

import math
import re
import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from bench.stats import paired_speedup

BASELINE = "eager"
LAUNCH_BOUND, DEVICE_BOUND = 0.5, 0.8  # GPU busy-fraction bands: below, host; from, device
FITTED_SIDES = ("launch-bound", "cpu")  # sides whose time is set by the host issuing the work
MIN_PROCESSES = 6  # paired processes a published line rests on
MIN_TRAINING = 4  # processes a held-out check may fit on: two residual degrees of freedom
# The probability a band is meant to hold a new process's figure. 95%, not 90%: the goal is
# that at least 90% of held-out processes fall inside (COVERAGE_GOAL), and a band calibrated
# to hold exactly 90% meets that goal about half the time, by chance (held out on the H100 in
# December, a 90% band held 89.5-90.4% from one lease to the next).
BAND = 0.95
NEAR = 0.25  # two probe figures within this fraction of each other describe one host speed
SLOWED_TAG = "slowed-host"  # records measured on a host slowed on purpose: the test set
# Each slowed run gets a tag of its own (slowed-host, slowed-host-2, ...): under one tag a
# second run would find every case recorded and measure nothing, and the pages would keep
# one record of each process (tag and repeat) of the two runs.
SLOWED_TAGS = re.compile(r"^slowed-host(-\d+)?$")
SHAPES = "seed"
# The records fitted on: a case's processes, as report.analysis chooses them. The tag is
# part of a case's key, so an A/B run's processes (tags ab-GROUP-LABEL), a slowed host's and
# any other experiment's belong to cases of their own and are never fitted on.
PROCESS_TAGS = re.compile(r"^(main|rerun-\d+)$")

Row = Mapping[str, Any]


def row_of(record) -> dict[str, Any]:
    """The fields of a bench.records.Record this module reads, named as report.analysis
    names its columns, so the command and the report hand over the same rows."""
    activity, host, paired, timing = record.activity, record.host, record.paired, record.timing
    return {"env_id": record.env_id, "device_name": record.env.device_name,
            "backend": record.key.backend, "torch": record.env.torch,
            "machine": record.env.machine, "workload": record.key.workload,
            "batch_size": record.key.batch_size, "shapes": record.key.shapes,
            "case_dtype": record.key.dtype,
            "mode": record.key.mode, "tag": record.key.tag, "status": record.status,
            "process_timing": record.process.timing, "repeat": record.process.repeat,
            "repeats": record.process.repeats, "started_at": datetime.fromisoformat(record.started_at),
            "duration_s": record.duration_s,
            "busy_fraction": activity.busy_fraction if activity else None,
            "cpu_ops_per_call": activity.cpu_ops_per_call if activity else None,
            "hostname": host.hostname if host else None, "boot_id": host.boot_id if host else None,
            "op_s": host.op_s if host else (),
            "op_long_s": host.op_long_s if host else (), "group": paired.group if paired else None,
            "round_s": paired.round_s if paired else (),
            "median_s": timing.median_s if timing else None}


def probe_of(op_s: Iterable[float]) -> float:
    """A process's probe: the median of its blocks (`op_s`, seconds per eager op), the one
    statistic every figure of a host's eager-op cost is made of; several processes (a
    lease, a case, a reference host) take the median of theirs. The module docstring says
    why the median and not the mean."""
    return statistics.median(op_s)


def probe_of_row(row: Row) -> float:
    """A record's probe: the median of its long blocks (host.op_long_s, schema version 6 on),
    which keep the preemptions a time-sliced host deals, as a mode's block does; the median
    of its short blocks (`probe_of`) where it has none."""
    return probe_of(row.get("op_long_s") or row["op_s"])


def lease(row: Row) -> str:
    """One start of a machine: host name and boot id, as report/analysis/shown.py's `lease_of`."""
    return f"{row['hostname'] or row['machine']}/{row['boot_id'] or '?'}"


def side_of(busy_fraction: float | None, backend: str) -> str | None:
    """What sets a case's time, in report.analysis's words: "launch-bound", "device-bound",
    "mixed" by its GPU busy fraction, "cpu" on a CPU backend (the host is the device), None
    without a profile."""
    if backend == "cpu":
        return "cpu"
    if busy_fraction is None or math.isnan(busy_fraction):
        return None
    if busy_fraction < LAUNCH_BOUND:
        return "launch-bound"
    return "device-bound" if busy_fraction >= DEVICE_BOUND else "mixed"


def sides(rows: Iterable[Row]) -> dict[tuple, str | None]:
    """Per case (`case_key`): its side, from the median busy fraction of its ok isolated
    processes, each process its newest record and only the repeats its newest run planned:
    the selection report/analysis/shown.py's `latest` and `cases` make."""
    newest: dict[tuple, Row] = {}
    planned: dict[tuple, int] = {}  # the repeats the newest run of a case planned
    for row in sorted((r for r in rows if r["process_timing"] == "isolated"
                       and r["shapes"] == SHAPES and PROCESS_TAGS.match(r["tag"])),
                      key=lambda r: (r["started_at"], r["status"] == "ok", r["duration_s"])):
        newest[(*case_key(row), row["tag"], row["repeat"])] = row
        planned[(*case_key(row), row["tag"])] = row["repeats"]
    busy: dict[tuple, list[float]] = defaultdict(list)
    backend: dict[tuple, str] = {}
    for (*key, tag, repeat), row in newest.items():
        if repeat >= planned[(*key, tag)]:
            continue
        backend[tuple(key)] = row["backend"]
        if (row["status"] == "ok" and row["busy_fraction"] is not None
                and not math.isnan(row["busy_fraction"])):
            busy[tuple(key)].append(row["busy_fraction"])
    return {key: side_of(statistics.median(busy[key]) if busy[key] else None, b)
            for key, b in backend.items()}


def case_key(row: Row) -> tuple:
    """(env_id, workload, batch_size, shapes, dtype, mode): report/analysis/vocabulary.py's CASE."""
    return (row["env_id"], *point_of(row), row["mode"])


def point_of(row: Row) -> tuple:
    """(workload, batch_size, shapes, dtype): a case without its environment and mode."""
    return (row["workload"], row["batch_size"], row["shapes"], row["case_dtype"])


# ---- paired processes ---------------------------------------------------------------------

@dataclass(frozen=True)
class Process:
    """One paired process: where it ran, its median probe and each mode's own median and
    round times."""

    env_id: str
    device_name: str
    backend: str
    torch: str
    point: tuple  # `point_of` its records
    lease: str
    group: str
    probe_s: float
    median_s: dict[str, float]
    round_s: dict[str, tuple[float, ...]]
    probe_mean_s: float  # the mean of its blocks: with the time preemptions took from them
    started_at: datetime | None = None  # its first record's start: when its lease was first seen

    def speedup(self, mode: str, baseline: str = BASELINE) -> float | None:
        """The process's measured speedup: the median of its round ratios."""
        return paired_speedup(self.round_s[baseline], self.round_s[mode])


def processes(rows: Iterable[Row], tag: str | re.Pattern = PROCESS_TAGS) -> list[Process]:
    """The ok paired processes of seed shapes that timed the probe, under the process tags
    (those fitted on), or under `tag`, a name or a pattern (SLOWED_TAGS: those checked)."""
    groups: dict[tuple[str, str], list[Row]] = defaultdict(list)
    for row in rows:
        if (row["status"] == "ok" and row["process_timing"] == "paired"
                and (row["tag"] == tag if isinstance(tag, str) else tag.match(row["tag"]))
                and row["shapes"] == SHAPES and row["op_s"] and row["group"]):
            # A group is one process of one environment: a group name another environment
            # also used (a copied plan) must not merge two machines' processes.
            groups[(row["env_id"], row["group"])].append(row)
    found = []
    for (_, group), members in groups.items():
        first = members[0]
        found.append(Process(
            env_id=first["env_id"], device_name=first["device_name"], backend=first["backend"],
            torch=first["torch"], point=point_of(first),
            lease=lease(first), group=group, probe_s=probe_of_row(first),
            median_s={r["mode"]: r["median_s"] for r in members},
            round_s={r["mode"]: tuple(r["round_s"]) for r in members},
            probe_mean_s=statistics.fmean(first["op_s"]),
            started_at=min(r["started_at"] for r in members)))
    return found


# ---- the reference host: one host cost per GPU type, at which every figure is given ----

@dataclass(frozen=True)
class Reference:
    """The reference host of one GPU type (a CUDA device name, or a CPU model): the median,
    over every lease measured with it, of each lease's median probe, each lease weighted
    once however many processes it ran; with the fastest and the slowest lease."""

    device_name: str
    probe_s: float
    lo_s: float
    hi_s: float
    leases: int


def references(rows: Iterable[Row]) -> dict[str, Reference]:
    """The reference host of each GPU type, from every ok record that timed the probe under
    the process tags (those fitted on: a slowed host is never a reference)."""
    probes: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for row in rows:
        if row["status"] == "ok" and row["op_s"] and PROCESS_TAGS.match(row["tag"]):
            probes[row["device_name"]][lease(row)].append(probe_of_row(row))
    out = {}
    for device, by_lease in probes.items():
        each = [statistics.median(values) for values in by_lease.values()]
        out[device] = Reference(device_name=device, probe_s=statistics.median(each),
                                lo_s=min(each), hi_s=max(each), leases=len(each))
    return out


def host_dependent(side_by_case: Mapping[tuple, str | None]) -> list[tuple]:
    """Every case key (`case_key`) whose speedup over eager follows the host (`_ratio`), with
    or without a model: the cases a prediction for a GPU type owes an answer for."""
    found = []
    for key, side in side_by_case.items():
        if key[-1] != BASELINE and _ratio(side_by_case.get((*key[:-1], BASELINE)), side):
            found.append(key)
    return sorted(found, key=str)


def next_slowed_tag(tags: Iterable[str]) -> str:
    """The tag for a new slowed run, after every slowed tag among `tags`."""
    runs = [int(m.group(1)[1:]) if m.group(1) else 1
            for m in map(SLOWED_TAGS.match, tags) if m]
    return f"{SLOWED_TAG}-{max(runs) + 1}" if runs else SLOWED_TAG


def time_sliced(probe_s: float, probe_mean_s: float) -> bool:
    """Whether a probe's blocks averaged more than NEAR above their median: preemptions cut
    some of them, and the median (the probe) under-reports what an eager op costs there."""
    return probe_mean_s > probe_s * (1 + NEAR)


# ---- the two kinds of side ----------------------------------------------------------------

def t_quantile(probability: float, freedom: int) -> float:
    """Student's t quantile, from the normal one by the Cornish-Fisher expansion (within 0.1%
    from 4 degrees of freedom on, within 2% at 2), so that no table or scipy is needed."""
    z = statistics.NormalDist().inv_cdf(probability)
    v = float(freedom)
    return (z + (z**3 + z) / (4 * v) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * v**2)
            + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * v**3)
            + (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / (92160 * v**4))


@dataclass(frozen=True)
class Line:
    """time = intercept_s + slope * probe, least squares over paired processes. The slope is
    how many probe ops' worth of host work one call issues."""

    intercept_s: float
    slope: float
    processes: int
    leases: int
    probe_lo_s: float
    probe_hi_s: float
    probe_mean_s: float
    probe_sxx: float  # sum of squared probe deviations: how far the line may be trusted to tilt
    residual_sd_s: float  # sqrt(residual sum of squares / (processes - 2))
    residual_max: float  # largest |residual| / fitted time over the processes
    # The residuals' degrees of freedom: processes - 2 for a line of its own; a pooled line
    # (`pooled_lines`) takes its slope from every case of its GPU type and has more.
    freedom: int | None = None
    estimator: str = "line"  # ESTIMATORS: how the slope was found

    def at(self, probe_s: float) -> tuple[float, float, float]:
        """(low, fitted, high): the BAND prediction interval for one new process at `probe_s`."""
        fitted = self.intercept_s + self.slope * probe_s
        half = self.half_width_s * math.sqrt(
            1 + 1 / self.processes + (probe_s - self.probe_mean_s) ** 2 / self.probe_sxx)
        return fitted - half, fitted, fitted + half

    @property
    def half_width_s(self) -> float:
        """The band's scale: at probe p its half-width is half_width_s * sqrt(1 + 1/processes
        + (p - probe_mean_s)**2 / probe_sxx), which a page's script may compute alone."""
        freedom = self.processes - 2 if self.freedom is None else self.freedom
        return t_quantile((1 + BAND) / 2, freedom) * self.residual_sd_s

    def band(self) -> float:
        """The band's half-width at the centre of the fitted probes, relative to the fit there."""
        low, fitted, _ = self.at(self.probe_mean_s)
        return (fitted - low) / fitted


def fit_line(points: list[tuple[float, float, str]]) -> Line | None:
    """A Line through (probe_s, time_s, lease) points; None for fewer than three, or probes
    that do not vary."""
    if len(points) < 3:
        return None
    x = [p for p, _, _ in points]
    y = [t for _, t, _ in points]
    mean = statistics.fmean(x)
    sxx = sum((v - mean) ** 2 for v in x)
    if sxx <= 0:
        return None
    slope, intercept = statistics.linear_regression(x, y)
    residuals = [t - (intercept + slope * p) for p, t in zip(x, y, strict=True)]
    return Line(intercept_s=intercept, slope=slope, processes=len(points),
                leases=len({lease for _, _, lease in points}), probe_lo_s=min(x), probe_hi_s=max(x),
                probe_mean_s=mean, probe_sxx=sxx,
                residual_sd_s=math.sqrt(sum(r * r for r in residuals) / (len(points) - 2)),
                residual_max=max(abs(r) / (t - r) for r, t in zip(residuals, y, strict=True)))


@dataclass(frozen=True)
class Figure:
    """A device-bound side: the median of its processes' medians and their range."""

    median_s: float
    lo_s: float
    hi_s: float
    processes: int

    def at(self, probe_s: float) -> tuple[float, float, float]:
        return self.lo_s, self.median_s, self.hi_s


def figure(times: list[float]) -> Figure | None:
    return Figure(statistics.median(times), min(times), max(times), len(times)) if times else None


# ---- speedups -------------------------------------------------------------------------------

@dataclass(frozen=True)
class Prediction:
    low: float
    speedup: float
    high: float  # math.inf where the mode's band reaches zero time
    outside_s: float  # 0 inside the fitted probes; else how far below (< 0) or above (> 0)

    def holds(self, measured: float) -> bool:
        return self.low <= measured <= self.high


@dataclass(frozen=True)
class SpeedupModel:
    """A mode over eager on one environment, whose ratio follows the host: each side a Line
    (host-bound) or a Figure (device-bound)."""

    env_id: str
    device_name: str
    backend: str
    torch: str
    workload: str
    batch_size: int | None
    shapes: str
    dtype: str
    mode: str
    ratio: str  # "host-dependent", or "cpu" where both sides are the CPU's
    base: Line | Figure
    side: Line | Figure  # the mode's
    processes: int  # paired processes that timed both
    probe_median_s: float  # their median probe: a typical measured host, to start from
    # Both sides on lines: the two follow one host state within a process, so their bands
    # do not add up. The band is the spread of the processes' own speedups about the
    # predicted one instead: the standard deviation of log(measured / predicted).
    ratio_sd: float | None = None
    baseline: str = BASELINE
    estimator: str = "line"  # ESTIMATORS: how its lines' slopes were found

    @property
    def lines(self) -> list[Line]:
        return [s for s in (self.base, self.side) if isinstance(s, Line)]

    @property
    def probe_range_s(self) -> tuple[float, float]:
        """The probes every line was fitted on."""
        return (max(line.probe_lo_s for line in self.lines),
                min(line.probe_hi_s for line in self.lines))

    def outside(self, probe_s: float) -> float:
        """0 inside the fitted probes; else how far below (< 0) or above (> 0) them. Asked
        before `at`: far outside, the band's terms overflow a float."""
        lo, hi = self.probe_range_s
        return probe_s - hi if probe_s > hi else probe_s - lo if probe_s < lo else 0.0

    def at(self, probe_s: float) -> Prediction:
        base_lo, base, base_hi = self.base.at(probe_s)
        mode_lo, mode, mode_hi = self.side.at(probe_s)
        outside = self.outside(probe_s)
        if self.ratio_sd is not None:
            line = self.base
            half = t_quantile((1 + BAND) / 2, self.processes - 2) * self.ratio_sd * math.sqrt(
                1 + 1 / self.processes + (probe_s - line.probe_mean_s) ** 2 / line.probe_sxx)
            speedup = base / mode
            return Prediction(low=speedup * math.exp(-half), speedup=speedup,
                              high=speedup * math.exp(half), outside_s=outside)
        return Prediction(low=max(base_lo, 0.0) / mode_hi, speedup=base / mode,
                          high=base_hi / mode_lo if mode_lo > 0 else math.inf, outside_s=outside)

    def region(self, at_least: float, steps: int = 200) -> tuple[str, float | None]:
        """Where, among the probes fitted, the band's low end is at least `at_least`: a
        claim "speedup >= at_least" holds there. ("everywhere", None), ("nowhere", None),
        ("above", p) for probes from p on, ("below", p) for probes up to p, or ("mixed", None)
        where the holding probes are not one end of the range."""
        lo, hi = self.probe_range_s
        probes = [lo + (hi - lo) * i / steps for i in range(steps + 1)]
        holds = [self.at(p).low >= at_least for p in probes]
        if all(holds):
            return "everywhere", None
        if not any(holds):
            return "nowhere", None
        first, last = holds.index(True), len(holds) - 1 - holds[::-1].index(True)
        if not all(holds[first:last + 1]):
            return "mixed", None
        if last == steps:
            return "above", probes[first]
        if first == 0:
            return "below", probes[last]
        return "mixed", None

    @property
    def point(self) -> tuple:
        return (self.workload, self.batch_size, self.shapes, self.dtype)

    def describes(self) -> dict[str, Any]:
        return {"env_id": self.env_id, "device_name": self.device_name, "backend": self.backend,
                "torch": self.torch, "workload": self.workload, "batch_size": self.batch_size,
                "shapes": self.shapes, "case_dtype": self.dtype, "mode": self.mode,
                "baseline": self.baseline}


def _ratio(base_side: str | None, mode_side: str | None) -> str | None:
    if {base_side, mode_side} == {"launch-bound", "device-bound"}:
        return "host-dependent"
    if base_side == mode_side == "cpu":
        return "cpu"
    return None


def _side(kind: str, times: list[tuple[float, float, str]], least: int,
          pooled: Line | None = None) -> Line | Figure | None:
    if kind in FITTED_SIDES:
        if pooled is not None:
            return pooled
        line = fit_line(times)
        return line if line is not None and line.processes >= least else None
    return figure([t for _, t, _ in times])


# ---- estimators: how a host-bound side's slope is found --------------------------------------

LINE, OPS, ELASTICITY = "line", "ops", "elasticity"
# Each estimator writes a host-bound side as time = a_case + slope * probe. "line" fits both
# terms on the case's own processes. The pooled ones keep a_case per case and take the slope
# from every fitted side of the GPU type together: "ops" as theta * the eager ops the side
# dispatches per call (its activity profile's cpu_ops_per_call), one theta per GPU type: the
# host's cost per op; "elasticity" as theta * the case's mean time / mean probe, one theta
# per GPU type: how many percent a side's time moves per percent the probe moves.
ESTIMATORS = (LINE, OPS, ELASTICITY)
MIN_POOLED_CASE = 3  # processes a case needs of its own under a pooled slope: one lease's share
COVERAGE_GOAL = 0.90  # issue 90: leaving one lease out, this share of held-out processes inside


def counts(rows: Iterable[Row]) -> dict[tuple, float]:
    """Per case (`case_key`): the median eager ops dispatched per call over its ok records
    that profiled it (activity.cpu_ops_per_call), the count the "ops" estimator scales by."""
    found: dict[tuple, list[float]] = defaultdict(list)
    for row in rows:
        ops = row.get("cpu_ops_per_call")
        if (row["status"] == "ok" and row["shapes"] == SHAPES and ops is not None
                and not math.isnan(ops) and ops > 0):
            found[case_key(row)].append(ops)
    return {key: statistics.median(values) for key, values in found.items()}


def pooled_lines(found: list[Process], side_by_case: Mapping[tuple, str | None],
                 estimator: str, ops: Mapping[tuple, float] | None = None,
                 least: int = MIN_PROCESSES) -> dict[tuple, Line]:
    """Per host-bound side (`case_key`) with at least MIN_POOLED_CASE processes: its Line
    under a pooled `estimator`, the slope shared by every such side of its GPU type (at
    least `least` processes over at least two sides). Each side's equation is divided by
    its mean time, so that every case weighs by its relative residuals, not its size:
    (t - mean_t) / mean_t = theta * w * (p - mean_p) / mean_t, with w the side's weight
    (its ops, or mean_t / mean_p). The residual spread, relative, is pooled too, with
    processes - sides - 1 degrees of freedom; each Line carries it at its own scale and the
    probe spread that makes `Line.at` the pooled prediction interval."""
    by_side: dict[tuple, list[tuple[float, float, str]]] = defaultdict(list)
    device: dict[tuple, str] = {}
    for process in found:
        for mode, time_s in process.median_s.items():
            key = (process.env_id, *process.point, mode)
            if side_by_case.get(key) in FITTED_SIDES:
                by_side[key].append((process.probe_s, time_s, process.lease))
                device[key] = process.device_name
    terms: dict[str, list[tuple]] = defaultdict(list)  # per GPU type: (key, points, w, mean_p, mean_t)
    for key, points in by_side.items():
        if len(points) < MIN_POOLED_CASE:
            continue
        mean_p = statistics.fmean(p for p, _, _ in points)
        mean_t = statistics.fmean(t for _, t, _ in points)
        weight = (ops or {}).get(key) if estimator == OPS else mean_t / mean_p
        if weight is not None:
            terms[device[key]].append((key, points, weight, mean_p, mean_t))
    out = {}
    for sides_here in terms.values():
        total = sum(len(points) for _, points, *_ in sides_here)
        freedom = total - len(sides_here) - 1
        u = [(w * (p - mp) / mt, (t - mt) / mt)
             for _, points, w, mp, mt in sides_here for p, t, _ in points]
        suu = sum(x * x for x, _ in u)
        if len(sides_here) < 2 or total < least or freedom < 2 or suu <= 0:
            continue
        theta = sum(x * y for x, y in u) / suu
        spread = math.sqrt(sum((y - theta * x) ** 2 for x, y in u) / freedom)
        probes = [p for _, points, *_ in sides_here for p, _, _ in points]
        for key, points, w, mp, mt in sides_here:
            slope = theta * w
            intercept = mt - slope * mp
            out[key] = Line(
                intercept_s=intercept, slope=slope, processes=len(points),
                leases=len({lease_name for _, _, lease_name in points}),
                probe_lo_s=min(probes), probe_hi_s=max(probes), probe_mean_s=mp,
                probe_sxx=suu * mt * mt / (w * w), residual_sd_s=spread * mt,
                residual_max=max(abs(t - intercept - slope * p) / (intercept + slope * p)
                                 for p, t, _ in points),
                freedom=freedom, estimator=estimator)
    return out


def models(found: list[Process], side_by_case: Mapping[tuple, str | None],
           least: int = MIN_PROCESSES, estimator: str = LINE,
           ops: Mapping[tuple, float] | None = None) -> list[SpeedupModel]:
    """A SpeedupModel for every mode over eager whose ratio is host-dependent (or the CPU's),
    fitted on `found` by `estimator`. A line of the case's own ("line") needs at least
    `least` processes that timed the two modes together and on each fitted side; a pooled
    slope (`pooled_lines`) needs `least` processes over its GPU type and MIN_POOLED_CASE of
    the case."""
    pooled = {} if estimator == LINE else pooled_lines(found, side_by_case, estimator, ops, least)
    case_least = least if estimator == LINE else MIN_POOLED_CASE
    by_point: dict[tuple, list[Process]] = defaultdict(list)
    for process in found:
        by_point[(process.env_id, process.point)].append(process)
    out = []
    for (env_id, point), members in by_point.items():
        timed = {mode for p in members for mode in p.median_s}
        if BASELINE not in timed:
            continue
        side_of_mode = {m: side_by_case.get((env_id, *point, m)) for m in timed}
        for mode in sorted(timed - {BASELINE}):
            ratio = _ratio(side_of_mode[BASELINE], side_of_mode[mode])
            if ratio is None:
                continue
            if estimator != LINE and not all(
                    (env_id, *point, m) in pooled for m in (BASELINE, mode)
                    if side_of_mode[m] in FITTED_SIDES):
                continue
            both = [p for p in members if mode in p.median_s and BASELINE in p.median_s]
            base = _side(side_of_mode[BASELINE], _times(members, BASELINE), case_least,
                         pooled.get((env_id, *point, BASELINE)))
            side = _side(side_of_mode[mode], _times(members, mode), case_least,
                         pooled.get((env_id, *point, mode)))
            if base is None or side is None or len(both) < case_least:
                continue
            first = members[0]
            out.append(SpeedupModel(env_id=env_id, device_name=first.device_name,
                                    backend=first.backend, torch=first.torch, workload=point[0],
                                    batch_size=point[1], shapes=point[2], dtype=point[3],
                                    mode=mode, ratio=ratio,
                                    base=base, side=side, processes=len(both),
                                    probe_median_s=statistics.median(p.probe_s for p in both),
                                    ratio_sd=_ratio_sd(base, side, both, mode),
                                    estimator=estimator))
    return out


def _ratio_sd(base: Line | Figure, side: Line | Figure, both: list[Process],
              mode: str) -> float | None:
    """Where both sides are lines: the spread of log(measured / predicted speedup) over the
    processes that timed both, with the two degrees of freedom a line takes."""
    if not (isinstance(base, Line) and isinstance(side, Line)) or len(both) < 3:
        return None
    logs = [math.log(p.speedup(mode) / (base.at(p.probe_s)[1] / side.at(p.probe_s)[1]))
            for p in both]
    return math.sqrt(sum(x * x for x in logs) / (len(logs) - 2))


def _times(members: list[Process], mode: str) -> list[tuple[float, float, str]]:
    return [(p.probe_s, p.median_s[mode], p.lease) for p in members if mode in p.median_s]


def fitted_sides(model_list: list[SpeedupModel]) -> list[dict[str, Any]]:
    """One row per fitted host-bound side (a case, keyed as cases are), with its line."""
    rows = {}
    for model in model_list:
        for mode, side in ((model.baseline, model.base), (model.mode, model.side)):
            if isinstance(side, Line):
                rows[(model.env_id, *model.point, mode)] = {
                    **model.describes(), "mode": mode, "line": side}
    return list(rows.values())


# ---- checks: a held-out lease, and hosts slowed on purpose ---------------------------------

@dataclass(frozen=True)
class Check:
    """Measured against predicted, for one model's processes on one lease that the model was
    not fitted on. `inside` judges the median measured speedup against the band at the median
    probe; `processes_inside` counts the processes within the band at their own probe."""

    model: SpeedupModel
    lease: str
    probe_s: float
    measured: float
    prediction: Prediction
    processes: int
    processes_inside: int
    measured_each: tuple[float, ...] = field(default=())
    probe_mean_s: float | None = None  # the median of the processes' blocks' means
    # Per process: |predicted at its own probe / measured - 1|, how far the band's centre was
    centre_errors: tuple[float, ...] = field(default=())

    @property
    def inside(self) -> bool:
        return self.prediction.holds(self.measured)

    @property
    def time_sliced(self) -> bool:
        return self.probe_mean_s is not None and time_sliced(self.probe_s, self.probe_mean_s)

    @property
    def extrapolated(self) -> bool:
        return self.prediction.outside_s != 0.0


def _check(model: SpeedupModel, lease_name: str, tested: list[Process]) -> Check | None:
    found = [(p, p.speedup(model.mode, model.baseline)) for p in tested
             if model.mode in p.round_s and model.baseline in p.round_s]
    found = [(p, s) for p, s in found if s is not None]
    if not found:
        return None
    probe = statistics.median(p.probe_s for p, _ in found)
    measured = statistics.median(s for _, s in found)
    return Check(model=model, lease=lease_name, probe_s=probe, measured=measured,
                 prediction=model.at(probe), processes=len(found),
                 processes_inside=sum(model.at(p.probe_s).holds(s) for p, s in found),
                 measured_each=tuple(s for _, s in found),
                 probe_mean_s=statistics.median(p.probe_mean_s for p, _ in found),
                 centre_errors=tuple(abs(model.at(p.probe_s).speedup / s - 1) for p, s in found))


def held_out(found: list[Process], side_by_case: Mapping[tuple, str | None],
             published: list[SpeedupModel], estimator: str = LINE,
             ops: Mapping[tuple, float] | None = None) -> list[Check]:
    """Leave one lease out: for every lease of a GPU type in turn, the models of `estimator`
    fitted on every other process of that GPU type (a line of a case's own on at least
    MIN_TRAINING processes), each published model's case set against its processes on the
    held-out lease. The lease is unseen by every case, so a pooled slope learns nothing of
    it from another case measured there."""
    keys = {(m.env_id, m.point, m.mode) for m in published}
    devices = {m.device_name for m in published}
    out = []
    for device in sorted(devices):
        here = [p for p in found if p.device_name == device]
        for name in sorted({p.lease for p in here}):
            training = [p for p in here if p.lease != name]
            least = MIN_TRAINING if estimator == LINE else MIN_PROCESSES
            for refit in models(training, side_by_case, least, estimator, ops):
                if (refit.env_id, refit.point, refit.mode) not in keys:
                    continue
                tested = [p for p in here if p.lease == name and p.env_id == refit.env_id
                          and p.point == refit.point]
                found_check = _check(refit, name, tested)
                if found_check is not None:
                    out.append(found_check)
    return out


@dataclass(frozen=True)
class Score:
    """How one estimator predicted the leases it never saw, on one GPU type: its published
    models, the held-out processes checked and inside their band, and the median |centre
    error| over them."""

    device_name: str
    estimator: str
    models: int
    processes: int
    inside: int
    centre_error: float | None

    @property
    def share(self) -> float | None:
        return self.inside / self.processes if self.processes else None

    @property
    def meets(self) -> bool:
        return bool(self.processes) and self.inside / self.processes >= COVERAGE_GOAL


def score(device: str, estimator: str, published: list[SpeedupModel],
          checks: list[Check]) -> Score:
    errors = [e for c in checks for e in c.centre_errors]
    return Score(device_name=device, estimator=estimator,
                 models=sum(m.device_name == device for m in published),
                 processes=sum(c.processes for c in checks),
                 inside=sum(c.processes_inside for c in checks),
                 centre_error=statistics.median(errors) if errors else None)


def chosen(scores: Iterable[Score]) -> dict[str, str]:
    """The estimator of each GPU type, written once: of those whose held-out processes fall
    inside their band at least COVERAGE_GOAL of the time, the one that checks the most
    held-out processes (it models the most cases, and every one of them was checked), then
    the smaller median centre error; where none meets the goal, the highest share inside,
    then the smaller centre error. A GPU type no pooled estimator can model keeps "line"."""
    best: dict[str, Score] = {}
    for found in scores:
        if not found.processes:
            continue
        rank = (found.meets, found.processes if found.meets else found.share,
                -(found.centre_error or 0.0), found.estimator == LINE)
        held = best.get(found.device_name)
        if held is None or rank > (held.meets, held.processes if held.meets else held.share,
                                   -(held.centre_error or 0.0), held.estimator == LINE):
            best[found.device_name] = found
    return {device: found.estimator for device, found in best.items()}


@dataclass(frozen=True)
class Fitted:
    """The host models as published: every estimator's models and held-out checks, their
    scores per GPU type, the estimator chosen for each (`chosen`), and its models
    (`models`) and checks (`held_out`), the one set the site and the command predict from."""

    every: dict[str, list[SpeedupModel]]
    checks: dict[str, list[Check]]
    scores: list[Score]
    estimator: dict[str, str]  # per GPU type

    @property
    def models(self) -> list[SpeedupModel]:
        return [m for name, found in self.every.items() for m in found
                if self.estimator.get(m.device_name, LINE) == name]

    @property
    def held_out(self) -> list[Check]:
        return [c for name, found in self.checks.items() for c in found
                if self.estimator.get(c.model.device_name, LINE) == name]


def fit(rows: list[Row]) -> Fitted:
    """Every estimator fitted on `rows`' paired processes (PROCESS_TAGS), each scored by
    leaving one lease out per GPU type, and the estimator of each GPU type chosen."""
    side_by_case, ops = sides(rows), counts(rows)
    found = processes(rows)
    every = {name: models(found, side_by_case, estimator=name, ops=ops) for name in ESTIMATORS}
    checks = {name: held_out(found, side_by_case, every[name], name, ops) for name in ESTIMATORS}
    devices = sorted({m.device_name for found_models in every.values() for m in found_models})
    scores = [score(device, name, every[name],
                    [c for c in checks[name] if c.model.device_name == device])
              for device in devices for name in ESTIMATORS]
    return Fitted(every=every, checks=checks, scores=scores, estimator=chosen(scores))


def fresh(rows: list[Row], cutoff: datetime) -> tuple[list[Check], set[str]]:
    """The fresh-lease check: every estimator fitted on the processes of leases first seen
    before `cutoff`, each of its models set against the processes of leases first seen from
    `cutoff` on (one Check per model and lease); with the fresh leases' names."""
    side_by_case, ops = sides(rows), counts(rows)
    found = processes(rows)
    first: dict[str, datetime] = {}
    for process in found:
        if process.started_at is not None:
            first[process.lease] = min(first.get(process.lease, process.started_at),
                                       process.started_at)
    new = {name for name, at in first.items() if at >= cutoff}
    training = [p for p in found if p.lease not in new]
    tested = [p for p in found if p.lease in new]
    return [c for name in ESTIMATORS
            for c in slowed(tested, models(training, side_by_case, estimator=name, ops=ops))], new


def slowed(tested: list[Process], published: list[SpeedupModel]) -> list[Check]:
    """Every published model against the processes measured on a slowed host (tag
    SLOWED_TAG) of its environment, one Check per model and lease."""
    out = []
    for model in published:
        members = [p for p in tested if p.env_id == model.env_id
                   and p.point == model.point]
        for name in sorted({p.lease for p in members}):
            found_check = _check(model, name, [p for p in members if p.lease == name])
            if found_check is not None:
                out.append(found_check)
    return out


def share_inside(checks: list[Check]) -> float | None:
    return sum(c.inside for c in checks) / len(checks) if checks else None
