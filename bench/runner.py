"""Plan cases, run each repeat in its own process, and append one record per process.

A run measures every case once (repeat 0), then every case again (repeat 1), and so on, so
whatever drifts on the host spreads over all cases instead of landing on one. Each process
is a child of this runner (see bench/pool.py), one per GPU slot at a time, taken from one
ordered queue. Repeat 0 of a case compiles with empty caches; later repeats start from the
caches repeat 0 left in the case's folder under --cache-dir.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import os
import re
import shutil
import signal
import sys
import time
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path

from bench import REPO, pool
from bench.environment import collect
from bench.modes import MODES, Twin, twins_among
from bench.pool import Child, ChildSetup, Launcher, Slot
from bench.records import (
    MEASURED_SECTIONS,
    SCHEMA_VERSION,
    CaseKey,
    Environment,
    Process,
    Record,
    RecordWriteError,
    append_records,
    check_appendable,
    read_records,
    read_results_file,
    record_from_dict,
    results_files,
)
from bench.spec import PairedSpec, Spec
from bench.workloads import lookup

TIMING_BUDGET_S = {"quick": 0.3, "full": 0.6, "sentinel": 0.3}
DEFAULT_REPEATS = {"quick": 3, "full": 3, "sentinel": 3}
TIMINGS = ("paired", "isolated")
# interleaved: every case's first repeat, then every second one...; grouped (paired timing):
# a group's isolated and paired processes back to back, while its compile caches are on disk.
ORDERS = ("interleaved", "grouped")
PROFILES = tuple(TIMING_BUDGET_S)
DEFAULT_ROUNDS = 15
# A paired round gives each mode a tenth of the isolated budget: 15 rounds then time each
# mode about 1.5 times as long as an isolated process does, spread over the whole process.
BLOCK_SHARE = 0.1
DEFAULT_CACHE_DIR = REPO / ".bench-cache"
STDERR_TAIL_LINES = 15
ENVIRONMENT_TIMEOUT_S = 300.0  # for a child to read the environment (CUDA's first init)
# The processes the runner starts, as pool.Launcher.start runs them: "module:function",
# called with the rest of the target and returning an exit code. pool imports none of them.
CHILDREN = {"case": "bench.case:main", "paired": "bench.paired:main",
            "environment": "bench.runner:environment_main"}


@dataclass(frozen=True)
class RunConfig:
    profile: str
    shapes: str
    tag: str
    force: bool
    timeout_s: float
    budget_s: float
    results_dir: Path
    max_minutes: float | None
    repeats: int = 1
    isolation: str = pool.DEFAULT_ISOLATION
    cache_dir: Path = DEFAULT_CACHE_DIR
    shard: tuple[int, int] | None = None  # (I, N): the I-th of N slices of the plan, 1-based
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    # paired: one isolated process per case (compile, memory, profiler, its own timing), then
    # `repeats` paired processes per group of modes; isolated: `repeats` isolated processes.
    timing: str = "isolated"
    rounds: int = DEFAULT_ROUNDS
    order: str = "interleaved"
    # Every isolated repeat compiles from empty caches, not only repeat 0: the compile-time
    # claims need several cold first calls per case.
    cold_repeats: bool = False

    def __post_init__(self) -> None:
        if self.timing not in TIMINGS:
            raise ValueError(f"timing {self.timing!r} is not one of {', '.join(TIMINGS)}")
        if self.rounds < 1:
            raise ValueError(f"rounds must be 1 or more, got {self.rounds}")
        if self.order not in ORDERS:
            raise ValueError(f"order {self.order!r} is not one of {', '.join(ORDERS)}")


@dataclass(frozen=True)
class Job:
    """One process to run: a case and which of its repeats, or, paired, every mode of a
    case (`group`, in plan order; `key` is its first) timed side by side."""

    key: CaseKey
    repeat: int
    group: tuple[CaseKey, ...] = ()

    @property
    def keys(self) -> tuple[CaseKey, ...]:
        return self.group or (self.key,)


class RunError(Exception):
    """The run cannot go on (results not writable, locked, a record not saved): one line."""


class Terminated(Exception):
    """The runner got SIGTERM; the running cases were stopped and not recorded."""


# ---- planning ---------------------------------------------------------------------------

def plan(backend: str, workloads: Iterable[str], modes: Iterable[str], profile: str,
         batch_sizes: set[int] | None, shapes: str, tag: str,
         dtypes: Iterable[str] = ("float32",)) -> list[CaseKey]:
    """Every case of the selection; a workload that does not run in one of `dtypes` has no
    case in it (the CLI refuses a workload named outright that runs in none of them). The
    quick profile measures a mode and its twin on this backend once, as the twin
    (`twins_left_out`)."""
    modes = list(dict.fromkeys(modes))
    modes = [m for m in modes if m not in twins_left_out(modes, backend, profile)]
    cases = []
    for name in dict.fromkeys(workloads):  # a name given twice is still one case
        workload = lookup(name)
        for batch in workload.sizes(profile, backend):
            if batch_sizes and batch not in batch_sizes:
                continue
            for dtype in dict.fromkeys(dtypes):
                if workload.dtype_refusal(dtype):
                    continue
                cases.extend(CaseKey(backend, name, mode, batch, shapes, tag, dtype)
                             for mode in modes
                             if MODES[mode].applies_to(workload.varying_shapes)
                             and workload.measures(profile, MODES[mode].traits.autotune,
                                                   backend, batch))
    return cases


def twins_left_out(modes: Iterable[str], backend: str, profile: str) -> dict[str, Twin]:
    """The modes of the selection that `profile` leaves to their twin on `backend`: the quick
    profile times each kernel build once, and the full one measures every mode."""
    return twins_among(list(modes), backend) if profile == "quick" else {}


def shard(cases: list[CaseKey], index: int, count: int) -> list[CaseKey]:
    """The `index`-th (1-based) of `count` round-robin slices of the plan, in plan order.
    Taken before repeats are expanded, so every repeat of a case lands in the same shard."""
    return cases[index - 1::count]


def jobs(cases: list[CaseKey], repeats: int, done: Recorded, timing: str = "isolated",
         order: str = "interleaved") -> list[Job]:
    """Every repeat of every case, interleaved, less what is done. A mode the backend cannot
    run costs no process: it is one `unsupported` record, done for every repeat.

    Paired: repeat 0 of every case in a process of its own, then per group (the modes of
    one workload and size) one paired process per repeat, each after the group's isolated
    ones. A paired process is needed while any mode of its group lacks that repeat, and it
    then times every mode, so that each ratio comes from one process. A mode whose isolated
    process timed out is left out of the group: it would only make the paired one time out.
    `order` "grouped" runs each group's processes back to back instead of interleaving the
    repeats over the plan: on a machine that starts bare (a lent one), a paired process run
    after its caches are gone compiles everything cold again, autotuning included."""
    if timing == "isolated":
        return _isolated_jobs(cases, repeats, done)
    todo = []
    found = groups(cases)
    for group, repeat in ([(g, r) for g in found for r in range(repeats)] if order == "grouped"
                          else [(g, r) for r in range(repeats) for g in found]):
        if repeat == 0:
            todo.extend(_isolated_jobs(group, 1, done))
        # A shape stream is one pass per fresh process (bench/shapes): never paired.
        runnable = tuple(k for k in group if MODES[k.mode].unsupported_reason(k.backend) is None
                         and done.pairable(k) and lookup(k.workload).stream is None)
        if len(runnable) > 1 and not all(done.paired_share(k, repeat) for k in runnable):
            todo.append(Job(runnable[0], repeat, runnable))
    return todo


def _isolated_jobs(cases: list[CaseKey], repeats: int, done: Recorded) -> list[Job]:
    todo = []
    for repeat in range(repeats):
        for key in cases:
            unsupported = MODES[key.mode].unsupported_reason(key.backend) is not None
            if (unsupported and repeat > 0) or done.isolated_process(key, repeat):
                continue
            todo.append(Job(key, repeat))
    return todo


def groups(cases: list[CaseKey]) -> list[list[CaseKey]]:
    """The cases of one workload, size and dtype (every field but the mode), in plan order."""
    found: dict[tuple, list[CaseKey]] = {}
    for key in cases:
        found.setdefault(replace(key, mode=""), []).append(key)
    return list(found.values())


# ---- results files ----------------------------------------------------------------------

def results_path(results_dir: Path, env: Environment, shard_of: tuple[int, int] | None = None
                 ) -> Path:
    """`<backend>-<machine>-torch<version>-<env_id>[-shardIofN].jsonl`: one file per
    environment, or per shard of it; the report merges every file of an environment."""
    slug = re.sub(r"[^a-z0-9.]+", "-", f"{env.backend}-{env.machine}-torch{env.torch}".lower())
    suffix = f"-shard{shard_of[0]}of{shard_of[1]}" if shard_of else ""
    return results_dir / f"{slug.strip('-')}-{env.env_id()}{suffix}.jsonl"


def _own_records(results_dir: Path, env: Environment, warn=None) -> Iterator[Record]:
    """The records of this environment, in any of its files (shards included)."""
    env_id = env.env_id()
    for path in results_files(results_dir, f"*-{env_id}*"):
        yield from (r for r in read_records(path, warn) if r.env_id == env_id)


@dataclass(frozen=True)
class Recorded:
    """What an environment's records already hold, so that a run measures only the rest."""

    isolated: frozenset[tuple[CaseKey, int]] = frozenset()  # (key, repeat) of each process
    unsupported: frozenset[CaseKey] = frozenset()  # cases done for every repeat
    paired: frozenset[tuple[CaseKey, int]] = frozenset()  # (key, repeat) of a mode's share
    # Cases whose isolated repeat 0 timed out, and that their paired processes leave out,
    # until a later repeat 0 (a --force re-measure under a longer --timeout) ends otherwise.
    timed_out: frozenset[CaseKey] = frozenset()

    def isolated_process(self, key: CaseKey, repeat: int) -> bool:
        return key in self.unsupported or (key, repeat) in self.isolated

    def pairable(self, key: CaseKey) -> bool:
        return key not in self.unsupported and key not in self.timed_out

    def paired_share(self, key: CaseKey, repeat: int) -> bool:
        return (key, repeat) in self.paired


