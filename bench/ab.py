"""A/B runs across torch releases: `python -m bench.ab --env A=PYTHON --env B=PYTHON -- OPTIONS`.

Two releases are comparable only when they share a host and a time, and a release cannot
be paired inside one process, so their processes are paired across processes instead, as
asv's `continuous` does: every labelled environment (an interpreter with one torch
release) measures every workload size of the plan, in ABBA order per size. For a size
and repeat r, the environments take turns forward when r is even and backward when it is
odd (A B, B A, A B for three repeats; A B C, C B A, A B C for three releases), so that a
drift of the host lands on every side alike.

Each turn is one `python -m bench` run of that environment, through its command line:
`--workload W [--batch-size B] --repeats r+1 --tag ab-<group>-<label>`. Repeat 0 is the
size's isolated processes and its first paired process; a later repeat adds one paired
process, and nothing else, since the runner resumes and measures only what is missing.
The tag is part of every record's case key, so each record says which group and which
side it belongs to, and a group never resumes into another one's processes; every record
also holds the host it ran on (`host`: host name, boot id, the probe). Giving one
interpreter two labels (an A/A run) measures the noise floor: the spread of a release
against itself, on the same host and in the same run.

A shape stream cannot share a process with another mode (each of its processes makes the
stream's calls from a fresh start), so its turns run `--timing isolated`: repeat r adds the
isolated process r of every mode, and such a turn is always started, its runner measuring
only what is not on record.

With --coldstart, each turn is one `python -m bench.coldstart` run instead (the cold-start
ladder in fresh processes, bench/coldstart/), with the same tag, repeats and ABBA order; a
size is a workload and batch size as given (--workload, --batch-size), and the ladder's
own runner skips what is on record.

Standard library only: the orchestrator never imports torch. It asks the first
environment for the plan (`python -m bench.ab plan OPTIONS`, which runs the engine's own
option parsing and planning there) and skips a turn whose paired process is on record,
so a run that was cut off resumes with the same command and `--group`.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from bench import REPO
from bench.cmdline import LABEL, OneLineParser, UsageError, count, release_problem
from bench.records import MalformedRecord, read_records, results_files
from bench.workloads.registry import STREAMS

TAG_PREFIX = "ab"
GROUP = re.compile(r"[A-Za-z0-9.]+")  # no dash: the tag splits at its first two
TAG = re.compile(rf"^{TAG_PREFIX}-(?P<group>[A-Za-z0-9.]+)-(?P<label>{LABEL.pattern})$")
DEFAULT_REPEATS = 3
# Options of `python -m bench` that this orchestrator sets itself for every turn.
OWN_OPTIONS = ("--tag", "--repeats", "--timing", "--order", "--force", "--shard", "--list",
               "--results-dir", "--workload", "--batch-size", "--backend", "--max-minutes")


def tag(group: str, label: str) -> str:
    return f"{TAG_PREFIX}-{group}-{label}"


def parse_tag(value: str) -> tuple[str, str] | None:
    """(group, label) of an A/B tag, or None for any other tag."""
    found = TAG.match(value)
    return (found["group"], found["label"]) if found else None


@dataclass(frozen=True)
class Side:
    label: str
    python: str
    requested: str | None = None  # the torch release asked for, recorded as torch_requested


@dataclass(frozen=True)
class Size:
    backend: str
    workload: str
    batch_size: int | None
    shapes: str


@dataclass(frozen=True)
class Turn:
    size: Size
    repeat: int
    side: Side


def abba(sides: list[Side], sizes: Iterable[Size], repeats: int) -> Iterator[Turn]:
    """Every size's turns: per repeat, the sides forward on even repeats, backward on odd."""
    for size in sizes:
        for repeat in range(repeats):
            for side in sides if repeat % 2 == 0 else reversed(sides):
                yield Turn(size, repeat, side)


def is_stream(size: Size) -> bool:
    return size.workload in STREAMS


def command(turn: Turn, group: str, results_dir: Path, bench_args: list[str],
            module: str = "bench") -> list[str]:
    size = turn.size
    batch = [] if size.batch_size is None else ["--batch-size", str(size.batch_size)]
    timing = ["--timing", "isolated"] if module == "bench" and is_stream(size) else []
    return [turn.side.python, "-m", module, "--backend", size.backend, "--workload",
            size.workload, *batch, "--repeats", str(turn.repeat + 1), *timing, "--tag",
            tag(group, turn.side.label), "--results-dir", str(results_dir), *bench_args]


def done_turns(results_dir: Path, group: str) -> set[tuple]:
    """(label, backend, workload, batch, shapes, repeat) of every paired process of `group`
    on record: that turn is over (a paired process writes all its records at once)."""
    done = set()
    for path in results_files(results_dir):
        for record in read_records(path, warn=lambda message: None):
            found = parse_tag(record.key.tag)
            if found and found[0] == group and record.process.timing == "paired":
                k = record.key
                done.add((found[1], k.backend, k.workload, k.batch_size, k.shapes,
                          record.process.repeat))
    return done


