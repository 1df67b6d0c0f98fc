"""Two 3x3 conv2d + ReLU layers on 224x224 RGB images."""

import torch
from torch import nn

from bench.workloads.base import (
    Built,
    Workload,
    count_parameters,
    module_bytes,
    random,
    seeded_module,
    tensor_bytes,
)


class ConvBlock(nn.Module):
    def __init__(self, channels: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, channels, 3, padding=1)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.conv2(torch.relu(self.conv1(x))))


def build(device: torch.device, batch_size: int | None, tiny: bool, dtype: torch.dtype) -> Built:
    channels, side = (4, 16) if tiny else (64, 224)
    batch = batch_size or 1
    model = seeded_module(lambda: ConvBlock(channels), device, dtype).eval()
    x = random((batch, 3, side, side), device, dtype)
    pixels = batch * side * side
    flops = 2 * pixels * 9 * (3 * channels + channels * channels)
    out_bytes = pixels * channels * x.element_size()
    return Built(model, (x,), flops=flops, bytes_moved=tensor_bytes(x) + module_bytes(model)
                 + out_bytes, parameters=count_parameters(model))


CONV2D_BLOCK = Workload("conv2d-block", "conv",
                        "conv3x3(3->64)+ReLU, conv3x3(64->64)+ReLU on 224x224 images",
                        build, batch_sizes=(1, 8), sentinel_batch_sizes=(8,))
