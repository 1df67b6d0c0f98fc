"""Training steps: one call is zero_grad, forward, loss, backward and an SGD step.

The step is written to be captured by a CUDA graph as well as compiled: gradients and
momentum buffers exist from the start and are zeroed in place (set_to_none=False), so
every call touches the same tensors and the optimizer state never changes structure
(which would also make Dynamo recompile on the second call). SGD with momentum keeps no
step count on the host. The loss targets are fixed and seeded. A call returns the loss.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable

import torch
from torch import nn
from torch.nn import functional as F

from bench.workloads.base import (
    BFLOAT16_TOLERANCE,
    EVERY_BACKEND,
    Built,
    Workload,
    count_parameters,
    module_bytes,
    random,
    seeded_module,
    tensor_bytes,
)
from bench.workloads.vit import HEAD_DIM, IMAGE, ViT, vit_flops

LR, MOMENTUM = 0.01, 0.9
LABEL_SMOOTHING = 0.1
# Backward costs about twice the forward pass; the SGD update is negligible beside both.
TRAIN_FLOPS_PER_FORWARD = 3
# Inputs and targets read once; weights, gradients and momentum each read and written once.
TRAIN_PARAMETER_PASSES = 6


def mixed_precision(dtype: torch.dtype) -> tuple[torch.dtype, torch.dtype | None]:
    """The dtype a training step keeps its weights, inputs and optimizer in, and the one its
    forward pass and loss run in under torch.autocast (None: no autocast). Asked for
    bfloat16, a step trains in mixed precision, as people train in bfloat16."""
    return (torch.float32, torch.bfloat16) if dtype == torch.bfloat16 else (dtype, None)


def sgd_step(model: nn.Module, loss_fn: Callable, target: torch.Tensor,
             autocast: torch.dtype | None = None) -> tuple[Callable, torch.Tensor]:
    """A training step for `model`, and the on-device counter of the steps it has taken;
    forward and loss under torch.autocast to `autocast` if given, backward and SGD outside."""
    model.train()
    params = list(model.parameters())
    for p in params:
        p.grad = torch.zeros_like(p)
    optimizer = torch.optim.SGD(params, lr=LR, momentum=MOMENTUM, foreach=True)
    for p in params:
        # A zero buffer gives exactly the first step SGD takes without one (0 * m + g = g).
        optimizer.state[p]["momentum_buffer"] = torch.zeros_like(p)
    steps = torch.zeros((), dtype=torch.int64, device=params[0].device)
    # Its address never changes, like the weights': CUDA graph trees may then update it in
    # place instead of skipping the graph for mutating an input.
    torch._dynamo.mark_static_address(steps)

    def forward_context():
        if autocast is None:
            return contextlib.nullcontext()
        return torch.autocast(params[0].device.type, dtype=autocast)

    def step(x: torch.Tensor) -> torch.Tensor:
        optimizer.zero_grad(set_to_none=False)
        with forward_context():
            loss = loss_fn(model(x), target)
        loss.backward()
        optimizer.step()
        steps.add_(1)
        return loss.detach()

    return step, steps


class MLP(nn.Module):
    def __init__(self, width: int, hidden: int) -> None:
        super().__init__()
        self.up = nn.Linear(width, hidden, bias=False)
        self.down = nn.Linear(hidden, width, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(torch.relu(self.up(x)))


def _mlp_build(device: torch.device, batch_size: int | None, tiny: bool, dtype: torch.dtype) -> Built:
    dtype, autocast = mixed_precision(dtype)
    width, hidden = (16, 32) if tiny else (1024, 4096)
    batch = batch_size or 1
    model = seeded_module(lambda: MLP(width, hidden), device, dtype)
    x = random((batch, width), device, dtype, generator_seed=1)
    target = random((batch, width), device, dtype, generator_seed=4)
    step, steps = sgd_step(model, F.mse_loss, target, autocast)
    forward_flops = 4 * batch * width * hidden + batch * hidden
    return Built(step, (x,), flops=TRAIN_FLOPS_PER_FORWARD * forward_flops,
                 bytes_moved=tensor_bytes(x, target) + TRAIN_PARAMETER_PASSES * module_bytes(model),
                 parameters=count_parameters(model), steps=steps)


def _smoothed_cross_entropy(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    # Label smoothing, as ViT training uses, keeps the loss near 1 or above: a few steps on
    # one fixed image would otherwise drive plain cross-entropy towards 0, where its
    # relative error against float64 says nothing about the step (about 5e-3 after 7 steps).
    return F.cross_entropy(logits, labels, label_smoothing=LABEL_SMOOTHING)


def _vit_build(device: torch.device, batch_size: int | None, tiny: bool, dtype: torch.dtype) -> Built:
    dtype, autocast = mixed_precision(dtype)
    dims = (8, 2, 32, 32, 10) if tiny else (16, 6, 384, IMAGE, 1000)
    batch = batch_size or 1
    model = seeded_module(lambda: ViT(*dims), device, dtype)
    images = random((batch, 3, dims[3], dims[3]), device, dtype)
    generator = torch.Generator(device="cpu").manual_seed(5)
    labels = torch.randint(0, dims[4], (batch,), generator=generator).to(device)
    step, steps = sgd_step(model, _smoothed_cross_entropy, labels, autocast)
    return Built(step, (images,), flops=TRAIN_FLOPS_PER_FORWARD * vit_flops(*dims, batch),
                 bytes_moved=tensor_bytes(images, labels) + TRAIN_PARAMETER_PASSES * module_bytes(model),
                 parameters=count_parameters(model), steps=steps)


TRAIN_MLP = Workload(
    "train-mlp", "train",
    "training step of a 1024 -> 4096 -> 1024 ReLU MLP (no biases): MSE loss on fixed targets, "
    f"backward, SGD with momentum {MOMENTUM}",
    _mlp_build, batch_sizes=(32, 256), quick_batch_sizes=(32,), quick_without_autotune=EVERY_BACKEND,
    sentinel_batch_sizes=(32,), training=True, bfloat16_tolerance=BFLOAT16_TOLERANCE)

TRAIN_VIT_SMALL = Workload(
    "train-vit16x6x384", "train",
    f"training step of vit16x6x384 (16x16 patches, 6 blocks, width 384, {384 // HEAD_DIM} heads, "
    f"224x224 images, 1000 classes): cross-entropy with label smoothing {LABEL_SMOOTHING} on "
    f"fixed labels, backward, SGD with momentum {MOMENTUM}",
    _vit_build, batch_sizes=(1, 8, 32),
    # Two CPU cores take about a second per step at batch 8.
    batch_sizes_on={"cpu": (1, 8)},
    # A cold autotune of forward and backward took 406 s on an H200, and a paired process on
    # a new machine pays it again: the autotuning modes run at the launch-bound end and at
    # the largest batch, where the training claims compare them with default.
    autotune_batch_sizes=(1, 32), tolerance=2e-3, training=True,
    bfloat16_tolerance=BFLOAT16_TOLERANCE)
