"""A worker for the concurrent-append test; importable by multiprocessing's spawn."""

from __future__ import annotations

from pathlib import Path

from bench.records import append_record

from . import make_record

# Big enough that one line spans many pages, so an unlocked writer could interleave.
PAYLOAD = "x" * 20_000


def append_many(path: str, worker: int, count: int, barrier) -> None:
    barrier.wait()  # start together, so the appends really overlap
    for number in range(count):
        record = make_record(tag=f"w{worker}-{number}", extra={"payload": PAYLOAD})
        append_record(Path(path), record)
