"""Plan and run the cold-start ladder, one fresh process per rung and repeat.

Each process gets compile-cache folders of its own under the cache root, empty unless the
rung reuses another's: "warm" reuses its repeat's "cold" folders; "bundle" starts empty and
loads the bundle the cold process saved; "aot" and "precompile" start empty and load what
an unrecorded saving process made. A bundle from elsewhere (--bundle-from) loads into empty
folders of its own: its tag names the source, so a case's empty-cache process of the same
repeat never sees what the bundle wrote, nor the bundle its caches. Records are appended as
each process ends, so a run cut short resumes where it stopped: what is recorded is not
measured again.

With several GPUs (--gpus), a case's processes of one repeat (its chain: cold, then what
reuses the cold process's caches) run in order on one GPU, and the GPUs take chains from one
queue; each process is pinned to its GPU and an equal, disjoint share of the cores, as the
main runner pins its cases (bench/pool.py), and its record says how many ran at once.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import signal
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from bench import pool
from bench.coldstart import bundles, compilers
from bench.coldstart.records import (
    FOREIGN,
    RUNGS,
    BundleInfo,
    ColdKey,
    ColdRecord,
    outcome,
    read,
    results_path,
)
from bench.coldstart.rungs import ONLY_DEFAULT, TABLE
from bench.pool import ChildSetup, Slot, slot_environment, slots_for
from bench.records import Environment, Host, Timing, append_records
from bench.spec import ColdSpec

LOG_TAIL_LINES = 12


class RunError(Exception):
    """Bad input found while planning (a bundle without its description): one line."""


@dataclass(frozen=True)
class Config:
    backend: str
    workloads: tuple[str, ...]
    batch_sizes: tuple[int, ...]
    modes: tuple[str, ...]
    rungs: tuple[str, ...]
    repeats: int
    shapes: str
    results_dir: Path
    cache_dir: Path
    machine: str | None = None
    max_minutes: float | None = None
    timeout_s: float = 1800.0
    budget_s: float = 1.0  # steady-state timing per process
    bundles_from: tuple[Path, ...] = ()
    # Bundles are loaded only when their bytes hash to one of these (bench/coldstart/bundles.py),
    # or, with trust_descriptions, to the sha256 their own description records.
    bundle_sha256: tuple[str, ...] = ()
    trust_descriptions: bool = False
    gpus: tuple[str, ...] = ()  # CUDA_VISIBLE_DEVICES value per slot; (): one, unchanged
    tag: str = "main"  # an A/B side's tag (bench/ab.py): its records and caches stay apart


@dataclass(frozen=True)
class Foreign:
    """A bundle saved in another environment, with the description saved beside it."""

    path: Path
    key: ColdKey  # the case it was saved for, rung "cold"
    bundle: BundleInfo


@dataclass(frozen=True)
class Job:
    key: ColdKey
    repeat: int
    foreign: Foreign | None = None


def slug(key: ColdKey) -> str:
    batch = "-" if key.batch_size is None else key.batch_size
    return f"{key.workload}-bs{batch}-{key.mode}-{key.shapes}"


def plan(config: Config, foreign: list[Foreign]) -> list[Job]:
    """Repeat by repeat, so a case's processes are spread over the run; within a repeat,
    a case's rungs in ladder order (eager once per workload and batch), then each bundle from
    elsewhere saved for the case (--bundle-from). So with `--rung cold` beside the bundles,
    an empty-cache process and a foreign bundle's alternate, case by case, on one host."""
    jobs = []
    for repeat in range(config.repeats):
        for workload in config.workloads:
            for batch in config.batch_sizes:
                if "eager" in config.rungs:
                    jobs.append(Job(ColdKey(config.backend, workload, "eager", batch, "eager",
                                            config.shapes, config.tag), repeat))
                for mode in config.modes:
                    jobs.extend(Job(ColdKey(config.backend, workload, mode, batch, rung,
                                            config.shapes, config.tag), repeat)
                                for rung in RUNGS if rung in config.rungs and rung != "eager")
                    jobs.extend(Job(dataclasses.replace(
                                    found.key, backend=config.backend, rung=FOREIGN,
                                    tag=f"from-{found.bundle.source_env_id}"), repeat, found)
                                for found in foreign
                                if (found.key.workload, found.key.batch_size, found.key.mode,
                                    found.key.shapes) == (workload, batch, mode, config.shapes))
    return jobs


