"""Test-only: this interpreter behaves as if timm and transformers were not installed.

Tests put this directory first on PYTHONPATH of a `python -m bench` run. Python imports
sitecustomize at start-up; the finder below answers every lookup of those packages (and
their submodules) as a missing package does: `import timm` raises ModuleNotFoundError,
and so does `importlib.util.find_spec("timm")` here, which the runner reads as absent.
"""

import sys

HIDDEN = ("timm", "transformers")


class _Absent:
    @staticmethod
    def find_spec(name, path=None, target=None):
        if name.split(".")[0] in HIDDEN:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, _Absent)
