"""Result records: immutable, versioned, one JSON object per line.

The results files are the only boundary between `bench/` (which needs torch) and
`report/` (which must not import it). This module is the one definition of a record
for both sides: the dataclasses are the schema, `record_from_dict` validates a line
against them (types, finiteness, timings that cannot happen), and `upgrade` brings
older versions up to date in memory. It uses the standard library alone.
"""

from __future__ import annotations

import dataclasses
import errno
import fcntl
import hashlib
import json
import math
import os
import re
import stat
import sys
import types
import typing
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

SCHEMA_VERSION = 9

STATUSES = ("ok", "error", "timeout", "oom", "unsupported")


@dataclass(frozen=True)
class CaseKey:
    """What was measured. Records with equal keys and env_id are processes of one case."""

    backend: str
    workload: str
    mode: str
    batch_size: int | None  # the workload's size axis: a batch, or a matrix size for sweeps
    shapes: str = "seed"  # "tiny" shrinks every shape, for tests and smoke runs
    tag: str = "main"  # lets the same case be measured again on purpose, apart from its repeats
    # The precision it ran in: "float32" is the workload's own (float32, or a model of your own
    # in the dtype it came in); "bfloat16" casts inference to bfloat16 and runs training
    # under torch.autocast (bench/workloads/base.py says how, and WorkloadInfo.settings too).
    dtype: str = "float32"


@dataclass(frozen=True)
class Process:
    """Which of a case's independent processes this record is, and what ran beside it."""

    repeat: int  # 0-based; repeats of one case run interleaved with other cases
    repeats: int  # how many processes the run planned for each case
    run_id: str | None  # one id per `python -m bench` invocation
    gpu: int | None  # the device index the case was pinned to
    workers: int  # cases the run measured at the same time (one per GPU)
    parent_import_s: float | None  # the run's one-time cost of importing torch and Inductor
    cache: str  # "cold": empty compile caches; "warm": the first repeat's caches
    # "isolated": this mode alone in its process. "paired": every mode of the case built in
    # one process and timed in alternating rounds (PairedRounds), so that the host's drift
    # lands on every mode alike and ratios are taken round by round.
    timing: str = "isolated"


@dataclass(frozen=True)
class ModeTraits:
    """Copied from bench/modes.py into every record, so the report never lists modes."""

    compiled: bool  # goes through torch.compile: compile times and Dynamo counters
    cuda_graphs: bool  # replays CUDA graphs where the backend has them
    autotune: bool  # searches kernel configurations while compiling
    dynamic: bool  # compiles with dynamic shapes from the first call
    description: str


@dataclass(frozen=True)
class Timing:
    """Steady-state latency. `samples` are per-call seconds, each averaged over
    `calls_per_sample` back-to-back calls; the statistics are derived from them."""

    samples: tuple[float, ...]
    calls_per_sample: int
    warmup_calls: int
    median_s: float
    q1_s: float
    q3_s: float
    iqr_s: float
    min_s: float
    count: int
    wall_per_call_s: float  # host clock over all timed calls, device synchronized at both ends
    timer: str  # "cuda-event" or "perf-counter"
    # Minor page faults the process took per timed call (getrusage), None where it cannot be
    # read. An eager CPU call that allocates through glibc faults in fresh pages whenever
    # malloc has given its freed blocks back, and how often it does differs from process to
    # process (issue 91: the cause of a memory-bound eager case's two modes). Since version 8.
    page_faults_per_call: float | None = None


@dataclass(frozen=True)
class CompileTimes:
    """First-call latency, which is where compilation happens.

    cold: the process's first call, with the compile caches `Process.cache` names.
    warm: the same process after torch._dynamo.reset() and clearing Inductor's
    in-memory caches, so only the on-disk caches written by the first call help.
    """

    cold_first_call_s: float | None
    warm_first_call_s: float | None
    cold_first_calls_s: tuple[float, ...] = ()  # first few calls: cudagraph recording shows here
    # How many of Inductor's precompiled headers the first calls built: 0 where an earlier
    # process on the machine had built them, as PyTorch keeps them machine-wide
    # (bench/pool.py, header_folder); more where this was the machine's first C++ compile,
    # whose cost is in cold_first_call_s. None: not recorded.
    headers_built: int | None = None


@dataclass(frozen=True)
class Memory:
    peak_device_bytes: int | None  # torch.cuda/mps allocator peak during timing; None on CPU
    peak_rss_bytes: int | None  # peak resident set size of the case's process
    # CUDA only. Reserved bytes include the private pools CUDA graphs keep; the case_ figures
    # span the whole case from the build on, capture and recording included, which the
    # timing-only peak cannot show since it is reset after them.
    peak_reserved_bytes: int | None = None
    case_peak_device_bytes: int | None = None
    case_peak_reserved_bytes: int | None = None


@dataclass(frozen=True)
class Activity:
    """From torch.profiler over `profiled_calls` calls, divided per call."""

    profiled_calls: int
    device_kernels_per_call: float | None  # GPU kernels executed (None on CPU)
    launches_per_call: float | None  # CPU-side kernel launches plus graph launches
    graph_launches_per_call: float | None
    cpu_ops_per_call: float | None  # top-level aten ops dispatched from Python
    device_busy_s_per_call: float | None  # summed GPU kernel time
    busy_fraction: float | None  # device busy time / wall time per call


