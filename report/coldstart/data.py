"""The cold-start records (bench/coldstart/records.py) summed up for the cold-start page.

Every figure is a median over the fresh processes of one rung, with their range. The
residual is what a user pays over eager on the first call: each process's first call less
the median eager first call of the same workload and batch in the same environment. No
figure is compared across environments, except where a bundle from one is loaded in
another, and then it is set against the rungs of the environment that loaded it.
"""

from __future__ import annotations

import dataclasses
import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from bench.ab import parse_tag
from bench.coldstart.records import FOREIGN, LADDER, MODES, REGIONAL, ColdRecord, read_folder
from report.analysis import kept_beside_header_builds
from report.formatting import UNIT_SPACE

# Each cache layer as the counters show it: (hit counter, miss counter); None where torch
# keeps no such counter. Autotuning shows the searches a compile ran: 0 where a cache (or
# nothing to tune) spared them.
LAYERS = {
    "FX graph": ("inductor.fxgraph_cache_hit", "inductor.fxgraph_cache_miss"),
    "AOTAutograd": ("aot_autograd.autograd_cache_hit", "aot_autograd.autograd_cache_miss"),
    "Inductor kernels": ("inductor.async_compile_cache_hit", "inductor.async_compile_cache_miss"),
    "autotuning": (None, "inductor.select_algorithm_autotune"),
}
# Workloads built of repeated blocks, where regional compilation applies.
COLDSTART = "coldstart"  # the results subfolder `python -m bench.coldstart` writes
BLOCK_MODELS = ("gpt2-small", "llama-small", "bert-base", "vit-base16")
REGIONAL_BATCHES = (1, 32)


NOT_RECORDED = "dtype not recorded"


def dtype_text(records: list[ColdRecord]) -> str | None:
    """The dtypes the model was built in, over the processes that gave a figure: one in all
    but a mixed case, and NOT_RECORDED for records of version 1. None where no process gave
    a figure (a rung its release lacks, or one that failed), which then says nothing."""
    ran = [r for r in records if r.status == "ok"]
    return ", ".join(sorted({r.dtype or NOT_RECORDED for r in ran})) if ran else None


def joined(texts) -> str:
    """One row's dtype over what it sums up (rungs, cases): each distinct dtype once."""
    parts = {part for text in texts if text for part in text.split(", ")}
    return ", ".join(sorted(parts)) if parts else NOT_RECORDED


@dataclass(frozen=True)
class Spread:
    median: float
    low: float
    high: float
    n: int


def spread(values: list[float]) -> Spread | None:
    return Spread(statistics.median(values), min(values), max(values), len(values)) if values else None


NOT_ON_ONE_HOST = "not measured on one host"


@dataclass(frozen=True)
class Paired:
    """A foreign bundle's first call over the same case's with empty caches, from the ok
    processes of the hosts both sides ran on alone: a ratio never divides one host's
    seconds by another's, since compiling is CPU work and hosts differ."""

    ratio: Spread  # per host, its foreign median over its cold median; n: the hosts
    foreign: Spread  # the first calls of both sides on those hosts
    cold: Spread
    # True where the two sides ran in one run, which plans a case's empty-cache process and
    # its foreign bundle's one after the other (python -m bench.coldstart --rung cold
    # --bundle-from); False where they only shared the host.
    alternated: bool

    @property
    def label(self) -> str:
        return "same host, alternated" if self.alternated else "same host, separate runs"


def _host(record: ColdRecord) -> tuple[str, str] | None:
    """The host (lease) a process ran on, its boot id and name; None where the record does
    not say, and then it pairs with nothing: a name alone is shared by many leases."""
    found = record.host
    return (found.boot_id, found.hostname) if found is not None and found.boot_id else None


def paired(foreign: list[ColdRecord], cold: list[ColdRecord]) -> Paired | None:
    """`foreign` set against `cold` (one case's empty-cache processes) on the hosts both ran
    on; None where they share none."""
    foreign = [r for r in foreign if r.status == "ok" and _host(r)]
    cold = [r for r in cold if r.status == "ok" and _host(r)]
    shared = sorted({_host(r) for r in foreign} & {_host(r) for r in cold})
    if not shared:
        return None

    def median_on(records, host):
        return statistics.median(r.first_call_s for r in records if _host(r) == host)

    foreign = [r for r in foreign if _host(r) in shared]
    cold = [r for r in cold if _host(r) in shared]
    return Paired(spread([median_on(foreign, h) / median_on(cold, h) for h in shared]),
                  spread([r.first_call_s for r in foreign]), spread([r.first_call_s for r in cold]),
                  bool({r.run_id for r in foreign} & {r.run_id for r in cold}))


