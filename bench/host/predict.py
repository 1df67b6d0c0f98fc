"""`python -m bench host`: how fast this host dispatches eager work, and what that predicts.

A launch-bound figure (eager or default on small work) is set by the CPU that issues the
kernels. This times the same probe every benchmark process records (bench/host/probe.py), sets it
beside the hosts in the results folder, and predicts each host-dependent speedup of this GPU
type at this host's probe from the host model (bench/host/model.py), with its band. It refuses
to predict outside the probe values the model was fitted on, and says how far outside.

With --device and --op-us it predicts for a GPU type from the records alone: this module
then imports no torch (bench.backends and the probe are imported only where the probe is
timed or the device here is asked), so `predict.main` runs where torch is not installed.
"""

from __future__ import annotations

import json
import math
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

from bench.cmdline import PROCESS_STARTED, OneLineParser, UsageError, positive
from bench.host import model as host_model
from bench.records import CaseKey, MalformedRecord, Record, read_records, results_files
from bench.stats import paired_speedup

BLOCKS = 60  # 60 blocks of about 10 ms: a few seconds, with the import of torch the most of it
GRAPH_MODES = ("reduce-overhead", "cuda-graph")
DEFAULT_DTYPE = CaseKey.dtype  # a line names a case's dtype only where it is another


def _device(backend_name: str) -> str:
    import torch

    from bench.environment import cpu_model

    return torch.cuda.get_device_name(0) if backend_name == "cuda" else cpu_model()


def _probe(backend_name: str) -> tuple[list[float], list[float]]:
    from bench.backends import BACKENDS
    from bench.host.probe import Probe

    backend = BACKENDS[backend_name]
    probe = Probe(backend)
    probe.block()
    probe.op_s.clear(), probe.launch_s.clear()
    for _ in range(BLOCKS):
        probe.block()
    from bench.host.probe import LONG_BLOCKS

    # The long blocks are the probe the records' processes were fitted on, where they have
    # them (host_model.probe_of_row): a time-sliced host's preemptions kept.
    for _ in range(LONG_BLOCKS):
        probe.long_block()
    return probe.op_long_s or probe.op_s, probe.launch_s


def _records(results: Path) -> list[Record]:
    return [record for path in results_files(results, recursive=True)
            for record in read_records(path, warn=lambda message: None)]


def _models(records: list[Record]) -> tuple[list[host_model.SpeedupModel], set]:
    """The host model of every host-dependent case in `records`, as the site publishes it,
    and those a slowed host measured outside their band (not predictable)."""
    rows = [host_model.row_of(record) for record in records]
    models = host_model.fit(rows).models
    slowed = host_model.slowed(host_model.processes(rows, host_model.SLOWED_TAGS), models)
    return models, {id(check.model) for check in slowed if not check.inside}


