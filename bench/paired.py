"""Measure every mode of one case in one process, in alternating rounds: `main([SPEC, RESULT])`.

Timed alone, a launch-bound mode's latency follows the host process it ran in: the same
case can read 1.4 ms in one process and 2.3 ms in the next. Timed side by side in one
process, two modes see the same host, so their ratio repeats where their absolute times do
not (PyTorch's dynamo benchmarks alternate eager and compiled for the same reason).

The process builds and warms every mode in a random order, then runs R rounds. Each round
times every surviving mode once, as a block of back-to-back calls of about `block_s` with
the device synchronized at both ends, plus one block of the host-speed probe, all in a
fresh random order. A mode that fails (OOM, a compile error) is recorded with its reason
and leaves the rounds; the others go on.

After its rounds, each mode is profiled for a few calls, as an isolated process profiles
its case: kernels and launches per call and the busy fraction depend on the compiled code,
not on what ran before it, so every paired process adds one more reading of them. Compile
times, memory and Dynamo's counters are not taken here: a mode built after another
inherits its imports, Triton state, allocator pools and counters. The runner's isolated
processes measure those.

The result holds, per mode, the sections of a record (`modes`), and `host`.
"""

from __future__ import annotations

import contextlib
import math
import random
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import torch

from bench import core
from bench.backends import BACKENDS, Backend
from bench.host.probe import LONG_BLOCKS, Fingerprint, Probe
from bench.modes import MODES, Mode
from bench.observe import headers_built, precompiled_headers
from bench.spec import PairedSpec, write_result
from bench.stats import summarize
from bench.timer import estimate_call_s, page_faults, time_block
from bench.workloads import lookup

# Rounds stop being added once they would take longer than this, but never fall below
# MIN_ROUNDS: a case whose one call takes seconds (a large model on a CPU) still ends.
ROUNDS_CAP_S = 120.0
MIN_ROUNDS = 5


@dataclass
class Member:
    """One mode of the group, built and compiled, with its share of the rounds."""

    mode: Mode
    position: int
    entry: dict
    call: core.Cycle | None = None
    built: object = None
    call_fn: object = None
    per_call_s: float = 0.0
    calls_per_block: int = 1
    round_s: list[float] = field(default_factory=list)
    round_position: list[int] = field(default_factory=list)
    wall_s: float = 0.0
    calls: int = 0
    faults: int = 0

    def block(self, backend: Backend) -> float:
        before = page_faults()
        elapsed = time_block(self.call, backend, self.calls_per_block)
        if before is not None:  # None: this platform cannot count them
            self.faults += page_faults() - before
        self.wall_s += elapsed
        self.calls += self.calls_per_block
        return elapsed / (self.calls_per_block * self.inner)

    @property
    def inner(self) -> int:
        return len(self.call)


def _fail(member: Member, stage: str, error: BaseException) -> None:
    status = "oom" if isinstance(error, torch.cuda.OutOfMemoryError) else "error"
    member.entry.update(status=status, reason=f"during {stage}: {core.failure(error)}")
    member.call = member.built = member.call_fn = None


