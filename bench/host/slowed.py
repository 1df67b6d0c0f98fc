"""`python -m bench.host.slowed`: the host model's test on a host slowed on purpose (issue 51).

A host-dependent speedup is predicted from the host probe (bench/host/model.py). To see whether
the prediction holds on a host slower than any measured, this command:

1. plans: the cases with a host model on this machine's environments, fitted on the records
   in --results-dir as the site fits them, as `python -m bench` selections (one per size,
   dtype and set of modelled modes, eager always among them), cheapest first;
2. slows the host: it pins itself, and so every process it starts, to --cores CPUs, times
   the probe there quiet, then adds busy loops a step at a time until the probe's median
   reaches --target times the quiet one or the steps run out. The first step loads the SMT
   siblings of those CPUs (a slower core, much as a slower host has), the next ones put
   1, 2, ... loops on each of those CPUs (a time-shared core). --loops N starts N loops at
   once instead, without calibrating;
3. measures each selection with what is left of --minutes, under a tag of its own:
   slowed-host for the first slowed run of the results folder, then slowed-host-2, ...;
4. prints, for this lease, each modelled speedup measured against its prediction.

The busy loops end with this command, and on their own if it is killed.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from bench import REPO
from bench.cmdline import OneLineParser, UsageError, positive
from bench.host import model as host_model
from bench.records import MalformedRecord, Record, read_records, results_files

DEFAULT_TARGET = 1.8  # about twice the quiet probe, as the issue asks
DEFAULT_CORES = 2
DEFAULT_LOOPS_PER_CORE = 3
DEFAULT_REPEATS = 3
BLOCKS = 100  # probe blocks per calibration reading; a block is 200 calls
WARMUP_BLOCKS = 20
SETTLE_S = 1.0  # after starting loops, before reading the probe
SLOW_BLOCK = 2.0  # a block this many times the quiet median was cut by the scheduler
FLOAT32 = "float32"
# Options of `python -m bench` this command sets for every selection.
OWN_OPTIONS = ("--backend", "--workload", "--batch-size", "--mode", "--dtype", "--profile",
               "--tag", "--machine", "--results-dir", "--max-minutes", "--order", "--repeats",
               "--timing", "--shapes", "--force")

# A busy loop that stops once its parent is gone (checked about every 0.2 s).
BUSY = ("import os\n"
        "parent, n = os.getppid(), 0\n"
        "while True:\n"
        "    n += 1\n"
        "    if n % 4000000 == 0 and os.getppid() != parent:\n"
        "        break\n")


# ---- the plan -------------------------------------------------------------------------------

@dataclass(frozen=True)
class Selection:
    """One `python -m bench` run: workloads of one size and dtype, in the modes modelled."""

    workloads: tuple[str, ...]
    batch_size: int | None
    dtype: str
    modes: tuple[str, ...]  # eager first
    expected_s: float | None  # quiet, from the records' durations; None where one is unknown

    def args(self) -> list[str]:
        out = ["--profile", "full"]
        for name in self.workloads:
            out += ["--workload", name]
        if self.batch_size is not None:
            out += ["--batch-size", str(self.batch_size)]
        if self.dtype != FLOAT32:
            out += ["--dtype", self.dtype]
        for mode in self.modes:
            out += ["--mode", mode]
        return out


def modelled(records: list[Record], machine: str, backend: str) -> list[host_model.SpeedupModel]:
    """The host models of `machine`'s environments on `backend`, fitted as the site fits them."""
    envs = {r.env_id for r in records if r.env.machine == machine and r.key.backend == backend}
    rows = [host_model.row_of(r) for r in records if r.env_id in envs]
    return host_model.fit(rows).models


