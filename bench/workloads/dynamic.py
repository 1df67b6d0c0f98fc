"""The mlp workload with a batch that changes from call to call.

Each call takes the next input from a cycle of batch sizes, as a server sees requests of
varying size. Under torch.compile's default a new batch size recompiles (until automatic
dynamic shapes kick in); with dynamic=True one graph with a symbolic batch serves them all.
A case's time per call is the average over whole cycles. It has no batch size of its own:
its key's batch_size is None and `WorkloadInfo.batch_cycle` lists the cycle.
"""

import torch

from bench.workloads.base import (
    BFLOAT16_TOLERANCE,
    EVERY_BACKEND,
    Built,
    Workload,
    random,
    tensor_bytes,
)
from bench.workloads.mlp import mlp

CYCLE = (8, 16, 24, 32, 48, 64)


def build(device: torch.device, batch_size: int | None, tiny: bool, dtype: torch.dtype) -> Built:
    width, hidden = (16, 32) if tiny else (1024, 4096)
    w1 = random((width, hidden), device, dtype, generator_seed=2, scale=width**-0.5)
    w2 = random((hidden, width), device, dtype, generator_seed=3, scale=hidden**-0.5)
    sets = tuple((random((batch, width), device, dtype, generator_seed=1), w1, w2)
                 for batch in CYCLE)
    rows = sum(CYCLE) / len(CYCLE)  # the work per call, averaged over the cycle
    flops = round(rows * (4 * width * hidden + hidden))
    bytes_moved = round(tensor_bytes(w1, w2) + 2 * rows * width * w1.element_size())
    return Built(mlp, sets[0], flops=flops, bytes_moved=bytes_moved,
                 parameters=w1.numel() + w2.numel(), input_sets=sets)


DYNAMIC_MLP = Workload(
    "dynamic-mlp", "dynamic",
    f"relu(x @ w1) @ w2, 1024 -> 4096 -> 1024, with the batch cycling through "
    f"{', '.join(map(str, CYCLE))} from one call to the next",
    build, quick_batch_sizes=(None,), batch_cycle=CYCLE, quick_without_autotune=EVERY_BACKEND,
    bfloat16_tolerance=BFLOAT16_TOLERANCE)