@dataclass(frozen=True)
class Rung:
    """One rung of one case in one environment: its processes summed up."""

    rung: str
    processes: int  # recorded, whatever their status
    ok: int
    status: str | None  # where no process is ok: the most frequent status, and a reason
    reason: str | None
    first_call: Spread | None
    residual: Spread | None  # first call less eager's median first call
    steady: Spread | None  # per-call median of each process
    speedup: float | None  # eager's median steady latency over this rung's
    layers: dict[str, str]  # layer -> "hits / misses" text, medians over processes
    outcome: str | None = None  # a loaded bundle: hit, partial or recompile (most frequent)
    load: Spread | None = None
    prepare: Spread | None = None
    bundle_bytes: int | None = None
    source: str | None = None  # a foreign bundle: the device and torch it was saved with
    source_env: str | None = None  # and the environment that saved it
    blocks: int | None = None  # regional rungs: the repeated blocks compiled
    days: tuple[str, ...] = ()  # the UTC days its ok processes started on
    # The host compiler during the first call, over the ok processes that recorded it: the
    # seconds in which it ran, and its runs (None: no process recorded it)
    compiler: Spread | None = None
    compiler_runs: Spread | None = None
    speedup_apart: str | None = None  # why no speedup: eager ran on none of `days`
    dtype: str | None = None  # dtype_text of its processes
    paired: Paired | None = None  # a foreign bundle: against empty caches on its own host(s)


@dataclass(frozen=True)
class Env:
    env_id: str
    label: str
    device: str
    backend: str
    torch: str
    host_cores: int
    workers: int = 1  # the most processes that ran at once (--gpus), one per GPU
    cores: int | None = None  # each one's share of the host's cores, where more than one ran


def _env(records: list[ColdRecord]) -> Env:
    e = records[0].env
    workers = max(r.workers for r in records)
    # torch's threads are the slot's share of the cores, as its processes saw it
    return Env(records[0].env_id, f"{e.device_name} · torch {e.torch} · {e.machine}",
               e.device_name, e.backend, e.torch, e.cpu_count, workers,
               e.torch_threads if workers > 1 else None)


def _layers(records: list[ColdRecord]) -> dict[str, str]:
    out = {}
    for layer, (hit, miss) in LAYERS.items():
        def median(name):
            return statistics.median(r.counters.get(name, 0) for r in records) if name else None
        hits, misses = median(hit), median(miss)
        parts = [] if hits is None else [f"{hits:g} hit"]
        parts.append(f"{misses:g} {'run' if hit is None else 'miss'}")
        out[layer] = " / ".join(parts)
    return out


def _utc_day(stamp: str) -> str:
    return datetime.fromisoformat(stamp).astimezone(timezone.utc).date().isoformat()


def _days(records: list[ColdRecord]) -> tuple[str, ...]:
    """The UTC days the ok processes among `records` started on."""
    return tuple(sorted({_utc_day(r.started_at) for r in records if r.status == "ok"}))


def _on_days(records: list[ColdRecord], days) -> list[ColdRecord]:
    return [r for r in records if _utc_day(r.started_at) in days]


def _most(values: list) -> object:
    return Counter(values).most_common(1)[0][0] if values else None


def _kept(records: list[ColdRecord]) -> list[ColdRecord]:
    """The ok records whose first calls count: none that built Inductor's precompiled
    headers beside ones that found them built (analysis.kept_beside_header_builds)."""
    ok = [r for r in records if r.status == "ok"]
    kept = kept_beside_header_builds([r.headers_built for r in ok])
    return [r for r, keep in zip(ok, kept, strict=True) if keep]


