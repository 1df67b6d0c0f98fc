"""Start one child process per case: forked from a parent that imported torch once, or spawned.

`fork` (the default on Linux): the runner imports torch, Dynamo, Inductor and bench.case
once, then forks each case. The child is still a fresh process with its own cache folders,
and only pays for what the case itself does. Two rules keep forking safe, and the runner
keeps both: the parent never initialises CUDA (a child forked after cuInit cannot use the
GPU), and it never compiles (a child forked after Inductor started its compile workers
deadlocks on them). `spawn` starts `python -m bench.pool`, which imports everything anew.

Either way the child is a keeper (see `_keep`): the leader of its own process group and a
child subreaper, which forks the case and ends everything below it when the case ends, when
the runner ends it, or when the runner dies (PR_SET_PDEATHSIG tells it). So a timeout, a
SIGTERM or a SIGKILL of the runner leaves no process of the case running, even one that
left the group with setsid(). What a SIGKILLed keeper leaves, the next run ends (see
end_stale_case_groups), but only where the note of the group is provably ours.
"""

from __future__ import annotations

import contextlib
import ctypes
import getpass
import importlib
import json
import os
import re
import selectors
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
import traceback
from dataclasses import asdict, dataclass, field
from pathlib import Path

from bench import REPO

ISOLATIONS = ("fork", "spawn")
DEFAULT_ISOLATION = "fork" if sys.platform == "linux" else "spawn"
SCRATCH_PREFIX = "atlas-case-"
# What a case needs that is worth importing once: importing starts no compile worker and
# touches no device. compile_fx is what the first torch.compile() call would import (about
# 600 modules, 2-3 s); torch.profiler is imported here, never started.
PRELOAD = ("torch", "torch._dynamo", "torch._inductor", "torch._inductor.compile_fx",
           "torch._dynamo.backends.inductor", "torch.profiler", "bench.case", "bench.paired")
PR_SET_PDEATHSIG = 1
KEEPER_GRACE_S = 5.0  # for a keeper to end its case's processes before SIGKILL


class ForkUnsafe(Exception):
    """The runner's state would break a forked case; the message says what to do instead."""


@dataclass(frozen=True)
class Slot:
    """Where a child runs: the GPU it is pinned to and its share of the host's CPUs."""

    gpu: int | None = None  # the index recorded in Process.gpu
    visible_device: str | None = None  # CUDA_VISIBLE_DEVICES for the child
    threads: int | None = None  # torch and Inductor compile threads; None: torch's defaults
    cpus: tuple[int, ...] = ()  # CPU affinity; empty: inherit the runner's
    node: str | None = None  # the Ray node it runs on (bench/fleet/launcher.py); None: this host