def _hosts(records: list[Record]) -> dict[tuple, dict]:
    """Per measured host (machine, host name, boot): its probe medians and paired ratios
    of a graph-replayed mode over eager where eager was launch-bound."""
    found: dict[tuple, dict] = defaultdict(lambda: {"op": [], "launch": [], "ratios": defaultdict(list)})
    groups: dict[str, list[Record]] = defaultdict(list)
    for record in records:
        if record.host is None:
            continue
        lease = (record.env.device_name, record.env.machine, record.host.hostname,
                 record.host.boot_id)
        # Each process's median, then their median: a lease's probe as the reference host
        # (host_model.references) takes it, so the two never print different figures.
        if record.host.op_s:
            found[lease]["op"].append(host_model.probe_of(record.host.op_long_s or record.host.op_s))
        if record.host.launch_s:
            found[lease]["launch"].append(statistics.median(record.host.launch_s))
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
    parser = OneLineParser(prog="python -m bench host", description=__doc__)
    parser.add_argument("--backend", choices=("cuda", "cpu", "mps"),
                        help="default: the backend --device was measured on, else cuda where "
                             "there is one, else cpu")
    parser.add_argument("--results", type=Path, default=Path("results"),
                        help="the measured hosts to compare with (default: results)")
    parser.add_argument("--workload", help="predict this workload's host-dependent speedups only")
    parser.add_argument("--op-us", type=positive, metavar="US",
                        help="an eager op's cost on your host in microseconds, as this command "
                             "printed it, instead of timing the probe here; with --device, "
                             "no GPU is needed")
    parser.add_argument("--device", metavar="NAME",
                        help="predict for this GPU type (or CPU model) as the records name it, "
                             "e.g. \"NVIDIA H100 80GB HBM3\", instead of the one here")
    parser.add_argument("--json", action="store_true",
                        help="print the predictions as JSON: the reference host and one object "
                             "per host-dependent case, with its status")
    try:
        args = parser.parse_args(argv)
    except UsageError as error:
        return _error(str(error), 2)
    started = PROCESS_STARTED
    try:
        every = _records(args.results)
    except (MalformedRecord, OSError) as error:
        return _error(str(error), 1)
    backend = args.backend or _measured_backend(every, args.device)
    if backend is None:
        devices = sorted({r.env.device_name for r in every})
        return _error(f"no record in {args.results} names the device {args.device!r} "
                      f"(devices measured: {', '.join(devices) or 'none'})", 2)
    if args.op_us is None or args.device is None:  # the probe or the device is this host's
        from bench.backends import available_backends

        here = available_backends()
        if backend not in here:
            return _error(f"backend {backend!r} is not available here (available: "
                          f"{', '.join(here)}); name the device with --device and give "
                          f"--op-us to predict without it", 2)
    records = [r for r in every if r.key.backend == backend]
    hosts, (models, unpredictable) = _hosts(records), _models(records)
    if args.workload is not None and args.workload not in {m.workload for m in models}:
        known = sorted({m.workload for m in models})
        return _error(f"workload {args.workload!r} has no host model in {args.results} on "
                      f"{backend} (workloads with one: {', '.join(known) or 'none'})", 2)
    device = args.device or _device(backend)
    op_s, launch_s = ([args.op_us * 1e-6], []) if args.op_us else _probe(backend)
    mine = host_model.probe_of(op_s)
    rows = [host_model.row_of(record) for record in records]
    reference = host_model.references(rows).get(device)
    mine_models = [m for m in models if m.device_name == device
                   and (args.workload is None or m.workload == args.workload)]
    without = [key for key in _unmodelled(rows, models, device)
               if args.workload is None or key[1] == args.workload]
    if args.json:
        print(json.dumps(predictions_json(device, backend, mine, reference, mine_models,
                                          without, unpredictable, given=bool(args.op_us)),
                         indent=1))
        return 0
    given = " (given with --op-us)" if args.op_us else f" (IQR {_iqr_us(op_s)})"
    whose = "the host given" if args.op_us and args.device else "this host"
    print(f"{whose} ({device}, {backend}): an eager op costs {_us(op_s)}{given}; "
          f"a bare kernel launch {_us(launch_s)}")
    if host_model.time_sliced(mine, statistics.fmean(op_s)):
        print(time_sliced_line(mine, statistics.fmean(op_s)))
    # The hosts of the GPU type predicted for, where it has any: another GPU type's hosts
    # say nothing of how fast this one's are.
    mine_hosts = {lease: h for lease, h in hosts.items() if lease[0] == device} or hosts
    measured = sorted(((statistics.median(h["op"]), lease, h) for lease, h in mine_hosts.items()
                       if h["op"]), key=lambda row: row[0])
    if not measured:
        print(f"no {backend} record in {args.results} carries the host probe yet, so there is "
              f"nothing to compare with (measure with python -m bench --profile sentinel)")
    else:
        print(f"\nhosts measured in {args.results} ({backend}), fastest first:")
        for op, (device_name, machine, hostname, boot), _ in measured:
            print(f"  {_us([op]):>12}  {device_name}, machine {machine}, host {hostname} "
                  f"boot {str(boot)[:8]}")
        print(f"\n{_verdict(mine, [row[0] for row in measured])}")
        if backend != "cuda":
            print("On a CPU backend the CPU is the device as well: every figure depends on its "
                  "model, core count and load, not only the launch-bound ones.")
    if reference is not None:
        print(f"\n{reference_line(reference)}")
    if mine_models:
        print()
        print("\n".join(prediction_lines(mine_models, mine, unpredictable)))
    elif measured:
        _nearest(mine, measured, backend, device, models)
    if without:
        print(f"\nhost-dependent on {device} without a host model (fewer than "
              f"{host_model.MIN_PROCESSES} paired processes a side), so not predicted: "
              + "; ".join(f"{workload}{'' if batch is None else f' batch {batch}'} {dtype}, {mode}"
                          for _, workload, batch, _, dtype, mode in without))
    print(f"\n(took {time.perf_counter() - started:.1f} s)")
    return 0


