"""A shape stream's calls in one fresh process, as a service would make them.

`StreamCalls` turns a stream workload, a mode and its strategy into one callable per request
size: it pads to the strategy's bucket (with an attention mask where the model takes one)
and cuts the output back, or marks the varying dimension dynamic, around the compiled
model. `first_pass` makes the stream's calls in order, each synchronized and timed alone,
compiles included, noting per size the first call, whether Dynamo ran no graph for it (the
recompile limit's fallback to eager), and on CUDA the graphs recorded and the memory
reserved. `steady` replays the stream, every shape seen, for per-call samples; `check`
compares a few sizes with the float64 build, padding cut off first.
"""

from __future__ import annotations

import math

import torch

from bench.backends import Backend
from bench.modes import Mode
from bench.observe import output_error
from bench.records import CaseKey
from bench.shapes.strategies import STRATEGIES, spec_argument
from bench.shapes.streams import distinct
from bench.stats import summarize
from bench.workloads import Built, Workload

# Steady passes over the whole stream: at least one, more while the budget lasts.
MAX_STEADY_PASSES = 5
# Sizes checked against float64: the smallest, the middle and the largest requested.
REASONS_KEPT = 20


def turn_caches_off() -> None:
    """Every process of a stream compiles as the first: no on-disk Inductor cache, and no
    profile of the dims that turned dynamic in an earlier process (Dynamo's PGO), which
    would start automatic dynamic shapes out dynamic."""
    torch._inductor.config.force_disable_caches = True  # an alias of torch.compiler.config's


def caches_off() -> bool:
    return bool(torch._inductor.config.force_disable_caches)


def recompile_limit() -> int | None:
    config = torch._dynamo.config
    return getattr(config, "recompile_limit", getattr(config, "cache_size_limit", None))


def cudagraph_recordings() -> int | None:
    """Graphs that CUDA graph trees have recorded in this process so far: the nodes of its
    trees. None where this release keeps them otherwise."""
    try:
        from torch._inductor import cudagraph_trees

        # torch 2.11 takes the device index positionally and has no default for it.
        manager = cudagraph_trees.get_manager(torch.cuda.current_device(),
                                              create_if_none_exists=False)
        if manager is None:
            return 0
        count, todo = 0, list(manager.get_roots())
        while todo:
            node = todo.pop()
            count += 1
            todo.extend(child for children in node.children.values() for child in children)
        return count
    except (AttributeError, ImportError, TypeError):
        return None


def guard_failures() -> list[str]:
    """Every failed guard check Dynamo logged as the reason for a recompile, in order."""
    from torch._dynamo.utils import guard_failures as by_code

    return [str(reason) for reasons in by_code.values() for reason in reasons]


def _first_lines(reasons: list[str]) -> tuple[str, ...]:
    lines = (r.strip().splitlines()[0][:300] if r.strip() else "no reason given" for r in reasons)
    return tuple(dict.fromkeys(lines))[:REASONS_KEPT]


