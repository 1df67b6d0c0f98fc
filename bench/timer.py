"""One steady-state timer, after triton.testing.do_bench."""

from __future__ import annotations

import math
import time
from collections.abc import Callable

from bench.backends import Backend
from bench.records import Timing
from bench.stats import summarize

# Above this a single host-timed call is precise enough, and min_samples of them would
# stretch a case to minutes.
SLOW_CALL_S = 0.05


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
        estimate_calls = 5
        start = backend.clock()
        for _ in range(estimate_calls):
            call()
        estimate = max((backend.clock() - start) / estimate_calls, 1e-7)
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
        samples = []
        for _ in range(n_samples):
            begin = time.perf_counter()
            for _ in range(calls_per_sample):
                call()
            backend.synchronize()
            samples.append((time.perf_counter() - begin) / calls_per_sample)
        wall = backend.clock() - wall_start

    samples = [s / inner_calls for s in samples]
    return Timing(
        samples=tuple(samples),
        calls_per_sample=calls_per_sample * inner_calls,
        warmup_calls=(warmup_calls + estimate_calls) * inner_calls,
        wall_per_call_s=wall / (n_samples * calls_per_sample * inner_calls),
        timer="cuda-event" if backend.event_timer else "perf-counter",
        **summarize(samples),
    )
