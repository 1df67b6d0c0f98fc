"""Shape streams: seeded, recorded sequences of input sizes drawn from a stated distribution.

A stream is data: its name, the input dimension that varies, the distribution it draws
from (stated in words in every record), its seed and its length. `sizes()` draws it with
`random.Random(seed)`, so the same stream replays the same sizes on any machine; the record
keeps the sizes too. A slower backend takes fewer calls: the first ones of the same
sequence. Tiny shapes (tests, smoke runs) draw from a distribution of their own, small
enough for the tiny models (whose text models take 64 positions at most).

Standard library only.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from enum import IntEnum


class Varying(IntEnum):
    """How a workload's shapes vary from call to call (Workload.varying_shapes). False and
    True compare as FIXED and CYCLE, so a test of truth still reads 'shapes vary'."""

    FIXED = 0  # one shape
    CYCLE = 1  # a fixed cycle of batch sizes, timed in steady state (dynamic-mlp)
    STREAM = 2  # a recorded shape stream, measured pass by pass from a fresh process


@dataclass(frozen=True)
class LogNormal:
    """Sizes whose logarithm is normal: `median` and `sigma` (of the logarithm), each drawn
    size rounded and then clipped to `low`..`high`, as prompt lengths of a chat or retrieval
    service spread: most are short, a few are long."""

    median: int
    sigma: float
    low: int
    high: int

    def draw(self, rng: random.Random, count: int) -> tuple[int, ...]:
        mu = math.log(self.median)
        return tuple(min(self.high, max(self.low, round(rng.lognormvariate(mu, self.sigma))))
                     for _ in range(count))

    @property
    def bounds(self) -> tuple[int, int]:
        return self.low, self.high

    def describe(self) -> str:
        return (f"log-normal, median {self.median}, sigma {self.sigma:g} (of the logarithm), "
                f"clipped to {self.low}-{self.high}")


@dataclass(frozen=True)
class Uniform:
    """Whole sizes from `low` to `high`, each as likely: batches that a server's dynamic
    batching closes at any fill."""

    low: int
    high: int

    def draw(self, rng: random.Random, count: int) -> tuple[int, ...]:
        return tuple(rng.randint(self.low, self.high) for _ in range(count))

    @property
    def bounds(self) -> tuple[int, int]:
        return self.low, self.high

    def describe(self) -> str:
        return f"uniform whole numbers {self.low}-{self.high}"


@dataclass(frozen=True)
class Cycle:
    """`values` in turn, over and over (the seed draws nothing)."""

    values: tuple[int, ...]

    def draw(self, rng: random.Random, count: int) -> tuple[int, ...]:
        return tuple(self.values[i % len(self.values)] for i in range(count))

    @property
    def bounds(self) -> tuple[int, int]:
        return min(self.values), max(self.values)

    def describe(self) -> str:
        return f"the cycle {', '.join(map(str, self.values))}, repeated"


Distribution = LogNormal | Uniform | Cycle
DIMS = ("sequence", "batch")


@dataclass(frozen=True)
class Stream:
    name: str
    dim: str  # the input dimension whose size varies: "sequence" or "batch"
    distribution: Distribution
    tiny: Distribution  # what tiny shapes draw from
    seed: int = 0
    calls: int = 100
    calls_on: dict[str, int] = field(default_factory=dict)  # fewer on a slow backend
    # Smaller sizes on a backend that cannot make the stream's largest calls in minutes
    # (every record states what its sizes were drawn from).
    distribution_on: dict[str, Distribution] = field(default_factory=dict)
    tiny_calls: int = 16

    def __post_init__(self) -> None:
        if self.dim not in DIMS:
            raise ValueError(f"stream {self.name}: dim {self.dim!r} is not one of {DIMS}")
        if min(self.calls, self.tiny_calls, *self.calls_on.values()) < 1:
            raise ValueError(f"stream {self.name}: every length must be 1 or more")

    def length(self, backend: str, tiny: bool) -> int:
        return self.tiny_calls if tiny else self.calls_on.get(backend, self.calls)

    def drawn_from(self, backend: str, tiny: bool) -> Distribution:
        return self.tiny if tiny else self.distribution_on.get(backend, self.distribution)

    def sizes(self, backend: str, tiny: bool) -> tuple[int, ...]:
        """The stream's sizes, call by call: the same for the same seed, everywhere. A
        shorter stream from the same distribution is the start of the longer one."""
        return self.drawn_from(backend, tiny).draw(random.Random(self.seed),
                                                   self.length(backend, tiny))

    def describe(self, backend: str, tiny: bool) -> str:
        return f"{self.dim} {self.drawn_from(backend, tiny).describe()}"


def distinct(sizes: tuple[int, ...]) -> tuple[int, ...]:
    """The sizes in the order each first appears."""
    return tuple(dict.fromkeys(sizes))
