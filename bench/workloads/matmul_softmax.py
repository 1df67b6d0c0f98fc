"""matmul followed by softmax over rows, 100x100: the dissection example."""

import torch

from bench.workloads.base import Built, Workload, random, tensor_bytes


def matmul_softmax(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return torch.softmax(x @ y, dim=1)


def build(device: torch.device, batch_size: int | None, tiny: bool, dtype: torch.dtype) -> Built:
    n = 8 if tiny else 100
    x = random((n, n), device, dtype, generator_seed=1)
    y = random((n, n), device, dtype, generator_seed=2)
    return Built(matmul_softmax, (x, y), flops=2 * n**3 + 5 * n * n,
                 bytes_moved=3 * tensor_bytes(x))


MATMUL_SOFTMAX = Workload("matmul-softmax", "matmul-softmax", "softmax(x @ y, dim=1) on 100x100",
                          build)
