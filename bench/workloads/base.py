"""The workload contract: a name, the sizes it sweeps, and a builder.

`build(device, batch_size, tiny, dtype)` returns a `Built`. The case calls it twice: once in
the workload's own dtype to measure, and once in float64 for the reference it checks every
mode against. So a builder draws every weight and input the same way whatever the dtype:
modules are initialised in float32 under `torch.manual_seed(0)` and then cast, and data
comes from `random`, which draws float32 on the CPU and then casts.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import torch

from bench.backends import BACKENDS
from bench.shapes.streams import Stream, Varying
from bench.workloads.registry import DTYPES

AXES = ("batch", "n")
# How a workload runs in bfloat16, as people write it: inference casts the module and its
# inputs (model.to(torch.bfloat16)); a training step keeps float32 weights, gradients and
# optimizer and runs forward and loss under torch.autocast (the builder does that when
# asked for bfloat16, see bench/workloads/train.py). Recorded in WorkloadInfo.settings.
BFLOAT16_FORMS = {
    False: "weights and inputs in bfloat16, as model.to(torch.bfloat16) gives",
    True: "torch.autocast(dtype=torch.bfloat16) around forward and loss; float32 weights, "
          "gradients and SGD",
}
# bfloat16 keeps 8 significant bits, a rounding error of up to 2**-9 (about 2e-3) per
# operation; what a whole workload gets in eager bfloat16 against float64 was measured on a
# CPU (tiny and seed shapes) before these were set, at several times that, so that a
# compiled mode that rounds in other places still passes, and a wrong result does not.
BFLOAT16_TOLERANCE = 2e-2  # the MLPs and the project's training steps (eager: 5e-7 to 4e-3)
# The ViTs and the real models, inference and training (eager: 3e-3 to 1.4e-2 at batch 1;
# train-resnet50's loss with batch norm over a batch of 1, tiny shapes: 1.1e-2).
BFLOAT16_DEEP_TOLERANCE = 5e-2
# Shapes are tiny in tests and smoke runs: a warm-up curve of this many calls is enough there.
TINY_CURVE_CALLS = 50
# The quick profile leaves the autotuning modes out of a heavy workload on every backend: a
# cold autotune takes it a minute or more per case, most of a quick run, while the small
# workloads still measure those modes quickly.
EVERY_BACKEND = tuple(BACKENDS)
# On a CPU, max-autotune only searches templates for matmuls (and what fuses into them), so
# a workload without a matmul compiles there exactly what default compiles, after paying
# for the search (tests/test_bench_modes.py reads it in Inductor's code); the quick profile
# leaves the autotuning modes out of such workloads on the CPU alone. On a GPU they also
# tune every Triton kernel, so they are measured there.
NOTHING_TO_AUTOTUNE_ON_CPU = ("cpu",)


@dataclass(frozen=True)
class Sized:
    """A stream workload's requests at any size of the dimension that varies.

    `request(n)` is what a client sends at size n (the same tensors for the same n: a cache
    in the builder), `varying` the positions of its inputs whose dimension `dim` has size n.
    A padded request pads those with zeros and, where `masked`, appends an attention mask
    (1 for a real position, 0 for padding), which `fn` takes as its last argument. The
    output's dimension `out_dim` follows the size, so a padded output is cut back there."""

    dim: int
    out_dim: int
    request: Callable[[int], tuple[torch.Tensor, ...]]
    varying: tuple[int, ...] = (0,)
    masked: bool = False


@dataclass(frozen=True)
class Built:
    fn: Callable  # eager callable: an nn.Module in eval mode, a function, or a training step
    inputs: tuple[torch.Tensor, ...]  # the first call's inputs
    flops: int | None  # per call; averaged over the cycle where shapes vary
    bytes_moved: int | None  # every input and weight read once, every output written once
    parameters: int = 0
    # Varying shapes: successive calls take these input sets in turn (inputs is the first).
    input_sets: tuple[tuple[torch.Tensor, ...], ...] = ()
    # Training: a counter every real step adds one to on the device, so the float64
    # reference takes exactly as many steps as the measured callable did, including the
    # ones a mode runs on its own (manual CUDA graph capture warms up with three).
    steps: torch.Tensor | None = None
    # What the builder pinned that changes the results (eval mode, attention kernel,
    # KV cache...) and the versions of the packages that built the model; both are recorded.
    settings: dict[str, str] = field(default_factory=dict)
    libraries: dict[str, str] = field(default_factory=dict)
    # Shape streams: the requests at every size (None for a workload of fixed inputs).
    sized: Sized | None = None

    @property
    def all_input_sets(self) -> tuple[tuple[torch.Tensor, ...], ...]:
        return self.input_sets or (self.inputs,)


Build = Callable[[torch.device, "int | None", bool, torch.dtype], Built]


