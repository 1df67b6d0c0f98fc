"""The workload registry: `WORKLOADS` in the order of `registry.ORDER`, and `lookup`.

`lookup(name)` takes a registry name or a `package.module:factory` spec for a model of
your own (see bench/workloads/external.py), and raises UnknownWorkload with a one-line
message otherwise.

Importing this package imports no torch: the report reads `registry.ORDER` through it.
`WORKLOADS`, `Workload` and `Built` load the workload modules (and torch) on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from bench.workloads.registry import ENTRIES, ORDER, UnknownWorkload, unknown_name

if TYPE_CHECKING:
    from bench.workloads.base import Built, Workload

_loaded: dict[str, Workload] = {}


def _registry() -> dict[str, Workload]:
    if not _loaded:
        found = {}
        for name, where in ENTRIES:
            module, attribute = where.split(":")
            workload = getattr(importlib.import_module(module), attribute)
            if workload.name != name:
                raise ValueError(f"registry entry {name!r} points at {where}, which is "
                                 f"{workload.name!r}")
            found[name] = workload
        _loaded.update(found)
    return _loaded


def lookup(name: str) -> Workload:
    """The registered workload `name`, or the external one a `package.module:factory` names."""
    if ":" in name:
        from bench.workloads import external

        return external.resolve(name)
    try:
        return _registry()[name]
    except KeyError:
        raise unknown_name(name) from None


def check_name(name: str) -> None:
    """UnknownWorkload unless `name` is registered or is a well-written
    `package.module:factory` spec; a spec's factory is checked later, in a child process
    (`external.check`), never by the process that asks here."""
    if ":" in name:
        from bench.workloads import external

        external.check_syntax(name)
    elif name not in ORDER:
        raise unknown_name(name)


def __getattr__(name: str) -> Any:
    if name == "WORKLOADS":
        return _registry()
    if name in ("Built", "Workload"):
        from bench.workloads import base

        return getattr(base, name)
    raise AttributeError(f"module 'bench.workloads' has no attribute {name!r}")


__all__ = ["ORDER", "WORKLOADS", "Built", "UnknownWorkload", "Workload", "check_name", "lookup"]