def slots_for(gpus: list[str] | None) -> list[Slot]:
    """One slot per GPU (CUDA_VISIBLE_DEVICES values), each with an equal, disjoint CPU share;
    None: a single slot that changes nothing about the child's threads or affinity."""
    if not gpus:
        return [Slot()]
    if len(gpus) == 1:
        return [Slot(gpu=0, visible_device=gpus[0])]
    try:
        cpus = sorted(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cpus = []
    count = len(cpus) or os.cpu_count() or 1
    share = max(1, count // len(gpus))
    return [Slot(gpu=i, visible_device=device, threads=share,
                 cpus=tuple(cpus[i * share:(i + 1) * share]) if len(cpus) >= len(gpus) else ())
            for i, device in enumerate(gpus)]


def slot_environment(slot: Slot) -> dict[str, str]:
    """The variables a child of `slot` starts with: its GPU, and its thread counts."""
    env = {}
    if slot.visible_device is not None:
        env["CUDA_VISIBLE_DEVICES"] = slot.visible_device
    if slot.threads:
        env["TORCHINDUCTOR_COMPILE_THREADS"] = str(slot.threads)
        env["OMP_NUM_THREADS"] = str(slot.threads)
    return env


def visible_gpus() -> list[str]:
    """The GPUs this host lets the runner use, counted without initialising CUDA here."""
    listed = os.environ.get("CUDA_VISIBLE_DEVICES")
    if listed is not None:
        return [d.strip() for d in listed.split(",") if d.strip() and d.strip() != "-1"]
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return []
    lines = [line for line in out.stdout.splitlines() if line.startswith("GPU ")]
    return [str(i) for i in range(len(lines))] if out.returncode == 0 else []


@dataclass(frozen=True)
class ChildSetup:
    """What a child does to itself before it runs its target."""

    parent_pid: int
    env: dict[str, str] = field(default_factory=dict)
    threads: int | None = None
    cpus: tuple[int, ...] = ()
    # The child's private scratch folder, where its keeper notes every process below it
    # (DESCENDANTS_FILE); None: no note (Launcher.start sets it).
    scratch: str | None = None


@dataclass(frozen=True)
class Caches:
    """A child's compile-cache folder, made ready on the host the child runs on: emptied
    first (a first repeat compiles cold), or topped up with the entries of `merge` (a paired
    process, from its modes' isolated processes; entries are named by content hashes, so
    merging only adds entries)."""

    folder: str
    empty_first: bool = False
    merge: tuple[str, ...] = ()

    def prepare(self) -> str:
        """Make the folder ready; "warm" where it holds what an earlier process left, else
        "cold". An isolated repeat's folder counts once it exists (an eager case leaves it
        empty); a paired process's once it holds anything."""
        folder = Path(self.folder)
        if self.empty_first:
            shutil.rmtree(folder, ignore_errors=True)
        for other in self.merge:
            if Path(other).is_dir():
                shutil.copytree(other, folder, dirs_exist_ok=True)
        warm = folder.is_dir() and (not self.merge or any(folder.iterdir()))
        folder.mkdir(parents=True, exist_ok=True)
        return "warm" if warm else "cold"


def _die_with_parent(parent_pid: int, how: int = signal.SIGKILL) -> None:
    if sys.platform != "linux":
        return
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, how, 0, 0, 0)
    if os.getppid() != parent_pid:  # the runner died before the request took effect
        os._exit(1)


# ---- the keeper: a case's descendants end with it ---------------------------------------
# A child the runner starts is a keeper: a child subreaper (PR_SET_CHILD_SUBREAPER) that
# forks the case and waits. Whatever the case starts stays below the keeper, even a process
# that calls setsid() or whose parent exits: orphans are handed to the nearest subreaper,
# not to init. When the case ends, when the runner dies (PR_SET_PDEATHSIG sends SIGTERM
# to the keeper) or when the runner ends it (SIGTERM), the keeper SIGKILLs everything
# below it, level by level, and only then exits, as the case did.

PR_SET_CHILD_SUBREAPER = 36


class _Ended(Exception):
    """SIGTERM reached the keeper: its runner died, or ended the case."""


def _on_term(signum, frame) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # once is enough; cleaning up follows
    raise _Ended


def _children(pid: int) -> list[int]:
    """The living and zombie children of `pid`."""
    found: list[int] = []
    try:
        for task in Path(f"/proc/{pid}/task").iterdir():
            found += [int(c) for c in (task / "children").read_text().split()]
        return found
    except OSError:  # no CONFIG_PROC_CHILDREN: look through every process
        return [int(e.name) for e in Path("/proc").glob("[0-9]*")
                if (stat_ := _proc_stat(int(e.name))) and stat_[1] == str(pid)]


def _end_descendants() -> None:
    """SIGKILL every process below this one, and reap it. A killed process's children come
    to us (we are their subreaper) and are ended on the next round."""
    me = os.getpid()
    while True:
        children = _children(me)
        if not children:
            with contextlib.suppress(ChildProcessError):
                while os.waitpid(-1, os.WNOHANG)[0]:
                    pass
            if not _children(me):
                return
            continue
        for child in children:
            with contextlib.suppress(ProcessLookupError):
                os.kill(child, signal.SIGKILL)
        for child in children:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(child, 0)


NOTE_EVERY_S = 1.0  # how often a keeper notes the processes below it


def _pidfd(pid: int) -> int | None:
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):  # a kernel before 5.3
        return None