def plan(records: list[Record], machine: str, backend: str, repeats: int = DEFAULT_REPEATS,
         workloads: Sequence[str] = ()) -> list[Selection]:
    """The selections that measure every modelled speedup of `machine` (of `workloads` only,
    where given), cheapest first."""
    modes: dict[tuple, set[str]] = defaultdict(set)  # (workload, batch, shapes, dtype): modes
    for model in modelled(records, machine, backend):
        if not workloads or model.workload in workloads:
            modes[model.point].update((model.baseline, model.mode))
    imports = [r.process.parent_import_s for r in records
               if r.env.machine == machine and r.process.parent_import_s is not None]
    startup_s = statistics.median(imports) if imports else 0.0
    grouped: dict[tuple, list[tuple]] = defaultdict(list)
    for point, found in modes.items():
        ordered = (host_model.BASELINE, *sorted(found - {host_model.BASELINE}))
        grouped[(point[1], point[3], ordered)].append(point)
    out = []
    for (batch, dtype, ordered), points in grouped.items():
        costs = {point: _expected_s(records, machine, point, ordered, repeats) for point in points}
        points.sort(key=lambda p: (costs[p] is None, costs[p] or 0.0, p[0]))
        known = [c for c in costs.values() if c is not None]
        out.append(Selection(tuple(p[0] for p in points), batch, dtype, ordered,
                             startup_s + sum(known) if len(known) == len(costs) else None))
    return sorted(out, key=lambda s: (s.expected_s is None, s.expected_s or 0.0, s.workloads))


def _expected_s(records: list[Record], machine: str, point: tuple, modes: tuple[str, ...],
                repeats: int) -> float | None:
    """How long a quiet host took to measure `point` in `modes`: each mode's cold isolated
    process and `repeats` paired processes (scaled to the number of modes), medians of the
    untagged records of `machine`."""
    isolated: dict[str, list[float]] = defaultdict(list)
    paired: list[float] = []
    for r in records:
        if (r.env.machine != machine or r.key.tag != "main" or r.status != "ok"
                or (r.key.workload, r.key.batch_size, r.key.shapes, r.key.dtype) != point):
            continue
        if r.paired is None and r.process.cache == "cold":
            isolated[r.key.mode].append(r.duration_s)
        elif r.paired is not None and r.key.mode == host_model.BASELINE:
            paired.append(r.duration_s * len(modes) / len(r.paired.modes))
    if not paired or any(not isolated[m] for m in modes):
        return None
    return sum(statistics.median(isolated[m]) for m in modes) + repeats * statistics.median(paired)


# ---- slowing the host ----------------------------------------------------------------------

@dataclass(frozen=True)
class Step:
    """Busy loops to add: one per entry, pinned to that CPU (None: not pinned)."""

    loops: tuple[int | None, ...]
    says: str


def parse_cpu_list(text: str) -> list[int]:
    """A kernel CPU list such as "0-3,8,10-11"."""
    out = []
    for part in text.strip().split(","):
        if not part:
            continue
        first, _, last = part.partition("-")
        out.extend(range(int(first), int(last or first) + 1))
    return out


def siblings(cpu: int) -> list[int]:
    """The CPUs sharing `cpu`'s core (SMT), itself included; [cpu] where the kernel says none."""
    path = Path(f"/sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list")
    try:
        return parse_cpu_list(path.read_text())
    except (OSError, ValueError):
        return [cpu]


def chosen_cpus(allowed: Iterable[int], count: int) -> list[int]:
    """The last `count` CPUs this process may run on (CPU 0 takes most interrupts)."""
    return sorted(allowed)[-count:]


def ladder(cpus: Sequence[int], siblings_of: Callable[[int], list[int]],
           per_core: int) -> list[Step]:
    """The calibration's steps: the SMT siblings of `cpus` first, where there are any outside
    them, then one more loop on each of `cpus` per step, `per_core` steps."""
    steps = []
    shared = sorted({s for c in cpus for s in siblings_of(c)} - set(cpus))
    if shared:
        steps.append(Step(tuple(shared), f"a busy loop on each SMT sibling ({_cpus(shared)})"))
    for count in range(1, per_core + 1):
        steps.append(Step(tuple(cpus), f"{count} busy loop{'s' if count > 1 else ''} on each "
                                       f"of CPUs {_cpus(cpus)}"))
    return steps


def fixed(count: int, cpus: Sequence[int] | None) -> list[Step]:
    """`count` loops at once: pinned round-robin to `cpus`, or not pinned."""
    loops = tuple(cpus[i % len(cpus)] for i in range(count)) if cpus else (None,) * count
    where = f" on CPUs {_cpus(cpus)}" if cpus else ""
    return [Step(loops, f"{count} busy loop{'s' if count > 1 else ''}{where}")]


def _cpus(cpus: Iterable[int]) -> str:
    return ",".join(map(str, cpus))