def chains(jobs: list[Job]) -> list[list[Job]]:
    """The jobs of one case and repeat, in plan order: a warm or bundle process needs the
    cold process's caches on the same disk, so a chain runs in order on one slot."""
    found: dict[tuple, list[Job]] = {}
    for job in jobs:
        case = (dataclasses.replace(job.key, rung=""), job.repeat,
                job.foreign.path if job.foreign else None)
        found.setdefault(case, []).append(job)
    return list(found.values())


CHILD = "bench.coldstart.child:main"  # the entry point every cold-start process runs


def run_child(launcher: pool.Launcher, spec: ColdSpec, env: dict[str, str], slot: Slot,
              scratch: Path, limit_s: float) -> int | None:
    """One cold-start process, started as every process of the project is (bench/pool.py: a
    fresh interpreter under a keeper that ends whatever it starts, a private TMPDIR, the
    slot's cores and threads applied before it imports torch), on `spec` written into its
    private `scratch` folder; its exit code, or None when it ran past `limit_s` and was
    killed."""
    (scratch / "spec.json").write_text(spec.to_json())
    child = launcher.start([CHILD, str(scratch / "spec.json"), str(scratch / "result.json")],
                           ChildSetup(os.getpid(), env, slot.threads, slot.cpus),
                           scratch / "log.txt")
    deadline = time.monotonic() + limit_s
    while child.poll() is None and time.monotonic() < deadline:
        pool.wait_any([child], deadline - time.monotonic())
    if child.poll() is None:
        child.kill()
        return None
    return child.returncode


def bundle_files(paths: tuple[Path, ...]) -> list[Path]:
    """The bundles named by --bundle-from: files, or folders of them (every *.bin)."""
    files = []
    for path in paths:
        if path.is_dir():
            files.extend(sorted(path.rglob("*.bin")))
        elif path.is_file():
            files.append(path)
        else:
            raise RunError(f"--bundle-from {path}: no such file or folder")
    if not files:
        raise RunError(f"--bundle-from {', '.join(map(str, paths))}: no *.bin bundle found")
    return files


def read_foreign(files: list[Path], env: Environment, trusted: tuple[str, ...] = (),
                 trust_descriptions: bool = False) -> list[Foreign]:
    """Each bundle with the description saved beside it (FILE.json), saved by the same
    backend in another environment: this environment's own are what the bundle rung loads.
    A bundle whose bytes hash to none of `trusted` (nor, with `trust_descriptions`, to the
    sha256 its description records), or that names a key outside the cache folders, is
    refused here, before any process starts; the child checks the same bytes again."""
    found = []
    for path in files:
        described = path.with_suffix(".json")
        try:
            about = json.loads(described.read_text())
            key = ColdKey(**about["key"])
            bundle = BundleInfo(**about["bundle"])
            backend = about["env"]["backend"]
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise RunError(f"{described}: not a bundle description ({error})") from None
        if bundle.source_env_id != env.env_id() and backend == env.backend:
            try:
                digest = bundles.check_file(
                    path, trusted + ((bundle.sha256,) if trust_descriptions else ()))
            except bundles.BundleRefused as error:
                raise RunError(str(error)) from None
            found.append(Foreign(path, key, dataclasses.replace(bundle, sha256=digest)))
    if not found:
        raise RunError(f"--bundle-from: none of the {len(files)} bundle(s) was saved by "
                       f"{env.backend} in another environment than this one ({env.env_id()})")
    return found


