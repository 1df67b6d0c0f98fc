"""Execution modes as data plus one small adapter each.

A mode turns an eager callable and its example inputs into the callable that is timed.
Each mode's traits are stated here and nowhere else: records carry a copy, so the report
never restates which modes compile or replay CUDA graphs. So are a mode's twins: the
backends where it builds the same kernels as another mode, because what sets it apart does
not apply there. This module imports torch only inside the adapters, so the record layer
and the report can read the traits and twins without it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from bench.records import ModeTraits
from bench.shapes.strategies import AS_IT_COMES, COMPILE_MODES, STRATEGIES, mode_name
from bench.shapes.streams import Varying

Prepare = Callable[[Callable, Sequence], Callable]

# Inductor turns CUDA graphs on for CUDA tensors only: on a CPU, reduce-overhead and
# max-autotune generate the kernels of default and max-autotune-no-cudagraphs. Read in the
# code Inductor wrote for both (tests/test_bench_modes.py checks it on this torch): the
# kernels are the same, and the twin with CUDA graphs on only leaves out the check of its
# inputs' sizes and strides. Paired CPU processes time the two within noise but for the
# smallest call (trivial-call), where that check is part of a microseconds-long call.
NO_CUDA_GRAPHS = "CUDA graphs apply to CUDA tensors only"


@dataclass(frozen=True)
class Twin:
    """On `backend`, the mode builds the same kernels as `mode`, for the reason `why`."""

    backend: str
    mode: str
    why: str


@dataclass(frozen=True)
class Mode:
    name: str
    traits: ModeTraits
    prepare: Prepare
    needs: frozenset[str] = frozenset()  # backends it can run on; empty means all
    twins: tuple[Twin, ...] = ()
    # On a shape stream (bench/shapes): the strategy it stands for and the torch.compile
    # mode it compiles in (None: no compile). A mode made for streams applies to them alone.
    strategy: str = AS_IT_COMES
    compile_mode: str | None = None
    streams_only: bool = False

    @property
    def description(self) -> str:
        return self.traits.description

    @property
    def compiled(self) -> bool:
        return self.traits.compiled

    def unsupported_reason(self, backend: str) -> str | None:
        if self.needs and backend not in self.needs:
            return f"{self.name} needs backend {'/'.join(sorted(self.needs))}, not {backend}"
        return None

    def twin_on(self, backend: str) -> Twin | None:
        """The mode this one builds the same kernels as on `backend`, if any."""
        return next((t for t in self.twins if t.backend == backend), None)

    def applies_to(self, varying_shapes: Varying | bool) -> bool:
        """Dynamic-shape compilation is only worth measuring where shapes vary, and a
        strategy for shape streams only on a stream."""
        if self.streams_only:
            return varying_shapes >= Varying.STREAM
        return bool(varying_shapes) or not self.traits.dynamic


def _eager(fn: Callable, inputs: Sequence) -> Callable:
    return fn


def _compiled(mode: str | None, dynamic: bool | None = None) -> Prepare:
    def prepare(fn: Callable, inputs: Sequence) -> Callable:
        import torch

        return torch.compile(fn, mode=mode, dynamic=dynamic)

    return prepare


def _cuda_graph(fn: Callable, inputs: Sequence) -> Callable:
    """Capture the eager function once; each call copies its inputs into the static
    buffers and replays. The returned tensor is the static output, overwritten by
    the next replay, exactly as a hand-written graph loop behaves."""
    import torch

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

    def replay(*args):
        for static, arg in zip(static_inputs, args, strict=True):
            static.copy_(arg)
        graph.replay()
        return static_output

    return replay


def _mode(name: str, prepare: Prepare, description: str, *, compiled: bool = True,
          cuda_graphs: bool = False, autotune: bool = False, dynamic: bool = False,
          needs: frozenset[str] = frozenset(), twins: tuple[Twin, ...] = (),
          strategy: str | None = None, compile_mode: str | None = None,
          streams_only: bool = False) -> Mode:
    return Mode(name, ModeTraits(compiled=compiled, cuda_graphs=cuda_graphs, autotune=autotune,
                                 dynamic=dynamic, description=description), prepare, needs,
                twins, strategy or (AS_IT_COMES if compiled else "eager"),
                compile_mode or (name if compiled else None), streams_only)


def _stream_modes(base: dict[str, Mode]) -> list[Mode]:
    """Each strategy of bench/shapes in each compile mode that no mode of `base` stands for
    already: traits from the compile mode, shapes from the strategy, for streams alone."""
    made = []
    for strategy in STRATEGIES.values():
        for compile_mode in COMPILE_MODES:
            name = mode_name(compile_mode, strategy.name)
            if not strategy.compiled or name in base:
                continue
            like = base[compile_mode]
            made.append(_mode(
                name, _compiled(compile_mode if compile_mode != "default" else None,
                                dynamic=strategy.dynamic),
                f"{like.description}; on a shape stream, {strategy.description}",
                cuda_graphs=like.traits.cuda_graphs, autotune=like.traits.autotune,
                dynamic=strategy.dynamic_from_start, strategy=strategy.name,
                compile_mode=compile_mode, streams_only=True,
                twins=tuple(Twin(t.backend, mode_name(t.mode, strategy.name), t.why)
                            for t in like.twins)))
    return made


MODES: dict[str, Mode] = {
    m.name: m
    for m in (
        _mode("eager", _eager, "PyTorch eager execution, one kernel launch per op", compiled=False),
        _mode("default", _compiled(None),
              "torch.compile() with default options: Inductor fusion, no CUDA graphs"),
        _mode("lite", _compiled("lite"),
              "torch.compile(mode='lite'): Inductor falling back to eager kernels by default, "
              "without graph passes, dead-code elimination or buffer reuse; the least compile "
              "time, meant for regional compilation"),
        _mode("reduce-overhead", _compiled("reduce-overhead"),
              "torch.compile(mode='reduce-overhead'): Inductor plus CUDA graph trees on CUDA",
              cuda_graphs=True, twins=(Twin("cpu", "default", NO_CUDA_GRAPHS),)),
        _mode("max-autotune-no-cudagraphs", _compiled("max-autotune-no-cudagraphs"),
              "torch.compile(mode='max-autotune-no-cudagraphs'): autotuned GEMM/conv templates, "
              "no CUDA graphs", autotune=True),
        _mode("max-autotune", _compiled("max-autotune"),
              "torch.compile(mode='max-autotune'): autotuned templates plus CUDA graphs on CUDA",
              cuda_graphs=True, autotune=True,
              twins=(Twin("cpu", "max-autotune-no-cudagraphs", NO_CUDA_GRAPHS),)),
        _mode("cuda-graph", _cuda_graph,
              "manual torch.cuda.CUDAGraph capture of the eager function with static input buffers",
              compiled=False, cuda_graphs=True, needs=frozenset({"cuda"})),
        _mode("default-dynamic", _compiled(None, dynamic=True),
              "torch.compile(dynamic=True): one graph with symbolic shapes from the first call",
              dynamic=True, strategy="dynamic", compile_mode="default"),
    )
}
MODES |= {m.name: m for m in _stream_modes(MODES)}


def twins_among(modes: Sequence[str], backend: str) -> dict[str, Twin]:
    """The modes of `modes` whose twin on `backend` is among `modes` too, with that twin."""
    found = {}
    for name in modes:
        twin = MODES[name].twin_on(backend)
        if twin is not None and twin.mode in modes:
            found[name] = twin
    return found


def not_separately(mode: str, twin: Twin) -> str:
    """Why `mode` is not measured apart from its twin, in one line."""
    return (f"{mode} is not measured separately on {twin.backend}: it builds the same kernels "
            f"as {twin.mode} there ({twin.why})")