@dataclass(frozen=True)
class Host:
    """The host a process ran on and how fast it dispatches eager work, measured in the
    process itself: launch-bound figures are a property of this, not of the device."""

    hostname: str
    boot_id: str | None  # differs between two leases of one machine type
    cpu_model: str
    cpu_mhz: float | None  # mean of what the kernel reports over this process's CPUs
    cpus_available: int  # CPUs this process may run on (affinity)
    load_before: tuple[float, ...]  # 1, 5 and 15 minute load averages
    load_after: tuple[float, ...]
    gpu_sm_clock_mhz: int | None
    gpu_memory_clock_mhz: int | None
    # The host-speed probe, one figure per block of back-to-back calls: the eager per-call
    # cost of a trivial in-place op, and (CUDA) of a bare kernel launch without dispatch.
    op_s: tuple[float, ...]
    launch_s: tuple[float, ...] = ()
    # The same op in long blocks (bench/host/probe.py LONG_BLOCK_S each, a few per process):
    # a short block's median leaves out the preemptions a time-sliced host deals, a long
    # block keeps its share of them, as a mode's block does. Since version 6; () before.
    op_long_s: tuple[float, ...] = ()
    # What may decide how a memory-bound eager case runs on a CPU (issue 91: such a case's
    # eager median moved up to 3x between processes of one host), kept so that two
    # processes' settings can be set side by side: the CPUs this process may run on, the
    # transparent huge page mode and its defrag setting (the bracketed choices in
    # /sys/kernel/mm/transparent_hugepage/), the allocator mapped into the process ("glibc",
    # else the library's name, e.g. "libjemalloc.so.2"), and the machine's NUMA nodes.
    # Since version 7; empty or None before.
    cpus: tuple[int, ...] = ()
    thp: str | None = None
    thp_defrag: str | None = None
    allocator: str | None = None
    numa_nodes: int | None = None


@dataclass(frozen=True)
class PairedRounds:
    """One mode's share of a paired process. Round r timed every surviving mode once, each
    as a block of back-to-back calls with the device synchronized at both ends, in a fresh
    random order; so mode A over mode B in round r is a ratio taken under one host state."""

    group: str  # one id per paired process; its records share it
    modes: tuple[str, ...]  # every mode the process measured, in build order
    build_position: int  # 0: built first, before anything else was compiled in the process
    rounds_planned: int
    calls_per_block: int
    round_s: tuple[float, ...]  # per-call seconds of this mode's block, round by round
    round_position: tuple[int, ...]  # where its block fell in each round's order (0: first)


@dataclass(frozen=True)
class DynamoCounters:
    graph_breaks: int
    recompiles: int
    unique_graphs: int
    cudagraph_skips: int
    skip_reasons: tuple[str, ...] = ()
    # Dynamo's reason for each distinct graph break, most frequent first, with its count
    # ("3x: ..."); records from before it was kept have none.
    graph_break_reasons: tuple[str, ...] = ()


@dataclass(frozen=True)
class Correctness:
    reference: str  # "float64": the same case in double precision; v1 records say "eager"
    rel_error: float  # ||out - ref|| / ||ref|| in float64
    tolerance: float
    passed: bool


@dataclass(frozen=True)
class WorkloadInfo:
    family: str
    description: str
    input_shapes: tuple[tuple[int, ...], ...]
    dtype: str
    flops: int | None
    bytes_moved: int | None  # fewest bytes: every input and weight read once, every output written once
    parameters: int
    training: bool = False  # a forward, backward and optimizer step per call
    axis: str = "batch"  # what CaseKey.batch_size means: "batch", or "n" for a matrix size
    batch_cycle: tuple[int, ...] = ()  # batch sizes taken in turn by successive calls, if any
    # Settings the builder pinned because they change the results (a real model's eval mode,
    # grad mode, attention kernel, KV cache), and the versions of the packages beyond torch
    # that built it (timm, transformers). Empty for the project's own workloads.
    settings: dict[str, str] = field(default_factory=dict)
    libraries: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ProbeResult:
    """A pitfall experiment run inside a case: evidence for the methodology page."""

    name: str
    summary: str
    outcome: str | None  # a categorical answer, such as "overwritten"
    figures: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class WarmupCurve:
    """Latency of each call right after the first (compiling) one, synchronized per call."""

    latencies_s: tuple[float, ...]


@dataclass(frozen=True)
class ShapeCost:
    """What one size cost: a size the compiled callable ran at (a padded strategy's bucket),
    in order of first appearance. Calls, the first call and the fallback are the first
    pass's; CUDA graphs and memory count the steady passes too, where CUDA graph trees
    record a size they warmed up on in the first."""

    size: int
    calls: int  # calls of the first pass that ran at it
    first_call_s: float  # the first of them: where a compile or a recording happens
    fell_back: bool  # ran eager: no graph was left to compile at the recompile limit
    # CUDA: graphs CUDA graph trees recorded during its calls (None without CUDA graphs),
    # and how much the allocator's reserved memory grew during them (None on a CPU).
    cudagraph_recordings: int | None = None
    reserved_growth_bytes: int | None = None


