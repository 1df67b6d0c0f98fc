"""Square float32 matmul over a range of sizes: where does compiling start to pay?

The size axis is the matrix size n, not a batch: a case's batch_size holds n.
"""

import torch

from bench.workloads.base import Built, Workload, random, tensor_bytes
from bench.workloads.matmul import matmul

SIZES = (64, 128, 256, 512, 1024, 2048, 4096)
# Two CPU cores need about a second per 4096 matmul; 2048 already shows the trend there.
CPU_SIZES = tuple(n for n in SIZES if n <= 2048)


def build(device: torch.device, n: int | None, tiny: bool, dtype: torch.dtype) -> Built:
    if n is None:
        raise ValueError("matmul-sweep needs a matrix size n (the case's batch size)")
    size = max(4, n // 16) if tiny else n
    a = random((size, size), device, dtype, generator_seed=1)
    b = random((size, size), device, dtype, generator_seed=2)
    return Built(matmul, (a, b), flops=2 * size**3, bytes_moved=3 * tensor_bytes(a))


MATMUL_SWEEP = Workload(
    "matmul-sweep", "matmul-sweep",
    "a @ b with two n x n float32 matrices; the size axis is the matrix size n, "
    f"from {SIZES[0]} to {SIZES[-1]}",
    build, batch_sizes=SIZES, quick_batch_sizes=(1024,), batch_sizes_on={"cpu": CPU_SIZES},
    # On a CPU the quick profile keeps to matmul-128 for a matmul: one size cannot show where
    # compiling starts to pay, and on two cores every case of the quick profile counts.
    quick_batch_sizes_on={"cpu": ()}, axis="n")
