"""Names the engine uses, and the order pages show them in.

Orders are preferences only: anything seen in the records but not listed here is
still shown, after the listed names, so a new mode or workload needs no change.
"""

from __future__ import annotations

import re

BACKENDS = ("cuda", "cpu", "mps")

MODES = (
    "eager",
    "default",
    "reduce-overhead",
    "max-autotune-no-cudagraphs",
    "max-autotune",
    "cuda-graph",
)
BASELINE_MODE = "eager"

# Families from simplest to most model-like, the order a reader builds intuition in.
FAMILIES = (
    "launch-overhead",
    "matmul",
    "matmul-softmax",
    "elementwise",
    "entropy",
    "mlp",
    "conv",
    "vit",
)

# Only "seed" shapes are real measurements; "tiny" shrinks every shape for tests.
SHOWN_SHAPES = "seed"
MAIN_TAG = "main"

# The launch-overhead microbenchmarks are found by name: launch-chain-N runs N
# tiny kernels back to back, trivial-call is one tiny op.
_LAUNCH_CHAIN = re.compile(r"^launch-chain-(\d+)$")
TRIVIAL_CALL = "trivial-call"


def chain_length(workload: str) -> int | None:
    match = _LAUNCH_CHAIN.match(workload)
    return int(match.group(1)) if match else None


def ordered(seen, preferred) -> list:
    """`seen` in the order of `preferred`, unknown names after them, sorted naturally."""
    seen = set(seen)
    known = [name for name in preferred if name in seen]
    return known + sorted(seen - set(preferred), key=natural_key)


def natural_key(text: str) -> tuple:
    """So that matmul-128 < matmul-512 and launch-chain-10 < launch-chain-100."""
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text))


def batch_key(batch: int | None) -> tuple[int, int]:
    return (0, 0) if batch is None else (1, batch)