class Runner:
    def __init__(self, config: Config, env: Environment, say: Callable[[str], None] = print,
                 missing_rungs: dict[str, str] | None = None):
        self.config, self.env, self.say = config, env, say
        # A rung whose API the release lacks is recorded unsupported without a process: on
        # a lent GPU each such process cost about 13 s of imports and building for nothing.
        self.missing_rungs = missing_rungs or {}
        self.run_id = uuid.uuid4().hex[:12]
        self.results = results_path(config.results_dir, env)
        self.root = config.cache_dir / env.env_id()
        self.done = {r.identity: r for r in read(self.results)} if self.results.exists() else {}
        self.deadline = (time.monotonic() + config.max_minutes * 60
                         if config.max_minutes else None)
        self.slots = slots_for(list(config.gpus) or None)
        self.lock = threading.Lock()  # the results file, `done` and the log
        # spawned: a cold start is a fresh interpreter, never a fork of this one
        self.launcher = pool.Launcher("spawn")
        # (key, repeat) -> sha256 of a bundle an unrecorded cold process made again here
        self.remade: dict[tuple[ColdKey, int], str] = {}

    # ---- folders --------------------------------------------------------------------

    def folder(self, key: ColdKey, repeat: int, rung: str) -> Path:
        return self.root / f"{slug(key)}-{key.tag}-r{repeat}" / rung

    def bundle_file(self, key: ColdKey, repeat: int) -> Path:
        return self.folder(key, repeat, "cold").parent / "bundle.bin"

    def published(self, key: ColdKey) -> Path:
        return self.config.results_dir / "bundles" / self.env.env_id() / f"{slug(key)}.bin"

    # ---- running --------------------------------------------------------------------

    def run(self, jobs: list[Job]) -> int:
        """Measure every job not yet recorded; the count of processes recorded."""
        queue = deque(chains(jobs))
        recorded = [0] * len(self.slots)
        stopped = threading.Event()

        def work(index: int, slot: Slot) -> None:
            while True:
                with self.lock:
                    if not queue:
                        return
                    chain = queue.popleft()
                for job in chain:
                    if (self.env.env_id(), job.key, job.repeat) in self.done:
                        continue
                    if self.out_of_time():
                        with self.lock:
                            queue.clear()
                        stopped.set()
                        return
                    record = self.measure(job, slot)
                    if record is None:
                        continue
                    with self.lock:
                        append_records(self.results, [record])
                        self.done[record.identity] = record
                        recorded[index] += 1
                        self.say(self.line(record, slot))

        if len(self.slots) == 1:
            work(0, self.slots[0])
        else:
            threads = [threading.Thread(target=work, args=(i, slot), name=f"slot{i}")
                       for i, slot in enumerate(self.slots)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
        if stopped.is_set():
            self.say("stopping: --max-minutes reached; run again to continue")
        return sum(recorded)

    def line(self, record: ColdRecord, slot: Slot) -> str:
        where = "" if slot.gpu is None or len(self.slots) == 1 else f"gpu{slot.gpu} "
        return (f"{where}{record.key.workload} bs={record.key.batch_size} {record.key.mode} "
                f"{record.key.rung} r{record.repeat}: {record.status}"
                + (f" first call {record.first_call_s:.3f} s" if record.first_call_s else "")
                + (f" ({record.reason})" if record.reason else ""))

    def out_of_time(self) -> bool:
        return self.deadline is not None and time.monotonic() >= self.deadline

    def measure(self, job: Job, slot: Slot) -> ColdRecord | None:
        key, repeat, rung = job.key, job.repeat, job.key.rung
        spec = ColdSpec("measure", key.backend, key.workload, key.batch_size, key.shapes, key.mode,
                        rung, self.config.budget_s, self.config.machine)
        loaded = prepare_s = None
        step = TABLE[rung]
        known = (self.missing_rungs.get(rung) or
                 (f"torch.compiler.{rung} {ONLY_DEFAULT}" if step.only_default and key.mode != "default"
                  else None))
        if known:  # known without a process
            return self.record(job, {"status": "unsupported", "reason": known, "duration_s": 0.0},
                               slot)
        if step.needs_cold and not self.cold_left(key, repeat, slot):
            return None
        if step.bundle == "save":
            spec = dataclasses.replace(spec, bundle_out=str(self.bundle_file(key, repeat)))
        if step.bundle == "own":
            cold_key = dataclasses.replace(key, rung="cold")
            cold = self.done.get((self.env.env_id(), cold_key, repeat))
            loaded = cold.saved if cold is not None else None
            # this run's own bundle: the hash its cold process recorded, or made again here
            own = self.remade.get((cold_key, repeat))
            spec = dataclasses.replace(
                spec, bundle_in=str(self.bundle_file(key, repeat)),
                bundle_trusted=(own,) if own else (loaded.sha256,) if loaded else ())
        if step.bundle == "foreign":
            spec = dataclasses.replace(spec, bundle_in=str(job.foreign.path),
                                       bundle_trusted=(job.foreign.bundle.sha256,))
            loaded = job.foreign.bundle
        if step.saver:
            artifact = self.folder(key, repeat, rung).parent / f"{rung}-artifact"
            spec = dataclasses.replace(spec, artifact=str(artifact))
            saving = self.process(dataclasses.replace(spec, role=step.saver),
                                  self.fresh(key, repeat, f"{rung}-save"), slot)
            if saving is None:
                return None
            if saving["status"] != "ok":
                return self.record(job, saving, slot)
            prepare_s = saving.get("prepare_s")
        cache = (self.folder(key, repeat, "cold") if step.caches == "cold"
                 else self.fresh(key, repeat, rung))
        result = self.process(spec, cache, slot)
        if result is None:
            return None
        return self.record(job, result, slot, loaded=loaded, prepare_s=prepare_s)

    def cold_left(self, key: ColdKey, repeat: int, slot: Slot) -> bool:
        """Whether the cold process of this repeat left its caches and bundle on disk. Where
        it was recorded ok but its folders are gone (a fresh machine), an unrecorded cold
        process makes them again; where it failed, its dependents are not measured."""
        cold_key = dataclasses.replace(key, rung="cold")
        cold = self.done.get((self.env.env_id(), cold_key, repeat))
        if cold is None or cold.status != "ok":
            self.say(f"{key.workload} {key.mode} {key.rung} r{repeat}: not measured, the cold "
                     f"process of this repeat {'failed' if cold else 'was not run'}")
            return False
        if self.folder(key, repeat, "cold").exists() and self.bundle_file(key, repeat).exists():
            return True
        self.say(f"{key.workload} {key.mode} r{repeat}: remaking the cold caches (unrecorded)")
        spec = ColdSpec("measure", key.backend, key.workload, key.batch_size, key.shapes, key.mode,
                        "cold", 0.05, self.config.machine,
                        bundle_out=str(self.bundle_file(key, repeat)))
        result = self.process(spec, self.fresh(key, repeat, "cold"), slot)
        if result is None or result["status"] != "ok":
            return False
        if result.get("saved"):
            self.remade[(cold_key, repeat)] = result["saved"]["sha256"]
        return True

    def fresh(self, key: ColdKey, repeat: int, rung: str) -> Path:
        folder = self.folder(key, repeat, rung)
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        return folder

    def process(self, spec: ColdSpec, cache: Path, slot: Slot) -> dict | None:
        """Run one child; its result with `duration_s` and `log_tail`, or None when the run's
        --max-minutes ran out while it ran (then it is left unrecorded)."""
        scratch = pool.new_scratch()
        try:
            env = (cache_environment(cache) | slot_environment(slot)
                   | compilers.environment(scratch, spec.backend))
            limit = self.config.timeout_s
            cut_by_deadline = False
            if self.deadline is not None and self.deadline - time.monotonic() < limit:
                limit, cut_by_deadline = max(self.deadline - time.monotonic(), 1.0), True
            began, started_at = time.monotonic(), _now()
            code = run_child(self.launcher, spec, env, slot, scratch, limit)
            duration_s = time.monotonic() - began
            tail = _tail(scratch / "log.txt")
            if code is None and cut_by_deadline:
                return None
            result = _read(scratch / "result.json")
            if code is None:
                result = _without_timing(result) | {
                    "status": "timeout", "reason": f"no result within {limit:.0f} s"}
            elif code != 0 or not result:
                result = _without_timing(result) | {"status": _failed_status(tail),
                                                     "reason": _exit_reason(code, tail)}
            return result | {"duration_s": duration_s, "log_tail": tail, "started_at": started_at}
        finally:
            shutil.rmtree(scratch, ignore_errors=True)

    # ---- records --------------------------------------------------------------------

    def record(self, job: Job, result: dict, slot: Slot, loaded: BundleInfo | None = None,
               prepare_s: float | None = None) -> ColdRecord:
        counters = result.get("counters") or {}
        if loaded is not None and result.get("loaded_sha256"):
            # the bytes actually loaded, which the child hashed, not what a description says
            loaded = dataclasses.replace(loaded, sha256=result["loaded_sha256"],
                                         size_bytes=result["loaded_size_bytes"])
        if loaded is not None and result.get("first_call_s") is not None:
            loaded = dataclasses.replace(loaded, outcome=outcome(counters))
        saved = self.publish(job, result["saved"]) if result.get("saved") else None
        steady = Timing(**{k: tuple(v) if k == "samples" else v
                           for k, v in result["steady"].items()}) if result.get("steady") else None
        duration_s = result.get("duration_s", 0.0)
        return ColdRecord(
            key=job.key, repeat=job.repeat, repeats=self.config.repeats,
            status=result["status"], reason=result.get("reason"), env=self.env,
            env_id=self.env.env_id(),
            started_at=result.get("started_at") or _now(),
            duration_s=duration_s, run_id=self.run_id, dtype=result.get("dtype"),
            first_call_s=result.get("first_call_s"), load_s=result.get("load_s"),
            prepare_s=prepare_s if prepare_s is not None else result.get("prepare_s"),
            steady=steady, counters=counters, saved=saved, loaded=loaded,
            blocks=result.get("blocks"), block_class=result.get("block_class"),
            compiler_runs=result.get("compiler_runs"), compiler_s=result.get("compiler_s"),
            headers_built=result.get("headers_built"),
            host=Host(**{k: tuple(v) if isinstance(v, list) else v
                         for k, v in result["host"].items()}) if result.get("host") else None,
            host_task_s=tuple(result.get("host_task_s", ())),
            log_tail=tuple(result.get("log_tail", ())) if result["status"] != "ok" else (),
            gpu=slot.gpu, workers=len(self.slots))

    def publish(self, job: Job, saved: dict) -> BundleInfo:
        """The saved bundle's description; repeat 0's bundle is copied into the results
        folder with it, for loading on another machine type (--bundle-from)."""
        info = BundleInfo(path=None, source_env_id=self.env.env_id(),
                          source_device=self.env.device_name, source_torch=self.env.torch,
                          **saved)
        # the published bundle is the one other machines load (--bundle-from): the main run's
        if job.repeat != 0 or not saved["size_bytes"] or job.key.tag != "main":
            return info
        target = self.published(job.key)
        info = dataclasses.replace(
            info, path=target.relative_to(self.config.results_dir).as_posix())
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(self.bundle_file(job.key, job.repeat), target)
        target.with_suffix(".json").write_text(json.dumps(
            {"key": dataclasses.asdict(job.key), "bundle": dataclasses.asdict(info),
             "env": dataclasses.asdict(self.env)}, indent=1, sort_keys=True) + "\n")
        return info


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def cache_environment(folder: Path) -> dict[str, str]:
    """Every compile cache of a child inside `folder`, and the remote ones off."""
    return {"TORCHINDUCTOR_CACHE_DIR": str(folder / "inductor"),
            "TRITON_CACHE_DIR": str(folder / "triton"),
            "CUDA_CACHE_PATH": str(folder / "cuda"),
            "TORCHINDUCTOR_FX_GRAPH_REMOTE_CACHE": "0",
            "TORCHINDUCTOR_AUTOTUNE_REMOTE_CACHE": "0",
            "TORCHINDUCTOR_AUTOGRAD_REMOTE_CACHE": "0",
            "PYTHONUNBUFFERED": "1"}


def _read(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


def _without_timing(result: dict) -> dict:
    return {k: v for k, v in result.items() if k != "steady"}


def _tail(path: Path) -> list[str]:
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError:
        return []
    return [line[:300] for line in lines[-LOG_TAIL_LINES:]]


def _failed_status(tail: list[str]) -> str:
    return "oom" if any("out of memory" in line.lower() for line in tail) else "error"


def _exit_reason(code: int | None, tail: list[str]) -> str:
    if code is not None and code < 0:
        return f"the process was killed by {signal.Signals(-code).name}"
    last = next((line for line in reversed(tail) if line.strip()), "")
    return f"the process exited with status {code}" + (f": {last.strip()}" if last else "")