def summarize(records: list[ColdRecord], eager: list[ColdRecord]) -> Rung:
    ok, eager_ok = _kept(records), _kept(eager)
    eager_first = statistics.median(r.first_call_s for r in eager_ok) if eager_ok else None
    days = _days(ok)
    # steady latency follows the host's speed, which drifts between days: a rung is set
    # against eager's processes of its own days alone
    eager_same_day = _on_days(eager_ok, days)
    eager_steady = (statistics.median(r.steady.median_s for r in eager_same_day)
                    if eager_same_day else None)
    eager_days = _days(eager_ok)
    steady = spread([r.steady.median_s for r in ok])
    failed = [r for r in records if r.status != "ok"]
    status = _most([r.status for r in failed]) if not ok and failed else None
    loaded = [r.loaded for r in ok if r.loaded is not None]
    built = [r for r in ok if r.compiler_s is not None and r.compiler_runs is not None]
    saved = next((r.saved for r in ok if r.saved is not None), None)
    return Rung(
        rung=records[0].key.rung, processes=len(records),
        ok=sum(r.status == "ok" for r in records), status=status,
        reason=next((r.reason for r in failed if r.status == status), None),
        first_call=spread([r.first_call_s for r in ok]),
        residual=spread([r.first_call_s - eager_first for r in ok]) if eager_first is not None else None,
        steady=steady,
        speedup=eager_steady / steady.median if steady and eager_steady else None,
        layers=_layers(ok) if ok else {},
        outcome=_most([b.outcome for b in loaded if b.outcome]),
        load=spread([r.load_s for r in ok if r.load_s is not None]),
        prepare=spread([r.prepare_s for r in ok if r.prepare_s is not None]),
        bundle_bytes=saved.size_bytes if saved else (loaded[0].size_bytes if loaded else None),
        source=f"{loaded[0].source_device} · torch {loaded[0].source_torch}"
        if loaded and records[0].key.rung == FOREIGN else None,
        source_env=loaded[0].source_env_id if loaded and records[0].key.rung == FOREIGN else None,
        blocks=_most([r.blocks for r in ok if r.blocks is not None]),
        days=days,
        compiler=spread([r.compiler_s for r in built]),
        compiler_runs=spread([float(r.compiler_runs) for r in built]),
        speedup_apart=(f"not comparable: eager ran on {', '.join(eager_days)}, this on "
                       f"{', '.join(days)}") if steady and eager_ok and not eager_same_day
        else None,
        dtype=dtype_text(records))


@dataclass(frozen=True)
class Case:
    workload: str
    batch_size: int | None
    mode: str
    shapes: str
    rungs: dict[str, Rung | None]  # every ladder rung; None: not measured
    eager: Rung | None
    dtype: str  # its rungs' dtypes, joined

    @property
    def measured(self) -> dict[str, Rung]:
        """The compiled rungs that have a residual over eager."""
        return {name: r for name, r in self.rungs.items()
                if r is not None and r.residual is not None and name != "eager"}

    @property
    def recommended(self) -> str | None:
        """The compiled rung with the smallest median residual over eager; None where fewer
        than two were measured, since one rung alone is no choice."""
        if len(self.measured) < 2:
            return None
        return min(self.measured, key=lambda name: (self.measured[name].residual.median, name))


@dataclass(frozen=True)
class Regional:
    workload: str
    mode: str
    batch_size: int
    strategies: dict[str, Rung | None]  # "whole" (the cold rung), "per-block", "nested-region"
    break_even: dict[str, str]  # strategy -> against the whole model, in words
    # strategy -> the days whose processes alone counted (both sides ran on them); () for all
    break_even_days: dict[str, tuple[str, ...]]
    dtype: str  # its strategies' dtypes, joined; the case's where none gave a figure


@dataclass(frozen=True)
class EnvView:
    env: Env
    cases: list[Case]
    regional: list[Regional]
    foreign: list[tuple[Case, Rung]]  # a case of this machine, and its foreign-bundle rung


def _group(records: list[ColdRecord]) -> dict:
    found: dict = defaultdict(list)
    for r in records:
        found[(r.key.workload, r.key.batch_size, r.key.mode, r.key.shapes, r.key.rung, r.key.tag)].append(r)
    return found


def break_even(whole: Rung | None, other: Rung | None) -> str:
    """When `other` and compiling the whole model have cost the same over n calls."""
    if not (whole and other and whole.first_call and other.first_call and whole.steady
            and other.steady):
        return "not measured"
    if whole.days and other.days and not set(whole.days) & set(other.days):
        # same machine id, but a host's speed drifts between days: compile time is CPU-bound
        return (f"not comparable: the whole model ran on {', '.join(whole.days)}, "
                f"this on {', '.join(other.days)}")
    first = other.first_call.median - whole.first_call.median  # extra first-call seconds
    per_call = other.steady.median - whole.steady.median  # extra seconds per later call
    # A break-even divides by the steady difference: where the processes cannot tell the two
    # steady latencies apart, it would be a quotient of noise.
    ahead = f"{'ahead' if first < 0 else 'behind'} by {abs(first):.1f}{UNIT_SPACE}s on the first call"
    if min(whole.steady.n, other.steady.n) < 2:
        return f"{ahead}; steady latency from one process: no break-even"
    if other.steady.low <= whole.steady.high and whole.steady.low <= other.steady.high:
        return f"{ahead}, then level: the steady latencies' process ranges overlap"
    if first <= 0 and per_call <= 0:
        return "ahead from the first call on"
    if first >= 0 and per_call >= 0:
        return "never ahead"
    # two significant figures: the processes' spread leaves the third digit to noise
    calls = max(1.0, float(f"{-first / per_call:.2g}"))
    count = "the first call" if calls == 1 else f"the first {calls:,.0f} calls"
    if first < 0:
        return f"ahead for {count}, behind after"
    return f"behind for {count}, ahead after"


