"""How a compiled model meets a stream of shapes: one table entry per strategy.

Each strategy is combined with the compile modes in `COMPILE_MODES`; bench/modes.py makes
one mode of each pair (`mode_name`), so a case's mode names both. What the strategy does
is stated here as data: the `dynamic=` it passes to torch.compile, the torch function it
marks the varying dimension with, the buckets it pads to, or the declarative shapes
specification of the newer releases. bench/shapes/measure.py carries it out; a release
that lacks what a strategy needs has it recorded as unsupported (`lacks`).

Standard library only; torch is imported inside `lacks`.
"""

from __future__ import annotations

from dataclasses import dataclass

# The torch.compile modes each strategy is measured in; eager is the baseline.
COMPILE_MODES = ("default", "reduce-overhead", "max-autotune-no-cudagraphs")


@dataclass(frozen=True)
class Strategy:
    name: str
    description: str
    compiled: bool = True
    dynamic: bool | None = None  # torch.compile(dynamic=...): None lets Dynamo decide
    mark: str | None = None  # a torch._dynamo.decorators function, called on each new input
    bucket: str | None = None  # "pow2" or a multiple such as "64": the size is padded up to it
    spec: bool = False  # torch.compile(dynamic_shapes=...) with the varying dimension declared

    @property
    def dynamic_from_start(self) -> bool:
        """Whether the first compile is already symbolic in the varying dimension."""
        return bool(self.dynamic or self.mark or self.spec)

    def padded(self, size: int) -> int:
        """The size a request of `size` runs at: its bucket, or itself."""
        if self.bucket is None:
            return size
        if self.bucket == "pow2":
            return 1 << (size - 1).bit_length()
        step = int(self.bucket)
        return -(-size // step) * step

    def lacks(self) -> str | None:
        """What this torch release lacks for the strategy, in one line, or None."""
        import torch

        if self.mark and not hasattr(torch._dynamo.decorators, self.mark):
            return f"torch {torch.__version__} has no torch._dynamo.decorators.{self.mark}"
        if self.spec and spec_argument() is None:
            return (f"torch {torch.__version__}'s torch.compile takes no "
                    f"{' or '.join(a + '=' for a in SPEC_ARGUMENTS)} (the declarative shapes "
                    f"specification)")
        return None


# The declarative specification's torch.compile argument, newest name first: torch 2.13 added
# it as shapes_spec= and 2.14 renamed it dynamic_shapes=, with the same spec types (read from
# the wheels' torch/__init__.py and torch/fx/experimental/dynamic_spec.py); 2.12 has neither.
SPEC_ARGUMENTS = ("dynamic_shapes", "shapes_spec")


def spec_argument() -> str | None:
    """The name this torch release's torch.compile takes the specification by, or None."""
    import inspect

    import torch

    taken = inspect.signature(torch.compile).parameters
    return next((name for name in SPEC_ARGUMENTS if name in taken), None)

STRATEGIES: dict[str, Strategy] = {s.name: s for s in (
    Strategy("eager", "no compile: the baseline", compiled=False),
    Strategy("static", "torch.compile(dynamic=False): a graph per new shape, until the "
             "recompile limit; shapes past it run eager", dynamic=False),
    Strategy("automatic-dynamic", "torch.compile() as it comes (dynamic=None): static first, "
             "then symbolic in what changed at the first recompile"),
    Strategy("dynamic", "torch.compile(dynamic=True): symbolic shapes from the first call",
             dynamic=True),
    Strategy("mark-dynamic", "torch._dynamo.mark_dynamic on the varying dimension of each "
             "input before its first call", mark="mark_dynamic"),
    Strategy("mark-unbacked", "torch._dynamo.decorators.mark_unbacked on the varying dimension "
             "of each input before its first call: no guard on its value, 0 and 1 included",
             mark="mark_unbacked"),
    Strategy("pad-pow2", "padding the varying dimension up to the next power of two (with an "
             "attention mask where the model takes one), torch.compile(dynamic=False)",
             dynamic=False, bucket="pow2"),
    Strategy("pad64", "padding the varying dimension up to the next multiple of 64 (with an "
             "attention mask where the model takes one), torch.compile(dynamic=False)",
             dynamic=False, bucket="64"),
    Strategy("shapes-spec", f"torch.compile({SPEC_ARGUMENTS[0]}=...) declaring the varying "
             "dimension with its range (torch.fx.experimental.dynamic_spec)", spec=True),
)}

# Strategies that existing modes already stand for: every other mode compiles as it comes,
# and default-dynamic is torch.compile(dynamic=True).
AS_IT_COMES = "automatic-dynamic"
EXISTING = {("default", "dynamic"): "default-dynamic"}


def mode_name(compile_mode: str, strategy: str) -> str:
    """The mode that stands for `strategy` in `compile_mode`."""
    if strategy == AS_IT_COMES:
        return compile_mode
    return EXISTING.get((compile_mode, strategy), f"{compile_mode}-{strategy}")
