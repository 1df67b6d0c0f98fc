"""A tiny model for `python -m bench --workload examples.byom.tiny_models:factory`.

The factory contract (bench/workloads/external.py): `factory(device, batch_size)` returns
`(model, inputs)`, where model is an nn.Module or a callable and inputs a tensor or a
tuple of tensors on `device`. It must accept the CPU, where the spec is checked.
"""

import torch
from torch import nn

WIDTH, HIDDEN = 64, 256


class TinyMLP(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(WIDTH, HIDDEN), nn.GELU(), nn.Linear(HIDDEN, WIDTH))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.layers(x)


def factory(device: torch.device, batch_size: int):
    model = TinyMLP().to(device)
    inputs = torch.randn(batch_size, WIDTH, device=device)
    return model, (inputs,)
