"""Timing, for both kinds of case process: time a block of calls, estimate one call, and
(isolated) sample a budget of calls, after triton.testing.do_bench."""

from __future__ import annotations

import math
from collections.abc import Callable

try:
    import resource
except ImportError:  # Windows: no getrusage
    resource = None

from bench.backends import Backend
from bench.records import Timing
from bench.stats import summarize

# Above this a single host-timed call is precise enough, and min_samples of them would
# stretch a case to minutes.
SLOW_CALL_S = 0.05
# The estimate comes from a run of calls this share of the budget long: as long as a paired
# process's (a quarter of its block, which is a tenth of this budget).
ESTIMATE_SHARE = 0.025
ESTIMATE_MAX_CALLS = 4096


def page_faults() -> int | None:
    """Minor page faults this process has taken so far, None where they cannot be read."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt if resource else None


def faults_per_call(before: int | None, calls: int) -> float | None:
    after = page_faults()
    return None if before is None or after is None or calls < 1 else (after - before) / calls


def time_block(call: Callable[[], object], backend: Backend, calls: int) -> float:
    """Seconds that `calls` back-to-back calls took, the device synchronized at both ends."""
    start = backend.clock()
    for _ in range(calls):
        call()
    return backend.clock() - start


def estimate_call_s(call: Callable[[], object], backend: Backend, enough_s: float,
                    max_calls: int = ESTIMATE_MAX_CALLS) -> tuple[float, int]:
    """Seconds per call, and how many calls that took: runs of 1, 2, 4... calls until one
    lasts `enough_s` (or has `max_calls`), since a single call of a few microseconds is
    mostly the clock and the synchronize."""
    calls, made = 1, 0
    while True:
        elapsed = time_block(call, backend, calls)
        made += calls
        if elapsed >= enough_s or calls >= max_calls:
            return max(elapsed / calls, 1e-7), made
        calls *= 2


def measure(call: Callable[[], object], backend: Backend, budget_s: float,
            min_samples: int = 10, max_samples: int = 400,
            target_sample_s: float = 2e-4, known_call_s: float | None = None,
            inner_calls: int = 1) -> Timing:
    """Time `call` for about `budget_s`. Where one `call()` makes `inner_calls` calls of
    the workload (a whole cycle of batch sizes), every figure is per workload call."""
    # The caller has already run `call` at least once, so compilation and cudagraph
    # recording are out of the way; here we only estimate, warm, and time.
    estimate_calls = 0
    if known_call_s is not None and known_call_s > SLOW_CALL_S:
        estimate = known_call_s  # slow calls: a caller's single timing is precise enough
    else:
        estimate, estimate_calls = estimate_call_s(call, backend, ESTIMATE_SHARE * budget_s)
    if estimate > max(budget_s, SLOW_CALL_S):
        min_samples = 5

    # A sample groups enough back-to-back calls to be well above timer resolution,
    # yet stays one call when calls are long so slow cases still get many samples.
    # Short calls also group enough that max_samples span the whole budget: the host's
    # speed drifts over tenths of a second, and a short window catches one moment of it.
    calls_per_sample = max(1, math.ceil(target_sample_s / estimate),
                           math.ceil(budget_s / (max_samples * estimate)))
    samples_wanted = round(budget_s / (estimate * calls_per_sample))
    n_samples = min(max_samples, max(min_samples, samples_wanted))

    # Warm up for about a tenth of the budget: clocks ramp and caches fill.
    warmup_calls = max(1, min(1000, int(0.1 * budget_s / estimate)))
    for _ in range(warmup_calls):
        call()

    faults = page_faults()
    wall_start = backend.clock()
    if backend.event_timer:
        # Events on the default stream measure device time between them without a
        # host synchronize per sample, which would hide launch pipelining.
        pairs = [(backend.new_event(), backend.new_event()) for _ in range(n_samples)]
        for begin, end in pairs:
            begin.record()
            for _ in range(calls_per_sample):
                call()
            end.record()
        wall = backend.clock() - wall_start
        samples = [b.elapsed_time(e) / 1e3 / calls_per_sample for b, e in pairs]
    else:
        samples = [time_block(call, backend, calls_per_sample) / calls_per_sample
                   for _ in range(n_samples)]
        wall = backend.clock() - wall_start
    calls = n_samples * calls_per_sample * inner_calls
    faults = faults_per_call(faults, calls)

    samples = [s / inner_calls for s in samples]
    return Timing(
        samples=tuple(samples),
        calls_per_sample=calls_per_sample * inner_calls,
        warmup_calls=(warmup_calls + estimate_calls) * inner_calls,
        wall_per_call_s=wall / calls,
        timer="cuda-event" if backend.event_timer else "perf-counter",
        page_faults_per_call=faults,
        **summarize(samples),
    )