def _wait_readable(fd: int | None, timeout: float) -> None:
    """Until `fd` (a pidfd: its process ended) is readable, or `timeout` seconds."""
    if fd is None:
        time.sleep(min(timeout, 0.05))  # as wait_any does without pidfds
        return
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        selector.select(timeout)


def _descendants(pid: int) -> list[int]:
    found, todo = [], _children(pid)
    while todo:
        child = todo.pop()
        found.append(child)
        todo += _children(child)
    return found


def _note_descendants(scratch: str | None) -> None:
    """Note every process below this keeper, with its start time and this boot, so that a
    run after one that SIGKILLed runner and keeper together can end a process that left the
    case's group with setsid(): nothing else would lead to it (end_stale_case_groups)."""
    if scratch is None:
        return
    lines = [f"{pid} {_start_time(pid)}\n" for pid in _descendants(os.getpid())]
    with contextlib.suppress(OSError):
        partial = Path(scratch, DESCENDANTS_FILE + ".partial")
        partial.write_text(_boot_id() + "\n" + "".join(lines))
        partial.replace(Path(scratch, DESCENDANTS_FILE))


def _exit_code(exit_: SystemExit) -> int:
    if exit_.code is None or isinstance(exit_.code, int):
        return exit_.code or 0
    print(exit_.code, file=sys.stderr)
    return 1


def _keep(setup: ChildSetup, target: list[str]) -> int:
    """Run `target` in a child of this process; end all it started when it ends. Returns
    the case's exit code; a case killed by a signal has this process killed by it too."""
    if sys.platform != "linux":
        _enter(setup)
        return _run_target(target)
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    signal.signal(signal.SIGTERM, _on_term)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    status = None
    try:
        _die_with_parent(setup.parent_pid, signal.SIGTERM)
        keeper = os.getpid()
        case = os.fork()
        if case == 0:
            code = 1
            try:
                _die_with_parent(keeper)
                _enter(setup)
                code = _run_target(target)
            except SystemExit as exit_:  # sys.exit(3) from a factory exits 3, as Python would
                code = _exit_code(exit_)
            except BaseException:  # noqa: BLE001 - whatever happens, end here and say why
                traceback.print_exc()
            finally:
                with contextlib.suppress(Exception):
                    sys.stdout.flush()
                    sys.stderr.flush()
                os._exit(code)
        watch, noted_at = _pidfd(case), 0.0
        while status is None:
            if time.monotonic() - noted_at >= NOTE_EVERY_S:
                _note_descendants(setup.scratch)
                noted_at = time.monotonic()
            _wait_readable(watch, NOTE_EVERY_S)
            while status is None:  # orphans handed to us are reaped here too
                pid, found = os.waitpid(-1, os.WNOHANG)
                if pid == 0:
                    break
                if pid == case:
                    status = found
    except _Ended:
        pass
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    _end_descendants()
    if status is None:
        return 128 + signal.SIGTERM
    code = os.waitstatus_to_exitcode(status)
    if code < 0:  # say it as the case did: the runner reads a signal as such (-9: OOM)
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    return code


def private_temp(scratch: Path) -> dict[str, str]:
    """TMPDIR for one child: a folder of its own (mode 0700) in its private scratch folder.
    torch keeps state in its default temp folder whatever TORCHINDUCTOR_CACHE_DIR says (the
    precompiled headers, torch/_inductor/codecache.py) and compiles a header it finds there
    without checking who wrote it: in a shared /tmp, another user's header would run as us.
    The header folder inside it is a link to `header_folder()`, where there is one."""
    folder = scratch / "tmp"
    folder.mkdir(mode=0o700, exist_ok=True)
    headers = header_folder()
    if headers is not None:
        inductor = folder / f"torchinductor_{_inductor_user()}"
        inductor.mkdir(mode=0o700, exist_ok=True)
        with contextlib.suppress(FileExistsError):
            (inductor / "precompiled_headers").symlink_to(headers, target_is_directory=True)
    return {"TMPDIR": str(folder)}


