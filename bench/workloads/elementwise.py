"""A chain of ten element-wise ops: eager launches ten kernels, Inductor can fuse them into one."""

import torch

from bench.workloads.base import NOTHING_TO_AUTOTUNE_ON_CPU, Built, Workload, random, tensor_bytes

OPS = 10


def elementwise_chain(x: torch.Tensor) -> torch.Tensor:
    y = x * 1.5
    y = y + 0.25
    y = torch.sin(y)
    y = y * y
    y = torch.exp(-y)
    y = y - 0.5
    y = torch.tanh(y)
    y = torch.abs(y)
    y = torch.sqrt(y + 1e-3)
    return y * x


def build(device: torch.device, batch_size: int | None, tiny: bool, dtype: torch.dtype) -> Built:
    x = random((16, 16) if tiny else (1024, 1024), device, dtype)
    # Unfused, every op reads and writes a full tensor; the floor is one read and one write.
    return Built(elementwise_chain, (x,), flops=(OPS + 1) * x.numel(),
                 bytes_moved=2 * tensor_bytes(x))


ELEMENTWISE_CHAIN = Workload(
    "elementwise-chain", "elementwise",
    f"{OPS} element-wise ops (mul, add, sin, square, exp, sub, tanh, abs, sqrt, mul) on 1024x1024",
    build, quick_batch_sizes=(None,), sentinel_batch_sizes=(None,),
    quick_without_autotune=NOTHING_TO_AUTOTUNE_ON_CPU)