class StreamCalls:
    def __init__(self, workload: Workload, mode: Mode, built: Built, backend: Backend,
                 key: CaseKey, compiler: str = "inductor") -> None:
        """`compiler`: torch.compile's backend. Cases compile with Inductor; the tests of the
        strategies, which are Dynamo's business, trace with aot_eager to spare C++ compiles."""
        self.workload, self.mode, self.built, self.backend = workload, mode, built, backend
        self.compiler = compiler
        self.strategy = STRATEGIES[mode.strategy]
        self.sized = built.sized
        self.stream = workload.stream
        self.tiny = key.shapes == "tiny"
        self.sizes = self.stream.sizes(key.backend, self.tiny)
        self.eager_runs = 0
        self.cuda = backend.name == "cuda"
        self.graphs = self.cuda and mode.traits.cuda_graphs
        self.per_size: dict[int, dict] = {}
        self.call_fn = self._compiled() if mode.compiled else built.fn

    def _compiled(self):
        fn, calls = self.built.fn, self

        def guarded(*args):
            # Dynamo replaces this frame by its graph; its body runs in Python only when no
            # graph serves the call (the recompile limit reached), which is what it counts.
            if not torch.compiler.is_compiling():
                calls.eager_runs += 1
            return fn(*args)

        mode = self.mode.compile_mode
        options = {"backend": self.compiler}
        if self.compiler == "inductor":  # other backends take no mode
            options["mode"] = None if mode == "default" else mode
        if self.strategy.dynamic is not None:
            options["dynamic"] = self.strategy.dynamic
        if self.strategy.spec:
            options[spec_argument()] = self._declared()
        return torch.compile(guarded, **options)

    def _declared(self):
        """The varying dimension of every varying input as one ShapeVar over the stream's
        range; every other dimension and input static."""
        from torch.fx.experimental.dynamic_spec import ShapeVar, TensorSpec

        low, high = self.stream.drawn_from(self.backend.name, self.tiny).bounds
        size = ShapeVar("size", min=low, max=high)
        example = self.sized.request(self.sizes[0])
        specs = []
        for position, x in enumerate(example):
            if position in self.sized.varying:
                specs.append(TensorSpec([size if d == self.sized.dim else None
                                         for d in range(x.dim())]))
            else:
                specs.append(None)
        return {"*args": specs}

    # ---- one call ------------------------------------------------------------------------

    def _padded(self, request: tuple[torch.Tensor, ...], size: int, to: int):
        dim, out = self.sized.dim, list(request)
        for position in self.sized.varying:
            x = request[position]
            shape = list(x.shape)
            shape[dim] = to
            padded = x.new_zeros(shape)
            padded.narrow(dim, 0, size).copy_(x)
            out[position] = padded
        if self.sized.masked:
            mask = torch.zeros(request[0].shape[0], to, dtype=torch.long, device=request[0].device)
            mask[:, :size] = 1
            out.append(mask)
        return tuple(out)

    def call(self, size: int) -> torch.Tensor:
        """One request of `size`, as the strategy serves it; the output at the request's size."""
        request = self.sized.request(size)
        if self.strategy.bucket:
            args = self._padded(request, size, self.strategy.padded(size))
            return self.call_fn(*args).narrow(self.sized.out_dim, 0, size)
        if self.strategy.mark:
            mark = getattr(torch._dynamo.decorators, self.strategy.mark)
            for position in self.sized.varying:
                mark(request[position], self.sized.dim)
        return self.call_fn(*request)

    # ---- the passes ----------------------------------------------------------------------

    def _served(self, size: int) -> float:
        """One timed call of `size`, its costs added to its run size's entry of `per_size`:
        the first call there, the fallback to eager, and on CUDA the graphs recorded and the
        reserved memory grown. CUDA graph trees warm up on a size's first call and record on
        a later one, often in the steady passes, so those count in every pass."""
        run_size = self.strategy.padded(size)
        eager = self.eager_runs
        recorded = cudagraph_recordings() if self.graphs else None
        reserved = torch.cuda.memory_reserved() if self.cuda else None
        start = self.backend.clock()
        self.call(size)
        elapsed = self.backend.clock() - start
        cost = self.per_size.setdefault(run_size, {
            "size": run_size, "calls": 0, "first_call_s": elapsed, "fell_back": False,
            "cudagraph_recordings": 0 if self.graphs else None,
            "reserved_growth_bytes": 0 if self.cuda else None})
        cost["fell_back"] |= self.mode.compiled and self.eager_runs > eager
        if self.graphs:
            after = cudagraph_recordings()
            if after is None or recorded is None or cost["cudagraph_recordings"] is None:
                cost["cudagraph_recordings"] = None
            else:
                cost["cudagraph_recordings"] += after - recorded
        if self.cuda:
            cost["reserved_growth_bytes"] += max(0, torch.cuda.memory_reserved() - reserved)
        return elapsed

    def first_pass(self) -> dict:
        """The stream's calls in order, compiles included: the record's stream section. Its
        per_size entries go on growing in the steady passes (`_served`)."""
        times = []
        for size in self.sizes:
            times.append(self._served(size))
            self.per_size[self.strategy.padded(size)]["calls"] += 1
        failures = guard_failures() if self.mode.compiled else []
        return {"stream": self.stream.name,
                "distribution": self.stream.describe(self.backend.name, self.tiny),
                "seed": self.stream.seed, "varying_dim": self.stream.dim,
                "sizes": list(self.sizes), "strategy": self.strategy.name,
                "compile_mode": self.mode.compile_mode,
                "run_sizes": [self.strategy.padded(size) for size in self.sizes],
                "first_pass_s": times, "recompile_limit": recompile_limit(),
                "guard_failures": len(failures),
                "guard_failure_reasons": list(_first_lines(failures)),
                "per_size": list(self.per_size.values()), "caches_off": caches_off()}

    def steady(self, budget_s: float) -> dict:
        """Per-call samples over whole passes of the stream, every shape already seen: at
        least one pass, more while `budget_s` lasts (at most MAX_STEADY_PASSES)."""
        samples: list[float] = []
        began = self.backend.clock()
        for _ in range(MAX_STEADY_PASSES):
            samples.extend(self._served(size) for size in self.sizes)
            if self.backend.clock() - began >= budget_s:
                break
        wall = self.backend.clock() - began
        return {"samples": samples, "calls_per_sample": 1, "warmup_calls": len(self.sizes),
                "wall_per_call_s": wall / len(samples), "timer": "perf-counter",
                **summarize(samples)}

    def checked_sizes(self) -> tuple[int, ...]:
        ordered = sorted(distinct(self.sizes))
        return tuple(dict.fromkeys((ordered[0], ordered[len(ordered) // 2], ordered[-1])))

    def check(self, reference: Built, tolerance: float) -> dict:
        """The largest relative error against `reference` (the float64 build) over
        `checked_sizes`, each output at its request's size: padding never compared."""
        error = 0.0
        for size in self.checked_sizes():
            out = self.call(size).detach().clone()
            expected = reference.fn(*reference.sized.request(size))
            error = max(error, output_error(out, expected))
        if not math.isfinite(error):
            error = 1e30
        return {"reference": "float64", "rel_error": min(error, 1e30), "tolerance": tolerance,
                "passed": bool(error <= tolerance)}
