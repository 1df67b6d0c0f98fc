"""What every `python -m bench ...` command line shares: its one-line errors, its number
checks, and the moment the process started (taken before torch is imported)."""

from __future__ import annotations

import time

PROCESS_STARTED = time.perf_counter()  # before torch: the runner's import cost starts here

import argparse  # noqa: E402
import math  # noqa: E402


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
