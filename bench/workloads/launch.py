"""Launch-overhead microbenchmarks.

launch-chain-N: N dependent tiny adds, so eager launches N kernels; eager against
cuda-graph gives the per-kernel cost of a launch versus a replayed graph node.
trivial-call: one tiny add, the per-call floor of each mode's own machinery.
"""

import torch

from bench.workloads.base import NOTHING_TO_AUTOTUNE_ON_CPU, Built, Workload, random, tensor_bytes

TINY_ELEMENTS = 256


def _chain(n: int):
    def chain(x: torch.Tensor) -> torch.Tensor:
        for _ in range(n):
            x = x + 1.0
        return x

    return chain


def _chain_builder(n: int):
    def build(device: torch.device, batch_size: int | None, tiny: bool, dtype: torch.dtype) -> Built:
        x = random((TINY_ELEMENTS,), device, dtype)
        return Built(_chain(min(n, 10) if tiny else n), (x,), flops=n * x.numel(),
                     bytes_moved=2 * tensor_bytes(x))

    return build


def _chain_workload(n: int, quick: tuple = (), sentinel: tuple = ()) -> Workload:
    return Workload(f"launch-chain-{n}", "launch-overhead",
                    f"{n} dependent x + 1 ops on {TINY_ELEMENTS} floats: {n} tiny kernels in eager",
                    _chain_builder(n), quick_batch_sizes=quick, sentinel_batch_sizes=sentinel,
                    quick_without_autotune=NOTHING_TO_AUTOTUNE_ON_CPU)


def trivial(x: torch.Tensor) -> torch.Tensor:
    return x + 1.0


def _trivial_build(device: torch.device, batch_size: int | None, tiny: bool,
                   dtype: torch.dtype) -> Built:
    x = random((TINY_ELEMENTS,), device, dtype)
    return Built(trivial, (x,), flops=x.numel(), bytes_moved=2 * tensor_bytes(x))


LAUNCH_CHAIN_10 = _chain_workload(10, quick=(None,))
LAUNCH_CHAIN_100 = _chain_workload(100, sentinel=(None,))
LAUNCH_CHAIN_1000 = _chain_workload(1000)
TRIVIAL_CALL = Workload("trivial-call", "launch-overhead",
                        f"x + 1 on {TINY_ELEMENTS} floats: the per-call floor of each mode",
                        _trivial_build, quick_batch_sizes=(None,), sentinel_batch_sizes=(None,),
                        quick_without_autotune=NOTHING_TO_AUTOTUNE_ON_CPU)