def _set_up(member: Member, workload, backend: Backend, spec: PairedSpec) -> None:
    """Build, compile and warm one mode; its first calls are kept, marked by position."""
    device = torch.device(backend.device)
    built = core.build(workload, device, spec.key)
    core.refuse_zero_inputs(built)
    member.built = built
    member.entry["workload_info"] = core.workload_info(workload, built, spec.key)
    member.call_fn = member.mode.prepare(built.fn, built.inputs)
    member.call = call = core.Cycle(member.call_fn, built)  # times are divided by its length
    first, headers = [], precompiled_headers()
    for _ in range(max(2, 3 // len(call))):  # compile, record graphs, then one steady call
        first.append(time_block(call, backend, 1) / len(call))
    member.entry["compile"] = {"cold_first_call_s": first[0], "warm_first_call_s": None,
                               "cold_first_calls_s": first,
                               "headers_built": headers_built(headers)}
    member.per_call_s, _ = estimate_call_s(call, backend, spec.block_s / 4)
    member.calls_per_block = max(1, math.ceil(spec.block_s / member.per_call_s))
    if built.steps is not None:
        # After the rounds a training mode has taken thousands of steps, as many as its
        # speed allowed: float32 and float64 trajectories have parted by then, the faster
        # mode the furthest, so the check would grade speed. Check it after warm-up, where
        # an isolated process checks it.
        _check(member, workload, backend, spec)


def _rounds_to_run(members: list[Member], spec: PairedSpec) -> int:
    per_round = sum(m.per_call_s * m.calls_per_block for m in members)
    fit = int(ROUNDS_CAP_S / per_round) if per_round > 0 else spec.rounds
    return max(min(spec.rounds, fit), min(MIN_ROUNDS, spec.rounds))


def _time_rounds(members: list[Member], backend: Backend, probe: Probe, rounds: int,
                 rng: random.Random) -> None:
    for member in members:  # one untimed block each: clocks ramp, allocator pools fill
        try:
            member.block(backend)
        except Exception as error:  # noqa: BLE001 - one failing mode leaves the rest
            _fail(member, "warm-up", error)
        member.wall_s, member.calls, member.faults = 0.0, 0, 0
    probe.block()
    probe.op_s.clear(), probe.launch_s.clear()
    # A long probe block every few rounds, LONG_BLOCKS in all, spread over the rounds.
    long_every = max(1, math.ceil(rounds / LONG_BLOCKS))
    for number in range(rounds):
        alive = [m for m in members if m.call is not None]
        if not alive:
            return
        order: list[Member | None] = [*alive, None]  # None: the host probe's block
        rng.shuffle(order)
        for position, member in enumerate(order):
            if member is None:
                probe.block()
                if number % long_every == 0:
                    probe.long_block()
                continue
            try:
                seconds = member.block(backend)
            except Exception as error:  # noqa: BLE001 - one failing mode leaves the rest
                _fail(member, "timing", error)
                continue
            member.round_s.append(seconds)
            member.round_position.append(position)


def _finish(member: Member, workload, backend: Backend, spec: PairedSpec,
            modes: list[str], rounds: int) -> None:
    """The mode's timing from its rounds, and its output checked after the rounds: other
    modes ran between its calls, which is what could corrupt a replayed graph's output.
    A training mode was checked before the rounds (see `_set_up`)."""
    entry = member.entry
    if member.call is None:
        return
    if not member.round_s:
        entry.update(status="error", reason="no round was timed")
        return
    samples = member.round_s
    wall_per_call_s = member.wall_s / (member.calls * member.inner)
    entry["timing"] = summarize(samples) | {
        "samples": samples, "calls_per_sample": member.calls_per_block * member.inner,
        "warmup_calls": (member.calls_per_block + len(member.entry["compile"]["cold_first_calls_s"]))
        * member.inner,
        "wall_per_call_s": wall_per_call_s, "timer": "perf-counter",
        "page_faults_per_call": None if page_faults() is None
        else member.faults / (member.calls * member.inner)}
    entry["paired"] = {"group": spec.group, "modes": modes, "build_position": member.position,
                       "rounds_planned": rounds,
                       "calls_per_block": member.calls_per_block * member.inner,
                       "round_s": samples, "round_position": member.round_position}
    try:
        entry["activity"] = core.profile(member.call, backend, wall_per_call_s, member.inner)
    except Exception as error:  # noqa: BLE001 - as in an isolated process, the mode fails
        _fail(member, "profiler", error)
        return
    if member.built.steps is None:
        _check(member, workload, backend, spec)


def _check(member: Member, workload, backend: Backend, spec: PairedSpec) -> None:
    try:
        device = torch.device(backend.device)
        member.entry["correctness"], notes = core.check_against_float64(
            workload, member.built, member.call_fn, device, spec.key)
        if notes:
            member.entry["probes"] = notes
    except Exception as error:  # noqa: BLE001
        _fail(member, "correctness", error)


def run(spec: PairedSpec, result: dict) -> None:
    backend = BACKENDS[spec.key.backend]
    workload = lookup(spec.key.workload)
    rng = random.Random(spec.group)
    fingerprint, probe = Fingerprint(backend), Probe(backend)
    order = list(spec.modes)
    rng.shuffle(order)  # no mode is always the one built into a fresh process
    members = [Member(MODES[name], position, result["modes"].setdefault(name, {}))
               for position, name in enumerate(order)]
    for member in members:
        member.entry.update(status="ok", reason=None)
    with contextlib.nullcontext() if workload.training else torch.no_grad():
        for member in members:
            reason = core.unsupported(workload, member.mode)
            if reason:
                member.entry.update(status="unsupported", reason=reason)
                continue
            try:
                _set_up(member, workload, backend, spec)
            except Exception as error:  # noqa: BLE001 - recorded; the other modes go on
                _fail(member, "setup", error)
                if backend.name == "cuda":
                    torch.cuda.empty_cache()
        ready = [m for m in members if m.call is not None]
        rounds = _rounds_to_run(ready, spec) if ready else 0
        _time_rounds(ready, backend, probe, rounds, rng)
        for member in ready:
            _finish(member, workload, backend, spec, order, rounds)
    result["host"] = fingerprint.host(probe)


def main(argv: list[str]) -> int:
    spec_path, result_path = Path(argv[0]), Path(argv[1])
    result: dict = {"status": "ok", "reason": None, "modes": {}}
    started = time.perf_counter()
    try:
        run(PairedSpec.from_json(spec_path.read_text()), result)
    except Exception as error:  # noqa: BLE001 - the group as a whole failed (a bad spec)
        result.update(status="error", reason=core.failure(error))
    result["duration_s"] = time.perf_counter() - started
    write_result(result_path, result, modes={})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