def _turn_key(turn: Turn) -> tuple:
    s = turn.size
    return (turn.side.label, s.backend, s.workload, s.batch_size, s.shapes, turn.repeat)


def plan_sizes(python: str, bench_args: list[str]) -> list[Size]:
    """The workload sizes `python -m bench OPTIONS` would measure, asked of `python`."""
    try:
        out = subprocess.run([python, "-m", "bench.ab", "plan", *bench_args], cwd=REPO,
                             capture_output=True, text=True, stdin=subprocess.DEVNULL)
    except OSError as error:
        raise UsageError(f"{python} could not be run: {error.strerror or error}") from None
    if out.returncode != 0:
        last = (out.stderr.strip().splitlines() or ["no output"])[-1]
        raise UsageError(f"{python} could not plan the run: {last}")
    try:
        return [Size(*row) for row in json.loads(out.stdout)]
    except (ValueError, TypeError):  # /bin/true, echo: anything but a Python with bench/
        said = (out.stdout.strip().splitlines() or ["nothing"])[0][:120]
        raise UsageError(f"{python} is not a Python interpreter that can run this project's "
                         f"bench: asked for the plan, it printed {said!r}") from None


def coldstart_sizes(args) -> list[Size]:
    """The cold-start ladder's sizes: every backend, workload and batch size given."""
    from bench.coldstart.__main__ import BACKENDS, DEFAULT_WORKLOADS
    from bench.workloads import UnknownWorkload, check_name

    backends = args.backend or ["cpu"]
    for backend in backends:
        if backend not in BACKENDS:
            raise UsageError(f"unknown backend {backend!r} for --coldstart (valid: "
                             f"{', '.join(BACKENDS)})")
    workloads = args.workload or list(DEFAULT_WORKLOADS)
    for workload in workloads:
        try:
            check_name(workload)
        except UnknownWorkload as error:
            raise UsageError(str(error)) from None
    return [Size(backend, workload, batch, "-") for backend in dict.fromkeys(backends)
            for workload in dict.fromkeys(workloads)
            for batch in dict.fromkeys(args.batch_size or [1])]


def _print_plan(argv: list[str]) -> int:
    """In an environment with torch: the sizes the engine plans for `argv`, as JSON."""
    from bench import cli  # imports torch: only ever in the environment asked

    try:
        args = cli.parser().parse_args(argv)
        backends = list(dict.fromkeys(args.backend or cli.available_backends()))
        plans = cli._plans(args, backends)
    except cli.UsageError as error:
        print(f"python -m bench: error: {error}", file=sys.stderr)
        return 2
    sizes = [(k.backend, k.workload, k.batch_size, k.shapes)
             for cases in plans.values() for k in cases]
    print(json.dumps(list(dict.fromkeys(sizes))))
    return 0


def _side(value: str) -> Side:
    named, sep, python = value.partition("=")
    label, _, requested = named.partition("@")
    if not sep or not python or (_ and not requested):
        raise argparse.ArgumentTypeError(f"must be LABEL[@RELEASE]=PYTHON, such as "
                                         f"2.15.0@2.15.0=.nox/torch-2.15.0/bin/python; got "
                                         f"{value!r}")
    if not LABEL.fullmatch(label):
        raise argparse.ArgumentTypeError(f"label {label!r} may hold only letters, digits and "
                                         f"_ . + - (not first)")
    if requested and release_problem(requested):
        raise argparse.ArgumentTypeError(f"--env {label}@...: {release_problem(requested)}")
    if os.sep not in python:  # a command name, as a shell would find it
        found = shutil.which(python)
        if found is None:
            raise argparse.ArgumentTypeError(f"--env {label}={python}: no such command on PATH")
        python = found
    return Side(label, str(Path(python).absolute()), requested or None)


def _group(value: str) -> str:
    if not GROUP.fullmatch(value):
        raise argparse.ArgumentTypeError(f"group {value!r} may hold only letters, digits and dots")
    return value