def header_folder() -> Path | None:
    """Where Inductor's precompiled headers are kept from one process to the next: a folder of
    ours (0700) in our own cache folder, or None where there is none we can prove ours.
    PyTorch keeps these headers machine-wide on purpose (its fresh_cache leaves them), so a
    user's cold compile finds them built by an earlier one; a private TMPDIR per process
    would instead make every process build them anew, seconds of a CPU process's first
    call that only a machine's first compile pays. Each record says which it was
    (CompileTimes.headers_built)."""
    try:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
        folder = base / "torch-compile-atlas" / "inductor-headers"
        base.mkdir(parents=True, exist_ok=True)
        folder.parent.mkdir(mode=0o700, exist_ok=True)
        folder.mkdir(mode=0o700, exist_ok=True)
    except (OSError, RuntimeError):  # no home folder, or not ours to write
        return None
    # A folder on the way that others may write could have ours swapped under us.
    if all(_unwritable_by_others(p) for p in (base, folder.parent)) and _ours(folder, folder=True):
        return folder
    return None


def _unwritable_by_others(path: Path) -> bool:
    """A folder of ours, not a link, that no other user may write into."""
    try:
        found = os.lstat(path)
    except OSError:
        return False
    return (stat.S_ISDIR(found.st_mode) and found.st_uid == os.geteuid()
            and stat.S_IMODE(found.st_mode) & 0o022 == 0)


def _inductor_user() -> str:
    """The user name in Inductor's default folder, as
    torch._inductor.runtime.cache_dir_utils.default_cache_dir spells it."""
    try:
        name = getpass.getuser()
    except (KeyError, ModuleNotFoundError, OSError):
        name = f"uid_{os.getuid()}"
    return re.sub(r'[\\/:*?"<>|]', "_", name)


def _use_private_temp() -> None:
    """A forked child inherits the runner's temp folder as Python and Inductor computed it at
    import; read them again from the child's own TMPDIR."""
    tempfile.tempdir = None
    codecache = sys.modules.get("torch._inductor.codecache")
    if codecache is not None and hasattr(codecache, "_HEADER_DIR"):
        from torch._inductor.runtime.cache_dir_utils import default_cache_dir

        codecache._HEADER_DIR = os.path.join(default_cache_dir(), "precompiled_headers")
        codecache._HEADER_LOCK_DIR = os.path.join(codecache._HEADER_DIR, "locks")


def _enter(setup: ChildSetup) -> None:
    for name in (signal.SIGTERM, signal.SIGINT):  # the runner's handlers are not ours
        signal.signal(name, signal.SIG_DFL)
    # Before the case imports or compiles anything: Inductor reads its cache folder at compile
    # time (torch/_inductor/runtime/cache_dir_utils.py), and CUDA reads CUDA_VISIBLE_DEVICES
    # when it initialises, which only ever happens in the child.
    os.environ.update(setup.env)
    _use_private_temp()
    if setup.cpus:
        os.sched_setaffinity(0, setup.cpus)
    if setup.threads:
        import torch
        import torch._inductor.config

        torch.set_num_threads(setup.threads)
        # Read from TORCHINDUCTOR_COMPILE_THREADS when Inductor was imported, in the parent.
        torch._inductor.config.compile_threads = setup.threads


def _run_target(target: list[str]) -> int:
    """Call `module:function` (target[0]) on the rest of `target`; it returns the exit code.
    Callers name their own entry points (bench.runner.CHILDREN), so this module imports
    nothing of the processes it starts."""
    entry, *args = target
    module, _, function = entry.partition(":")
    return getattr(importlib.import_module(module), function)(args)