@dataclass(frozen=True)
class StreamRun:
    """A shape stream's calls in one fresh process (bench/shapes). The first pass makes the
    stream's calls in order, each timed alone, compiles included; the record's timing then
    holds one sample per call of the passes that follow, every shape seen. The stream's
    name, distribution and seed say how `sizes` was drawn, so a run can be repeated."""

    stream: str
    distribution: str  # what the sizes were drawn from, in words
    seed: int
    varying_dim: str  # "sequence" or "batch"
    sizes: tuple[int, ...]  # each call's request size, in order
    strategy: str  # bench/shapes/strategies.py
    compile_mode: str | None  # the torch.compile mode; None for eager
    run_sizes: tuple[int, ...]  # the size each call ran at, padded where the strategy pads
    first_pass_s: tuple[float, ...]  # each call of the first pass, compiles included
    recompile_limit: int | None  # Dynamo's, as this process ran with it
    guard_failures: int  # guard checks that failed and sent Dynamo to recompile
    guard_failure_reasons: tuple[str, ...]  # the distinct ones, first line each, at most 20
    per_size: tuple[ShapeCost, ...]
    # Whether every compile cache torch keeps between processes was off (Inductor's and
    # Dynamo's record of dims that turned dynamic): each process then compiled as the
    # first one did, whatever `Process.cache` says of the cache folder it was given.
    caches_off: bool = False


@dataclass(frozen=True)
class Environment:
    """Metadata as data. `identity()` picks the fields that make two runs comparable."""

    machine: str
    backend: str
    os: str
    python: str
    torch: str
    torch_requested: str | None
    triton: str | None
    cuda_runtime: str | None
    cudnn: str | None
    driver: str | None
    device_name: str
    gpu_sm_count: int | None
    gpu_memory_bytes: int | None
    cpu_model: str
    cpu_count: int
    torch_threads: int
    float32_matmul_precision: str
    cuda_matmul_allow_tf32: bool | None
    cudnn_allow_tf32: bool | None
    git_commit: str | None
    git_dirty: bool | None

    IDENTITY_FIELDS = (
        "machine", "backend", "python", "torch", "triton", "cuda_runtime",
        "driver", "device_name", "cpu_model", "cpu_count", "float32_matmul_precision",
    )

    def identity(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.IDENTITY_FIELDS}

    def env_id(self) -> str:
        canonical = json.dumps(self.identity(), sort_keys=True)
        return hashlib.sha256(canonical.encode()).hexdigest()[:12]


# The sections a case process measures; the runner copies them from its result as they are.
MEASURED_SECTIONS = ("workload_info", "timing", "compile", "memory", "activity", "dynamo",
                     "correctness", "probes", "warmup", "stages_s", "log_tail", "host", "paired",
                     "stream")


@dataclass(frozen=True)
class Record:
    key: CaseKey
    status: str
    reason: str | None
    profile: str
    env: Environment
    env_id: str
    started_at: str  # ISO 8601 with a UTC offset
    duration_s: float
    process: Process
    mode_traits: ModeTraits
    workload_info: WorkloadInfo | None = None
    timing: Timing | None = None
    compile: CompileTimes | None = None
    memory: Memory | None = None
    activity: Activity | None = None
    dynamo: DynamoCounters | None = None
    correctness: Correctness | None = None
    probes: tuple[ProbeResult, ...] = ()
    warmup: WarmupCurve | None = None
    stages_s: dict[str, float] = field(default_factory=dict)
    log_tail: tuple[str, ...] = ()
    host: Host | None = None
    paired: PairedRounds | None = None
    stream: StreamRun | None = None
    schema_version: int = SCHEMA_VERSION

    def __post_init__(self) -> None:
        _check_record(self)

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self), sort_keys=True, allow_nan=False)


class MalformedRecord(ValueError):
    """A results line that cannot be read; the message names the file and line."""


class RecordWriteError(OSError):
    """A record could not be written whole; nothing of it was left in the file."""


# ---- validation -------------------------------------------------------------------------

def _check_record(record: Record) -> None:
    if record.schema_version != SCHEMA_VERSION:
        raise ValueError(f"schema_version {record.schema_version} is not {SCHEMA_VERSION}")
    if record.status not in STATUSES:
        raise ValueError(f"status {record.status!r} is not one of {', '.join(STATUSES)}")
    if record.env.backend != record.key.backend:
        raise ValueError(f"env.backend {record.env.backend!r} differs from key.backend "
                         f"{record.key.backend!r}")
    if record.env_id != record.env.env_id():
        raise ValueError(f"env_id {record.env_id!r} does not match the environment "
                         f"({record.env.env_id()})")
    try:
        stamp = datetime.fromisoformat(record.started_at)
    except ValueError:
        raise ValueError(f"started_at {record.started_at!r} is not an ISO 8601 time") from None
    if stamp.tzinfo is None:
        raise ValueError(f"started_at {record.started_at!r} has no UTC offset")
    if record.duration_s < 0:
        raise ValueError(f"duration_s {record.duration_s} is negative")
    if not 0 <= record.process.repeat < record.process.repeats:
        raise ValueError(f"process.repeat {record.process.repeat} is outside 0..repeats-1 "
                         f"({record.process.repeats})")
    if record.status == "ok":
        if record.timing is None:
            raise ValueError("an ok record has no timing")
        _check_timing(record.timing)
    if record.process.timing not in ("isolated", "paired"):
        raise ValueError(f"process.timing {record.process.timing!r} is not isolated or paired")
    if (record.paired is not None or record.status == "ok") and (
            (record.paired is None) != (record.process.timing == "isolated")):
        raise ValueError(f"process.timing {record.process.timing!r} does not match "
                         f"{'a' if record.paired else 'no'} paired section")
    if record.paired:
        _check_paired(record.paired, record.key.mode)
    if record.stream:
        _check_stream(record.stream)
    if record.warmup and any(x <= 0 for x in record.warmup.latencies_s):
        raise ValueError("warmup.latencies_s holds a latency of 0 or below")
    _check_names(record)
    _check_fits(record)
    _check_ranges(record)


