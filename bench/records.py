"""Result records: immutable, versioned, one JSON object per line.

The results files are the only boundary between `bench/` (which needs torch) and
`report/` (which must not import it), so this module uses the standard library
alone and its field names are the contract both sides keep.
"""

from __future__ import annotations

import dataclasses
import fcntl
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SCHEMA_VERSION = 1

STATUSES = ("ok", "error", "timeout", "oom", "unsupported", "skipped")


@dataclass(frozen=True)
class CaseKey:
    """What was measured. Two records with equal keys and env_id are the same case."""

    backend: str
    workload: str
    mode: str
    batch_size: int | None
    shapes: str = "seed"  # "tiny" shrinks every shape, for tests and smoke runs
    tag: str = "main"  # lets the same case be measured again on purpose (run-to-run spread)


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


@dataclass(frozen=True)
class CompileTimes:
    """First-call latency, which is where compilation happens.

    cold: fresh, empty Inductor/Triton cache directories.
    warm: the same process after torch._dynamo.reset() and clearing Inductor's
    in-memory caches, so only the on-disk caches written by the cold run help.
    """

    cold_first_call_s: float | None
    warm_first_call_s: float | None
    cold_first_calls_s: tuple[float, ...] = ()  # first few calls: cudagraph recording shows here


@dataclass(frozen=True)
class Memory:
    peak_device_bytes: int | None  # torch.cuda/mps allocator peak during timing; None on CPU
    peak_rss_bytes: int | None  # peak resident set size of the case's process


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
class DynamoCounters:
    graph_breaks: int
    recompiles: int
    unique_graphs: int
    cudagraph_skips: int
    skip_reasons: tuple[str, ...] = ()


@dataclass(frozen=True)
class Correctness:
    reference: str  # what the output was compared with, e.g. "eager"
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
        import hashlib

        canonical = json.dumps(self.identity(), sort_keys=True)
        return hashlib.sha256(canonical.encode()).hexdigest()[:12]


@dataclass(frozen=True)
class Record:
    key: CaseKey
    status: str
    reason: str | None
    profile: str
    env: Environment
    env_id: str
    started_at: str  # ISO 8601, UTC
    duration_s: float
    workload_info: WorkloadInfo | None = None
    timing: Timing | None = None
    compile: CompileTimes | None = None
    memory: Memory | None = None
    activity: Activity | None = None
    dynamo: DynamoCounters | None = None
    correctness: Correctness | None = None
    schema_version: int = SCHEMA_VERSION
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"status {self.status!r} is not one of {', '.join(STATUSES)}")

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self), sort_keys=True, allow_nan=False)


class MalformedRecord(ValueError):
    """A results line that cannot be read; the message names the file and line."""


_NESTED = {
    "key": CaseKey,
    "env": Environment,
    "workload_info": WorkloadInfo,
    "timing": Timing,
    "compile": CompileTimes,
    "memory": Memory,
    "activity": Activity,
    "dynamo": DynamoCounters,
    "correctness": Correctness,
}


def _tuples(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_tuples(item) for item in value)
    return value


def record_from_dict(data: dict[str, Any]) -> Record:
    if not isinstance(data, dict):
        raise ValueError(f"expected a JSON object, got {type(data).__name__}")
    data = upgrade(data)
    kwargs = dict(data)
    for name, cls in _NESTED.items():
        value = kwargs.get(name)
        if value is None:
            continue
        if not isinstance(value, dict):
            raise ValueError(f"{name}: expected an object, got {type(value).__name__}")
        kwargs[name] = cls(**{k: _tuples(v) for k, v in value.items()})
    return Record(**kwargs)


def upgrade(data: dict[str, Any]) -> dict[str, Any]:
    """Bring an older record up to SCHEMA_VERSION. Version 1 is the first."""
    version = data.get("schema_version")
    if version != SCHEMA_VERSION:
        raise ValueError(f"schema_version {version!r} is not supported (this reader knows 1)")
    return data


def read_records(path: Path) -> Iterator[Record]:
    with open(path, encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                yield record_from_dict(json.loads(line))
            except (ValueError, TypeError) as error:
                raise MalformedRecord(f"{path}:{number}: malformed record: {error}") from None


def append_record(path: Path, record: Record) -> None:
    """Append one line under an exclusive lock, so concurrent runs never interleave.

    The whole line goes out in a single write() on an O_APPEND descriptor and is
    fsync'ed, so a run killed at any moment leaves only complete lines behind.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    line = (record.to_json() + "\n").encode()
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        _drop_torn_tail(fd)
        os.write(fd, line)
        os.fsync(fd)
    finally:
        os.close(fd)


def _drop_torn_tail(fd: int) -> None:
    """A writer killed by power loss can leave a line without its newline; cut it off."""
    size = os.fstat(fd).st_size
    if size == 0:
        return
    if os.pread(fd, 1, size - 1) == b"\n":
        return
    content = os.pread(fd, size, 0)
    os.ftruncate(fd, content.rfind(b"\n") + 1)