def _error(message: str, code: int) -> int:
    print(f"python -m bench host: error: {message}", file=sys.stderr)
    return code


def _measured_backend(records: list[Record], device: str | None) -> str | None:
    """The backend `device` was measured on (the first in the records' order), or, without a
    device, the one this host offers: cuda where there is one, else cpu."""
    if device is None:
        from bench.backends import available_backends

        return "cuda" if "cuda" in available_backends() else "cpu"
    return next((r.key.backend for r in records if r.env.device_name == device), None)


def _unmodelled(rows: list[dict], models: list[host_model.SpeedupModel], device: str) -> list[tuple]:
    """The host-dependent cases (`host_model.case_key`) of `device` without a host model."""
    modelled = {(m.env_id, *m.point, m.mode) for m in models}
    on_device = {row["env_id"] for row in rows if row["device_name"] == device}
    return [key for key in host_model.host_dependent(host_model.sides(rows))
            if key[0] in on_device and key not in modelled]


PREDICTED, OUTSIDE, NO_MODEL = "predicted", "outside the measured range", "no host model"


def predictions_json(device: str, backend: str, probe_s: float,
                     reference: host_model.Reference | None,
                     models: list[host_model.SpeedupModel], without: list[tuple],
                     unpredictable: set = frozenset(), *, given: bool) -> dict:
    """What --json prints: the probe predicted at, the GPU type's reference host, and one
    object per host-dependent case: `status` PREDICTED (speedup, low, high: None where the
    band has no top), OUTSIDE (`outside_us` says how far) or NO_MODEL; `probe_lo_us` and
    `probe_hi_us`, the probes the model was fitted on."""
    cases = []
    for model in sorted(models, key=lambda m: (m.workload, m.batch_size or 0, m.dtype, m.mode)):
        lo, hi = model.probe_range_s
        outside = model.outside(probe_s)
        found = None if outside else model.at(probe_s)
        cases.append({"env_id": model.env_id, "torch": model.torch, "workload": model.workload,
                      "batch_size": model.batch_size, "dtype": model.dtype, "mode": model.mode,
                      "status": OUTSIDE if outside else PREDICTED,
                      "speedup": found and found.speedup, "low": found and found.low,
                      "high": found and (None if math.isinf(found.high) else found.high),
                      "outside_us": outside * 1e6, "probe_lo_us": lo * 1e6, "probe_hi_us": hi * 1e6,
                      "processes": model.processes,
                      "leases": max(line.leases for line in model.lines),
                      "estimator": model.estimator,
                      "slowed_host_outside_band": id(model) in unpredictable})
    for env_id, workload, batch, _, dtype, mode in without:
        cases.append({"env_id": env_id, "torch": None, "workload": workload, "batch_size": batch,
                      "dtype": dtype, "mode": mode, "status": NO_MODEL, "speedup": None,
                      "low": None, "high": None, "outside_us": None, "probe_lo_us": None,
                      "probe_hi_us": None, "processes": None, "leases": None,
                      "estimator": None, "slowed_host_outside_band": False})
    return {"device": device, "backend": backend, "op_us": probe_s * 1e6, "op_given": given,
            "band_probability": host_model.BAND,
            "reference": None if reference is None else {
                "probe_us": reference.probe_s * 1e6, "lo_us": reference.lo_s * 1e6,
                "hi_us": reference.hi_s * 1e6, "leases": reference.leases},
            "cases": cases}