def common_day_break_even(whole: list[ColdRecord], other: list[ColdRecord]) -> tuple[str, tuple[str, ...]]:
    """`break_even` from the processes of the UTC days both sides ran on alone, and those
    days where they leave some process out (else none): a host's compile speed drifts
    between days, so a process of a day the other side never ran on would set one host's
    speed against another's."""
    def summed(records):
        return summarize(records, []) if records else None

    whole_days, other_days = set(_days(whole)), set(_days(other))
    common = whole_days & other_days
    if not common or whole_days | other_days == common:
        return break_even(summed(whole), summed(other)), ()
    return (break_even(summed(_on_days(whole, common)), summed(_on_days(other, common))),
            tuple(sorted(common)))


def views(records: list[ColdRecord]) -> list[EnvView]:
    by_env: dict[str, list[ColdRecord]] = defaultdict(list)
    for r in records:
        by_env[r.env_id].append(r)
    out = [_env_view(env_records) for env_records in by_env.values()]
    # two hosts of one GPU type and machine name (a one-GPU and a four-GPU lease) stay apart,
    # named as every other page names them (report.analysis.environment)
    named = Counter(v.env.label for v in out)
    out = [dataclasses.replace(v, env=dataclasses.replace(
               v.env, label=f"{v.env.label} · {v.env.env_id}"))
           if named[v.env.label] > 1 else v for v in out]
    return sorted(out, key=lambda v: (v.env.backend != "cuda", v.env.device, v.env.torch, v.env.env_id))


def _env_view(records: list[ColdRecord]) -> EnvView:
    """One environment's cases: every ladder rung, regional compilation, foreign bundles."""
    groups = _group(records)

    def eager(w, b, s) -> list[ColdRecord]:
        return groups.get((w, b, "eager", s, "eager", "main"), [])

    def rung(w, b, m, s, name) -> Rung | None:
        found = groups.get((w, b, m, s, name, "main"))
        return summarize(found, eager(w, b, s)) if found else None

    cases = []
    for w, b, m, s in sorted({k[:4] for k in groups if k[2] != "eager"}, key=_order):
        rungs = {name: rung(w, b, "eager" if name == "eager" else m, s, name) for name in LADDER}
        cases.append(Case(w, b, m, s, rungs, rungs["eager"],
                          joined(r.dtype for r in rungs.values() if r)))
    regional = []
    for c in cases:
        strategies = {"whole": c.rungs["cold"],
                      **{name: rung(c.workload, c.batch_size, c.mode, c.shapes, name)
                         for name in REGIONAL}}
        if c.workload in BLOCK_MODELS or any(strategies[name] for name in REGIONAL):
            counted = {name: common_day_break_even(
                           groups.get((c.workload, c.batch_size, c.mode, c.shapes, "cold", "main"), []),
                           groups.get((c.workload, c.batch_size, c.mode, c.shapes, name, "main"), []))
                       for name in REGIONAL}
            regional.append(Regional(c.workload, c.mode, c.batch_size, strategies,
                                     {name: text for name, (text, _) in counted.items()},
                                     {name: days for name, (_, days) in counted.items()},
                                     joined(dtypes) if (dtypes := [r.dtype for r in strategies.values()
                                                                 if r and r.dtype]) else c.dtype))
    by_case = {(c.workload, c.batch_size, c.mode, c.shapes): c for c in cases}
    foreign = []
    for (w, b, m, s, name, _), found in sorted(groups.items(), key=lambda i: _order(i[0][:4])):
        if name == FOREIGN:
            case = by_case[(w, b, m, s)]
            cold = groups.get((w, b, m, s, "cold", "main"), [])
            foreign.append((case, dataclasses.replace(summarize(found, eager(w, b, s)),
                                                      paired=paired(found, cold))))
    return EnvView(_env(records), cases, regional, foreign)