class Child:
    """A started child: poll it, wait for it, or kill its whole process group."""

    # What a child that ran on another host (bench/fleet/launcher.py) found there, which the runner
    # could not see from here: its compile caches ("cold", "warm") and the GPU it was given.
    # None: as the runner prepared them.
    cache: str | None = None
    gpu: int | None = None

    def __init__(self, pid: int, popen: subprocess.Popen | None = None) -> None:
        self.pid, self.popen, self.returncode = pid, popen, None
        try:
            self.pidfd = os.pidfd_open(pid)
        except (AttributeError, OSError):  # not Linux, or a kernel before 5.3
            self.pidfd = None

    def poll(self) -> int | None:
        """The exit code (negative: the signal that killed it) once it has ended, else None."""
        if self.returncode is None:
            if self.popen is not None:
                self.returncode = self.popen.poll()
            else:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
                if pid:
                    self.returncode = os.waitstatus_to_exitcode(status)
            if self.returncode is not None:
                self._close()
                self._kill_group()  # compile workers it left behind
        return self.returncode

    def kill(self) -> None:
        if self.returncode is None:  # the keeper ends what left the group (setsid) too
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(self.pid, signal.SIGTERM)
            deadline = time.monotonic() + KEEPER_GRACE_S
            while self.poll() is None and time.monotonic() < deadline:
                wait_any([self], deadline - time.monotonic())
        self._kill_group()
        if self.returncode is None:
            if self.popen is not None:
                self.returncode = self.popen.wait()
            else:
                self.returncode = os.waitstatus_to_exitcode(os.waitpid(self.pid, 0)[1])
        self._close()

    def _kill_group(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signal.SIGKILL)

    def _close(self) -> None:
        if self.pidfd is not None:
            os.close(self.pidfd)
            self.pidfd = None


def wait_any(children: list[Child], timeout: float) -> None:
    """Return once any child has ended, or after `timeout` seconds."""
    timeout = max(0.0, timeout)
    fds = [c.pidfd for c in children if c.pidfd is not None]
    if not children or len(fds) < len(children):
        time.sleep(min(timeout, 0.05))
        return
    with selectors.DefaultSelector() as selector:
        for fd in fds:
            selector.register(fd, selectors.EVENT_READ)
        selector.select(min(timeout, 3600))


class Launcher:
    """Starts children by `isolation`; `preload()` pays the imports once for forking.
    bench/fleet/launcher.py's RayLauncher is the other launcher: the same calls, children on a cluster."""

    grace_s = 0.0  # what starting a child elsewhere may add to a case's timeout
    wait_any = staticmethod(wait_any)

    def __init__(self, isolation: str = DEFAULT_ISOLATION) -> None:
        if isolation not in ISOLATIONS:
            raise ValueError(f"isolation {isolation!r} is not one of {', '.join(ISOLATIONS)}")
        self.isolation = isolation
        self.parent_import_s: float | None = None

    def preload(self, process_started: float) -> float | None:
        """Import what every case needs, once; the seconds it took since `process_started`
        (a time.perf_counter() taken before this process imported torch)."""
        if self.isolation != "fork":
            return None
        if self.parent_import_s is None:
            for name in PRELOAD:
                importlib.import_module(name)
            self.parent_import_s = time.perf_counter() - process_started
        return self.parent_import_s

    def start(self, target: list[str], setup: ChildSetup, log_path: Path,
              slot: Slot | None = None, timeout_s: float | None = None,
              caches: Caches | None = None) -> Child:
        """`log_path` lies in the child's private scratch folder, which also holds its TMPDIR;
        `caches` are made ready first (the child's `cache` says what it found). `slot` and
        `timeout_s` matter to a launcher that places children elsewhere; here the setup
        already says all of the slot, and the runner enforces the timeout."""
        found = caches.prepare() if caches else None
        child = self._start(target, setup, log_path)
        child.cache = found
        return child

    def _start(self, target: list[str], setup: ChildSetup, log_path: Path) -> Child:
        setup = ChildSetup(setup.parent_pid, setup.env | private_temp(log_path.parent),
                           setup.threads, setup.cpus, str(log_path.parent))
        if self.isolation == "spawn":
            with open(log_path, "wb") as log:
                popen = subprocess.Popen(
                    [sys.executable, "-m", "bench.pool", json.dumps(asdict(setup)), *target],
                    cwd=REPO, env=os.environ | setup.env, stdout=log, stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL, start_new_session=True)
            _note_group(log_path.parent, popen.pid)
            return Child(popen.pid, popen)
        torch = sys.modules.get("torch")
        if torch is not None and torch.cuda.is_initialized():
            # Something imported here (a model of your own?) touched the GPU: a forked child
            # could not use it.
            raise ForkUnsafe("CUDA was initialised in the runner, so its cases cannot be "
                               "forked; use --isolation spawn")
        for stream in (sys.stdout, sys.stderr):
            stream.flush()  # or the child would print what the parent had buffered
        pid = os.fork()
        if pid == 0:  # the child: never returns
            code = 1
            try:
                os.setpgid(0, 0)
                log = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
                null = os.open(os.devnull, os.O_RDONLY)
                os.dup2(null, 0)
                os.dup2(log, 1)
                os.dup2(log, 2)
                code = _keep(setup, target)
            except BaseException:  # noqa: BLE001 - whatever happens, end here and say why
                traceback.print_exc()
            finally:
                with contextlib.suppress(Exception):
                    sys.stdout.flush()
                    sys.stderr.flush()
                os._exit(code)
        # Both sides set the group, so a killpg right after fork finds it either way.
        with contextlib.suppress(PermissionError, ProcessLookupError):
            os.setpgid(pid, pid)
        _note_group(log_path.parent, pid)
        return Child(pid)