def reference_line(reference: host_model.Reference) -> str:
    return (f"reference host for {reference.device_name}: {reference.probe_s * 1e6:.2f} us per "
            f"eager op, the median of {reference.leases} leases measured "
            f"({reference.lo_s * 1e6:.2f}-{reference.hi_s * 1e6:.2f} us)")


def prediction_lines(models: list[host_model.SpeedupModel], probe_s: float,
                     unpredictable: set = frozenset()) -> list[str]:
    """Each model's speedup predicted at `probe_s` with its band, or why it is not predicted;
    a model whose id is in `unpredictable` is marked so (a slowed host fell outside its band)."""
    lines = [f"speedups over eager predicted at {probe_s * 1e6:.2f} us per eager op "
             f"(host model: the host-bound side's time as a line of the probe, fitted on the "
             f"measured processes; {host_model.BAND:.0%} band):"]
    for model in sorted(models, key=lambda m: (m.workload, m.batch_size or 0, m.mode)):
        size = "" if model.batch_size is None else f" batch {model.batch_size}"
        size += "" if model.dtype == DEFAULT_DTYPE else f" {model.dtype}"
        lo, hi = model.probe_range_s
        fitted = (f"measured range {lo * 1e6:.2f}-{hi * 1e6:.2f} us, {model.processes} "
                  f"processes, {max(line.leases for line in model.lines)} leases")
        outside = model.outside(probe_s)  # first: far outside, the band overflows a float
        if outside:
            edge, side = (hi, "above") if outside > 0 else (lo, "below")
            lines.append(f"  {model.workload}{size}, {model.mode}: not predicted, outside the "
                         f"measured range: {abs(outside) * 1e6:.2f} us "
                         f"({abs(outside) / edge:.0%}) {side} it ({fitted})")
        else:
            found = model.at(probe_s)
            high = "unbounded" if found.high == float("inf") else f"{found.high:.2f}x"
            lines.append(f"  {model.workload}{size}, {model.mode}: {found.speedup:.2f}x "
                         f"({found.low:.2f}x-{high}; {fitted})")
        if id(model) in unpredictable:
            lines[-1] += "; not predictable: a slowed host measured it outside its band"
    return lines


def time_sliced_line(probe_s: float, probe_mean_s: float) -> str:
    """Why the predictions below may be too low where the probe's blocks averaged more than
    NEAR above their median (`host_model.time_sliced`)."""
    return (f"but its blocks averaged {probe_mean_s * 1e6:.2f} us ({probe_mean_s / probe_s:.1f}x "
            f"the median): preemptions cut some of them, the host time-slices this process. "
            f"The median leaves the cuts out and a mode's longer blocks do not, so here the "
            f"probe under-reports an eager op's cost and the predictions below are too low")


def _nearest(mine: float, measured: list, backend: str, device: str,
             models: list[host_model.SpeedupModel]) -> None:
    """Without a host model for this GPU type: the host-dependent speedups measured on the
    host nearest to this one."""
    if backend != "cuda":
        return
    modelled = sorted({m.device_name for m in models})
    if modelled:
        print(f"\nno host model for {device}; the results model {', '.join(modelled)}")
    nearest_op, lease, nearest = min(measured, key=lambda row: abs(row[0] / mine - 1))
    if not nearest["ratios"]:
        return
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


def _iqr_us(values: list[float]) -> str:
    if len(values) < 2:
        return "-"
    q1, _, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return f"{(q3 - q1) * 1e6:.2f} us"


def _verdict(mine: float, measured: list[float]) -> str:
    fastest, slowest = min(measured), max(measured)
    if mine < fastest * (1 - host_model.NEAR):
        return (f"this host dispatches faster than every host measured ({mine / fastest:.2f}x "
                f"the fastest's cost): expect smaller gains from graph replay over eager")
    if mine > slowest * (1 + host_model.NEAR):
        return (f"this host dispatches slower than every host measured ({mine / slowest:.2f}x "
                f"the slowest's cost): expect larger gains from graph replay over eager")
    return (f"this host dispatches about as fast as the hosts measured ({mine * 1e6:.2f} us "
            f"against {fastest * 1e6:.2f}-{slowest * 1e6:.2f} us): their launch-bound figures "
            f"apply here")