@dataclass(frozen=True)
class Reading:
    median_s: float
    slow_share: float  # blocks above SLOW_BLOCK times the quiet median


@dataclass(frozen=True)
class Level:
    says: str  # every loop running, in words
    loops: int
    reading: Reading


def calibrate(read: Callable[[float | None], Reading], add: Callable[[Step], None],
              steps: list[Step], target: float | None) -> tuple[Reading, list[Level]]:
    """The quiet reading, then one per step taken: steps are taken until the probe's median
    reaches `target` times the quiet one (every step where `target` is None)."""
    quiet = read(None)
    levels: list[Level] = []
    loops = 0
    for step in steps:
        add(step)
        loops += len(step.loops)
        levels.append(Level(step.says, loops, read(quiet.median_s)))
        if target is not None and levels[-1].reading.median_s >= target * quiet.median_s:
            break
    return quiet, levels


class Loops:
    """The busy loops started so far; `stop()` ends them all."""

    def __init__(self) -> None:
        self.running: list[subprocess.Popen] = []

    def add(self, step: Step) -> None:
        for cpu in step.loops:
            child = subprocess.Popen([sys.executable, "-c", BUSY], stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            self.running.append(child)
            if cpu is not None:
                os.sched_setaffinity(child.pid, {cpu})
        time.sleep(SETTLE_S)

    def stop(self) -> None:
        for child in self.running:
            child.kill()
        for child in self.running:
            child.wait()
        self.running.clear()


class ProbeServer:
    """A child that imported torch once and times BLOCKS probe blocks (bench/host/probe.py's) on
    each request, so that a calibration step costs a fraction of a second."""

    def __init__(self, backend: str) -> None:
        self.child = subprocess.Popen([sys.executable, "-m", "bench.host.slowed", "serve", backend],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                      cwd=REPO)
        if self.child.stdout.readline().strip() != "ready":
            raise RuntimeError(f"the probe could not be timed on {backend} "
                               f"(exit status {self.child.wait()})")

    def read(self, quiet_s: float | None) -> Reading:
        self.child.stdin.write(f"{BLOCKS}\n")
        self.child.stdin.flush()
        line = self.child.stdout.readline()
        if not line:
            raise RuntimeError(f"the probe stopped (exit status {self.child.wait()})")
        return reading(json.loads(line), quiet_s)

    def close(self) -> None:
        self.child.stdin.close()
        try:
            self.child.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.child.kill()
            self.child.wait()


def reading(op_s: list[float], quiet_s: float | None) -> Reading:
    median = statistics.median(op_s)
    reference = quiet_s if quiet_s is not None else median
    return Reading(median, sum(t > SLOW_BLOCK * reference for t in op_s) / len(op_s))


def serve(backend: str) -> None:
    """The probe server's side: one line "ready", then per request line N, the op_s of N
    blocks as one JSON line."""
    from bench.backends import BACKENDS
    from bench.host.probe import Probe

    probe = Probe(BACKENDS[backend])
    for _ in range(WARMUP_BLOCKS):
        probe.block()
    print("ready", flush=True)
    for line in sys.stdin:
        probe.op_s.clear(), probe.launch_s.clear()
        for _ in range(int(line)):
            probe.block()
        print(json.dumps(probe.op_s), flush=True)


# ---- what the slowed host measured ---------------------------------------------------------

def this_lease() -> str:
    boot = Path("/proc/sys/kernel/random/boot_id")
    return host_model.lease({"hostname": socket.gethostname(), "machine": None,
                             "boot_id": boot.read_text().strip() if boot.exists() else None})


def check_lines(records: list[Record], machine: str, backend: str, lease: str) -> list[str]:
    """Each modelled speedup of `machine` measured on `lease` under the slowed tag, against
    its prediction at the lease's probe."""
    models = modelled(records, machine, backend)
    rows = [host_model.row_of(r) for r in records if r.env.machine == machine]
    tested = host_model.processes(rows, host_model.SLOWED_TAGS)
    checks = [c for c in host_model.slowed(tested, models) if c.lease == lease]
    lines = [f"slowed host {lease}: {len(checks)} modelled speedups measured"]
    for check in sorted(checks, key=lambda c: (c.model.workload, c.model.batch_size or 0,
                                                c.model.mode)):
        model, found = check.model, check.prediction
        lo, hi = model.probe_range_s
        size = "" if model.batch_size is None else f" batch {model.batch_size}"
        where = ("" if not found.outside_s else
                 f", {abs(found.outside_s) * 1e6:.2f} us {'above' if found.outside_s > 0 else 'below'}"
                 f" the probes fitted ({lo * 1e6:.2f}-{hi * 1e6:.2f} us)")
        high = "unbounded" if found.high == float("inf") else f"{found.high:.2f}x"
        blocks = ("" if check.probe_mean_s is None else
                  f" (blocks' mean {check.probe_mean_s * 1e6:.2f} us"
                  f"{': time-sliced, the probe under-reports' if check.time_sliced else ''})")
        lines.append(f"  {model.workload}{size} {model.mode} over eager: probe "
                     f"{check.probe_s * 1e6:.2f} us{blocks}{where}; predicted {found.speedup:.2f}x "
                     f"({found.low:.2f}x-{high}), measured {check.measured:.2f}x: "
                     f"{'inside' if check.inside else 'OUTSIDE'} ({check.processes_inside} of "
                     f"{check.processes} processes inside)")
    unmodelled = sorted({p.env_id for p in tested if p.lease == lease}
                        - {m.env_id for m in models})
    if unmodelled:
        lines.append(f"  no host model for environment {', '.join(unmodelled)}, which these "
                     f"records measured (modelled: {', '.join(sorted({m.env_id for m in models}))}):"
                     f" not comparable")
    return lines


# ---- the command ---------------------------------------------------------------------------

def bench_command(backend: str, selection: Selection, machine: str, results: Path,
                  repeats: int, minutes_left: float | None, extra: Sequence[str] = (),
                  tag: str = host_model.SLOWED_TAG) -> list[str]:
    command = [sys.executable, "-m", "bench", "--backend", backend, *selection.args(),
               "--repeats", str(repeats), "--machine", machine, "--tag", tag,
               "--order", "grouped", "--results-dir", str(results), *extra]
    if minutes_left is not None:
        command += ["--max-minutes", f"{minutes_left:.2f}"]
    return command


def _records(results: Path) -> list[Record]:
    return [r for path in results_files(results)
            for r in read_records(path, warn=lambda message: None)]


def _minutes(seconds: float | None) -> str:
    return "unknown" if seconds is None else f"{seconds / 60:.1f} min"


def parser() -> OneLineParser:
    p = OneLineParser(prog="python -m bench.host.slowed", description=__doc__)
    p.add_argument("--backend", choices=("cuda", "cpu"), required=True)
    p.add_argument("--machine", required=True,
                   help="the machine name the host models were measured under (as --machine)")
    p.add_argument("--results-dir", type=Path, default=Path("results"),
                   help="the records fitted on, where the slowed records are added")
    p.add_argument("--minutes", type=positive,
                   help="the whole command's time, calibration included; each run of "
                        "python -m bench gets what is left as --max-minutes")
    p.add_argument("--cores", type=int, default=None,
                   help=f"pin to this many CPUs (the last ones); default {DEFAULT_CORES} when "
                        "calibrating, no pinning with --loops")
    p.add_argument("--target", type=positive, default=DEFAULT_TARGET,
                   help=f"the loaded probe over the quiet one to reach (default {DEFAULT_TARGET})")
    p.add_argument("--max-loops-per-core", type=int, default=DEFAULT_LOOPS_PER_CORE,
                   help=f"the calibration's last step (default {DEFAULT_LOOPS_PER_CORE})")
    p.add_argument("--loops", type=int, help="start this many busy loops and do not calibrate")
    p.add_argument("--workload", action="append", default=[],
                   help="repeatable: measure only these workloads' modelled speedups")
    p.add_argument("--repeats", type=int, default=DEFAULT_REPEATS,
                   help=f"paired processes per case (default {DEFAULT_REPEATS})")
    p.add_argument("--dry-run", action="store_true",
                   help="print the plan and the commands; slow nothing, measure nothing")
    p.add_argument("extra", nargs="*", help="after --: more options for python -m bench")
    return p


def slow_down(args, loops: Loops) -> None:
    """Pin this process (and so every later one) to the chosen CPUs and start the loops,
    calibrated unless --loops; print the probe at each step."""
    cores = args.cores or (None if args.loops else DEFAULT_CORES)
    cpus = chosen_cpus(os.sched_getaffinity(0), cores) if cores else None
    if cpus:
        os.sched_setaffinity(0, cpus)
    steps = (fixed(args.loops, cpus) if args.loops
             else ladder(cpus, siblings, args.max_loops_per_core))
    server = ProbeServer(args.backend)
    try:
        quiet, levels = calibrate(server.read, loops.add, steps, None if args.loops else args.target)
    finally:
        server.close()
    where = f"pinned to CPUs {_cpus(cpus)}" if cpus else "not pinned"
    print(f"\nprobe, {where}: quiet {quiet.median_s * 1e6:.2f} us per eager op")
    for level in levels:
        print(f"  {level.reading.median_s * 1e6:.2f} us ({level.reading.median_s / quiet.median_s:.2f}x "
              f"quiet; {level.reading.slow_share:.0%} of blocks over {SLOW_BLOCK:g}x) with "
              f"{level.says} ({level.loops} loops)")
    reached = levels[-1].reading.median_s / quiet.median_s
    if not args.loops and reached < args.target:
        print(f"  the target {args.target:g}x was not reached; measuring at {reached:.2f}x")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["serve"]:
        serve(argv[1])
        return 0
    try:
        args = parser().parse_args(argv)
        for name, value in (("--cores", args.cores), ("--loops", args.loops),
                            ("--max-loops-per-core", args.max_loops_per_core),
                            ("--repeats", args.repeats)):
            if value is not None and value < 1:
                raise UsageError(f"argument {name}: must be 1 or more, got {value}")
        taken = [o for o in args.extra if o.split("=")[0] in OWN_OPTIONS]
        if taken:
            raise UsageError(f"{', '.join(taken)}: set by this command itself "
                             f"(it sets {', '.join(OWN_OPTIONS)})")
        records = _records(args.results_dir)
    except UsageError as error:
        print(f"python -m bench.host.slowed: error: {error}", file=sys.stderr)
        return 2
    except (MalformedRecord, OSError) as error:
        print(f"python -m bench.host.slowed: error: {error}", file=sys.stderr)
        return 1
    started = time.monotonic()
    results = args.results_dir.resolve()  # the runs start in the checkout
    selections = plan(records, args.machine, args.backend, args.repeats, args.workload)
    if not selections:
        known = sorted({m.workload for m in modelled(records, args.machine, args.backend)})
        print(f"python -m bench.host.slowed: error: no {args.backend} case of machine "
              f"{args.machine!r}{' among --workload ' + ', '.join(args.workload) if args.workload else ''}"
              f" has a host model in {args.results_dir} (workloads with one: "
              f"{', '.join(known) or 'none'})", file=sys.stderr)
        return 1
    total = [s.expected_s for s in selections]
    print(f"plan: {len(selections)} runs of python -m bench, about "
          f"{_minutes(None if None in total else sum(total))} on a quiet host "
          f"(a slowed one takes longer)")
    tag = host_model.next_slowed_tag({r.key.tag for r in records})
    for selection in selections:
        print(f"  {_minutes(selection.expected_s):>12}  python "
              + " ".join(bench_command(args.backend, selection, args.machine, results,
                                       args.repeats, None, args.extra, tag)[1:]))
    if args.dry_run:
        return 0
    signal.signal(signal.SIGTERM, lambda number, frame: sys.exit(128 + number))
    loops = Loops()
    try:
        try:
            slow_down(args, loops)
        except RuntimeError as error:
            print(f"python -m bench.host.slowed: error: {error}", file=sys.stderr)
            return 1
        for selection in selections:
            left = None if args.minutes is None else args.minutes - (time.monotonic() - started) / 60
            if left is not None and left < 0.5:
                print(f"\nnot started for want of time: {' '.join(selection.args())}")
                continue
            command = bench_command(args.backend, selection, args.machine, results,
                                    args.repeats, left, args.extra, tag)
            print(f"\n$ python {' '.join(command[1:])}", flush=True)
            subprocess.run(command, cwd=REPO, check=False)
    finally:
        loops.stop()
    print()
    print("\n".join(check_lines(_records(results), args.machine, args.backend, this_lease())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
