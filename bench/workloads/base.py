"""The workload contract: a name, the batch sizes it sweeps, and a builder."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import torch


@dataclass(frozen=True)
class Built:
    fn: Callable  # eager callable (function or nn.Module in eval mode)
    inputs: tuple[torch.Tensor, ...]
    flops: int | None
    bytes_moved: int | None  # every input and weight read once, every output written once
    parameters: int = 0


@dataclass(frozen=True)
class Workload:
    name: str
    family: str
    description: str
    build: Callable[[torch.device, int | None, bool], Built]  # (device, batch size, tiny)
    batch_sizes: tuple[int | None, ...] = (None,)
    quick_batch_sizes: tuple[int | None, ...] = ()  # empty: not in the quick profile
    # A narrower full sweep where a backend is too slow for all of batch_sizes.
    batch_sizes_on: dict[str, tuple[int | None, ...]] = field(default_factory=dict)
    dtype: torch.dtype = torch.float32
    tolerance: float = 1e-3  # relative L2 error against eager

    def sizes(self, profile: str, backend: str) -> tuple[int | None, ...]:
        if profile == "quick":
            return self.quick_batch_sizes
        return self.batch_sizes_on.get(backend, self.batch_sizes)


def random(shape: Sequence[int], device: torch.device, dtype: torch.dtype = torch.float32,
           generator_seed: int = 0) -> torch.Tensor:
    """Seeded normal data: never all zeros, which can run faster and hide bugs."""
    generator = torch.Generator(device="cpu").manual_seed(generator_seed)
    return torch.randn(*shape, generator=generator, dtype=torch.float32).to(device, dtype)


def tensor_bytes(*tensors: torch.Tensor) -> int:
    return sum(t.numel() * t.element_size() for t in tensors)


def module_bytes(module: torch.nn.Module) -> int:
    return sum(p.numel() * p.element_size() for p in module.parameters())


def count_parameters(module: torch.nn.Module) -> int:
    return sum(p.numel() for p in module.parameters())


@dataclass(frozen=True)
class Shapes:
    """Seed-sized and tiny variants of a workload's dimensions."""

    seed: dict = field(default_factory=dict)
    tiny: dict = field(default_factory=dict)

    def pick(self, tiny: bool) -> dict:
        return self.tiny if tiny else self.seed
