"""`python -m bench`: measure workloads x modes on the available backends."""

from __future__ import annotations

# First, before torch: PROCESS_STARTED is where the runner's import cost starts.
from bench.cmdline import PROCESS_STARTED, OneLineParser, UsageError, count, gpu_slots, positive

# isort: split
import argparse
import sys
from pathlib import Path

from bench import pool
from bench.backends import BACKENDS, available_backends
from bench.modes import MODES, not_separately
from bench.records import MalformedRecord
from bench.runner import (
    DEFAULT_CACHE_DIR,
    DEFAULT_REPEATS,
    DEFAULT_ROUNDS,
    ORDERS,
    PROFILES,
    TIMING_BUDGET_S,
    TIMINGS,
    RunConfig,
    RunError,
    Terminated,
    measure,
    plan,
    shard,
    twins_left_out,
)
from bench.workloads import ORDER, UnknownWorkload, check_name, lookup, optional
from bench.workloads.registry import DTYPES


def _names(kind: str, valid):
    def check(value: str) -> str:
        if value not in valid:
            raise argparse.ArgumentTypeError(
                f"unknown {kind} {value!r} (valid: {', '.join(valid)})")
        return value

    check.__name__ = kind
    return check


def _workload(value: str) -> str:
    try:
        check_name(value)
    except UnknownWorkload as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return value


def _shard(value: str) -> tuple[int, int]:
    index, _, count = value.partition("/")
    if not (index.isdigit() and count.isdigit() and 1 <= int(index) <= int(count)):
        raise argparse.ArgumentTypeError(f"must be I/N with 1 <= I <= N, such as 2/4; got {value!r}")
    return int(index), int(count)