def _check_timing(timing: Timing) -> None:
    if not timing.samples or any(s <= 0 for s in timing.samples):
        raise ValueError("timing.samples is empty or holds a value of 0 or below")
    if timing.count != len(timing.samples):
        raise ValueError(f"timing.count {timing.count} != {len(timing.samples)} samples")
    if timing.median_s <= 0 or timing.min_s <= 0 or timing.wall_per_call_s <= 0:
        raise ValueError("timing holds a median, min or wall time of 0 or below")
    if not timing.min_s <= timing.q1_s <= timing.median_s <= timing.q3_s:
        raise ValueError(f"timing is impossible: need min <= q1 <= median <= q3, got "
                         f"{timing.min_s:g}, {timing.q1_s:g}, {timing.median_s:g}, {timing.q3_s:g}")
    if timing.calls_per_sample < 1:
        raise ValueError(f"timing.calls_per_sample {timing.calls_per_sample} is below 1")
    if timing.page_faults_per_call is not None and timing.page_faults_per_call < 0:
        raise ValueError(f"timing.page_faults_per_call {timing.page_faults_per_call:g} is negative")
    if not math.isclose(timing.iqr_s, timing.q3_s - timing.q1_s, rel_tol=1e-9, abs_tol=1e-15):
        raise ValueError(f"timing.iqr_s {timing.iqr_s:g} is not q3_s - q1_s "
                         f"({timing.q3_s - timing.q1_s:g})")


# Names that become parts of file names when the report is written (pages and charts):
# letters, digits and _ . : - only, not starting with a dot, short enough for a file name.
SAFE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.:-]*")
SAFE_NAME_MAX = 200
PATH_NAMES = (("key.workload", lambda r: r.key.workload), ("profile", lambda r: r.profile))


def unsafe_name(name: str) -> str | None:
    """Why `name` cannot be part of a file name the report writes, or None if it can."""
    if len(name) > SAFE_NAME_MAX:
        return f"is {len(name)} characters long (at most {SAFE_NAME_MAX})"
    if not SAFE_NAME.fullmatch(name):
        return ("may hold only letters, digits and _ . : - and must not start with a dot: "
                f"{name[:60]!r}")
    return None


def _check_names(record: Record) -> None:
    for where, get in PATH_NAMES:
        why = unsafe_name(get(record))
        if why:
            raise ValueError(f"{where} {why}")


def _within(seconds: float, duration_s: float) -> bool:
    """Whether a span measured inside the case process fits the runner's span of it."""
    return seconds <= duration_s * (1 + 1e-6) + 1e-6


def _check_fits(record: Record) -> None:
    """Figures that cannot be: negative times or sizes, more time than the process took."""
    timing, first, memory = record.timing, record.compile, record.memory
    if timing is not None:
        timed_s = sum(timing.samples) * timing.calls_per_sample
        if not _within(timed_s, record.duration_s):
            raise ValueError(f"timing: the timed calls took {timed_s:g} s, more than the whole "
                             f"process (duration_s {record.duration_s:g})")
    for name in ("cold_first_call_s", "warm_first_call_s"):
        seconds = getattr(first, name) if first is not None else None
        if seconds is not None and seconds < 0:
            raise ValueError(f"compile.{name} {seconds:g} is negative")
        if seconds is not None and not _within(seconds, record.duration_s):
            raise ValueError(f"compile.{name} {seconds:g} s is longer than the whole process "
                             f"(duration_s {record.duration_s:g})")
    if first is not None and any(s < 0 for s in first.cold_first_calls_s):
        raise ValueError("compile.cold_first_calls_s holds a negative time")
    if first is not None and first.headers_built is not None and first.headers_built < 0:
        raise ValueError("compile.headers_built is negative")
    for name in (f.name for f in dataclasses.fields(Memory)):
        size = getattr(memory, name) if memory is not None else None
        if size is not None and size < 0:
            raise ValueError(f"memory.{name} {size} is negative")


# Every count, size, time, share and error a record holds is 0 or more; a probe's figures
# are the probe's own business. A record from before the first release or after 2200, or
# of a process that ran for more than a year, is no measurement but a broken clock or a
# forgery (and past pandas' range of timestamps).
UNSIGNED_SECTIONS = ("process", "workload_info", "timing", "compile", "memory", "activity",
                     "dynamo", "correctness", "warmup", "host", "paired", "stream")
EARLIEST = datetime(2000, 1, 1, tzinfo=timezone.utc)
LATEST = datetime(2200, 1, 1, tzinfo=timezone.utc)
LONGEST_PROCESS_S = 366 * 24 * 3600