def recorded(results_dir: Path, env: Environment, cold_repeats: bool = False) -> Recorded:
    """The processes already recorded for this environment, in any of its files. With
    `cold_repeats`, a compiled mode's isolated process that started from warm caches is not
    what the run asks for, and is measured again."""
    isolated, unsupported, paired, timed_out = set(), set(), set(), set()
    for record in _own_records(results_dir, env):
        key, repeat = record.key, record.process.repeat
        if record.process.timing == "paired":
            paired.add((key, repeat))
            continue
        if cold_repeats and record.process.cache == "warm" and record.mode_traits.compiled:
            continue
        if record.status == "unsupported":
            unsupported.add(key)
        else:
            isolated.add((key, repeat))
        if repeat == 0 and record.status == "timeout":
            timed_out.add(key)
        elif repeat == 0:
            timed_out.discard(key)
    return Recorded(frozenset(isolated), frozenset(unsupported), frozenset(paired),
                    frozenset(timed_out))


def signature(job: Job, cold: bool | None = None) -> tuple:
    """What makes two jobs cost alike: one workload and size, the same modes in the same kind
    of process, compiling cold (by default repeat 0's) or from caches already on disk."""
    key = job.key
    return (key.workload, key.batch_size, key.dtype, key.shapes, key.tag,
            tuple(k.mode for k in job.keys),
            "paired" if job.group else "isolated", job.repeat == 0 if cold is None else cold)


