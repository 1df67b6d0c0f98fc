"""Row entropy -sum(p * log p) with p = softmax(x): three reductions Inductor can fuse."""

import torch

from bench.workloads.base import Built, Workload, random, tensor_bytes


def entropy(logits: torch.Tensor) -> torch.Tensor:
    p = torch.softmax(logits, dim=-1)
    return -(p * torch.log(p + 1e-9)).sum(dim=-1)


def build(device: torch.device, batch_size: int | None, tiny: bool, dtype: torch.dtype) -> Built:
    rows, cols = (4, 32) if tiny else (4096, 4096)
    x = random((rows, cols), device, dtype)
    return Built(entropy, (x,), flops=6 * x.numel(),
                 bytes_moved=tensor_bytes(x) + rows * x.element_size())


ENTROPY = Workload("entropy", "entropy", "softmax -> log -> multiply -> sum over rows of 4096x4096",
                   build)