def _negative(value: Any, where: str) -> str | None:
    """The first negative number in `value` (a dataclass, tuple or number), by its path."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return f"{where} {value:g} is negative" if value < 0 else None
    if dataclasses.is_dataclass(value):
        for item in dataclasses.fields(value):
            found = _negative(getattr(value, item.name), f"{where}.{item.name}")
            if found:
                return found
    elif isinstance(value, tuple):
        for i, item in enumerate(value):
            found = _negative(item, f"{where}[{i}]")
            if found:
                return found
    return None


def _check_ranges(record: Record) -> None:
    """Values no process can measure: negative counts, sizes and errors, impossible times."""
    for name in UNSIGNED_SECTIONS:
        found = _negative(getattr(record, name), name)
        if found:
            raise ValueError(found)
    for stage, seconds in record.stages_s.items():
        if seconds < 0:
            raise ValueError(f"stages_s.{stage} {seconds:g} is negative")
    if record.key.batch_size is not None and record.key.batch_size < 1:
        raise ValueError(f"key.batch_size {record.key.batch_size} is below 1")
    stamp = datetime.fromisoformat(record.started_at)
    if not EARLIEST <= stamp < LATEST:
        raise ValueError(f"started_at {record.started_at} is outside {EARLIEST.year} to "
                         f"{LATEST.year}")
    if record.duration_s > LONGEST_PROCESS_S:
        raise ValueError(f"duration_s {record.duration_s:g} is more than a year")


def _check_paired(paired: PairedRounds, mode: str) -> None:
    if mode not in paired.modes or paired.modes[paired.build_position] != mode:
        raise ValueError(f"paired.modes {list(paired.modes)} and build_position "
                         f"{paired.build_position} do not place mode {mode!r}")
    if len(paired.round_s) != len(paired.round_position) or len(paired.round_s) > paired.rounds_planned:
        raise ValueError(f"paired holds {len(paired.round_s)} round times and "
                         f"{len(paired.round_position)} positions for {paired.rounds_planned} rounds")
    if any(s <= 0 for s in paired.round_s) or paired.calls_per_block < 1:
        raise ValueError("paired.round_s holds a time of 0 or below, or calls_per_block is below 1")


def _check_stream(run: StreamRun) -> None:
    calls = len(run.sizes)
    if not calls or len(run.run_sizes) != calls or len(run.first_pass_s) != calls:
        raise ValueError(f"stream holds {calls} sizes, {len(run.run_sizes)} run sizes and "
                         f"{len(run.first_pass_s)} call times; they must be as many, and some")
    if any(size < 1 for size in run.sizes) or any(
            ran < size for ran, size in zip(run.run_sizes, run.sizes, strict=True)):
        raise ValueError("stream: a size is below 1, or a call ran at less than its request")
    if any(s <= 0 for s in run.first_pass_s):
        raise ValueError("stream.first_pass_s holds a time of 0 or below")
    seen = tuple(dict.fromkeys(run.run_sizes))
    if tuple(cost.size for cost in run.per_size) != seen or sum(
            cost.calls for cost in run.per_size) != calls:
        raise ValueError(f"stream.per_size does not follow the run sizes in order of first "
                         f"appearance ({list(seen)[:10]}...)")


def _describe(hint: Any) -> str:
    return getattr(hint, "__name__", None) or str(hint).replace("typing.", "")


_SHAPES: dict[Any, tuple[Any, tuple, bool]] = {}


def _shape(hint: Any) -> tuple[Any, tuple, bool]:
    """(origin, arguments, is a dataclass) of a type hint, looked up once per hint: a
    results folder asks for the same few hints hundreds of thousands of times."""
    found = _SHAPES.get(hint)
    if found is None:
        found = _SHAPES[hint] = (typing.get_origin(hint), typing.get_args(hint),
                                 dataclasses.is_dataclass(hint))
    return found


def _convert(value: Any, hint: Any, where: str) -> Any:
    """`value` from JSON as the annotated type `hint`, or ValueError naming `where`."""
    origin, arguments, is_dataclass = _shape(hint)
    if origin in (typing.Union, types.UnionType):
        options = arguments
        if value is None and type(None) in options:
            return None
        errors = []
        for option in options:
            if option is type(None):
                continue
            try:
                return _convert(value, option, where)
            except ValueError as error:
                errors.append(error)
        raise errors[0]
    if is_dataclass:
        if not isinstance(value, dict):
            raise ValueError(f"{where}: expected an object, got {type(value).__name__}")
        return _build(hint, value, where)
    if origin is tuple:
        if not isinstance(value, list | tuple):
            raise ValueError(f"{where}: expected a list, got {type(value).__name__}")
        item_hint = arguments[0]
        if item_hint is float and _finite_numbers(value):
            return tuple(map(float, value))  # timing samples: thousands per file, checked in bulk
        if item_hint is str and all(type(v) is str for v in value):
            return tuple(value)
        return tuple(_convert(item, item_hint, f"{where}[{i}]") for i, item in enumerate(value))
    if origin is dict:
        if not isinstance(value, dict):
            raise ValueError(f"{where}: expected an object, got {type(value).__name__}")
        key_hint, item_hint = arguments
        return {_convert(k, key_hint, where): _convert(v, item_hint, f"{where}.{k}")
                for k, v in value.items()}
    if hint is Any:
        return value
    if hint is float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(f"{where}: expected a number, got {value!r}")
        if isinstance(value, int):
            _check_int_range(value, where)
        elif not math.isfinite(value):
            raise ValueError(f"{where}: {value!r} is not a finite number")
        return float(value)
    if hint is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"{where}: expected an integer, got {value!r}")
        return _check_int_range(value, where)
    if hint in (str, bool):
        if not isinstance(value, hint):
            raise ValueError(f"{where}: expected {hint.__name__}, got {value!r}")
        return value
    raise TypeError(f"{where}: no converter for {_describe(hint)}")


# Integers a record may hold: those of a signed 64-bit column, as the report's DataFrame
# keeps them; a larger one is no measurement and would stop the report with a traceback.
INT_MIN, INT_MAX = -(1 << 63), (1 << 63) - 1


def _check_int_range(value: int, where: str) -> int:
    if not INT_MIN <= value <= INT_MAX:
        shown = str(value) if len(str(value)) <= 40 else f"an integer of {len(str(value))} digits"
        raise ValueError(f"{where}: {shown} is outside the 64-bit integer range "
                         f"(-2^63 to 2^63-1)")
    return value


def _finite_numbers(values: list | tuple) -> bool:
    """Whether every item is a finite float, tested for the whole list at once (timing
    samples: thousands per file); anything else, an int included, goes item by item."""
    return all(type(v) is float for v in values) and all(map(math.isfinite, values))


@dataclass(frozen=True)
class _Fields:
    """What `_build` needs to know of a dataclass, worked out once per class."""

    hints: dict[str, Any]
    required: tuple[str, ...]
    # Per field whose type is str, int, bool or float, or one of them or None: the exact
    # JSON types that `_convert` would return unchanged, so most fields skip it.
    plain: dict[str, frozenset[type]]


_PLAIN = (str, int, bool, float)
_FIELDS: dict[type, _Fields] = {}


def _fields(cls: type) -> _Fields:
    found = _FIELDS.get(cls)
    if found is None:
        hints = {f.name: typing.get_type_hints(cls)[f.name] for f in dataclasses.fields(cls)}
        required = tuple(f.name for f in dataclasses.fields(cls)
                         if f.default is dataclasses.MISSING
                         and f.default_factory is dataclasses.MISSING)
        plain = {}
        for name, hint in hints.items():
            origin, arguments, _ = _shape(hint)
            options = arguments if origin in (typing.Union, types.UnionType) else (hint,)
            typed = [o for o in options if o is not type(None)]
            if len(typed) == 1 and typed[0] in _PLAIN:  # (a union of two would convert)
                plain[name] = frozenset(options)
        found = _FIELDS[cls] = _Fields(hints, required, plain)
    return found


def _build(cls: type, data: dict[str, Any], where: str) -> Any:
    fields = _fields(cls)
    hints = fields.hints
    unknown = sorted(set(data) - set(hints))
    if unknown:
        raise ValueError(f"{where or 'record'}: unknown field(s) {', '.join(unknown)}")
    missing = [name for name in fields.required if name not in data]
    if missing:
        raise ValueError(f"{where or 'record'}: missing field(s) {', '.join(missing)}")
    prefix = f"{where}." if where else ""
    values = {}
    for name, value in data.items():
        kind = type(value)
        if kind in fields.plain.get(name, ()) and (
                kind is str or kind is bool or value is None
                or (math.isfinite(value) if kind is float else INT_MIN <= value <= INT_MAX)):
            values[name] = value  # already what `_convert` would return
        else:
            values[name] = _convert(value, hints[name], prefix + name)
    return cls(**values)


def record_from_dict(data: Any, note=None) -> Record:
    """A validated Record from a parsed JSON line of any supported schema version; `note`
    is told what an upgrade drops (`upgrade` says how)."""
    if not isinstance(data, dict):
        raise ValueError(f"expected a JSON object, got {type(data).__name__}")
    return _build(Record, upgrade(data, note), "")


# ---- upgrades ---------------------------------------------------------------------------

def _v1_probe(name: str, found: Any) -> dict[str, Any]:
    if not isinstance(found, dict) or not isinstance(found.get("summary"), str):
        raise ValueError(f"extra.probes.{name}: expected an object with a summary")
    value = found.get("value")
    if isinstance(value, dict):
        return {"name": name, "summary": found["summary"], "outcome": None, "figures": value}
    if isinstance(value, int | float) and not isinstance(value, bool):
        return {"name": name, "summary": found["summary"], "outcome": None,
                "figures": {"value": value}}
    return {"name": name, "summary": found["summary"], "outcome": value, "figures": {}}


# The modes version 1 knew, with their traits as they were then: history, not a second
# definition of today's modes (bench/modes.py), which records of version 2 on carry.
_V1_TRAITS = {
    "eager": (False, False, False, False, "PyTorch eager execution, one kernel launch per op"),
    "default": (True, False, False, False,
                "torch.compile() with default options: Inductor fusion, no CUDA graphs"),
    "reduce-overhead": (True, True, False, False, "torch.compile(mode='reduce-overhead'): "
                        "Inductor plus CUDA graph trees on CUDA"),
    "max-autotune-no-cudagraphs": (True, False, True, False,
                                   "torch.compile(mode='max-autotune-no-cudagraphs'): autotuned "
                                   "GEMM/conv templates, no CUDA graphs"),
    "max-autotune": (True, True, True, False, "torch.compile(mode='max-autotune'): autotuned "
                     "templates plus CUDA graphs on CUDA"),
    "cuda-graph": (False, True, False, False, "manual torch.cuda.CUDAGraph capture of the "
                   "eager function with static input buffers"),
    "default-dynamic": (True, False, False, True, "torch.compile(dynamic=True): one graph with "
                        "symbolic shapes from the first call"),
}
# What version 1 kept in `extra`, by the field that holds it from version 2 on.
_V1_EXTRA = {"stage_s": "stages_s", "log_tail": "log_tail", "probes": "probes"}


def _upgrade_1_to_2(data: dict[str, Any], note) -> dict[str, Any]:
    """Version 1 kept stage times, probes and log tails in a free-form `extra`, compared
    outputs with eager, and ran each case in one process with an empty cache. A field the
    record already holds is kept as recorded; what of `extra` has no field is dropped,
    and `note` says so."""
    data = dict(data)
    extra = data.pop("extra", None)
    if extra is None:
        extra = {}
    if not isinstance(extra, dict):
        raise ValueError(f"extra: expected an object, got {type(extra).__name__}")
    data["schema_version"] = 2
    for old, new in _V1_EXTRA.items():
        if old not in extra:
            continue
        value = extra[old]
        if new == "probes":
            if not isinstance(value, dict):
                raise ValueError(f"extra.probes: expected an object, got {type(value).__name__}")
            value = [_v1_probe(name, found) for name, found in value.items()]
        if new not in data:
            data[new] = value
        elif data[new] != value:
            note(f"extra.{old} differs from the record's own {new}; keeping {new}, "
                 f"dropping extra.{old}")
    unknown = sorted(set(extra) - set(_V1_EXTRA))
    if unknown:
        note(f"schema version 1's extra.{', extra.'.join(unknown)} has no field in version "
             f"{SCHEMA_VERSION}; dropped")
    data.setdefault("process", {"repeat": 0, "repeats": 1, "run_id": None, "gpu": None,
                                "workers": 1, "parent_import_s": None, "cache": "cold"})
    if "mode_traits" not in data:
        mode = data.get("key", {}).get("mode") if isinstance(data.get("key"), dict) else None
        traits = _V1_TRAITS.get(mode) if isinstance(mode, str) else None
        if traits is None:
            raise ValueError(f"key.mode {mode!r} is not a known mode")
        data["mode_traits"] = dict(zip(("compiled", "cuda_graphs", "autotune", "dynamic",
                                        "description"), traits, strict=True))
    return data


def _upgrade_2_to_3(data: dict[str, Any], note) -> dict[str, Any]:
    """Version 3 added paired processes, the host section and CUDA reserved-memory peaks;
    every field it added has a default that says a version 2 record had none of them."""
    return dict(data, schema_version=3)


def _upgrade_3_to_4(data: dict[str, Any], note) -> dict[str, Any]:
    """Version 4 put the precision in the case key; every earlier case ran in float32 (or,
    for a model of your own, its own dtype, which key.dtype "float32" also stands for).
    A key that already names its dtype keeps it."""
    key = data.get("key")
    key = {"dtype": "float32", **key} if isinstance(key, dict) else key
    return dict(data, key=key, schema_version=4)


def _upgrade_4_to_5(data: dict[str, Any], note) -> dict[str, Any]:
    """Version 5 added the stream section of shape-stream cases; no earlier record has one."""
    return dict(data, schema_version=5)


def _upgrade_5_to_6(data: dict[str, Any], note) -> dict[str, Any]:
    """Version 6 added the host probe's long blocks (host.op_long_s); no earlier record has them."""
    return dict(data, schema_version=6)


