"""Packages that some workloads need beyond torch: timm and transformers, for the real models.

They are an optional install (`pip install '.[models]'`). The runner only asks whether
they can be found, without importing them, so `python -m bench --list` and every other
workload work without them; a case process imports them when it builds the model.
Standard library only.
"""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType

INSTALL = "pip install '.[models]'"


class MissingPackage(ImportError):
    """A workload's package is not installed; the message is one line naming the install."""


def missing(packages: tuple[str, ...]) -> list[str]:
    """The packages of `packages` that this interpreter cannot find."""
    return [name for name in packages if not _findable(name)]


def _findable(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # a parent package that fails, or a broken spec
        return False


def needs(packages: list[str]) -> str:
    """'timm and transformers, which are not installed here (...)': ends a one-line error."""
    names = " and ".join(packages)
    which = "which is" if len(packages) == 1 else "which are"
    return f"{names}, {which} not installed here (install the models group: {INSTALL})"


def load(name: str) -> ModuleType:
    """`import name`, or MissingPackage saying how to install it."""
    try:
        return importlib.import_module(name)
    except ImportError as error:
        first = str(error).splitlines()[0][:200] if str(error) else type(error).__name__
        raise MissingPackage(f"this workload needs {needs([name])}; importing it said: {first}"
                             ) from None
