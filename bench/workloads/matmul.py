"""Square float32 matmul at the seed's two sizes."""

import torch

from bench.workloads.base import Built, Workload, random, tensor_bytes


def matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return a @ b


def _builder(n: int):
    def build(device: torch.device, batch_size: int | None, tiny: bool, dtype: torch.dtype) -> Built:
        size = 8 if tiny else n
        a = random((size, size), device, dtype, generator_seed=1)
        b = random((size, size), device, dtype, generator_seed=2)
        return Built(matmul, (a, b), flops=2 * size**3, bytes_moved=3 * tensor_bytes(a))

    return build


MATMUL_128 = Workload("matmul-128", "matmul", "a @ b with two 128x128 float32 matrices",
                      _builder(128), quick_batch_sizes=(None,))
MATMUL_512 = Workload("matmul-512", "matmul", "a @ b with two 512x512 float32 matrices",
                      _builder(512), sentinel_batch_sizes=(None,))