def _upgrade_6_to_7(data: dict[str, Any], note) -> dict[str, Any]:
    """Version 7 added the host's memory settings (host.cpus, thp, thp_defrag, allocator,
    numa_nodes); no earlier record has them."""
    return dict(data, schema_version=7)


def _upgrade_7_to_8(data: dict[str, Any], note) -> dict[str, Any]:
    """Version 8 added the page faults per timed call (timing.page_faults_per_call); no
    earlier record has them."""
    return dict(data, schema_version=8)


def _upgrade_8_to_9(data: dict[str, Any], note) -> dict[str, Any]:
    """Version 9 added compile.headers_built; no earlier record says it. Those of CPU
    processes from 2026-12-06 (commit 2239ca0, a private empty TMPDIR per process) to version
    9 built the headers in their first calls wherever they compiled C++ kernels, which the
    record does not say either: so they stay not recorded."""
    return dict(data, schema_version=9)


UPGRADES = {1: _upgrade_1_to_2, 2: _upgrade_2_to_3, 3: _upgrade_3_to_4, 4: _upgrade_4_to_5,
            5: _upgrade_5_to_6, 6: _upgrade_6_to_7, 7: _upgrade_7_to_8,
            8: _upgrade_8_to_9}


def upgrade(data: dict[str, Any], note=None) -> dict[str, Any]:
    """Bring a record of an older schema version up to SCHEMA_VERSION, in memory only.
    A value the record holds is never changed; what must be dropped is said through `note`
    (one line, without the record's place; a warning on stderr by default)."""
    version = data.get("schema_version")
    # `true == 1` and `1.0 == 1` in Python: only a JSON integer is a version.
    while type(version) is int and version in UPGRADES:
        data = UPGRADES[version](data, note or _warn)
        version = data.get("schema_version")
    if type(version) is not int or version != SCHEMA_VERSION:
        known = ", ".join(str(v) for v in [*UPGRADES, SCHEMA_VERSION])
        raise ValueError(f"schema_version {json.dumps(version)} is not supported (this reader "
                         f"knows {known})")
    return data


