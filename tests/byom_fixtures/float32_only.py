"""A plain function holding float32 weights: it cannot run in float64."""

import torch


def factory(device, batch_size):
    torch.manual_seed(0)
    weight = torch.randn(8, 8, device=device)

    def model(x):
        return torch.tanh(x @ weight)  # float64 x @ float32 weight raises

    return model, torch.randn(batch_size, 8, device=device)