def _order(case: tuple) -> tuple:
    workload, batch, mode = case[0], case[1], case[2]
    return (workload, batch or 0, MODES.index(mode) if mode in MODES else -1)


SHOWN_SHAPES = "seed"  # as on the other pages: tiny shapes are for tests and smoke runs


def shown_records(results_dir: Path) -> tuple[list[ColdRecord], int]:
    """The records of the shown shapes, and how many of other shapes were left out."""
    records = read_folder(Path(results_dir))
    shown = [r for r in records if r.key.shapes == SHOWN_SHAPES]
    return shown, len(records) - len(shown)


def ladder_views(shown: list[ColdRecord]) -> list[EnvView]:
    # an A/B side's records are set against each other alone (report/coldstart/ab.py)
    return views([r for r in shown if not parse_tag(r.key.tag)])


def load(results_dir: Path) -> tuple[list[EnvView], int]:
    """The views of the shown records but A/B sides', and how many records of other shapes
    were left out."""
    shown, hidden = shown_records(results_dir)
    return ladder_views(shown), hidden


# ---- the host that compiled ----------------------------------------------------------------

TO_COLD = ("warm", "bundle", "aot", "precompile")  # rungs set against the cold first call


def _lease(record: ColdRecord) -> str | None:
    return record.host.boot_id or record.host.hostname if record.host else None


def _ratio_to_cold(records: list[ColdRecord]) -> dict[str, list[tuple[str, float]]]:
    """Per rung of TO_COLD: (lease, first call / cold first call) for each of its processes
    whose cold process ran in the same run and repeat, so on the same host."""
    cold = {(r.run_id, r.repeat): r for r in records if r.key.rung == "cold"}
    out: dict[str, list[tuple[str, float]]] = {}
    for r in records:
        partner = cold.get((r.run_id, r.repeat))
        if r.key.rung in TO_COLD and partner is not None and partner.first_call_s:
            out.setdefault(r.key.rung, []).append((_lease(r), r.first_call_s / partner.first_call_s))
    return out


def _relative(values: list[float]) -> float | None:
    """How far apart a figure lands across hosts: the largest over the smallest, less one."""
    return max(values) / min(values) - 1 if len(values) > 1 and min(values) > 0 else None


def host_speed(records: list[ColdRecord]) -> list[dict]:
    """Per device, workload, mode and batch whose ok processes recorded the speed of their
    host: the cold first call, the host's probe and compile-like task, and each loaded
    rung's first call over the cold one of its own run (same host), each as a Spread over
    processes, with the hosts (leases) they ran on. `moves` compares, per rung, how far the
    cold seconds and the ratio land apart across hosts (per-host medians): a ratio whose
    spread is below the seconds' is the figure that carries to another host."""
    found: dict[tuple, list[ColdRecord]] = {}
    for r in records:
        if r.status == "ok" and r.host is not None and r.host_task_s and r.key.rung != FOREIGN:
            found.setdefault((r.env.device_name, r.env.backend, r.key.workload, r.key.mode,
                              r.key.batch_size, r.key.shapes), []).append(r)
    rows = []
    for (device, backend, workload, mode, batch, _), mine in sorted(found.items(), key=lambda kv: str(kv[0])):
        cold = [r for r in mine if r.key.rung == "cold"]
        if not cold:
            continue
        leases = sorted({_lease(r) for r in mine}, key=str)
        ratios = _ratio_to_cold(mine)
        per_host_cold = _per_host([(_lease(r), r.first_call_s) for r in cold])
        moves = {}
        for rung, pairs in ratios.items():
            moves[rung] = {"ratio": spread([v for _, v in pairs]),
                           "ratio_apart": _relative(_per_host(pairs)),
                           "seconds_apart": _relative(per_host_cold)}
        rows.append({"device": device, "backend": backend, "workload": workload, "mode": mode,
                     "batch": batch, "dtype": joined([dtype_text(mine)]),
                     "hosts": len(leases), "processes": len(cold),
                     "cold": spread([r.first_call_s for r in cold]),
                     "probe_us": spread([statistics.median(r.host.op_s) * 1e6 for r in cold]),
                     "task_ms": spread([statistics.median(r.host_task_s) * 1e3 for r in cold]),
                     "to_cold": moves})
    return rows


def _per_host(pairs: list[tuple[str, float]]) -> list[float]:
    by: dict[str, list[float]] = {}
    for lease, value in pairs:
        by.setdefault(lease, []).append(value)
    return [statistics.median(v) for v in by.values()]
