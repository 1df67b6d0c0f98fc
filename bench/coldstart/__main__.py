"""`python -m bench.coldstart`: the cold-start ladder and regional compilation, one fresh
process per rung and repeat, recorded in results/coldstart/ (see bench/coldstart/runner.py).

Examples:
  python -m bench.coldstart --backend cpu --workload mlp --shapes tiny --repeats 1
  python -m bench.coldstart --backend cuda --workload gpt2-small --batch-size 1 --batch-size 32
  python -m bench.coldstart --backend cuda --rung per-block --rung nested-region --rung cold \\
      --rung eager --workload llama-small
  python -m bench.coldstart --backend cuda --bundle-from results/coldstart/bundles/ENV_ID
  python -m bench.coldstart --backend cuda --bundle-from results/coldstart/bundles/ENV_ID \\
      --trust-descriptions --rung cold --workload gpt2-small --mode default --repeats 6
  python -m bench.coldstart --backend cuda --gpus all --batch-size 1 --batch-size 32
"""

from __future__ import annotations

import argparse
import json
import math
import re
import shutil
import sys
from pathlib import Path

from bench import REPO, pool
from bench.cmdline import LABEL, OneLineParser, UsageError, count, gpu_slots
from bench.coldstart.records import FOREIGN, LADDER, MODES, RUNGS
from bench.coldstart.runner import (
    Config,
    RunError,
    Runner,
    bundle_files,
    plan,
    read_foreign,
    run_child,
)
from bench.pool import Slot, slot_environment, slots_for
from bench.records import Environment, MalformedRecord
from bench.spec import ColdSpec
from bench.workloads import UnknownWorkload, check_name

BACKENDS = ("cpu", "cuda", "mps")
DEFAULT_WORKLOADS = ("resnet50", "vit-base16", "bert-base", "gpt2-small", "llama-small",
                     "vit16x6x384", "vit32x12x768", "vit32x18x1024")
DEFAULT_RESULTS = REPO / "results" / "coldstart"
DEFAULT_CACHE = REPO / ".bench-cache" / "coldstart"
PROG = "python -m bench.coldstart"
ENVIRONMENT_LIMIT_S = 300.0  # importing torch and asking CUDA, as bench/runner.py allows


def _choice(kind: str, valid):
    def check(value: str) -> str:
        if value not in valid:
            raise argparse.ArgumentTypeError(f"unknown {kind} {value!r} (valid: {', '.join(valid)})")
        return value

    check.__name__ = kind
    return check


def _workload(value: str) -> str:
    try:
        check_name(value)
    except UnknownWorkload as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return value


def _tag(value: str) -> str:
    if not LABEL.fullmatch(value) or value.startswith("from-"):
        raise argparse.ArgumentTypeError(f"tag {value!r} may hold only letters, digits and "
                                         f"_ . + - (not first), and not begin with from-")
    return value


def _sha256(value: str) -> str:
    if not re.fullmatch(r"[0-9a-fA-F]{64}", value):
        raise argparse.ArgumentTypeError(f"not a sha256 (64 hex digits): {value[:80]!r}")
    return value.lower()