# ---- files ------------------------------------------------------------------------------

def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def parse_line(raw: bytes, note=None) -> Record:
    text = raw.decode("utf-8")  # UnicodeDecodeError is a ValueError
    return record_from_dict(json.loads(text, parse_constant=_reject_constant), note)


def read_records(path: Path, warn=None) -> Iterator[Record]:
    """Every record in `path`. A malformed line raises MalformedRecord naming `path:line`,
    except a last line without its newline: that is a write torn by a crash or a full
    disk, which the next append cuts off, so it is skipped with a warning."""
    data = read_results_file(path)
    lines = data.split(b"\n")
    torn = lines.pop()  # b"" when the file ends with a newline
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            yield parse_line(raw, lambda message, at=f"{path}:{number}":
                             (warn or _warn)(f"{at}: {message}"))
        except (ValueError, TypeError) as error:
            raise MalformedRecord(f"{path}:{number}: malformed record: {error}") from None
    if torn.strip():
        (warn or _warn)(f"{path}:{len(lines) + 1}: skipping an unfinished last line "
                        f"({len(torn)} bytes, no newline); the next append removes it")


# A finished results file may be sealed: compressed with `gzip -9n`, which makes it a fifth
# of its size. Lent machines take a copy of the checkout only up to a size, and every
# committed record travels with it. Runs append to open files only.
OPEN_SUFFIX = ".jsonl"
SEALED_SUFFIX = ".jsonl.gz"
# A sealed file is unpacked whole; a planted one that unpacks to more is refused.
SEALED_MAX_BYTES = 1 << 30