def durations(results_dir: Path, env: Environment) -> dict[tuple, float]:
    """The longest that each `signature` took in this environment's records: what a job of
    it is expected to take. A signature never seen here takes the longest it took in other
    environments of the backend (another GPU's paired process is a far better guess than
    this run's longest cold compile); a warm paired process, from a cold one of its modes
    here. The records of one paired process are one job."""
    # recorded() warns of a torn last line; once is enough.
    quiet = lambda message: None  # noqa: E731
    env_id = env.env_id()
    elsewhere = (r for path in results_files(results_dir, f"{env.backend}-*")
                 for r in read_records(path, quiet) if r.env_id != env_id)
    return {**_longest(elsewhere), **_longest(_own_records(results_dir, env, warn=quiet))}


def _longest(records: Iterable[Record]) -> dict[tuple, float]:
    """The longest each signature took; a warm paired process never measured is expected to
    take what a cold one of its modes took, less the compiles its caches would spare."""
    longest: dict[tuple, float] = {}
    warm_estimates: dict[tuple, float] = {}
    processes: dict[tuple, list[Record]] = {}
    warm_first_call_s: dict[CaseKey, float] = {}
    for record in records:
        p = record.process
        if p.timing == "paired":
            one = (record.env_id, p.run_id, record.started_at, p.repeat,
                   replace(record.key, mode=""))
            processes.setdefault(one, []).append(record)
            continue
        if record.compile and record.compile.warm_first_call_s is not None:
            warm_first_call_s[record.key] = max(warm_first_call_s.get(record.key, 0.0),
                                                record.compile.warm_first_call_s)
        sig = signature(Job(record.key, p.repeat), p.cache == "cold")
        longest[sig] = max(longest.get(sig, 0.0), record.duration_s)
    for shares in processes.values():
        keys = tuple(r.key for r in shares)
        job, cold = Job(keys[0], shares[0].process.repeat, keys), shares[0].process.cache == "cold"
        sig, took_s = signature(job, cold), max(r.duration_s for r in shares)
        longest[sig] = max(longest.get(sig, 0.0), took_s)
        if cold:
            warm = signature(job, cold=False)
            warm_estimates[warm] = max(warm_estimates.get(warm, 0.0),
                                       _with_warm_compiles(took_s, shares, warm_first_call_s))
    return warm_estimates | longest


def _with_warm_compiles(took_s: float, shares: list[Record],
                        warm_first_call_s: dict[CaseKey, float]) -> float:
    """A cold paired process's duration with each mode's cold first call swapped for the
    warm one its isolated process measured, or kept where none was. On an H200 this put
    resnet50's six modes at 51 s after a 964 s cold process; the warm ones took 37 and 41 s."""
    for share in shares:
        cold_s = (share.compile and share.compile.cold_first_call_s) or 0.0
        took_s += warm_first_call_s.get(share.key, cold_s) - cold_s
    return took_s


def check_writable(results_dir: Path) -> None:
    """RunError unless records can be written under `results_dir`: found before measuring."""
    try:
        results_dir.mkdir(parents=True, exist_ok=True)
        probe = results_dir / f".write-check-{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as error:
        raise RunError(f"cannot write results to {results_dir}: "
                       f"{error.strerror or error}") from None


def check_same_device(results_dir: Path, env: Environment) -> None:
    """RunError when `results_dir` already files another accelerator under this machine's
    name. A lent machine can come with another GPU than the name it is measured under says
    (an H100 for a call that asked for an H200); its records would open a new environment
    that every page labels with the wrong name. The CPU is exempt: one name there follows a
    runner whose host can change from one release to the next."""
    if env.backend == "cpu":
        return
    for path in results_files(results_dir, f"{env.backend}-*"):
        try:
            first = json.loads(read_results_file(path).split(b"\n", 1)[0] or b"null")
            other = first["env"]
        except (ValueError, TypeError, KeyError):  # MalformedRecord is a ValueError
            continue  # read_records names a malformed file when the run reads it
        if (isinstance(other, dict) and other.get("machine") == env.machine
                and other.get("backend") == env.backend
                and other.get("device_name") != env.device_name):
            raise RunError(f"--machine {env.machine!r} belongs to the {other.get('device_name')} "
                           f"measured in {path}, but this machine's device is the "
                           f"{env.device_name}: measure it under another --machine name")