def parser() -> argparse.ArgumentParser:
    p = OneLineParser(prog="python -m bench", description=__doc__)
    p.add_argument("--backend", action="append", type=_names("backend", BACKENDS),
                   help=f"repeatable; default: every available one of {', '.join(BACKENDS)}")
    p.add_argument("--workload", action="append", type=_workload,
                   help="repeatable; a registry name or package.module:factory; "
                        "default: all in the profile")
    p.add_argument("--mode", action="append", type=_names("mode", MODES),
                   help=f"repeatable; default: all of {', '.join(MODES)}")
    p.add_argument("--dtype", action="append", type=_names("dtype", DTYPES),
                   help="repeatable; default: float32. bfloat16 casts inference workloads "
                        "(model.to(torch.bfloat16), bfloat16 inputs) and runs training steps "
                        "under torch.autocast; it is measured for the MLPs, ViTs, training "
                        "steps and real models, and other workloads are left out of it")
    p.add_argument("--batch-size", action="append", type=count,
                   help="repeatable filter on the size axis (a batch, or n for a sweep)")
    p.add_argument("--profile", choices=PROFILES, default="quick",
                   help="quick: a representative subset, without the real models; on a CPU it "
                        "builds each set of kernels once, leaving a mode that builds another's "
                        "kernels there to that mode (it says which); full: every "
                        "case, except that the autotuning modes run at ViT batches 1, 8 and 32, "
                        "at batches 1 and 32 of the ViT training step and at the real models' "
                        "batch 1 only; sentinel: about a dozen cases to "
                        "run first on every new machine, to compare leases")
    p.add_argument("--timing", choices=TIMINGS, default="paired",
                   help="paired (default): one isolated process per case, then per workload and "
                        "size every mode side by side in one process, timed in alternating "
                        "rounds, --repeats times; isolated: --repeats processes per case")
    p.add_argument("--order", choices=ORDERS, default="interleaved",
                   help="interleaved (default): every case's first process, then every second "
                        "one, so host drift spreads over all cases; grouped (paired timing): a "
                        "workload size's processes back to back while its compile caches are on "
                        "disk, for machines that start bare (a lent GPU)")
    p.add_argument("--rounds", type=count, default=DEFAULT_ROUNDS,
                   help=f"rounds per paired process (default {DEFAULT_ROUNDS})")
    p.add_argument("--repeats", type=count,
                   help="processes per case, run interleaved (default: "
                        + ", ".join(f"{n} for {p}" for p, n in DEFAULT_REPEATS.items()) + ")")
    p.add_argument("--shard", type=_shard, metavar="I/N",
                   help="measure only the I-th of N round-robin slices of the plan")
    p.add_argument("--gpus", help="CUDA: all, a count N (1 or more), or indices such as 0,2 "
                                  "(one index with a trailing comma: 0, is GPU 0 alone); one "
                                  "case per GPU at a time (default: GPU 0 alone)")
    p.add_argument("--isolation", choices=pool.ISOLATIONS, default=pool.DEFAULT_ISOLATION,
                   help="fork each case from a runner that imported torch once, or spawn a "
                        f"fresh interpreter (default here: {pool.DEFAULT_ISOLATION})")
    p.add_argument("--cache-dir", type=Path, default=DEFAULT_CACHE_DIR,
                   help="compile caches per case, reused by its repeats after the first")
    p.add_argument("--cold-repeats", action="store_true",
                   help="isolated repeats after the first compile from empty caches too, so each "
                        "process records a cold first call (for compile-time figures)")
    p.add_argument("--force", action="store_true", help="re-measure cases already recorded")
    p.add_argument("--results-dir", type=Path, default=Path("results"))
    p.add_argument("--machine", help="name for this machine in the records (default: hostname)")
    p.add_argument("--tag", default="main", help="measure the same cases again under a new tag")
    p.add_argument("--shapes", choices=("seed", "tiny"), default="seed",
                   help="tiny shrinks every shape (for tests and smoke runs)")
    p.add_argument("--timeout", type=positive, default=900.0, help="seconds per case")
    p.add_argument("--budget", type=positive, help="seconds of timed calls per case")
    p.add_argument("--max-minutes", type=positive,
                   help="stop after this long, leaving an unfinished case unrecorded, and start no "
                        "case that would not fit in the time left (as long as the same case took in "
                        "earlier records or earlier in this run, else on another GPU, else as long as "
                        "the longest case so far); "
                        "run again to resume")
    fleet = p.add_argument_group("a Ray cluster (docs/reference/fleet.md; needs the fleet extra)")
    fleet.add_argument("--ray", metavar="ADDRESS",
                       help="measure on the Ray cluster at ADDRESS (auto: the one running here; "
                            "local: a one-node cluster started for this run), one case per task, "
                            "repeats spread over nodes; --backend defaults to cuda")
    fleet.add_argument("--accelerator-type", metavar="TYPE",
                       help="--ray: only nodes with this Ray accelerator_type (such as H100)")
    fleet.add_argument("--cpus-per-task", type=count, metavar="N",
                       help="--ray: CPU cores reserved per case (default: a node's cores shared "
                            "equally between its GPUs; on CPU, the whole node)")
    fleet.add_argument("--retries", type=int, choices=range(0, 6), metavar="{0..5}",
                       help="--ray: tries again for a case whose worker or node was lost "
                            "(default 0: recorded as an error)")
    p.add_argument("--list", action="store_true", help="list workloads, modes and backends")
    return p


def _absent(names) -> dict[str, list[str]]:
    """Each registered workload of `names` whose optional packages are not installed, with them."""
    return {name: gone for name in names if ":" not in name
            and (gone := optional.missing(lookup(name).requires))}


def _in_dtype(dtype: str) -> list[str]:
    return [name for name in ORDER if not lookup(name).dtype_refusal(dtype)]


def _workloads_text(names: list[str]) -> str:
    return "every workload" if len(names) == len(ORDER) else ", ".join(names)