def parser() -> argparse.ArgumentParser:
    p = OneLineParser(prog="python -m bench.ab", description=__doc__.splitlines()[0],
                epilog="Every other option, and all after --, goes to each `python -m bench` "
                       "turn (--profile, --mode, --machine, --shapes, --rounds, --timeout, ...).")
    p.add_argument("--env", dest="sides", action="append", type=_side, required=True,
                   metavar="LABEL[@RELEASE]=PYTHON", help="repeatable, 2 or more: an "
                   "interpreter with the release to measure, under a label (one interpreter "
                   "under two labels is an A/A run); RELEASE, the torch release asked for, is "
                   "recorded as torch_requested")
    p.add_argument("--group", type=_group, help="the comparison group's name (default: the "
                   "UTC time now); give an earlier run's to resume it")
    p.add_argument("--repeats", type=count, default=DEFAULT_REPEATS,
                   help=f"paired processes per side and workload size (default {DEFAULT_REPEATS})")
    p.add_argument("--workload", action="append", default=[],
                   help="repeatable filter, passed to the engine's planning")
    p.add_argument("--backend", action="append", default=[], help="repeatable filter")
    p.add_argument("--batch-size", type=count, action="append", default=[],
                   help="repeatable filter (with --coldstart: the batch sizes, default 1)")
    p.add_argument("--coldstart", action="store_true", help="time the cold-start ladder "
                   "(python -m bench.coldstart) instead of steady calls")
    p.add_argument("--results-dir", type=Path, help="default results, or results/coldstart "
                   "with --coldstart")
    p.add_argument("--max-minutes", type=float, help="start no turn after this long, and give "
                   "each turn what is left as its --max-minutes; run again to resume")
    p.add_argument("--dry-run", action="store_true", help="print every turn's command and stop")
    return p


def parse(argv: list[str]) -> argparse.Namespace:
    """This command's options; every other one, and all after `--`, go to the engine."""
    cut = argv.index("--") if "--" in argv else len(argv)
    args, unknown = parser().parse_known_args(argv[:cut])
    args.bench_args = [*unknown, *argv[cut + 1:]]
    return args


def _check(args) -> None:
    labels = [s.label for s in args.sides]
    if len(args.sides) < 2:
        raise UsageError("give two or more --env LABEL=PYTHON (one interpreter under two "
                         "labels is an A/A run)")
    if len(set(labels)) < len(labels):
        raise UsageError(f"labels must differ; got {', '.join(labels)}")
    for option in args.bench_args:
        if option.split("=", 1)[0] in OWN_OPTIONS:
            raise UsageError(f"{option} is set by python -m bench.ab for every turn; "
                             f"remove it (see python -m bench.ab --help)")
    for side in args.sides:
        if not os.access(side.python, os.X_OK):
            raise UsageError(f"--env {side.label}={side.python}: not an executable interpreter")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["plan"]:
        return _print_plan(argv[1:])
    try:
        args = parse(argv)
        _check(args)
        default = Path("results") / ("coldstart" if args.coldstart else "")
        args.results_dir = (args.results_dir or default).absolute()
        group = args.group or datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
        filters = [*(x for w in args.workload for x in ("--workload", w)),
                   *(x for b in args.backend for x in ("--backend", b)),
                   *(x for b in args.batch_size for x in ("--batch-size", str(b)))]
        sizes = (coldstart_sizes(args) if args.coldstart
                 else plan_sizes(args.sides[0].python, [*filters, *args.bench_args]))
        turns = list(abba(args.sides, sizes, args.repeats))
        done = set() if args.dry_run or args.coldstart else done_turns(args.results_dir, group)
    except UsageError as error:
        print(f"python -m bench.ab: error: {error}", file=sys.stderr)
        return 2
    except (MalformedRecord, OSError) as error:
        print(f"python -m bench.ab: error: {error}", file=sys.stderr)
        return 1
    todo = [t for t in turns if is_stream(t.size) or _turn_key(t) not in done]
    on_record = ("each turn measures only what is not on record" if args.coldstart
                 else f"{len(turns) - len(todo)} already on record")
    print(f"A/B group {group}: {', '.join(s.label for s in args.sides)}; {len(sizes)} workload "
          f"size(s) x {args.repeats} repeat(s) = {len(turns)} turns, {on_record} in "
          f"{args.results_dir}; resume with --group {group}", flush=True)
    deadline = time.monotonic() + 60 * args.max_minutes if args.max_minutes else None
    for number, turn in enumerate(todo, start=1):
        run = command(turn, group, args.results_dir, args.bench_args,
                      "bench.coldstart" if args.coldstart else "bench")
        if deadline is not None:
            left_min = (deadline - time.monotonic()) / 60
            if left_min <= 0:
                print(f"stopping at --max-minutes with {len(todo) - number + 1} turn(s) left; run "
                      f"the same command with --group {group} to resume", flush=True)
                return 0
            run += ["--max-minutes", f"{left_min:.2f}"]
        size = turn.size
        batch = "-" if size.batch_size is None else size.batch_size
        print(f"== turn {number}/{len(todo)}: {turn.side.label} {size.workload} bs={batch} "
              f"repeat {turn.repeat + 1}/{args.repeats}", flush=True)
        if args.dry_run:
            print(" ".join(run), flush=True)
            continue
        requested = {"ATLAS_TORCH_PIN": turn.side.requested} if turn.side.requested else {}
        code = subprocess.run(run, cwd=REPO, env={**os.environ, **requested}).returncode
        if code != 0:
            print(f"python -m bench.ab: error: turn {number} ({turn.side.label} {size.workload} "
                  f"bs={batch} repeat {turn.repeat + 1}) exited with {code}; run the same "
                  f"command with --group {group} to resume", file=sys.stderr)
            return code if code > 0 else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