def check_results_file(path: Path) -> None:
    """RunError unless `path` and its lock are absent or plain files that this run can
    append to: found before anything is measured. A link is refused, never followed: one
    planted there would send the lock's pid or the records into whatever it points at."""
    lock = path.with_name(path.name + ".lock")
    for candidate in (path, lock):
        if candidate.is_symlink():
            target = "to nothing" if not candidate.exists() else (
                "to a directory" if candidate.is_dir() else "to a file")
            raise RunError(f"{candidate} is a symbolic link {target}; results and lock files "
                           f"are never written through links: remove it, or use another "
                           f"--results-dir")
        if candidate.exists() and not candidate.is_file():
            raise RunError(f"{candidate} is not a regular file (a directory?): remove it, or "
                           f"use another --results-dir")
        if candidate.exists() and candidate.stat().st_nlink > 1:
            raise RunError(f"{candidate} has {candidate.stat().st_nlink - 1} other hard "
                           f"link(s); writing it would change them too: remove it, or use "
                           f"another --results-dir")
    if path.exists():
        try:
            check_appendable(path)  # refuses a read-only file even for root
        except OSError as error:
            raise RunError(f"cannot append to {path}: {error.strerror or error} (is it "
                           f"read-only?)") from None


def _write_owner(fd: int, lock: Path) -> None:
    """The runner's pid into its lock, for the message a second runner prints."""
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    except OSError as error:
        raise RunError(f"cannot write {lock}: {error.strerror or error}") from None


@dataclass(frozen=True)
class HeldLock:
    """The lock `exclusive` holds on a results file, open as `fd`."""

    path: Path  # the lock file
    results: Path  # the results file it guards
    fd: int

    def in_place(self) -> bool:
        """Whether the file at `path` is still the one this run locked."""
        try:
            there, held = os.stat(self.path), os.fstat(self.fd)
        except OSError:
            return False
        return (there.st_dev, there.st_ino) == (held.st_dev, held.st_ino)

    def check(self) -> None:
        """RunError once the lock is gone (`rm -rf` of the results folder): a record written
        now would go to a new folder no lock guards, where a second runner may measure the
        same cases."""
        if not self.in_place():
            raise RunError(f"{self.path} was removed or replaced during the run (the results "
                           f"folder deleted?): stopping rather than write {self.results.name} "
                           f"without its lock; run again to measure what is missing")