def results_files(folder: Path, pattern: str = "*", recursive: bool = False) -> list[Path]:
    """The results files in `folder` named `pattern` + .jsonl or + .jsonl.gz, sorted; none
    if `folder` is not a directory."""
    folder = Path(folder)
    if not folder.is_dir():
        return []
    find = folder.rglob if recursive else folder.glob
    return sorted({*find(pattern + OPEN_SUFFIX), *find(pattern + SEALED_SUFFIX)})


def read_results_file(path: Path) -> bytes:
    """The bytes of a results file, unpacked if sealed, or MalformedRecord in one line if it
    is no regular file (a directory named *.jsonl, say), cannot be read, or is a sealed
    file that is not whole gzip data or unpacks to over SEALED_MAX_BYTES."""
    try:
        if not Path(path).is_file():
            raise IsADirectoryError(errno.EISDIR, "not a regular file")
        data = Path(path).read_bytes()
    except OSError as error:
        raise MalformedRecord(f"{path}: cannot be read as a results file: "
                              f"{error.strerror or error}") from None
    return _unseal(path, data) if str(path).endswith(SEALED_SUFFIX) else data


def _unseal(path: Path, data: bytes) -> bytes:
    parts, size = [], 0
    try:
        while data:  # `cat a.gz b.gz` is a valid gzip file too: one member after another
            member = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
            part = member.decompress(data, SEALED_MAX_BYTES - size + 1)
            size += len(part)
            if size > SEALED_MAX_BYTES:
                raise MalformedRecord(f"{path}: unpacks to over {SEALED_MAX_BYTES >> 20} MiB; "
                                      f"not read")
            if not member.eof:
                raise zlib.error("the data ends before the gzip stream does")
            parts.append(part)
            data = member.unused_data
    except zlib.error as error:
        raise MalformedRecord(f"{path}: not a sealed results file (gzip): {error}") from None
    return b"".join(parts)


def _warn(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr)


def append_record(path: Path, record: Record) -> None:
    append_records(path, [record])


def refuse_read_only(fd: int, path: Path) -> None:
    """PermissionError for a results file whose mode grants no one write access (chmod 444):
    root may write any file, so the mode is read as the owner's word, as `rm` reads it."""
    mode = os.fstat(fd).st_mode
    if not mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH):
        os.close(fd)
        raise PermissionError(errno.EACCES, f"it is read-only (mode {stat.S_IMODE(mode):04o}); "
                              f"chmod u+w it to add records", str(path))


def check_appendable(path: Path) -> None:
    """OSError unless this process may append to the existing results file `path`: not
    through a link, and not where the file's mode says read-only."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW)
    refuse_read_only(fd, path)
    os.close(fd)


def append_records(path: Path, records: list[Record]) -> None:
    """Append whole lines under an exclusive lock, all of them or nothing at all.

    A torn tail left by an earlier crash is cut off first. If the disk fills mid-line
    the partial line is removed again and RecordWriteError says so: a record is never
    reported as saved unless every byte of it reached the file and was fsync'ed.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    line = "".join(record.to_json() + "\n" for record in records).encode()
    record = records[0]
    try:  # never through a link: a planted one would send the record anywhere
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o644)
        refuse_read_only(fd, path)
    except OSError as error:
        raise RecordWriteError(error.errno, f"{path}: could not save the record of "
                               f"{record.key.workload} {record.key.mode}: "
                               f"{error.strerror or error}") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        _drop_torn_tail(fd)
        start = os.fstat(fd).st_size
        written = 0
        try:
            while written < len(line):
                count = os.write(fd, line[written:])
                if count == 0:
                    raise OSError(errno.ENOSPC, "no space left on device")
                written += count
            os.fsync(fd)
        except OSError as error:
            os.ftruncate(fd, start)
            raise RecordWriteError(
                error.errno, f"{path}: could not save the record of {record.key.workload} "
                f"{record.key.mode} ({written} of {len(line)} bytes written): "
                f"{error.strerror or error}") from None
    finally:
        os.close(fd)


def _drop_torn_tail(fd: int) -> None:
    """A writer killed mid-line leaves a line without its newline; cut it off."""
    size = os.fstat(fd).st_size
    if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
        return
    content = os.pread(fd, size, 0)
    os.ftruncate(fd, content.rfind(b"\n") + 1)
