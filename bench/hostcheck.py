"""`python -m bench host`: how fast this host dispatches eager work, against the hosts measured.

A launch-bound figure (eager or default on small work) is set by the CPU that issues the
kernels. This times the same probe every benchmark process records (bench/host.py) and
sets it beside the hosts in the results folder, so a reader knows whether the site's
launch-bound speedups were measured on a faster or a slower host than theirs.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

from bench.records import MalformedRecord, Record, read_records
from bench.stats import paired_speedup

BLOCKS = 60  # 60 blocks of about 10 ms: a few seconds, with the import of torch the most of it
NEAR = 0.25  # hosts within this fraction of each other are "about as fast"
GRAPH_MODES = ("reduce-overhead", "cuda-graph")


def _probe(backend_name: str) -> tuple[list[float], list[float], str]:
    import torch

    from bench.backends import BACKENDS
    from bench.environment import cpu_model
    from bench.host import Probe

    backend = BACKENDS[backend_name]
    probe = Probe(backend)
    probe.block()
    probe.op_s.clear(), probe.launch_s.clear()
    for _ in range(BLOCKS):
        probe.block()
    device = torch.cuda.get_device_name(0) if backend_name == "cuda" else cpu_model()
    return probe.op_s, probe.launch_s, device


def _hosts(results: Path, backend: str) -> dict[tuple, dict]:
    """Per measured host (machine, host name, boot): its probe medians and paired ratios
    of a graph-replayed mode over eager where eager was launch-bound."""
    found: dict[tuple, dict] = defaultdict(lambda: {"op": [], "launch": [], "ratios": defaultdict(list)})
    groups: dict[str, list[Record]] = defaultdict(list)
    for path in sorted(results.rglob("*.jsonl")) if results.is_dir() else []:
        for record in read_records(path, warn=lambda message: None):
            if record.key.backend != backend or record.host is None:
                continue
            lease = (record.env.device_name, record.env.machine, record.host.hostname,
                     record.host.boot_id)
            found[lease]["op"].extend(record.host.op_s)
            found[lease]["launch"].extend(record.host.launch_s)
            if record.paired and record.status == "ok":
                groups[record.paired.group].append(record)
    for members in groups.values():
        by_mode = {r.key.mode: r for r in members}
        eager = by_mode.get("eager")
        if eager is None:
            continue
        lease = (eager.env.device_name, eager.env.machine, eager.host.hostname, eager.host.boot_id)
        for mode in GRAPH_MODES:
            if mode in by_mode:
                point = (eager.key.workload, eager.key.batch_size, mode)
                ratio = paired_speedup(eager.paired.round_s, by_mode[mode].paired.round_s)
                found[lease]["ratios"][point].append(ratio)
    return found


def _us(values: list[float]) -> str:
    return f"{statistics.median(values) * 1e6:.2f} us" if values else "not measured"


def main(argv: list[str]) -> int:
    from bench.cli import PROCESS_STARTED, OneLineParser, UsageError

    parser = OneLineParser(prog="python -m bench host", description=__doc__)
    parser.add_argument("--backend", choices=("cuda", "cpu", "mps"),
                        help="default: cuda where there is one, else cpu")
    parser.add_argument("--results", type=Path, default=Path("results"),
                        help="the measured hosts to compare with (default: results)")
    try:
        args = parser.parse_args(argv)
    except UsageError as error:
        print(f"python -m bench host: error: {error}", file=sys.stderr)
        return 2
    started = PROCESS_STARTED
    from bench.backends import available_backends

    here = available_backends()
    backend = args.backend or ("cuda" if "cuda" in here else "cpu")
    if backend not in here:
        print(f"python -m bench host: error: backend {backend!r} is not available here "
              f"(available: {', '.join(here)})", file=sys.stderr)
        return 2
    try:
        hosts = _hosts(args.results, backend)
    except (MalformedRecord, OSError) as error:
        print(f"python -m bench host: error: {error}", file=sys.stderr)
        return 1
    op_s, launch_s, device = _probe(backend)
    mine = statistics.median(op_s)
    print(f"this host ({device}, {backend}): an eager op costs {_us(op_s)} "
          f"(IQR {_iqr_us(op_s)}); a bare kernel launch {_us(launch_s)}")
    measured = sorted(((statistics.median(h["op"]), lease, h) for lease, h in hosts.items()
                       if h["op"]), key=lambda row: row[0])
    if not measured:
        print(f"no {backend} record in {args.results} carries the host probe yet, so there is "
              f"nothing to compare with (measure with python -m bench --profile sentinel)")
    else:
        print(f"\nhosts measured in {args.results} ({backend}), fastest first:")
        for op, (device_name, machine, hostname, boot), _ in measured:
            print(f"  {_us([op]):>12}  {device_name}, machine {machine}, host {hostname} "
                  f"boot {str(boot)[:8]}")
        nearest_op, lease, nearest = min(measured, key=lambda row: abs(row[0] / mine - 1))
        print(f"\n{_verdict(mine, [row[0] for row in measured])}")
        if backend != "cuda":
            print("On a CPU backend the CPU is the device as well: every figure depends on its "
                  "model, core count and load, not only the launch-bound ones.")
        elif nearest["ratios"]:
            print(f"\nhost-dependent speedups measured on the nearest host ({_us([nearest_op])} "
                  f"per eager op; paired, median of processes, graph replay over eager):")
            for (workload, batch, mode), ratios in sorted(nearest["ratios"].items(),
                                                          key=lambda item: str(item[0])):
                size = "" if batch is None else f" batch {batch}"
                print(f"  {workload}{size}: {mode} {statistics.median(ratios):.2f}x "
                      f"({min(ratios):.2f}-{max(ratios):.2f}, {len(ratios)} processes)")
            print("Where eager is launch-bound these grow on a slower host and shrink on a "
                  "faster one; ratios between two launch-bound modes carry over. The site's "
                  "guide marks which figures are which.")
    print(f"\n(took {time.perf_counter() - started:.1f} s)")
    return 0


def _iqr_us(values: list[float]) -> str:
    if len(values) < 2:
        return "-"
    q1, _, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return f"{(q3 - q1) * 1e6:.2f} us"


def _verdict(mine: float, measured: list[float]) -> str:
    fastest, slowest = min(measured), max(measured)
    if mine < fastest * (1 - NEAR):
        return (f"this host dispatches faster than every host measured ({mine / fastest:.2f}x "
                f"the fastest's cost): expect smaller gains from graph replay over eager")
    if mine > slowest * (1 + NEAR):
        return (f"this host dispatches slower than every host measured ({mine / slowest:.2f}x "
                f"the slowest's cost): expect larger gains from graph replay over eager")
    return (f"this host dispatches about as fast as the hosts measured ({mine * 1e6:.2f} us "
            f"against {fastest * 1e6:.2f}-{slowest * 1e6:.2f} us): their launch-bound figures "
            f"apply here")
