"""matmul -> relu -> matmul: an inference step with two weight matrices."""

import torch

from bench.workloads.base import BFLOAT16_TOLERANCE, Built, Workload, random, tensor_bytes


def mlp(x: torch.Tensor, w1: torch.Tensor, w2: torch.Tensor) -> torch.Tensor:
    return torch.relu(x @ w1) @ w2


def build(device: torch.device, batch_size: int | None, tiny: bool, dtype: torch.dtype) -> Built:
    width, hidden = (16, 32) if tiny else (1024, 4096)
    batch = batch_size or 1
    x = random((batch, width), device, dtype, generator_seed=1)
    w1 = random((width, hidden), device, dtype, generator_seed=2, scale=width**-0.5)
    w2 = random((hidden, width), device, dtype, generator_seed=3, scale=hidden**-0.5)
    flops = 2 * batch * width * hidden * 2 + batch * hidden
    return Built(mlp, (x, w1, w2), flops=flops,
                 bytes_moved=tensor_bytes(x, w1, w2) + tensor_bytes(x),
                 parameters=w1.numel() + w2.numel())


MLP = Workload("mlp", "mlp", "relu(x @ w1) @ w2 with a 1024 -> 4096 -> 1024 float32 MLP",
               build, batch_sizes=(1, 32, 256), sentinel_batch_sizes=(32,),
               bfloat16_tolerance=BFLOAT16_TOLERANCE)