# ---- scratch folders --------------------------------------------------------------------

def new_scratch() -> Path:
    """A private folder for one child; its name carries the runner's pid (see remove_stale)."""
    return Path(tempfile.mkdtemp(prefix=f"{SCRATCH_PREFIX}{os.getpid()}-"))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _ours(path: Path, folder: bool) -> bool:
    """Whether `path` is provably this user's own: not a link, owned by our uid, and (for a
    folder) private to us, mode 0700 as mkdtemp makes it. Anyone may create a folder named
    like ours in a shared temporary folder; only we can make one that passes."""
    try:
        found = os.lstat(path)
    except OSError:
        return False
    kind = stat.S_ISDIR if folder else stat.S_ISREG
    return (kind(found.st_mode) and found.st_uid == os.geteuid()
            and (not folder or stat.S_IMODE(found.st_mode) & 0o077 == 0))


def _stale_scratch() -> list[Path]:
    """Our scratch folders whose runner no longer exists (it was SIGKILLed)."""
    found = []
    for folder in Path(tempfile.gettempdir()).glob(f"{SCRATCH_PREFIX}*"):
        owner = folder.name[len(SCRATCH_PREFIX):].split("-", 1)[0]
        if (owner.isdigit() and int(owner) != os.getpid() and not _alive(int(owner))
                and _ours(folder, folder=True)):
            found.append(folder)
    return found


def remove_stale_scratch() -> list[Path]:
    """Remove our scratch folders that runners which no longer exist left behind (SIGKILL);
    a folder of that name that is not provably ours is left alone."""
    removed = []
    for folder in _stale_scratch():
        shutil.rmtree(folder, ignore_errors=True)
        removed.append(folder)
    return removed


# ---- case process groups a killed runner left -------------------------------------------
# PR_SET_PDEATHSIG kills the case process with its runner, but not what the case started:
# a compile worker or a subprocess of a model of your own stays in the case's process
# group, running on. The runner notes each case's group in its scratch folder, and the
# next run ends the groups of runners that no longer exist, before it measures anything.

GROUP_FILE = "case-group"  # "<pid> <start time>" of the child that leads the group
# The boot id, then "<pid> <start time>" of every process below the keeper, as its keeper
# last saw them (every NOTE_EVERY_S).
DESCENDANTS_FILE = "case-descendants"