def _listing() -> str:
    lines = ["workloads:"]
    lines += [f"  {name:<22} {lookup(name).description}" for name in ORDER]
    absent = _absent(ORDER)
    if absent:
        packages = list(dict.fromkeys(p for gone in absent.values() for p in gone))
        lines.append(f"  note: {', '.join(absent)} need {optional.needs(packages)}")
    lines += ["modes:"] + [f"  {m.name:<28} {m.description}" for m in MODES.values()]
    lines += ["dtypes:"] + [f"  {dtype:<28} {_workloads_text(_in_dtype(dtype))}" for dtype in DTYPES]
    here = set(available_backends())
    lines += ["backends:"] + [f"  {name:<6} {'available' if name in here else 'not available'}"
                              for name in BACKENDS]
    return "\n".join(lines)


def _check_own_models(args) -> None:
    """Each `package.module:factory` spec imported and its factory called in a child
    process with the case timeout, never in the runner (bench/workloads/external.py)."""
    from bench.workloads import external

    for name in dict.fromkeys(args.workload or []):
        if ":" in name:
            try:
                external.check(name, args.timeout)
            except UnknownWorkload as error:
                raise UsageError(str(error)) from None


def _say_twins_left_out(args, plans: dict) -> None:
    """A note per mode the profile leaves to its twin, where the twin is planned."""
    for backend, cases in plans.items():
        planned = {key.mode for key in cases}
        for mode, twin in twins_left_out(args.mode or list(MODES), backend, args.profile).items():
            if twin.mode in planned:
                print(f"note: {not_separately(mode, twin)}; the {args.profile} profile measures "
                      f"{twin.mode} alone (--profile full measures both)", file=sys.stderr)


def _plans(args, backends: list[str]) -> dict:
    absent = _absent(args.workload or ORDER)
    if absent and args.workload:
        name, packages = next(iter(absent.items()))
        raise UsageError(f"workload {name!r} needs {optional.needs(packages)}")
    plans = {}
    for backend in backends:
        workloads = args.workload or [n for n in ORDER if lookup(n).sizes(args.profile, backend)
                                      and n not in absent]
        left_out = [n for n in absent if lookup(n).sizes(args.profile, backend)]
        if left_out:
            packages = list(dict.fromkeys(p for n in left_out for p in absent[n]))
            print(f"note: {backend}: leaving out {', '.join(left_out)}, which need "
                  f"{optional.needs(packages)}", file=sys.stderr)
        for name in args.workload or []:
            refusals = [lookup(name).dtype_refusal(d) for d in args.dtype or ["float32"]]
            if all(refusals):
                raise UsageError(f"{refusals[0]}; bfloat16 is measured for "
                                 f"{', '.join(_in_dtype('bfloat16'))}")
            if not lookup(name).sizes(args.profile, backend):
                other = "full" if args.profile == "quick" else "quick"
                raise UsageError(f"workload {name!r} is not in the {args.profile} profile on "
                                 f"{backend} (try --profile {other})")
        plans[backend] = plan(backend, workloads, args.mode or list(MODES), args.profile,
                              set(args.batch_size or []), args.shapes, args.tag,
                              args.dtype or ["float32"])
    if not any(plans.values()):
        sizes = sorted({str(s) for b in backends for n in (args.workload or ORDER)
                        for s in lookup(n).sizes(args.profile, b)})
        why = []
        if args.batch_size:
            why.append(f"--batch-size {', '.join(map(str, args.batch_size))} matches none of the "
                       f"sizes {', '.join(sizes)}")
        if args.mode and all(MODES[m].traits.dynamic for m in args.mode):
            why.append(f"--mode {', '.join(args.mode)} applies only to workloads whose shapes vary")
        if (args.profile == "quick" and args.mode and args.workload
                and all(MODES[m].traits.autotune for m in args.mode)
                and not any(lookup(n).measures(args.profile, True, b)
                            for n in args.workload for b in backends)):
            why.append(f"the quick profile leaves {', '.join(args.mode)} out of "
                       f"{', '.join(args.workload)} on {', '.join(backends)} (try --profile full)")
        limited = [n for n in args.workload or [] if lookup(n).autotune_batch_sizes is not None]
        if args.mode and all(MODES[m].traits.autotune for m in args.mode) and limited:
            at = sorted({s for n in limited for s in lookup(n).autotune_batch_sizes})
            verb = "is" if len(limited) == 1 else "are"
            why.append(f"{', '.join(limited)} {verb} measured in the autotuning modes "
                       + (f"at batch {', '.join(map(str, at))} only" if at else "at no batch"))
        raise UsageError("this selection plans no case: " + ("; ".join(why) or "nothing matches")
                         + " (python -m bench --list shows what there is)")
    _say_twins_left_out(args, plans)
    if args.shard:
        # One slice of the whole plan, every backend in order, so shards partition it exactly.
        kept = shard([key for cases in plans.values() for key in cases], *args.shard)
        plans = {b: [key for key in kept if key.backend == b] for b in plans}
    return plans