@dataclass(frozen=True)
class Workload:
    name: str
    family: str
    description: str
    build: Build  # (device, batch size or matrix size, tiny, dtype)
    batch_sizes: tuple[int | None, ...] = (None,)  # None: the workload has no size axis
    quick_batch_sizes: tuple[int | None, ...] = ()  # empty: not in the quick profile
    # A narrower quick profile where a backend is too slow for all of quick_batch_sizes.
    quick_batch_sizes_on: dict[str, tuple[int | None, ...]] = field(default_factory=dict)
    # The sentinel profile: a few cases run first on every new machine, modes without
    # autotuning only, so that leases of one GPU type can be set side by side in minutes.
    sentinel_batch_sizes: tuple[int | None, ...] = ()
    # The backends on which the quick profile leaves out the autotuning modes here
    # (EVERY_BACKEND, or NOTHING_TO_AUTOTUNE_ON_CPU).
    quick_without_autotune: tuple[str, ...] = ()
    # The sizes at which the autotuning modes are measured (None: every size). A real
    # model's cold autotune takes minutes per case, so the models autotune at batch 1 only.
    autotune_batch_sizes: tuple[int | None, ...] | None = None
    # Packages beyond torch that the builder imports (see bench/workloads/optional.py).
    requires: tuple[str, ...] = ()
    # A narrower full sweep where a backend is too slow for all of batch_sizes.
    batch_sizes_on: dict[str, tuple[int | None, ...]] = field(default_factory=dict)
    dtype: torch.dtype = torch.float32
    tolerance: float = 1e-3  # relative L2 error against the float64 reference, in float32
    # The same in bfloat16; None: the workload runs in float32 only. Set at a few times what
    # eager bfloat16 gets (an eager bfloat16 record's correctness.rel_error shows it).
    bfloat16_tolerance: float | None = None
    training: bool = False  # one call is a whole optimizer step; runs with autograd on
    axis: str = "batch"  # what the size means: "batch", or "n" for a square matrix size
    batch_cycle: tuple[int, ...] = ()  # batch sizes successive calls take in turn
    # Latency of each of this many calls after the first is recorded (0: no curve), or
    # the number given for a backend in warmup_curve_calls_on; tiny shapes take TINY_CURVE_CALLS.
    warmup_curve_calls: int = 0
    warmup_curve_calls_on: dict[str, int] = field(default_factory=dict)
    # A shape stream (bench/shapes/streams.py): each process makes the stream's calls in
    # order, compiles included, then again with every shape seen (bench/shapes/measure.py).
    stream: Stream | None = None

    def __post_init__(self) -> None:
        if self.axis not in AXES:
            raise ValueError(f"workload {self.name}: axis {self.axis!r} is not one of {AXES}")
        if self.warmup_curve_calls < 0:
            raise ValueError(f"workload {self.name}: warmup_curve_calls must not be negative")

    @property
    def varying_shapes(self) -> Varying:
        """Whether successive calls see different shapes (dynamic-shape compilation applies
        where they do), and how: a batch cycle, or a recorded stream."""
        if self.stream is not None:
            return Varying.STREAM
        return Varying.CYCLE if self.batch_cycle else Varying.FIXED

    def sizes(self, profile: str, backend: str) -> tuple[int | None, ...]:
        if profile == "quick":
            return self.quick_batch_sizes_on.get(backend, self.quick_batch_sizes)
        if profile == "sentinel":
            return self.sentinel_batch_sizes
        return self.batch_sizes_on.get(backend, self.batch_sizes)

    def measures(self, profile: str, autotunes: bool, backend: str,
                 size: int | None = None) -> bool:
        """Whether `profile` measures this workload on `backend` in a mode that does or does
        not autotune, at `size` (None: at any of its sizes)."""
        if profile == "sentinel":
            return not autotunes
        if autotunes and self.autotune_batch_sizes is not None and (
                not self.autotune_batch_sizes
                or (size is not None and size not in self.autotune_batch_sizes)):
            return False
        return not (profile == "quick" and autotunes and backend in self.quick_without_autotune)

    def dtype_refusal(self, dtype: str) -> str | None:
        """Why this workload is not measured in `dtype`, one line; None if it is."""
        if dtype not in DTYPES:
            return f"unknown dtype {dtype!r} (valid: {', '.join(DTYPES)})"
        if dtype == "bfloat16" and self.bfloat16_tolerance is None:
            return f"workload {self.name!r} runs in float32 only"
        return None

    def tolerance_for(self, dtype: str) -> float:
        return self.bfloat16_tolerance if dtype == "bfloat16" else self.tolerance

    def build_in(self, dtype: str, device: torch.device, size: int | None, tiny: bool) -> Built:
        """The workload built to be measured in `dtype` (a CaseKey.dtype)."""
        refusal = self.dtype_refusal(dtype)
        if refusal:
            raise ValueError(refusal)
        if dtype == "float32":
            return self.build(device, size, tiny, self.dtype)
        built = self.build(device, size, tiny, torch.bfloat16)
        return replace(built, settings=built.settings | {
            "precision": BFLOAT16_FORMS[self.training]})

    def curve_calls(self, backend: str, tiny: bool) -> int:
        calls = self.warmup_curve_calls_on.get(backend, self.warmup_curve_calls)
        return min(calls, TINY_CURVE_CALLS) if tiny else calls


def random(shape: Sequence[int], device: torch.device, dtype: torch.dtype = torch.float32,
           generator_seed: int = 0, scale: float = 1.0) -> torch.Tensor:
    """Seeded normal data times `scale`, drawn and scaled in float32 on the CPU and then
    cast, so every dtype gets the same values. Never all zeros, which can run faster and
    hide bugs."""
    generator = torch.Generator(device="cpu").manual_seed(generator_seed)
    x = torch.randn(*shape, generator=generator, dtype=torch.float32)
    return (x * scale if scale != 1.0 else x).to(device, dtype)


def seeded_module(make: Callable[[], torch.nn.Module], device: torch.device,
                  dtype: torch.dtype) -> torch.nn.Module:
    """`make()` initialised in float32 under seed 0, then cast: the same weights in every dtype."""
    torch.manual_seed(0)
    return make().to(device=device, dtype=dtype)


def tensor_bytes(*tensors: torch.Tensor) -> int:
    return sum(t.numel() * t.element_size() for t in tensors)


def module_bytes(module: torch.nn.Module) -> int:
    return sum(p.numel() * p.element_size() for p in module.parameters())


def count_parameters(module: torch.nn.Module) -> int:
    return sum(p.numel() for p in module.parameters())
