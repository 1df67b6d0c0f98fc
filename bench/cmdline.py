"""What every `python -m bench ...` command line shares: its one-line errors, its number
checks, and the moment the process started (taken before torch is imported)."""

from __future__ import annotations

import time

PROCESS_STARTED = time.perf_counter()  # before torch: the runner's import cost starts here

import argparse  # noqa: E402
import math  # noqa: E402
import re  # noqa: E402

# A record tag's free part (an A/B side's label, a cold-start run's --tag).
LABEL = re.compile(r"[A-Za-z0-9._+][A-Za-z0-9._+-]*")
# A torch release as `nox -s ab -- --torch X` and `python -m bench.ab --env LABEL@X=PYTHON`
# take it: a version with any pre-release, dev or local part (2.15.0, 2.16.0rc1,
# 2.16.0.dev20260101, 2.15.0+cpu). It becomes a folder name (.nox/torch-X) and a pip
# requirement (torch==X), so a path such as ../../x never gets that far.
RELEASE = re.compile(r"\d+\.\d+(\.\d+)?[a-z0-9.+-]*")


def release_problem(value: str) -> str | None:
    """Why `value` is not a torch release, in one line, or None if it is one."""
    if RELEASE.fullmatch(value):
        return None
    return (f"{value!r} is not a torch release: give a version such as 2.15.0, 2.16.0rc1, "
            f"2.16.0.dev20260101 or 2.15.0+cpu")


class UsageError(Exception):
    """Bad input from the user: one line, exit status 2."""


class OneLineParser(argparse.ArgumentParser):
    def error(self, message: str):
        raise UsageError(message)


def positive(value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a positive number, got {value!r}") from None
    if not math.isfinite(number) or number <= 0:  # nan passes every comparison
        raise argparse.ArgumentTypeError(f"must be a positive, finite number, got {value!r}")
    return number


def count(value: str) -> int:
    """A whole number of 1 or more: repeats, rounds, batch sizes."""
    try:
        number = int(value)
    except ValueError:
        number = 0
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number of 1 or more, got {value!r}")
    return number


def gpu_slots(value: str | None, backends: list[str]) -> list[str] | None:
    """--gpus: the CUDA_VISIBLE_DEVICES value of each GPU slot, or None for the default slot."""
    from bench import pool

    if value is None:  # one case at a time, on the first GPU
        return pool.visible_gpus()[:1] or None if "cuda" in backends else None
    if "cuda" not in backends:
        raise UsageError(f"--gpus {value} needs the cuda backend; this run measures "
                         f"{', '.join(backends)}")
    visible = pool.visible_gpus()
    if value == "all":
        chosen = list(range(len(visible)))
    elif value.isdigit():  # a count: 2 is GPUs 0 and 1, so 0 is no GPU, never GPU 0
        if int(value) == 0:
            raise UsageError(f"--gpus {value} would run on no GPU: for GPU 0 alone write "
                             "--gpus 1 (a count) or --gpus 0, (an index list)")
        chosen = list(range(int(value)))
    else:  # indices; a trailing comma makes one index a list: 0, is GPU 0
        parts = value.removesuffix(",").split(",")
        if not all(p.strip().isdigit() for p in parts):
            raise UsageError(f"--gpus must be all, a count, or indices such as 0,2 or 0,; "
                             f"got {value!r}")
        chosen = list(dict.fromkeys(int(p) for p in parts))
    if not chosen or max(chosen) >= len(visible):
        raise UsageError(f"--gpus {value} asks for GPUs this host does not have "
                         f"({len(visible)} visible)")
    return [visible[i] for i in chosen]
