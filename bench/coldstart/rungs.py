"""The cold-start ladder's rungs as data, as bench/modes.py's MODES is for modes: what each
rung's process starts with, what it loads and who made it, which releases and modes have it,
and its words. The runner (runner.py) and the child (child.py) read this table; neither names
a rung. Adding a rung is one entry here and, if it loads something new, a loader in child.py.

Standard library only: report/ reads the words and the order.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Rung:
    name: str
    words: str
    # "ladder" (the rungs a user climbs, in this table's order), "foreign" (a bundle from
    # another environment, run only with --bundle-from), "regional" (block by block)
    group: str
    # The compile caches its process starts with: "empty", or "cold" (the folders its repeat's
    # cold process left, reused as they are).
    caches: str = "empty"
    # The portable bundle: "save" (its process saves one after its timing), "own" (it loads
    # the one its repeat's cold process saved), "foreign" (one saved in another environment).
    bundle: str | None = None
    # The role of an unrecorded process that compiles and saves the artifact it loads
    # (bench/spec.py ColdSpec.ROLES), and the child's loader that turns that into a callable.
    saver: str | None = None
    loader: str = "compile"  # child.LOADERS: "eager", "compile", "per-block", "nested-region", ...
    # The torch APIs it needs, as dotted paths from `torch` ("compiled." is an attribute of
    # what torch.compile returns): without one, its records say so without a process.
    needs: tuple[str, ...] = ()
    only_default: bool = False  # takes no compile mode: measured for default only

    @property
    def needs_cold(self) -> bool:
        """Whether its process may start only once its repeat's cold process left caches."""
        return self.caches == "cold" or self.bundle == "own"


TABLE: dict[str, Rung] = {r.name: r for r in (
    Rung("eager", "eager, no compile", "ladder", loader="eager"),
    Rung("cold", "compiled with empty caches", "ladder", bundle="save"),
    Rung("warm", "compiled again, reusing the cold process's local caches", "ladder",
         caches="cold"),
    Rung("bundle", "empty caches primed with a portable bundle (save/load_cache_artifacts)",
         "ladder", bundle="own"),
    Rung("aot", "torch.compile(...).aot_compile artifact loaded into empty caches", "ladder",
         saver="save-aot", loader="aot",
         needs=("compiled.aot_compile", "compiler.load_compiled_function")),
    Rung("precompile", "torch.compiler.precompile artifact loaded into empty caches", "ladder",
         saver="save-precompile", loader="precompile", needs=("compiler.precompile.capture",),
         only_default=True),
    Rung("foreign-bundle", "empty caches primed with a bundle saved on another machine type",
         "foreign", bundle="foreign"),
    Rung("per-block", "each repeated block compiled on its own, empty caches", "regional",
         loader="per-block"),
    Rung("nested-region", "nested_compile_region on the repeated block, whole model compiled, "
                          "empty caches", "regional", loader="nested-region",
         needs=("compiler.nested_compile_region",)),
)}

ONLY_DEFAULT = "takes no compile mode: measured for default only"
