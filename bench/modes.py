"""Execution modes as data plus one small adapter each.

A mode turns an eager callable and its example inputs into the callable that is timed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

Prepare = Callable[[Callable, Sequence[torch.Tensor]], Callable]


@dataclass(frozen=True)
class Mode:
    name: str
    description: str
    prepare: Prepare
    compiled: bool  # goes through torch.compile, so has compile times and Dynamo counters
    needs: frozenset[str] = frozenset()  # backends it can run on; empty means all

    def unsupported_reason(self, backend: str) -> str | None:
        if self.needs and backend not in self.needs:
            return f"{self.name} needs backend {'/'.join(sorted(self.needs))}, not {backend}"
        return None


def _eager(fn: Callable, inputs: Sequence[torch.Tensor]) -> Callable:
    return fn


def _compiled(mode: str | None) -> Prepare:
    def prepare(fn: Callable, inputs: Sequence[torch.Tensor]) -> Callable:
        return torch.compile(fn, mode=mode)

    return prepare


def _cuda_graph(fn: Callable, inputs: Sequence[torch.Tensor]) -> Callable:
    """Capture the eager function once; each call copies its inputs into the static
    buffers and replays. The returned tensor is the static output, overwritten by
    the next replay, exactly as a hand-written graph loop behaves."""
    static_inputs = [x.clone() for x in inputs]
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        # Warm up off the default stream so lazy init and cuDNN/cuBLAS
        # workspace allocation happen before capture, as PyTorch's docs require.
        for _ in range(3):
            fn(*static_inputs)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_output = fn(*static_inputs)

    def replay(*args: torch.Tensor):
        for static, arg in zip(static_inputs, args, strict=True):
            static.copy_(arg)
        graph.replay()
        return static_output

    return replay


MODES: dict[str, Mode] = {
    m.name: m
    for m in (
        Mode("eager", "PyTorch eager execution, one kernel launch per op", _eager, False),
        Mode("default", "torch.compile() with default options: Inductor fusion, no CUDA graphs",
             _compiled(None), True),
        Mode("reduce-overhead", "torch.compile(mode='reduce-overhead'): Inductor plus CUDA graph "
             "trees on CUDA", _compiled("reduce-overhead"), True),
        Mode("max-autotune-no-cudagraphs", "torch.compile(mode='max-autotune-no-cudagraphs'): "
             "autotuned GEMM/conv templates, no CUDA graphs", _compiled("max-autotune-no-cudagraphs"),
             True),
        Mode("max-autotune", "torch.compile(mode='max-autotune'): autotuned templates plus CUDA "
             "graphs on CUDA", _compiled("max-autotune"), True),
        Mode("cuda-graph", "manual torch.cuda.CUDAGraph capture of the eager function with static "
             "input buffers", _cuda_graph, False, frozenset({"cuda"})),
    )
}
