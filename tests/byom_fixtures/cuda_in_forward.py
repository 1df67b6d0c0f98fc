"""A model that calls CUDA in forward whatever device it was built for, as a model that
hard-codes `.cuda()` does: on a host without an NVIDIA driver every call fails."""

import torch
from torch import nn


class CallsCuda(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + torch.ones(1, device="cuda").cpu()


def factory(device, batch_size):
    return CallsCuda(), (torch.randn(batch_size, 4, device=device),)