@contextlib.contextmanager
def exclusive(path: Path) -> Iterator[HeldLock]:
    """Hold `<path>.lock` for the whole run, or RunError at once if another runner holds it."""
    lock = path.with_name(path.name + ".lock")
    check_results_file(path)
    while True:
        try:
            fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
        except OSError as error:
            raise RunError(f"cannot create {lock}: {error.strerror or error}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as error:
            owner = os.pread(fd, 64, 0).decode(errors="replace").strip() or "?"
            os.close(fd)
            if error.errno in (errno.EAGAIN, errno.EACCES):
                raise RunError(f"another runner (pid {owner}) is writing {path}; wait for it "
                               f"to finish, or use another --results-dir") from None
            raise
        # The holder before us may have removed the file as it let go; lock the one in place.
        with contextlib.suppress(FileNotFoundError):
            if os.stat(lock).st_ino == os.fstat(fd).st_ino:
                break
        os.close(fd)
    held = HeldLock(lock, path, fd)
    try:
        _write_owner(fd, lock)
        yield held
    finally:
        # Never another runner's lock, made after ours was removed; and a folder turned
        # read-only keeps ours, which the next run takes over as it finds it unlocked: the
        # error that stopped this run is the one to show.
        if held.in_place():
            with contextlib.suppress(OSError):
                lock.unlink()
        os.close(fd)


# ---- one process --------------------------------------------------------------------------

def case_cache_dir(cache_root: Path, env_id: str, key: CaseKey) -> Path:
    """The compile caches of one case, shared by its repeats."""
    text = json.dumps(asdict(key), sort_keys=True)
    slug = re.sub(r"[^A-Za-z0-9.]+", "-", f"{key.workload}-{key.mode}-{key.batch_size}-{key.dtype}")
    return cache_root / env_id / f"{slug}-{hashlib.sha256(text.encode()).hexdigest()[:10]}"


def group_cache_dir(cache_root: Path, env_id: str, group: tuple[CaseKey, ...]) -> Path:
    text = json.dumps([asdict(k) for k in group], sort_keys=True)
    return cache_root / env_id / f"paired-{hashlib.sha256(text.encode()).hexdigest()[:10]}"


def job_caches(cache_root: Path, env_id: str, job: Job, cold_repeats: bool = False) -> pool.Caches:
    """The compile caches of a job's process. An isolated one: its case's folder, emptied for
    repeat 0, which compiles cold; later repeats start from what repeat 0 left, or, with
    `cold_repeats`, from an emptied folder of their own (the case's folder stays repeat 0's,
    which paired processes read). A paired one: its own folder, topped up with whatever its
    modes' isolated processes left, so a paired process never pays a cold compile (the
    isolated process measured that)."""
    if not job.group:
        folder = case_cache_dir(cache_root, env_id, job.key)
        if cold_repeats and job.repeat:
            folder = folder.with_name(f"{folder.name}-cold-r{job.repeat}")
        return pool.Caches(str(folder), empty_first=job.repeat == 0 or cold_repeats)
    return pool.Caches(str(group_cache_dir(cache_root, env_id, job.group)),
                       merge=tuple(str(case_cache_dir(cache_root, env_id, k)) for k in job.group))


def paired_shares(group: tuple[CaseKey, ...], result: dict) -> list[tuple[CaseKey, dict]]:
    """Each mode's result from a paired process's result. A mode the workload cannot run is
    left out (its isolated process records that); a process that wrote nothing, or failed as
    a whole, gives every mode its failure."""
    shares = []
    for key in group:
        share = result.get("modes", {}).get(key.mode)
        if share is None or result["status"] != "ok":
            share = {k: result[k] for k in ("status", "reason", "log_tail") if k in result}
            if share.get("status") == "ok":
                share = {"status": "error", "reason": "the paired process wrote no result for "
                                                      "this mode"}
        elif share["status"] == "unsupported":
            continue
        elif share["status"] != "ok":
            share = share | {"log_tail": result.get("log_tail", [])}
        shares.append((key, share | {"host": result.get("host")}))
    return shares


@dataclass
class Running:
    job: Job
    slot: Slot
    child: Child
    scratch: Path
    cache: str
    started_at: str
    began: float
    timeout_at: float
    number: int


def _tail(path: Path) -> list[str]:
    try:
        return path.read_text(errors="replace").splitlines()[-STDERR_TAIL_LINES:]
    except OSError:
        return []


def _signal_name(code: int) -> str:
    try:
        return signal.Signals(-code).name
    except ValueError:
        return f"signal {-code}"


def _result(running: Running) -> dict:
    """What the finished child wrote, or a status that says how it failed."""
    code = running.child.returncode
    log = running.scratch / "log.txt"
    result_path = running.scratch / "result.json"
    if result_path.exists():
        result = json.loads(result_path.read_text())
        shares = result.get("modes", {}).values()
        if result["status"] != "ok" or any(share["status"] != "ok" for share in shares):
            result["log_tail"] = _tail(log)
        return result
    how = f"killed by {_signal_name(code)}" if code < 0 else f"exited with code {code}"
    last = next((line for line in reversed(_tail(log)) if line.strip()), "")
    return {"status": "error", "reason": f"case process {how} before writing a result"
            + (f": {last[:300]}" if last else ""), "log_tail": _tail(log)}


def to_record(key: CaseKey, result: dict, env: Environment, profile: str, started_at: str,
              duration_s: float, process: Process) -> Record:
    data = {"schema_version": SCHEMA_VERSION, "key": asdict(key), "status": result["status"],
            "reason": result.get("reason"), "profile": profile, "env": asdict(env), "env_id": env.env_id(),
            "started_at": started_at, "duration_s": duration_s, "process": asdict(process),
            "mode_traits": asdict(MODES[key.mode].traits)}
    data |= {name: result[name] for name in MEASURED_SECTIONS if result.get(name) is not None}
    try:
        return record_from_dict(data)
    except ValueError as error:  # the case wrote something impossible: say so, keep the run
        kept = {name: data[name] for name in ("log_tail",) if name in data}
        return record_from_dict({**{k: data[k] for k in (
            "schema_version", "key", "profile", "env", "env_id", "started_at", "duration_s", "process",
            "mode_traits")}, **kept, "status": "error",
            "reason": f"the case wrote an invalid result: {str(error)[:300]}"})


# ---- the run ------------------------------------------------------------------------------

def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _clock(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes // 60}:{minutes % 60:02d}:{secs:02d}"


def describe(record: Record) -> str:
    if record.status != "ok":
        return f"{record.status}: {record.reason}"
    text = f"ok  median {record.timing.median_s * 1e6:,.1f} us"
    if record.paired:  # its first call inherits what the modes built before it compiled
        text += f"  over {len(record.paired.round_s)} rounds"
    elif record.compile and record.compile.cold_first_call_s is not None:
        text += f"  first call {record.compile.cold_first_call_s:.2f} s"
    if record.correctness and not record.correctness.passed:
        text += f"  WRONG rel.err {record.correctness.rel_error:.1e}"
    return text


class _Run:
    """The scheduler: one running child per slot, taken from one ordered queue."""

    def __init__(self, todo: list[Job], env: Environment, config: RunConfig, path: Path,
                 slots: list[Slot], launcher: Launcher, out,
                 durations: dict[tuple, float] | None = None,
                 lock: HeldLock | None = None) -> None:
        self.queue, self.env, self.config, self.path = list(todo), env, config, path
        self.lock = lock
        self.slots, self.launcher, self.out = slots, launcher, out
        self.durations = durations or {}  # by signature(job): what such a job took before
        self.total, self.started = len(todo), 0
        self.running: dict[int, Running] = {}
        self.began = time.monotonic()
        self.deadline = (self.began + config.max_minutes * 60 if config.max_minutes
                         else float("inf"))
        self.longest_s = 0.0
        self.starting = True  # False once the time left says to start no more cases
        # Where each group's repeats ran, by node (slots of a Ray cluster; see next_job).
        self.placed: dict[CaseKey, dict[int, str]] = {}

    def say(self, text: str) -> None:
        print(text, file=self.out, flush=True)

    def process(self, job: Job, slot: Slot, cache: str) -> Process:
        paired = self.config.timing == "paired"
        return Process(repeat=job.repeat, repeats=1 if paired and not job.group else self.config.repeats,
                       run_id=self.config.run_id, gpu=slot.gpu, workers=len(self.slots),
                       parent_import_s=self.launcher.parent_import_s, cache=cache,
                       timing="paired" if job.group else "isolated")

    def announce(self, job: Job, slot: Slot) -> int:
        self.started += 1
        key = job.key
        where = ("" if slot.gpu is None else f" gpu{slot.gpu}") + (
            "" if slot.node is None else f" node {slot.node[:8]}")
        batch = "-" if key.batch_size is None else key.batch_size
        modes = f"paired {'+'.join(k.mode for k in job.group)}" if job.group else key.mode
        self.say(f"[{self.started}/{self.total} r{job.repeat + 1}/{self.config.repeats}{where} "
                 f"{_clock(time.monotonic() - self.began)}] {key.backend} {key.workload} "
                 f"{modes} bs={batch}{'' if key.dtype == 'float32' else ' ' + key.dtype} ...")
        return self.started

    def save(self, record: Record | list[Record], number: int) -> None:
        """Append one record, or a paired process's records all at once: a group is never
        left half-written for the report to misread."""
        batch = record if isinstance(record, list) else [record]
        if self.lock:
            self.lock.check()
        try:
            append_records(self.path, batch)
        except RecordWriteError as error:
            raise RunError(str(error)) from None
        prefix = f"    [{number}] " if len(self.slots) > 1 else "    "
        for one in batch:
            self.say(prefix + (f"{one.key.mode:<28} " if one.paired or len(batch) > 1 else "")
                     + describe(one))

    def expected_s(self, job: Job) -> float:
        """How long `job` will most likely take: as long as the same kind of job took
        before (in the records, or earlier in this run), compiling cold or warm as it would
        now, or, never seen, as long as the longest job of this run so far. A paired process
        finds no caches on a fresh machine (a lent one starts bare), and then pays every
        cold compile again, autotuning too."""
        return self.durations.get(signature(job, self.would_compile_cold(job)), self.longest_s)

    def would_compile_cold(self, job: Job) -> bool:
        env_id = self.env.env_id()
        if not job.group:
            caches = job_caches(self.config.cache_dir, env_id, job, self.config.cold_repeats)
            return caches.empty_first or not Path(caches.folder).exists()
        folders = [case_cache_dir(self.config.cache_dir, env_id, k) for k in job.group]
        folders.append(group_cache_dir(self.config.cache_dir, env_id, job.group))
        return not any(f.is_dir() and any(f.iterdir()) for f in folders)

    def next_job(self, left_s: float = float("inf"), node: str | None = None) -> Job | None:
        """The first queued job whose case is not running and that fits in `left_s`: a later
        repeat waits for the caches its case's earlier repeat is still writing, and so it
        never runs when its earlier repeat was skipped for want of time. For a slot on a
        `node` of a cluster, the first such job that belongs there (`belongs_on`), else
        the first such job: a free GPU is never left idle to keep the spread."""
        busy = {key for r in self.running.values() for key in r.job.keys}
        skipped: set[CaseKey] = set()
        fallback = None
        for index, job in enumerate(self.queue):
            if not (busy.isdisjoint(job.keys) and skipped.isdisjoint(job.keys)):
                continue
            if self.expected_s(job) <= left_s:
                if node is None or self.belongs_on(job, node):
                    return self.queue.pop(index)
                fallback = index if fallback is None else fallback
                continue
            skipped.update(job.keys)
        return None if fallback is None else self.queue.pop(fallback)

    def belongs_on(self, job: Job, node: str) -> bool:
        """Repeats spread over nodes on purpose, so that every case has processes on several
        hosts: a group's (workload, size, dtype) processes of one repeat, isolated and paired,
        stay on the node that repeat began on (the paired one finds its modes' caches), and a
        repeat not yet begun goes to a node the group has not run on."""
        where = self.placed.get(replace(job.key, mode=""), {})
        return where[job.repeat] == node if job.repeat in where else node not in where.values()

    def leave_out_of_groups(self, key: CaseKey) -> None:
        """Take `key` out of the queued paired jobs of its group, once its isolated process
        timed out: in a paired process it would only make that one time out too."""
        kept = []
        for job in self.queue:
            if key in job.group:
                group = tuple(k for k in job.group if k != key)
                if len(group) <= 1:
                    continue  # nothing left to pair
                job = Job(group[0], job.repeat, group)
            kept.append(job)
        if kept == self.queue:
            return
        self.total -= len(self.queue) - len(kept)
        self.queue = kept
        batch = "-" if key.batch_size is None else key.batch_size
        self.say(f"leaving {key.mode} out of the paired groups of {key.workload} bs={batch}: "
                 f"its isolated process timed out")

    def start(self, job: Job, slot: Slot) -> Running:
        key, config = job.key, self.config
        caches = job_caches(config.cache_dir, self.env.env_id(), job, config.cold_repeats)
        cache_dir = Path(caches.folder)
        if job.group:
            spec = PairedSpec(key, tuple(k.mode for k in job.group), config.rounds,
                              config.budget_s * BLOCK_SHARE, uuid.uuid4().hex)
        else:
            spec = Spec(key, config.budget_s)
        scratch = pool.new_scratch()
        (scratch / "spec.json").write_text(spec.to_json())
        env = {"TORCHINDUCTOR_CACHE_DIR": str(cache_dir / "inductor"),
               "TRITON_CACHE_DIR": str(cache_dir / "triton"), "PYTHONUNBUFFERED": "1",
               **pool.slot_environment(slot)}
        number = self.announce(job, slot)
        if slot.node is not None:
            self.placed.setdefault(replace(key, mode=""), {}).setdefault(job.repeat, slot.node)
        started_at, began = _now(), time.monotonic()
        timeout_s = config.timeout_s * len(job.keys)
        child = self.launcher.start(
            [CHILDREN["paired" if job.group else "case"], str(scratch / "spec.json"),
             str(scratch / "result.json")],
            ChildSetup(os.getpid(), env, slot.threads, slot.cpus), scratch / "log.txt",
            slot, timeout_s, caches)
        return Running(job, slot, child, scratch, child.cache or "cold", started_at, began,
                       began + timeout_s + self.launcher.grace_s, number)

    def finish(self, running: Running, result: dict) -> None:
        """Record a process that ended (or was stopped), and act on what it found."""
        job, status = running.job, result["status"]
        duration_s = time.monotonic() - running.began
        # A child on another host says what it found there once it ends (bench/fleet/launcher.py).
        child = running.child
        if child is not None and child.cache:
            running.cache = child.cache
        if child is not None and child.gpu is not None:
            running.slot = replace(running.slot, gpu=child.gpu)
        self.learn_duration(running, duration_s)
        if status == "unsupported":  # found out by the case: no more processes
            self.drop_queued(job.key)
        if job.repeat == 0 and status != "ok" and not job.group:
            # Later repeats then compile cold rather than from a half-written cache.
            shutil.rmtree(case_cache_dir(self.config.cache_dir, self.env.env_id(), job.key),
                          ignore_errors=True)
        self.record(running, result, duration_s)
        if job.group and running.cache == "cold" and self.config.max_minutes:
            self.expect_warm_groups_from_records()
        if job.repeat == 0 and not job.group and status == "timeout":
            self.leave_out_of_groups(job.key)

    def learn_duration(self, running: Running, duration_s: float) -> None:
        """A later job of the same kind is then expected to take as long, rather than the
        longest job so far (a warm paired process after a cold autotune)."""
        self.longest_s = max(self.longest_s, duration_s)
        learned = signature(running.job, running.cache == "cold")
        self.durations[learned] = max(self.durations.get(learned, 0.0), duration_s)

    def drop_queued(self, key: CaseKey) -> None:
        kept = [j for j in self.queue if j.key != key]
        self.total -= len(self.queue) - len(kept)
        self.queue = kept

    def record(self, running: Running, result: dict, duration_s: float) -> None:
        """The process's records (a paired one's, one per mode) saved; its scratch removed."""
        job = running.job
        process = self.process(job, running.slot, running.cache)
        if job.group:
            records = [to_record(key, share, self.env, self.config.profile, running.started_at,
                                 duration_s, process)
                       for key, share in paired_shares(job.group, result)]
        else:
            records = to_record(job.key, result, self.env, self.config.profile,
                                running.started_at, duration_s, process)
        shutil.rmtree(running.scratch, ignore_errors=True)
        self.save(records, running.number)

    def expect_warm_groups_from_records(self) -> None:
        """After a cold paired process: the warm processes of its group would otherwise be
        expected to take as long as it did, and never fit the time a lease has left."""
        for sig, took_s in durations(self.config.results_dir, self.env).items():
            self.durations.setdefault(sig, took_s)

    def stop_all(self) -> None:
        for running in self.running.values():
            running.child.kill()
            shutil.rmtree(running.scratch, ignore_errors=True)
        self.running.clear()

    def stop_message(self, left: int) -> None:
        self.say(f"stopping after {_clock(time.monotonic() - self.began)}: {left} case(s) left; "
                 f"run again to resume")

    def fill(self) -> bool:
        """Start jobs on free slots; False once the time left says to start no more."""
        for index, slot in enumerate(self.slots):
            while index not in self.running and self.queue:
                left_s = self.deadline - time.monotonic()
                job = self.next_job(left_s, slot.node)
                if job is None and self.running:
                    break  # what is running may free a job that fits
                if job is None:
                    # A job started now would most likely be cut off, its device time wasted.
                    need_s = min(self.expected_s(j) for j in self.queue)
                    self.say(f"not starting another case: {max(left_s, 0):.0f} s left; the "
                             f"{len(self.queue)} job(s) left need about {need_s:.0f} s or more "
                             f"each, or come after one that does")
                    return False
                reason = MODES[job.key.mode].unsupported_reason(job.key.backend)
                if reason:
                    number = self.announce(job, slot)
                    self.save(to_record(job.key, {"status": "unsupported", "reason": reason},
                                        self.env, self.config.profile, _now(), 0.0,
                                        self.process(job, Slot(), "cold")), number)
                    continue
                self.running[index] = self.start(job, slot)
        return True

    def loop(self) -> None:
        try:
            while (self.queue and self.starting) or self.running:
                if self.starting:
                    self.starting = self.fill()
                if not self.running:
                    continue
                soonest = min(r.timeout_at for r in self.running.values())
                self.launcher.wait_any([r.child for r in self.running.values()],
                              min(soonest, self.deadline) - time.monotonic())
                now = time.monotonic()
                for index, running in list(self.running.items()):
                    if running.child.poll() is not None:
                        del self.running[index]
                        self.finish(running, _result(running))
                    elif now >= self.deadline and self.deadline < running.timeout_at:
                        continue  # handled below, with every other running case
                    elif now >= running.timeout_at:
                        running.child.kill()
                        del self.running[index]
                        self.finish(running, {
                            "status": "timeout",
                            "reason": f"no result within {self.config.timeout_s:g} s",
                            "log_tail": _tail(running.scratch / "log.txt")})
                if time.monotonic() >= self.deadline and self.running:
                    left = len(self.queue) + len(self.running)
                    self.stop_all()
                    self.say("    stopped unfinished at --max-minutes; not recorded")
                    self.stop_message(left)
                    return
            if self.queue:
                self.stop_message(len(self.queue))
        finally:
            self.stop_all()


def _terminate(signum, frame):
    raise Terminated


def run(cases: list[CaseKey], env: Environment, config: RunConfig, out=sys.stdout,
        slots: list[Slot] | None = None, launcher: Launcher | None = None,
        lock: HeldLock | None = None) -> Path:
    """Measure every (case, repeat) not yet recorded for `env`; the results file's path.
    The caller holds the results file's lock (see `exclusive`), checked before each save."""
    path = results_path(config.results_dir, env, config.shard)
    done = Recorded() if config.force else recorded(config.results_dir, env, config.cold_repeats)
    # Only a deadline asks what a job will take; --force re-measures, but costs stay known.
    took = durations(config.results_dir, env) if config.max_minutes else {}
    todo = jobs(cases, config.repeats, done, config.timing, config.order)
    planned = len(jobs(cases, config.repeats, Recorded(), config.timing, config.order))
    print(f"{env.backend}: {len(todo)} case process(es) to run of {planned} "
          f"({len(cases)} case(s) x {config.repeats} repeat(s)); {planned - len(todo)} already "
          f"recorded for this environment in {config.results_dir} (--force re-measures); "
          f"writing {path}", file=out, flush=True)
    launcher = launcher or Launcher(config.isolation)
    previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        _Run(todo, env, config, path, slots or [Slot()], launcher, out, took, lock).loop()
    finally:
        signal.signal(signal.SIGTERM, previous)
    return path


def environment_main(args: list[str]) -> int:
    """The child's side of `collect_environment`: BACKEND MACHINE OUT."""
    backend, machine, out = args
    Path(out).write_text(json.dumps(asdict(collect(backend, machine or None))))
    return 0


def collect_environment(backend: str, machine: str | None, launcher: Launcher,
                        slot: Slot, in_child: bool = False) -> Environment:
    """The environment, as the cases on `slot` will see it. CUDA is asked in a child, since
    the runner itself must never initialise it (see bench/pool.py), and so is every backend
    `in_child` (a slot on another host)."""
    if backend != "cuda" and not in_child:
        env = collect(backend, machine)
        return replace(env, torch_threads=slot.threads) if slot.threads else env
    scratch = pool.new_scratch()
    try:
        env_vars = {} if slot.visible_device is None else {
            "CUDA_VISIBLE_DEVICES": slot.visible_device}
        out = scratch / "environment.json"
        child = launcher.start([CHILDREN["environment"], backend, machine or "", str(out)],
                               ChildSetup(os.getpid(), env_vars, slot.threads, slot.cpus),
                               scratch / "log.txt", slot, ENVIRONMENT_TIMEOUT_S)
        deadline = time.monotonic() + ENVIRONMENT_TIMEOUT_S + launcher.grace_s
        while child.poll() is None and time.monotonic() < deadline:
            launcher.wait_any([child], deadline - time.monotonic())
        if child.poll() is None:
            child.kill()
        if not out.exists():
            last = next((line for line in reversed(_tail(scratch / "log.txt")) if line.strip()),
                        "no output")
            raise RunError(f"could not read the {backend} environment in a child process: "
                           f"{last[:300]}" + (" (try --isolation spawn)"
                                              if launcher.isolation == "fork" else ""))
        return Environment(**json.loads(out.read_text()))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def end_what_dead_runners_left(out=sys.stdout) -> None:
    """The keeper's backstop (bench/pool.py), before anything is measured: case groups and
    scratch folders that runners SIGKILLed before they could clean up left behind."""
    for group, pids in pool.end_stale_case_groups():
        print(f"ended {len(pids)} process(es) of case group {group}, left running by a runner "
              f"that no longer runs", file=out, flush=True)
    for folder in pool.remove_stale_scratch():
        print(f"removed {folder}, left by a runner that no longer runs", file=out, flush=True)


def measure(plans: dict[str, list[CaseKey]], config: RunConfig, machine: str | None,
            slots_of: dict[str, list[Slot]], process_started: float, out=sys.stdout
            ) -> list[Path]:
    """Everything a `python -m bench` run does once its arguments are valid: check the
    results folder, import once, read each environment, lock each results file, measure."""
    check_writable(config.results_dir)
    end_what_dead_runners_left(out)
    launcher = Launcher(config.isolation)
    import_s = launcher.preload(process_started)
    if import_s is not None:
        print(f"imported torch, Dynamo and Inductor once in {import_s:.1f} s; forking each case",
              file=out, flush=True)
    envs = {backend: collect_environment(backend, machine, launcher, slots_of[backend][0])
            for backend in plans}
    for env in envs.values():
        check_same_device(config.results_dir, env)
    paths = []
    with contextlib.ExitStack() as locks:
        held = {backend: locks.enter_context(exclusive(results_path(config.results_dir, env,
                                                                    config.shard)))
                for backend, env in envs.items()}
        for backend, cases in plans.items():
            paths.append(run(cases, envs[backend], config, out, slots_of[backend], launcher,
                             held[backend]))
    return paths
