"""The steady-state timer on CPU, against calls whose duration is known."""

from __future__ import annotations

import dataclasses
import time

import pytest

from bench.backends import CPU
from bench.stats import summarize
from bench.timer import measure

SLEEP_S = 0.005


class Counted:
    """A call that counts how often it ran, optionally sleeping a fixed time."""

    def __init__(self, sleep_s: float = 0.0) -> None:
        self.sleep_s, self.calls = sleep_s, 0

    def __call__(self) -> None:
        self.calls += 1
        if self.sleep_s:
            time.sleep(self.sleep_s)


@pytest.fixture(scope="module")
def sleepy():
    call = Counted(SLEEP_S)
    return call, measure(call, CPU, budget_s=0.1)


@pytest.fixture(scope="module")
def fast():
    call = Counted()
    return call, measure(call, CPU, budget_s=0.02)


def test_median_of_a_sleeping_call_is_close_to_its_duration(sleepy):
    _, timing = sleepy
    # sleep() never returns early; a loaded, niced machine may wake it late.
    assert SLEEP_S <= timing.median_s < 3 * SLEEP_S
    assert min(timing.samples) >= SLEEP_S


def test_slow_call_is_one_call_per_sample(sleepy):
    assert sleepy[1].calls_per_sample == 1


def test_very_fast_call_groups_many_calls_per_sample(fast):
    _, timing = fast
    assert timing.calls_per_sample > 1


@pytest.mark.parametrize("which", ["sleepy", "fast"])
def test_sample_count_is_within_bounds(which, request):
    timing = request.getfixturevalue(which)[1]
    assert 10 <= timing.count == len(timing.samples) <= 400


@pytest.mark.parametrize("which", ["sleepy", "fast"])
def test_summary_fields_are_derived_from_the_samples(which, request):
    timing = request.getfixturevalue(which)[1]
    assert {name: getattr(timing, name) for name in summarize(timing.samples)} == summarize(
        timing.samples)


@pytest.mark.parametrize("which", ["sleepy", "fast"])
def test_every_call_is_either_warmup_or_timed(which, request):
    call, timing = request.getfixturevalue(which)
    assert call.calls == timing.warmup_calls + timing.count * timing.calls_per_sample


def test_cpu_timer_is_the_host_clock(fast):
    _, timing = fast
    assert timing.timer == "perf-counter"
    assert timing.wall_per_call_s > 0


def test_tiny_budget_still_takes_min_samples():
    timing = measure(Counted(), CPU, budget_s=1e-6, min_samples=7)
    assert timing.count == 7


def test_large_budget_is_capped_at_max_samples():
    timing = measure(Counted(), CPU, budget_s=0.05, max_samples=20)
    assert timing.count == 20


def test_a_slow_known_call_time_replaces_the_estimate_calls():
    call = Counted(0.06)
    timing = measure(call, CPU, budget_s=0.01, known_call_s=0.06)
    # no estimate calls: one warm-up call, then the (fewer, since slow) samples
    assert timing.warmup_calls == 1
    assert call.calls == 1 + timing.count
    assert timing.count == 5


def test_capped_samples_of_a_short_call_still_span_the_budget():
    # 100 µs calls, 20 samples at most: the samples must still cover ~0.2 s, not 20 calls.
    # On a simulated clock, since a busy host stretches a real 100 µs sleep many times over.
    now = [0.0]

    def call() -> None:
        now[0] += 1e-4

    backend = dataclasses.replace(CPU)
    object.__setattr__(backend, "clock", lambda: now[0])
    timing = measure(call, backend, budget_s=0.2, max_samples=20, target_sample_s=1e-4)
    # Rounding the grouped calls up can leave one sample fewer than the cap.
    assert 19 <= timing.count <= 20
    assert timing.wall_per_call_s == pytest.approx(1e-4)
    timed_s = timing.count * timing.calls_per_sample * timing.wall_per_call_s
    assert 0.19 <= timed_s <= 0.21  # 20 single calls would span 2 ms


def test_a_call_making_several_workload_calls_is_timed_per_workload_call():
    # One call() runs a whole cycle of 4 workload calls of SLEEP_S each.
    call = Counted(4 * SLEEP_S)
    timing = measure(call, CPU, budget_s=0.1, inner_calls=4)
    assert SLEEP_S <= timing.median_s < 3 * SLEEP_S
    assert timing.calls_per_sample % 4 == 0
    assert 4 * call.calls == timing.warmup_calls + timing.count * timing.calls_per_sample