def _proc_stat(pid: int) -> list[str] | None:
    """Fields of /proc/<pid>/stat after the command name (state first), or None."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def _start_time(pid: int) -> str:
    fields = _proc_stat(pid)
    return fields[19] if fields else "?"  # field 22, starttime, in clock ticks since boot


def _boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return "?"


def _note_group(folder: Path, pid: int) -> None:
    with contextlib.suppress(OSError):
        (folder / GROUP_FILE).write_text(f"{pid} {_start_time(pid)}\n")


def _uid(pid: int) -> int | None:
    try:
        return os.stat(f"/proc/{pid}").st_uid
    except OSError:
        return None


def _group_members(pgid: int) -> list[int]:
    """Living (not zombie) processes in process group `pgid`; empty where there is no /proc."""
    members = []
    for entry in Path("/proc").glob("[0-9]*"):
        fields = _proc_stat(int(entry.name))
        if fields and fields[2] == str(pgid) and fields[0] not in ("Z", "X"):
            members.append(int(entry.name))
    return members


def end_stale_case_groups() -> list[tuple[int, list[int]]]:
    """SIGKILL the process groups of cases whose runner no longer exists; (group, pids) of
    each group ended. A group is ended only while it is provably the case's: its leader is
    gone (a group's id is not reused while any member lives) or is the very process noted."""
    ended = []
    for folder in _stale_scratch():
        note = folder / GROUP_FILE
        if not _ours(note, folder=False):
            continue
        try:
            pid_text, started = note.read_text().split()
            pgid = int(pid_text)
        except (OSError, ValueError):
            continue
        if pgid <= 1:
            continue
        leader = _proc_stat(pgid)
        if leader is not None and leader[0] not in ("Z", "X") and _start_time(pgid) != started:
            continue  # the pid now belongs to another process
        members = _group_members(pgid)
        if any(_uid(pid) != os.geteuid() for pid in members):
            continue  # a case of ours runs as us: this group is someone else's
        if members:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pgid, signal.SIGKILL)
        members += _end_noted_descendants(folder, members)
        if members:
            ended.append((pgid, members))
    return ended


def _end_noted_descendants(folder: Path, ended: list[int]) -> list[int]:
    """SIGKILL what the keeper noted below it (DESCENDANTS_FILE) and still runs: a process
    that left the case's group with setsid(), and the group it leads. Only a process that is
    provably the one noted: the note is ours (checked by the caller for its folder), of this
    boot, the pid has the start time noted, and it and all of its group run as us."""
    note = folder / DESCENDANTS_FILE
    if not _ours(note, folder=False):
        return []
    try:
        boot, *lines = note.read_text().splitlines()
        noted = [(int(pid), started) for pid, started in map(str.split, lines)]
    except (OSError, ValueError):
        return []
    if boot != _boot_id() or boot == "?":
        return []  # start times count from this boot only
    found = []
    for pid, started in noted:
        fields = _proc_stat(pid)
        if (pid <= 1 or pid in ended or fields is None or fields[0] in ("Z", "X")
                or _start_time(pid) != started or _uid(pid) != os.geteuid()):
            continue
        leads = fields[2] == str(pid)
        members = _group_members(pid) if leads else [pid]
        if any(_uid(member) != os.geteuid() for member in members):
            continue
        with contextlib.suppress(ProcessLookupError, PermissionError):
            if leads:
                os.killpg(pid, signal.SIGKILL)
            else:
                os.kill(pid, signal.SIGKILL)
        found += [m for m in members if m not in found and m not in ended]
    return found


# ---- the spawned child's entry point ----------------------------------------------------

def main(argv: list[str]) -> int:
    data = json.loads(argv[0])
    setup = ChildSetup(parent_pid=data["parent_pid"], env=data["env"], threads=data["threads"],
                       cpus=tuple(data["cpus"]), scratch=data["scratch"])
    return _keep(setup, argv[1:])


if __name__ == "__main__":
    # os._exit, not sys.exit: a thread a factory left running (not a daemon) would hold
    # the process open after its work is done, until the runner's timeout.
    exit_code = 1
    try:
        exit_code = main(sys.argv[1:])
    except BaseException:  # noqa: BLE001 - whatever happens, end here and say why
        traceback.print_exc()
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(exit_code)
