"""`python -m bench`: measure workloads x modes on the available backends."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from bench.backends import BACKENDS, available_backends
from bench.modes import MODES
from bench.records import MalformedRecord
from bench.runner import TIMING_BUDGET_S, RunConfig, plan, run
from bench.workloads import WORKLOADS


class UsageError(Exception):
    """Bad input from the user: one line, exit status 2."""


class OneLineParser(argparse.ArgumentParser):
    def error(self, message: str):
        raise UsageError(message)


def _names(kind: str, valid: dict):
    def check(value: str) -> str:
        if value not in valid:
            raise argparse.ArgumentTypeError(
                f"unknown {kind} {value!r} (valid: {', '.join(valid)})")
        return value

    check.__name__ = kind
    return check


def _positive(value: str) -> float:
    number = float(value)
    if number <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive number, got {value!r}")
    return number


def parser() -> argparse.ArgumentParser:
    p = OneLineParser(prog="python -m bench", description=__doc__)
    p.add_argument("--backend", action="append", type=_names("backend", BACKENDS),
                   help=f"repeatable; default: every available one of {', '.join(BACKENDS)}")
    p.add_argument("--workload", action="append", type=_names("workload", WORKLOADS),
                   help="repeatable; default: all in the profile")
    p.add_argument("--mode", action="append", type=_names("mode", MODES),
                   help=f"repeatable; default: all of {', '.join(MODES)}")
    p.add_argument("--batch-size", action="append", type=int, help="repeatable filter")
    p.add_argument("--profile", choices=("quick", "full"), default="quick")
    p.add_argument("--force", action="store_true", help="re-measure cases already recorded")
    p.add_argument("--results-dir", type=Path, default=Path("results"))
    p.add_argument("--machine", help="name for this machine in the records (default: hostname)")
    p.add_argument("--tag", default="main", help="measure the same cases again under a new tag")
    p.add_argument("--shapes", choices=("seed", "tiny"), default="seed",
                   help="tiny shrinks every shape (for tests and smoke runs)")
    p.add_argument("--timeout", type=_positive, default=900.0, help="seconds per case")
    p.add_argument("--budget", type=_positive, help="seconds of timed calls per case")
    p.add_argument("--max-minutes", type=_positive,
                   help="stop after this long, leaving an unfinished case unrecorded, and start no "
                        "case with less time left than the longest one so far took; run again to resume")
    p.add_argument("--list", action="store_true", help="list workloads, modes and backends")
    return p


def _listing() -> str:
    lines = ["workloads:"]
    lines += [f"  {w.name:<22} {w.description}" for w in WORKLOADS.values()]
    lines += ["modes:"] + [f"  {m.name:<28} {m.description}" for m in MODES.values()]
    here = set(available_backends())
    lines += ["backends:"] + [f"  {name:<6} {'available' if name in here else 'not available'}"
                              for name in BACKENDS]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    try:
        args = parser().parse_args(argv)
        if args.list:
            print(_listing())
            return 0
        here = available_backends()
        for name in args.backend or []:
            if name not in here:
                raise UsageError(f"backend {name!r} is not available on this machine "
                                 f"(available: {', '.join(here)})")
        from bench.environment import collect

        config = RunConfig(
            profile=args.profile, shapes=args.shapes, tag=args.tag, force=args.force,
            timeout_s=args.timeout, budget_s=args.budget or TIMING_BUDGET_S[args.profile],
            results_dir=args.results_dir, max_minutes=args.max_minutes,
        )
        for backend in args.backend or here:
            workloads = args.workload or [w.name for w in WORKLOADS.values()
                                          if w.sizes(args.profile, backend)]
            cases = plan(backend, workloads, args.mode or list(MODES), args.profile,
                         set(args.batch_size or []), args.shapes, args.tag)
            run(cases, collect(backend, args.machine), config)
    except UsageError as error:
        print(f"python -m bench: error: {error}", file=sys.stderr)
        return 2
    except MalformedRecord as error:
        print(f"python -m bench: error: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("python -m bench: interrupted; finished cases are saved", file=sys.stderr)
        return 130
    return 0