def _fleet_options(args) -> dict:
    """The --ray options as bench.fleet.launcher.measure takes them; refused without --ray, and
    --gpus (this host's GPUs) refused with it."""
    options = {"accelerator_type": args.accelerator_type, "cpus_per_task": args.cpus_per_task,
               "retries": args.retries}
    if not args.ray:
        given = [name for name, value in options.items() if value is not None]
        if given:
            raise UsageError(f"--{given[0].replace('_', '-')} needs --ray ADDRESS")
        return {}
    if args.gpus:
        raise UsageError("--gpus picks GPUs of this host; with --ray every GPU of the cluster "
                         "runs cases (--accelerator-type picks a type)")
    return options | {"retries": args.retries or 0}


def _import_fleet():
    """bench.fleet.launcher, which imports Ray: only on the --ray path."""
    try:
        from bench.fleet import launcher
    except ImportError as error:
        if (error.name or "").split(".")[0] != "ray":
            raise
        raise UsageError("--ray needs Ray: pip install 'torch-compile-atlas[fleet]', or run "
                         "nox -s fleet") from None
    return launcher


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["host"]:
        from bench.host import predict

        return predict.main(argv[1:])
    try:
        args = parser().parse_args(argv)
        if args.list:
            print(_listing())
            return 0
        fleet_options = _fleet_options(args)
        if args.ray:  # the cluster's nodes have the backends, not necessarily this one
            backends, gpus = list(dict.fromkeys(args.backend or ["cuda"])), None
        else:
            here = available_backends()
            for name in args.backend or []:
                if name not in here:
                    raise UsageError(f"backend {name!r} is not available on this machine "
                                     f"(available: {', '.join(here)})")
            backends = list(dict.fromkeys(args.backend or here))
            gpus = gpu_slots(args.gpus, backends)
        _check_own_models(args)
        plans = _plans(args, backends)
        config = RunConfig(
            profile=args.profile, shapes=args.shapes, tag=args.tag, force=args.force,
            timeout_s=args.timeout, budget_s=args.budget or TIMING_BUDGET_S[args.profile],
            results_dir=args.results_dir, max_minutes=args.max_minutes,
            repeats=args.repeats or DEFAULT_REPEATS[args.profile], isolation=args.isolation,
            cache_dir=args.cache_dir, shard=args.shard, timing=args.timing, rounds=args.rounds,
            order=args.order, cold_repeats=args.cold_repeats)
        if args.ray:
            fleet = _import_fleet()
            fleet.measure(plans, config, args.machine, args.ray, **fleet_options)
            return 0
        slots_of = {b: pool.slots_for(gpus if b == "cuda" else None) for b in plans}
        measure(plans, config, args.machine, slots_of, PROCESS_STARTED)
    except UsageError as error:
        print(f"python -m bench: error: {error}", file=sys.stderr)
        return 2
    except (RunError, MalformedRecord, pool.ForkUnsafe) as error:
        print(f"python -m bench: error: {error}", file=sys.stderr)
        return 1
    except Terminated:
        print("python -m bench: terminated (SIGTERM): the running case was stopped and not "
              "recorded; finished cases are saved", file=sys.stderr)
        return 143
    except KeyboardInterrupt:
        print("python -m bench: interrupted; finished cases are saved", file=sys.stderr)
        return 130
    return 0
