"""The decision guide's rules: thresholds found in the records, and the one function that
turns them and a model's own measurements into a recommended mode.

The guide asks, in this order: which device; training or inference; do shapes vary
between calls; is eager launch-bound (GPU busy fraction) and does the compiled call still
launch many kernels; does one process make enough calls to pay for compiling. Every
threshold is found in one environment's cases by `find_split`: the cut on one proxy
(eager's busy fraction, the compiled call's kernels, eager's time per call) that best
separates the points where a mode paid from those where it did not, judged by balanced
accuracy so that a rare outcome is not drowned by a common one. A question whose data is
missing is still asked, and answered "not measured".

Nothing here names a mode: the modes the questions compare are found by their traits
(`analysis.mode_with`), and the mode a leaf recommends is `pick`ed from its points.

- `flow(cases)`: the questions and leaves of one environment (a `Flow`).
- `recommend(point, flow)`: the recommended mode at one point (env, workload, batch),
  with the reason: the path through the flow and the point's own measurements, by the
  same `pick` rule the leaves use.
- `for_workloads(cases, workloads)`: `recommend` at every point of some workloads (a
  model of one's own), each judged by its environment's flow.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from report import analysis, formatting
from report.analysis import (
    BASELINE,
    DTYPE,
    MEANINGFUL_GAIN,
    POINT,
    TRAITS,
    break_even_calls,
    choice,
    compare,
    mode_rank,
    mode_with,
    workload_rank,
)
from report.analysis.ordering import per_frame

PAYS = 1.0 + MEANINGFUL_GAIN  # a mode "pays" over another from this speedup on, in every pairing


# ---- points: one row per (env, workload, batch), with the proxies the questions use ----------

def _varying(cycle: Any) -> bool:
    return isinstance(cycle, tuple | list) and len(cycle) > 0


def points(cases: pd.DataFrame) -> pd.DataFrame:
    """One row per point that has an ok eager case: its eager busy fraction, kernels and
    time per call, the plain compiled mode's kernels per call, and whether the workload is
    a training step or cycles its shapes (from the records' workload info)."""
    eager = cases[(cases["mode"] == BASELINE) & cases["ok"]]
    out = eager[[*POINT, "backend", "family", "training", "batch_cycle", "axis", "busy_fraction",
                 "device_kernels_per_call", "median_s"]].rename(columns={
        "busy_fraction": "eager_busy", "device_kernels_per_call": "eager_kernels",
        "median_s": "eager_s"})
    plain = mode_with(cases, compiled=True)
    compiled = cases[(cases["mode"] == plain) & cases["ok"]][
        [*POINT, "device_kernels_per_call"]].rename(
        columns={"device_kernels_per_call": "compiled_kernels"})
    out = out.merge(compiled, on=POINT, how="left")
    out["training"] = out["training"].fillna(False).astype(bool)
    out["varying"] = out["batch_cycle"].map(_varying)
    return out.reset_index(drop=True)


def _label(workload: str, batch: Any) -> tuple[str, int | None]:
    """A point as (workload, batch or None), the way pages link to it."""
    return workload, None if pd.isna(batch) else int(batch)


# ---- a threshold on one proxy ------------------------------------------------------------------

@dataclass(frozen=True)
class Split:
    """A cut on `proxy` found in the records. `pays_when` "below": the outcome held at
    `near_hits` of `near_n` points with proxy <= `near` and at `far_hits` of `far_n` points
    with proxy >= `far` (the next measured value); "above" mirrors it (>= near, <= far).
    Without both outcomes among the points there is no cut: `near`/`far` are None and
    `near_hits` of `near_n` counts every point."""

    proxy: str
    pays_when: str  # "below" or "above"
    near: float | None
    far: float | None
    near_hits: int
    near_n: int
    far_hits: int
    far_n: int
    # (workload, batch, whether the mode paid there), in proxy order
    near_points: tuple[tuple[str, int | None, bool], ...] = ()
    far_points: tuple[tuple[str, int | None, bool], ...] = ()

    @property
    def measured(self) -> bool:
        return self.near_n + self.far_n > 0

    @property
    def found(self) -> bool:
        return self.near is not None

    def side(self, value: float | None) -> bool | None:
        """True where `value` falls on the side where the mode paid; None if unknown."""
        if not self.found or value is None or pd.isna(value):
            return None
        if self.pays_when == "below":
            return value <= (self.near + self.far) / 2
        return value >= (self.near + self.far) / 2


def find_split(df: pd.DataFrame, proxy: str, outcome: str, pays_when: str = "below") -> Split:
    """The cut between two adjacent measured values of `proxy` that best separates rows
    where `outcome` is true from the rest, by balanced accuracy (mean of the hit rate on
    each side); the first best cut in proxy order wins a tie."""
    d = df[df[proxy].notna() & df[outcome].notna()]
    d = d.assign(_w=d["workload"].map(workload_rank)).sort_values(
        [proxy, "_w", "batch_size"], ascending=pays_when == "below", kind="stable")
    values = [float(v) for v in d[proxy]]
    hit = [bool(v) for v in d[outcome]]
    names = tuple((*_label(w, b), h) for w, b, h in zip(d["workload"], d["batch_size"], hit,
                                                          strict=True))
    yes, no = sum(hit), len(hit) - sum(hit)
    if yes == 0 or no == 0:
        return Split(proxy, pays_when, None, None, yes, len(hit), 0, 0, names, ())
    best, best_score = None, -1.0
    for i in range(1, len(values)):
        if values[i - 1] == values[i]:
            continue
        near_yes, far_no = sum(hit[:i]), sum(not h for h in hit[i:])
        score = (near_yes / yes + far_no / no) / 2
        if score > best_score + 1e-12:
            best, best_score = i, score
    if best is None or best_score <= 0.5:
        return Split(proxy, pays_when, None, None, yes, len(hit), 0, 0, names, ())
    return Split(proxy, pays_when, values[best - 1], values[best], sum(hit[:best]), best,
                 sum(hit[best:]), len(hit) - best, names[:best], names[best:])


# ---- what a set of points recommends -----------------------------------------------------------

@dataclass(frozen=True)
class Pick:
    """The mode a set of points recommends. `speedup` is its median speedup over eager at
    the points where both were timed (`n` of them), with the smallest and largest over
    every process pairing (`lo`, `hi`); `cold_calls`/`warm_calls` the median number of
    calls after which its cold/warm first call has paid for itself (NEVER: no saving)."""

    mode: str | None
    speedup: float | None = None
    lo: float | None = None
    hi: float | None = None
    n: int = 0
    cold_calls: float | None = None
    warm_calls: float | None = None
    cold_s: float | None = None
    warm_s: float | None = None
    runner_up: str | None = None
    runner_up_speedup: float | None = None
    points: tuple[tuple[str, int | None], ...] = ()  # (workload, batch)
    cold_calls_lo: float | None = None  # the fewest and most calls to break even at one
    cold_calls_hi: float | None = None  # of the points, cold caches

    @property
    def measured(self) -> bool:
        return self.mode is not None

    @property
    def compiles(self) -> bool:
        return self.mode not in (None, BASELINE)


def _floats(values) -> np.ndarray:
    return np.array([np.nan if v is None or v is pd.NA else v for v in values], dtype=float)


def _nanmedian(values: np.ndarray) -> float | None:
    found = values[~np.isnan(values)]
    return float(np.median(found)) if len(found) else None


def _calls_range(calls: np.ndarray) -> tuple[float | None, float | None]:
    found = calls[~np.isnan(calls)]
    return (float(found.min()), float(found.max())) if len(found) else (None, None)


def _median_calls(calls: np.ndarray) -> float | None:
    """The median number of calls, rounded up: half a call is not a call."""
    found = _nanmedian(calls)
    return found if found is None or math.isinf(found) else float(math.ceil(found))


# Paired processes' figures over eager: the speedup, its range and the time saved per call.
PAIRED = tuple(f"paired_{BASELINE}_{figure}"
               for figure in ("speedup", "speedup_lo", "speedup_hi", "saving_s"))


def pick(cases: pd.DataFrame) -> Pick:
    """The mode to use at the points of `cases` (any number, all modes): the mode with the
    highest median speedup over eager, unless the runner-up ties with it and costs less
    (`analysis.choice.ties` and `cost`, the rule of `analysis.choose`). Only modes timed at
    every point where eager was are candidates."""
    # In plain Python over the few columns used: `pick` runs once per measured point, and
    # pandas selections, merges and groupbys of small frames were most of the guide's time.
    paired = [c for c in PAIRED if c in cases.columns]  # paired ratios over eager, where measured
    # A ratio not timed in one process divides isolated medians on both sides (never a
    # paired median by an isolated one: analysis.compare's rule); a table of isolated
    # cases alone has them under the plain names.
    iso = [f"{c}_isolated" if f"{c}_isolated" in cases.columns else c
           for c in ("median_s", "lo_s", "hi_s")]
    cases = cases.assign(**{f"iso_{c}": cases[name] for c, name in
                            zip(("median_s", "lo_s", "hi_s"), iso, strict=True)})
    wanted = [*POINT, "mode", "ok", "median_s", "lo_s", "hi_s", "cold_first_call_s",
              "warm_first_call_s", "iso_median_s", "iso_lo_s", "iso_hi_s", *TRAITS, *paired]
    rows = [dict(zip(wanted, values, strict=True))
            for values in cases[wanted].to_numpy(dtype=object)
            if not pd.isna(values[len(POINT) + 1]) and values[len(POINT) + 1]]
    eager = {_plain_key(tuple(row[c] for c in POINT)): row for row in rows
             if row["mode"] == BASELINE}
    if not eager:
        return Pick(None)
    n = len(eager)
    names = tuple(_label(row["workload"], row["batch_size"]) for row in eager.values())
    by_mode: dict[str, list[tuple[dict, dict]]] = {}
    for row in rows:
        base = eager.get(_plain_key(tuple(row[c] for c in POINT)))
        if base is not None:
            by_mode.setdefault(row["mode"], []).append((row, base))
    table = []
    for mode, found in sorted(by_mode.items(), key=lambda kv: mode_rank(kv[0])):
        if len(found) < n:
            continue
        col = {c: _floats(row[c] for row, _ in found) for c in
               ("iso_median_s", "iso_lo_s", "iso_hi_s", "cold_first_call_s", "warm_first_call_s")}
        col.update({f"{c}_base": _floats(base[c] for _, base in found)
                    for c in ("iso_median_s", "iso_lo_s", "iso_hi_s")})
        saving = col["iso_median_s_base"] - col["iso_median_s"]
        if mode == BASELINE:
            speedup = lo = hi = np.ones(len(found))
        else:
            speedup = col["iso_median_s_base"] / col["iso_median_s"]
            lo, hi = col["iso_lo_s_base"] / col["iso_hi_s"], col["iso_hi_s_base"] / col["iso_lo_s"]
            if len(paired) == len(PAIRED):  # paired processes' figures replace ratios of medians
                ratio, ratio_lo, ratio_hi, paired_saving = (_floats(row[c] for row, _ in found)
                                                            for c in PAIRED)
                measured = ~np.isnan(ratio)
                speedup = np.where(measured, ratio, speedup)
                lo, hi = np.where(measured, ratio_lo, lo), np.where(measured, ratio_hi, hi)
                saving = np.where(measured, paired_saving, saving)
        table.append({
            "mode": mode,
            "speedup": float(np.median(speedup)), "lo": float(lo.min()), "hi": float(hi.max()),
            "cold_s": _nanmedian(col["cold_first_call_s"]) if mode != BASELINE else None,
            "warm_s": _nanmedian(col["warm_first_call_s"]) if mode != BASELINE else None,
            "cold_calls": _median_calls(break_even_calls(col["cold_first_call_s"], saving)),
            "cold_range": _calls_range(break_even_calls(col["cold_first_call_s"], saving)),
            "warm_calls": _median_calls(break_even_calls(col["warm_first_call_s"], saving))})
    if not table:
        return Pick(None)
    # The rule of analysis.choose: the fastest, unless the runner-up ties with it and costs less.
    ranked = sorted(table, key=lambda row: (-row["speedup"], mode_rank(row["mode"])))
    chosen = ranked[0]
    if len(ranked) > 1 and choice.ties(chosen["speedup"], chosen["lo"], chosen["hi"],
                                        ranked[1]["speedup"], ranked[1]["lo"], ranked[1]["hi"]):
        chosen = min(ranked[:2], key=lambda row: choice.cost(
            row["mode"], row["cold_calls"], row["cold_s"]))
    others = sorted((row for row in table if row["mode"] != chosen["mode"]),
                    key=lambda row: -row["speedup"])
    if chosen["mode"] == BASELINE:
        chosen = {**chosen, "cold_calls": None, "warm_calls": None, "cold_range": (None, None)}
    return Pick(chosen["mode"], chosen["speedup"], chosen["lo"], chosen["hi"], n,
                chosen["cold_calls"], chosen["warm_calls"], chosen["cold_s"], chosen["warm_s"],
                others[0]["mode"] if others else None,
                others[0]["speedup"] if others else None, names, *chosen["cold_range"])


# ---- the flow of one environment ---------------------------------------------------------------

@dataclass(frozen=True)
class Versus:
    """`mode` against `base` over a leaf's points: the median speedup, and the lowest and
    highest over every pairing of processes at any of them."""

    mode: str
    base: str
    speedup: float
    lo: float
    hi: float


@dataclass(frozen=True)
class Leaf:
    """Where a path through the flow ends: the points that took it and what they pick."""

    key: str
    title: str  # the path, in words: "CUDA, inference, fixed shapes, launch-bound, many kernels"
    pick: Pick
    recompiles: int | None = None  # the plain compiled mode's recompiles, for varying shapes
    versus: Versus | None = None  # for varying shapes: dynamic shapes against the plain mode


@dataclass(frozen=True)
class Flow:
    """The questions and leaves of one environment (`env_id`) in one dtype, found in its
    cases: a threshold found in bfloat16 does not hold in float32."""

    env_id: str
    dtype: str
    backend: str
    graphs_mode: str | None  # the compiled mode that adds CUDA graphs
    plain_mode: str | None  # the compiled mode with no extra trait
    dynamic_mode: str | None
    busy: Split | None  # does graphs_mode pay over plain_mode, by eager's busy fraction
    kernels: Split | None  # ... and among the launch-bound, by the compiled call's kernels
    latency: Split | None  # without a busy fraction: does plain_mode pay over eager, by eager's time
    leaves: dict[str, Leaf] = field(default_factory=dict)
    batch_limits: tuple[tuple[str, int], ...] = ()  # largest batch on the busy split's paying side
    dynamic_points: int = 0
    training_points: int = 0

    @property
    def measured(self) -> bool:
        return any(leaf.pick.measured for leaf in self.leaves.values())


LEAVES = {
    "training": "training steps",
    "varying": "shapes that vary between calls",
    "device-bound": "device-bound: eager keeps the GPU busy",
    "launch-few": "launch-bound, but the compiled call launches few kernels",
    "launch-many": "launch-bound, and the compiled call still launches many kernels",
    "launch-unknown": "launch-bound, kernels after compiling not profiled",
    "slow-call": "eager calls that take long",
    "fast-call": "eager calls that are short",
    "all": "every measured inference point",
}


def _pays(cases: pd.DataFrame, mode: str | None, base: str | None) -> pd.DataFrame:
    """Per point: whether `mode` beat `base` by MEANINGFUL_GAIN in every process pairing."""
    if mode is None or base is None:
        return pd.DataFrame(columns=[*POINT, "pays", "gain"])
    found = compare(cases, mode, base, at_least=PAYS)
    found = found[found["speedup"].notna()]
    return found.assign(pays=found["holds"].astype(bool) & found["settled"].astype(bool),
                        gain=found["speedup"])[[*POINT, "pays", "gain"]]


def _at(cases: pd.DataFrame, pts: pd.DataFrame) -> pd.DataFrame:
    """The cases at the points of `pts`, in the order of `cases`: one mask over keys made
    once per frame (a merge per leaf was most of a flow's time)."""
    wanted = set(_point_keys(pts))
    keys = per_frame(cases, "point_keys", _point_keys)
    return cases[np.array([key in wanted for key in keys], dtype=bool)]


def _point_keys(df: pd.DataFrame) -> list[tuple]:
    return [_plain_key(key) for key in zip(*(df[c].tolist() for c in POINT), strict=True)]


def _batch_limits(pts: pd.DataFrame, split: Split) -> tuple[tuple[str, int], ...]:
    """Per batched workload measured on both sides of `split`: the largest batch whose
    eager busy fraction is on the paying side, when every smaller batch is too."""
    out = []
    batched = pts[pts["batch_size"].notna() & (pts["axis"] == "batch")]
    for workload, group in batched.groupby("workload"):
        sides = [(int(b), split.side(v)) for b, v in
                 sorted(zip(group["batch_size"], group["eager_busy"], strict=True))]
        if any(s is None for _, s in sides) or not any(s for _, s in sides) or all(
                s for _, s in sides):
            continue
        below = [b for b, s in sides if s]
        if below == [b for b, _ in sides[:len(below)]]:
            out.append((workload, below[-1]))
    return tuple(sorted(out, key=lambda item: (-len(pts[pts["workload"] == item[0]]),
                                               workload_rank(item[0]))))


# What `flow` reads of the case table (narrow frames select and merge several times faster).
FLOW_COLUMNS = (*POINT, "mode", "ok", "backend", "family", "training", "batch_cycle", "axis",
                "busy_fraction", "device_kernels_per_call", "median_s", "lo_s", "hi_s",
                "n_processes", "n_processes_base", "cold_first_call_s", "warm_first_call_s",
                "recompiles", "env_repeated", "mode_description", "bound", *TRAITS)


def _flow_columns(cases: pd.DataFrame) -> list[str]:
    """FLOW_COLUMNS, the paired figures compare() prefers where they exist, and the isolated
    figures a ratio not timed in one process divides instead (`pick`)."""
    return [*(c for c in FLOW_COLUMNS if c in cases.columns),
            *(c for c in cases.columns if c.startswith("paired_") or c.endswith("_isolated"))]


def flow(cases: pd.DataFrame) -> Flow:
    """The guide for the cases of one environment in one dtype."""
    env_ids, dtypes = sorted(set(cases["env_id"])), sorted(set(cases[DTYPE]))
    if len(env_ids) != 1 or len(dtypes) != 1:
        raise ValueError(f"flow() takes the cases of one environment in one dtype, got "
                         f"{len(env_ids)} environments and dtypes {dtypes}")
    cases = cases.loc[cases["shapes"] == cases["shapes"].iloc[0], _flow_columns(cases)]
    pts = points(cases)
    graphs = mode_with(cases, compiled=True, cuda_graphs=True)
    plain = mode_with(cases, compiled=True)
    dynamic = mode_with(cases, compiled=True, dynamic=True)
    backend = str(cases["backend"].iloc[0])
    # A CUDA-graph mode that never ran here (CPU, MPS) asks nothing of this environment.
    if graphs is not None and not cases[(cases["mode"] == graphs)]["cuda_graphs"].any():
        graphs = None
    leaves: dict[str, Leaf] = {}

    def leaf(key: str, at: pd.DataFrame, **extra) -> None:
        leaves[key] = Leaf(key, LEAVES[key], pick(_at(cases, at)), **extra)

    training = pts[pts["training"]]
    varying = pts[~pts["training"] & pts["varying"]]
    fixed = pts[~pts["training"] & ~pts["varying"]]
    leaf("training", training)
    recompiles = cases[(cases["mode"] == plain) & cases["ok"]].merge(
        varying[POINT], on=POINT)["recompiles"].dropna()
    versus = None
    if dynamic is not None and plain is not None and len(varying):
        found = compare(_at(cases, varying), dynamic, plain)
        found = found[found["speedup"].notna()]
        if len(found):
            versus = Versus(dynamic, plain, float(found["speedup"].median()),
                            float(found["speedup_lo"].min()), float(found["speedup_hi"].max()))
    leaf("varying", varying, recompiles=int(recompiles.max()) if len(recompiles) else None,
         versus=versus)

    busy = kernels = latency = None
    limits: tuple[tuple[str, int], ...] = ()
    profiled = fixed[fixed["eager_busy"].notna()]
    if len(profiled) and graphs is not None:
        judged = profiled.merge(_pays(cases, graphs, plain), on=POINT, how="left")
        busy = find_split(judged, "eager_busy", "pays", "below")
        if busy.found:
            sides = judged["eager_busy"].map(busy.side).astype(bool)
            near, far = judged[sides], judged[~sides]
            kernels = find_split(near, "compiled_kernels", "pays", "above")
            limits = _batch_limits(pts[~pts["training"] & ~pts["varying"]], busy)
            leaf("device-bound", far)
            if kernels.found:
                many = near["compiled_kernels"].map(kernels.side)
                leaf("launch-many", near[many.eq(True)])
                leaf("launch-few", near[many.eq(False)])
            else:
                leaf("launch-unknown", near)
        else:
            leaf("all", profiled)
    else:
        judged = fixed.merge(_pays(cases, plain, BASELINE), on=POINT, how="left")
        latency = find_split(judged, "eager_s", "pays", "above")
        if latency.found:
            slow = judged["eager_s"].map(latency.side).astype(bool)
            leaf("slow-call", judged[slow])
            leaf("fast-call", judged[~slow])
        else:
            leaf("all", fixed)
    return Flow(cases["env_id"].iloc[0], dtypes[0], backend, graphs, plain, dynamic, busy, kernels, latency,
                leaves, limits, len(varying), len(training))


# ---- one point's recommendation -----------------------------------------------------------------

@dataclass(frozen=True)
class Step:
    """One question on a point's path: what was asked, the point's answer and the
    threshold it was judged against (`None` where this environment has none)."""

    question: str
    answer: str
    threshold: str | None = None


@dataclass(frozen=True)
class Recommendation:
    mode: str | None  # None: eager was not timed at this point
    leaf: str | None  # the flow's leaf the point's proxies lead to, if they lead to one
    leaf_mode: str | None  # what that leaf recommends from the environment's points
    steps: tuple[Step, ...]
    own: Pick  # the point's own measurements, picked by the same rule
    agrees: bool | None  # own pick == the leaf's pick (None: no leaf)

    @property
    def reason(self) -> str:
        return "; ".join(f"{s.question} {s.answer}" + (f" ({s.threshold})" if s.threshold else "")
                         for s in self.steps)


def _fmt(proxy: str, value: float) -> str:
    if proxy == "eager_busy":
        return f"{value:.0%}"
    if proxy == "eager_s":
        return f"{value * 1e3:.3g}{formatting.UNIT_SPACE}ms"
    return f"{value:g}"


def threshold_text(split: Split | None) -> str | None:
    if split is None or not split.found:
        return None
    sign = "≤" if split.pays_when == "below" else "≥"
    return f"{sign} {_fmt(split.proxy, split.near)}"


def walk(point: pd.Series, fl: Flow) -> tuple[str | None, tuple[Step, ...]]:
    """The leaf of `fl` that a point's proxies (a `points` row) lead to, and the path."""
    steps = [Step("device:", fl.backend)]
    if point["training"]:
        steps.append(Step("a training step:", "yes"))
        return "training", tuple(steps)
    steps.append(Step("a training step:", "no"))
    if point["varying"]:
        steps.append(Step("shapes vary between calls:", "yes"))
        return "varying", tuple(steps)
    steps.append(Step("shapes vary between calls:", "no"))
    if fl.busy is not None:
        if not fl.busy.found:
            return ("all" if "all" in fl.leaves else None), tuple(steps)
        side = fl.busy.side(point["eager_busy"])
        value = point["eager_busy"]
        shown = "not profiled" if pd.isna(value) else _fmt("eager_busy", value)
        steps.append(Step("eager keeps the GPU busy", shown,
                          f"launch-bound at {threshold_text(fl.busy)}"))
        if side is None:
            return None, tuple(steps)
        if not side:
            return "device-bound", tuple(steps)
        if fl.kernels is None or not fl.kernels.found:
            return "launch-unknown", tuple(steps)
        value = point["compiled_kernels"]
        many = fl.kernels.side(value)
        steps.append(Step("kernels per compiled call:", "not profiled" if pd.isna(value)
                          else f"{value:g}", f"many at {threshold_text(fl.kernels)}"))
        if many is None:
            return None, tuple(steps)
        return ("launch-many" if many else "launch-few"), tuple(steps)
    if fl.latency is not None and fl.latency.found:
        slow = fl.latency.side(point["eager_s"])
        steps.append(Step("eager call:", _fmt("eager_s", point["eager_s"]),
                          f"long at {threshold_text(fl.latency)}"))
        return ("slow-call" if slow else "fast-call"), tuple(steps)
    return ("all" if "all" in fl.leaves else None), tuple(steps)


def chosen(table: pd.DataFrame, calls: float = analysis.CALLS_ANSWERED) -> dict[tuple, Pick]:
    """`analysis.choose` within `calls` at every point of `table` (published rows, or case
    rows, which are published here first), as a Pick of one point each, by POINT key: the
    mode the chooser and the quick answers give for the same point and calls."""
    if "cold_calls" not in table.columns:
        table = analysis.published(table)
    # The chosen row's compile figures, looked up in one index of the table: a scan of
    # the table per point made this grow with the square of the environments.
    case = [*POINT, "mode"]
    extra = table[[*case, "warm_calls", "cold_compile_s", "warm_compile_s"]]
    of_case: dict[tuple, dict] = {}
    for r in analysis.rows(extra):
        of_case.setdefault(_plain_key(tuple(r[c] for c in case)), r)
    out = {}
    for r in analysis.rows(analysis.choose(table, calls)):
        at = of_case.get(_plain_key(tuple(r[c] for c in case)), {})
        compiles = r["mode"] != BASELINE
        out[_plain_key(tuple(r[c] for c in POINT))] = Pick(
            r["mode"], r["speedup"], r["speedup_lo"], r["speedup_hi"], 1,
            r["cold_calls"] if compiles else None, at.get("warm_calls") if compiles else None,
            at.get("cold_compile_s"), at.get("warm_compile_s"), r.get("mode_runner_up"),
            r.get("speedup_runner_up"), ((r["workload"], r["batch_size"]),))
    return out


def recommend(point_cases: pd.DataFrame, fl: Flow | None = None,
              point: pd.DataFrame | None = None, own: Pick | None = None) -> Recommendation:
    """The mode to use at one point (the cases of one env, workload and batch, every mode),
    and why. The point's own measurements decide, by `chosen` (`analysis.choose` within
    analysis.CALLS_ANSWERED calls), the rule of the chooser and the quick answers; the
    flow (`flow()` of the point's environment, or of these cases alone) gives the path its
    proxies take and what that leaf recommends from the environment's points together."""
    keys = point_cases[POINT].drop_duplicates()
    if len(keys) != 1:
        raise ValueError(f"recommend() takes the cases of one point, got {len(keys)}")
    fl = fl if fl is not None else flow(point_cases)
    if own is None:
        own = next(iter(chosen(point_cases).values()), Pick(None))
    found = points(point_cases) if point is None else point
    if found.empty:
        return Recommendation(None, None, None, (Step("eager:", "not timed here"),), own, None)
    leaf_key, steps = walk(found.iloc[0], fl)
    leaf = fl.leaves.get(leaf_key) if leaf_key else None
    leaf_mode = leaf.pick.mode if leaf is not None else None
    agrees = None if leaf_mode is None else leaf_mode == own.mode
    return Recommendation(own.mode, leaf_key, leaf_mode, steps, own, agrees)


def _plain_key(key: tuple) -> tuple:
    return tuple(None if pd.isna(v) else v for v in key)


def flows_of(cases: pd.DataFrame) -> dict[tuple[str, str], Flow]:
    """The flow of every environment and dtype of `cases`, by (env_id, dtype)."""
    # Narrowed once, not per group: each flow selects and merges its group many times.
    narrow = cases[_flow_columns(cases)]
    return {(str(env_id), str(dtype)): flow(group)
            for (env_id, dtype), group in narrow.groupby(["env_id", DTYPE], sort=True)}


def recommendations(cases: pd.DataFrame, flows: dict[tuple[str, str], Flow],
                    published: pd.DataFrame | None = None) -> pd.DataFrame:
    """`recommend` at every point of `cases` whose environment and dtype have a flow in
    `flows` (by (env_id, dtype)); `published`, the published table of the same cases where
    the caller has it."""
    out = []
    # The proxies of every point at once: `points` per point was half of the time.
    every = points(cases)
    of_point = {_plain_key(k): every.iloc[[i]]
                for i, k in enumerate(zip(*(every[c] for c in POINT), strict=True))}
    # `pick` reads a few columns of a point's cases; narrow rows are several times faster
    # to select and merge than the full case table.
    narrow = cases[[*dict.fromkeys([*POINT, "mode", "ok", "median_s", "lo_s", "hi_s",
                                    "cold_first_call_s", "warm_first_call_s", *TRAITS,
                                    *(c for c in PAIRED if c in cases.columns)])]]
    envs = {env_id for env_id, _ in flows}
    own = chosen((cases if published is None else published).pipe(
        lambda t: t[t["env_id"].isin(envs) & t["workload"].isin(set(cases["workload"]))]))
    for key, group in narrow.groupby(POINT, dropna=False, sort=False):
        fl = flows.get((key[0], key[POINT.index(DTYPE)]))
        if fl is None:
            continue
        found = of_point.get(_plain_key(key))
        rec = recommend(group, fl, every.iloc[:0] if found is None else found,
                        own.get(_plain_key(key), Pick(None)))
        out.append({**dict(zip(POINT, key, strict=True)), "recommendation": rec,
                    "recommended": rec.mode})
    frame = pd.DataFrame(out, columns=[*POINT, "recommendation", "recommended"])
    frame["batch_size"] = frame["batch_size"].astype("Int64")
    order = pd.DataFrame({"_w": frame["workload"].map(workload_rank),
                          "_b": frame["batch_size"].map(lambda b: -1 if pd.isna(b) else int(b))})
    return frame.loc[order.sort_values(["_w", "_b"], kind="stable").index].reset_index(drop=True)


def for_workloads(cases: pd.DataFrame, workloads: list[str], published: pd.DataFrame | None = None
                  ) -> tuple[pd.DataFrame, dict[tuple[str, str], Flow]]:
    """`recommendations` at every point of `workloads`, and the flows they were judged by
    (by (env_id, dtype)): each environment's flow from all of its cases in that dtype, so a
    workload measured beside the built-in ones is judged against the thresholds they set
    in the same environment."""
    of = cases[cases["workload"].isin(workloads)]
    flows = flows_of(cases[cases["env_id"].isin(set(of["env_id"]))])
    return recommendations(of, flows, published), flows