def _minutes(value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        number = math.nan
    if not math.isfinite(number) or number <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive number, got {value!r}")
    return number


def parser() -> argparse.ArgumentParser:
    p = OneLineParser(prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--backend", type=_choice("backend", BACKENDS), default="cpu")
    p.add_argument("--workload", type=_workload, action="append",
                   help=f"repeatable (default: {', '.join(DEFAULT_WORKLOADS)})")
    p.add_argument("--batch-size", type=count, action="append", help="repeatable (default: 1)")
    p.add_argument("--mode", type=_choice("mode", MODES), action="append",
                   help=f"repeatable (default: {', '.join(MODES)})")
    p.add_argument("--rung", type=_choice("rung", tuple(r for r in RUNGS if r != FOREIGN)),
                   action="append", help=f"repeatable (default: the ladder, {', '.join(LADDER)}; "
                                         f"with --bundle-from, none)")
    p.add_argument("--repeats", type=count, default=3, help="fresh processes per rung (default 3)")
    p.add_argument("--shapes", type=_choice("shapes", ("seed", "tiny")), default="seed")
    p.add_argument("--results-dir", type=Path, default=DEFAULT_RESULTS)
    p.add_argument("--cache-dir", type=Path, default=DEFAULT_CACHE)
    p.add_argument("--machine", help="a name for this machine in the records (default: host name)")
    p.add_argument("--max-minutes", type=_minutes,
                   help="start nothing after this; a process cut off is left unrecorded")
    p.add_argument("--timeout", type=_minutes, default=30.0,
                   help="minutes one process may take before it is recorded as a timeout")
    p.add_argument("--bundle-from", type=Path, action="append", default=[],
                   help="a bundle (*.bin) saved in another environment, or a folder of them: "
                        "load each into empty caches (rung foreign-bundle), alone or after the "
                        "rungs --rung names in each case and repeat (--rung cold: an empty-cache "
                        "process and the bundle's alternate on this host; repeats already "
                        "recorded are not run again); a bundle runs code when loaded, so each is "
                        "refused unless its sha256 is given with --bundle-sha256 or "
                        "--trust-descriptions is set")
    p.add_argument("--bundle-sha256", type=_sha256, action="append", default=[],
                   help="repeatable: the sha256 of a bundle you trust (sha256sum FILE.bin)")
    p.add_argument("--trust-descriptions", action="store_true",
                   help="trust the sha256 recorded in each bundle's description (FILE.json "
                        "beside it): for bundles you saved yourself and carried here")
    p.add_argument("--tag", type=_tag, default="main", help="the records' tag (default main; "
                   "python -m bench.ab --coldstart gives each A/B side its own)")
    p.add_argument("--gpus", help="CUDA: all, a count N, or indices such as 0,2: one process "
                   "per GPU at a time, each pinned to an equal share of the cores, a case's "
                   "rungs of one repeat in order on one GPU (default: one process at a time, "
                   "placed as the host places it)")
    return p


def environment(backend: str, machine: str | None,
                slot: Slot) -> tuple[Environment, dict[str, str]]:
    """Collected in a child, on `slot` as its processes will see it (torch threads), so this
    process never initialises CUDA; with the rungs this release has no API for."""
    scratch = pool.new_scratch()
    try:
        code = run_child(pool.Launcher("spawn"), ColdSpec("environment", backend, machine=machine),
                         slot_environment(slot), slot, scratch, ENVIRONMENT_LIMIT_S)
        out = scratch / "result.json"
        if code != 0 or not out.exists():
            tail = (scratch / "log.txt").read_text(errors="replace").strip().splitlines()
            raise RunError(f"could not read the {backend} environment: "
                           f"{tail[-1] if tail else 'no output'}")
        found = json.loads(out.read_text())
        return Environment(**found["environment"]), found["missing_rungs"]
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    try:
        args = parser().parse_args(argv)
        config = Config(
            backend=args.backend, workloads=tuple(args.workload or DEFAULT_WORKLOADS),
            batch_sizes=tuple(args.batch_size or (1,)), modes=tuple(args.mode or MODES),
            rungs=tuple(args.rung or (() if args.bundle_from else LADDER)),
            repeats=args.repeats, shapes=args.shapes,
            results_dir=args.results_dir, cache_dir=args.cache_dir, machine=args.machine,
            max_minutes=args.max_minutes, timeout_s=args.timeout * 60,
            bundles_from=tuple(args.bundle_from), bundle_sha256=tuple(args.bundle_sha256),
            trust_descriptions=args.trust_descriptions,
            gpus=tuple(gpu_slots(args.gpus, [args.backend]) or ()) if args.gpus else (),
            tag=args.tag)
        files = bundle_files(config.bundles_from) if config.bundles_from else []
        env, missing_rungs = environment(config.backend, config.machine,
                                         slots_for(list(config.gpus) or None)[0])
        foreign = read_foreign(files, env, config.bundle_sha256,
                               config.trust_descriptions) if files else []
        runner = Runner(config, env, missing_rungs=missing_rungs)
        recorded = runner.run(plan(config, foreign))
        print(f"{recorded} process(es) recorded in {runner.results}")
        return 0
    except UsageError as error:
        print(f"{PROG}: error: {error}", file=sys.stderr)
        return 2
    except (RunError, MalformedRecord) as error:
        print(f"{PROG}: error: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
