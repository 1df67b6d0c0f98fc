"""A module that returns a dict of two tensors, taking two inputs (one of them integer)."""

import torch
from torch import nn


class TwoHeads(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(10, 8)
        self.score = nn.Linear(8, 1)
        self.label = nn.Linear(8, 3)

    def forward(self, tokens: torch.Tensor, scale: torch.Tensor) -> dict:
        h = self.embed(tokens).mean(dim=1) * scale
        return {"score": self.score(h), "label": self.label(h)}


def factory(device, batch_size):
    tokens = (torch.arange(batch_size * 5, device=device).reshape(batch_size, 5) % 9) + 1
    return TwoHeads().to(device), [tokens, torch.full((batch_size, 1), 0.5, device=device)]
