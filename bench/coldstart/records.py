"""Cold-start records: one fresh process of the cold-start ladder or of regional compilation.

A record type of its own, beside bench/records.py's: the cold-start runner measures
first calls in processes it starts with chosen compile caches, which a case record cannot
describe. The environment section and the validation helpers are bench/records.py's, so
both kinds of record name their machine, software and settings the same way.

The files are JSON Lines named `*.ndjson`, not `*.jsonl`: the main loaders read every
`*.jsonl` under results/ as a case record. Standard library only: report/ reads these.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from bench.coldstart.rungs import TABLE
from bench.records import (
    STATUSES,
    Environment,
    Host,
    MalformedRecord,
    Timing,
    _build,
    _check_timing,
    read_results_file,
    unsafe_name,
)

SCHEMA_VERSION = 3  # 2: the dtype the model was built in; 3: headers_built
SUFFIX = ".ndjson"

# The ladder, in the order a user climbs it. "eager" is the baseline every residual is
# taken against; "foreign-bundle" loads a bundle saved in another environment. Each rung's
# needs and words are bench/coldstart/rungs.py's table.
LADDER = tuple(name for name, rung in TABLE.items() if rung.group == "ladder")
FOREIGN = "foreign-bundle"
# Regional compilation, each in a cold process; the whole model compiled is the "cold" rung.
REGIONAL = tuple(name for name, rung in TABLE.items() if rung.group == "regional")
RUNGS = tuple(TABLE)
RUNG_TEXT = {name: TABLE[name].words for name in RUNGS}
MODES = ("default", "reduce-overhead", "max-autotune-no-cudagraphs")
# What a loaded bundle did for the FX graph cache: every graph found, some, or none.
OUTCOMES = ("hit", "partial", "recompile")


@dataclass(frozen=True)
class ColdKey:
    backend: str
    workload: str
    mode: str  # "eager" for the eager rung
    batch_size: int | None
    rung: str
    shapes: str = "seed"
    # "main"; "from-<env_id>" for a foreign bundle: one case per source environment;
    # "ab-<group>-<label>" for a side of an A/B run across releases (bench/ab.py).
    tag: str = "main"


@dataclass(frozen=True)
class BundleInfo:
    """A portable cache bundle: the one a process saved or the one it loaded."""

    path: str | None  # relative to the results folder where it was published, else None
    size_bytes: int
    sha256: str
    source_env_id: str
    source_device: str
    source_torch: str
    artifacts: dict[str, int] = field(default_factory=dict)  # cache layer -> entries
    outcome: str | None = None  # for a loaded bundle: OUTCOMES, from the FX graph counters


@dataclass(frozen=True)
class ColdRecord:
    key: ColdKey
    repeat: int
    repeats: int
    status: str  # bench.records.STATUSES
    reason: str | None
    env: Environment
    env_id: str
    started_at: str
    duration_s: float  # the whole process, as the runner saw it
    run_id: str
    # The precision the process built the model's weights and inputs in, "float32" say: the
    # workload's own, since the ladder never casts. None: not recorded (a version 1 record,
    # or a process that ended before it built the model).
    dtype: str | None
    # From before the first call (bundle or artifact load included) to its output on the
    # host, device synchronized: what a user waits for, the model already built.
    first_call_s: float | None = None
    load_s: float | None = None  # the bundle or artifact load within first_call_s
    # The saving process's compile, for the aot and precompile rungs (not in first_call_s).
    prepare_s: float | None = None
    steady: Timing | None = None
    # Every compile-cache counter torch._dynamo.utils.counters held after the first call,
    # as "group.name" (inductor.fxgraph_cache_hit, aot_autograd.autograd_cache_miss...).
    counters: dict[str, int] = field(default_factory=dict)
    saved: BundleInfo | None = None
    loaded: BundleInfo | None = None
    # The host's C and C++ compiler runs that began during the first call, and the seconds
    # of it in which at least one ran (bench/coldstart/compilers.py): what the cache layers
    # above left to build from source. None: not recorded (records before the count, a GPU
    # backend, or not Linux).
    compiler_runs: int | None = None
    compiler_s: float | None = None
    # How many of Inductor's precompiled headers the first call built: 0 where an earlier
    # process had built them (bench/pool.py, header_folder). None: not recorded.
    headers_built: int | None = None
    blocks: int | None = None  # regional rungs: how many repeated blocks were compiled
    block_class: str | None = None
    log_tail: tuple[str, ...] = ()
    # --gpus: the slot's GPU index, and how many processes ran at once on the host, one per
    # GPU, each pinned to its share of the cores (1: alone, as on a one-GPU machine).
    gpu: int | None = None
    workers: int = 1
    # How fast the host that compiled was, measured in the process after its timing: the
    # eager-op probe with the host's fingerprint (boot id: which lease), and the seconds of
    # each block of a compile-like task (bench/host/task.py). None and (): not recorded
    # (records before these fields, or a process that failed first).
    host: Host | None = None
    host_task_s: tuple[float, ...] = ()
    schema_version: int = SCHEMA_VERSION

    def __post_init__(self) -> None:
        _check(self)

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self), sort_keys=True, allow_nan=False)

    @property
    def identity(self) -> tuple:
        """What a resumed run looks for: one record per key and repeat in an environment."""
        return (self.env_id, self.key, self.repeat)


def _check(record: ColdRecord) -> None:
    if record.schema_version != SCHEMA_VERSION:
        raise ValueError(f"schema_version {record.schema_version} is not {SCHEMA_VERSION}")
    if record.status not in STATUSES:
        raise ValueError(f"status {record.status!r} is not one of {', '.join(STATUSES)}")
    if record.key.rung not in RUNGS:
        raise ValueError(f"key.rung {record.key.rung!r} is not one of {', '.join(RUNGS)}")
    if record.key.mode not in ("eager", *MODES):
        raise ValueError(f"key.mode {record.key.mode!r} is not eager or one of {', '.join(MODES)}")
    if (record.key.mode == "eager") != (record.key.rung == "eager"):
        raise ValueError(f"key.mode {record.key.mode!r} does not go with rung {record.key.rung!r}")
    if record.env.backend != record.key.backend:
        raise ValueError(f"env.backend {record.env.backend!r} differs from key.backend")
    if record.env_id != record.env.env_id():
        raise ValueError(f"env_id {record.env_id!r} does not match the environment")
    if record.dtype is not None and not re.fullmatch(r"[a-z][a-z0-9_]*", record.dtype):
        raise ValueError(f"dtype {record.dtype!r} is not the name of a torch dtype (float32, ...)")
    why = unsafe_name(record.key.workload)
    if why:
        raise ValueError(f"key.workload {why}")
    if not 0 <= record.repeat < record.repeats:
        raise ValueError(f"repeat {record.repeat} is outside 0..repeats-1 ({record.repeats})")
    stamp = datetime.fromisoformat(record.started_at)
    if stamp.tzinfo is None:
        raise ValueError(f"started_at {record.started_at!r} has no UTC offset")
    if any(not 0 < t < 3600 for t in record.host_task_s):
        raise ValueError("host_task_s holds a block outside 0-3600 s")
    for name in ("duration_s", "first_call_s", "load_s", "prepare_s", "compiler_runs",
                 "compiler_s", "headers_built"):
        value = getattr(record, name)
        if value is not None and value < 0:
            raise ValueError(f"{name} {value:g} is negative")
    if record.first_call_s is not None and record.first_call_s > record.duration_s * 1.000001 + 1e-6:
        raise ValueError(f"first_call_s {record.first_call_s:g} is longer than the process "
                         f"({record.duration_s:g} s)")
    if record.status == "ok" and (record.first_call_s is None or record.steady is None):
        raise ValueError("an ok record has no first call or no steady timing")
    if record.steady is not None:
        _check_timing(record.steady)
    for bundle in (record.saved, record.loaded):
        if bundle is not None and bundle.outcome not in (None, *OUTCOMES):
            raise ValueError(f"bundle outcome {bundle.outcome!r} is not one of {', '.join(OUTCOMES)}")


def outcome(counters: dict[str, int]) -> str:
    """What a loaded bundle did for the FX graph cache: hit, partial or recompile."""
    hits = counters.get("inductor.fxgraph_cache_hit", 0)
    misses = counters.get("inductor.fxgraph_cache_miss", 0)
    if hits and not misses:
        return "hit"
    return "partial" if hits else "recompile"


# ---- files ------------------------------------------------------------------------------

def results_path(results_dir: Path, env: Environment) -> Path:
    slug = re.sub(r"[^a-z0-9.]+", "-", f"{env.machine}-{env.backend}-torch{env.torch}".lower())
    return Path(results_dir) / f"coldstart-{slug.strip('-')}-{env.env_id()}{SUFFIX}"


def _upgrade_1_to_2(data: dict) -> dict:
    """Version 2 records the dtype the model was built in. A version 1 record does not say
    it, and nothing else in it does: its dtype is not recorded (None), never guessed."""
    return dict(data, dtype=None, schema_version=2)


def _upgrade_2_to_3(data: dict) -> dict:
    """Version 3 records the precompiled headers a first call built; no earlier record
    does (None)."""
    return dict(data, schema_version=3)


UPGRADES = {1: _upgrade_1_to_2, 2: _upgrade_2_to_3}


def record_from_dict(data: object) -> ColdRecord:
    """A validated record from a parsed JSON line of any supported schema version, an older
    one upgraded in memory (the file is never rewritten)."""
    if not isinstance(data, dict):
        raise ValueError(f"expected a JSON object, got {type(data).__name__}")
    version = data.get("schema_version")
    # true and 1.0 equal 1 in Python: only a JSON integer is a version
    while type(version) is int and version in UPGRADES:
        data = UPGRADES[version](data)
        version = data.get("schema_version")
    if type(version) is not int or version != SCHEMA_VERSION:
        known = ", ".join(str(v) for v in [*UPGRADES, SCHEMA_VERSION])
        raise ValueError(f"schema_version {version!r} is not supported (this reader knows "
                         f"{known})")
    return _build(ColdRecord, data, "")


def read(path: Path) -> Iterator[ColdRecord]:
    """Every record of one file; a malformed line raises MalformedRecord naming path:line.
    A last line without its newline (a torn write) is skipped."""
    lines = read_results_file(path).split(b"\n")
    lines.pop()  # b"" after the last newline, or a torn line
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            yield record_from_dict(json.loads(raw.decode("utf-8")))
        except (ValueError, TypeError) as error:
            raise MalformedRecord(f"{path}:{number}: malformed cold-start record: {error}") from None


def read_folder(folder: Path) -> list[ColdRecord]:
    """Every cold-start record under `folder`, files in name order."""
    folder = Path(folder)
    paths = sorted(folder.rglob(f"coldstart-*{SUFFIX}")) if folder.is_dir() else []
    return [record for path in paths for record in read(path)]
