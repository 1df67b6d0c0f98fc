"""What the runner asks of a case process, and how the process hands its result back.

The runner writes a spec file, starts the child on it, and reads the result file the child
wrote through a rename. A spec is flat JSON: the CaseKey's fields and the spec's own.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, fields
from pathlib import Path

from bench.records import CaseKey

_KEY_FIELDS = tuple(f.name for f in fields(CaseKey))


@dataclass(frozen=True)
class Spec:
    """An isolated process: measure the case `key` with about `budget_s` of timed calls."""

    key: CaseKey
    budget_s: float

    def to_json(self) -> str:
        return json.dumps(asdict(self.key) | {"budget_s": self.budget_s})

    @classmethod
    def from_json(cls, text: str) -> Spec:
        return cls.from_dict(json.loads(text))

    @classmethod
    def from_dict(cls, data: dict) -> Spec:
        return cls(_key(data), float(data["budget_s"]))


@dataclass(frozen=True)
class PairedSpec:
    """A paired process: each of `modes` of `key`'s case, timed side by side in `rounds`
    rounds of one block of about `block_s` per mode. `group` seeds the process's random
    orders and names the group in its records."""

    key: CaseKey
    modes: tuple[str, ...]
    rounds: int
    block_s: float
    group: str

    def to_json(self) -> str:
        return json.dumps(asdict(self.key) | {"modes": list(self.modes), "rounds": self.rounds,
                                              "block_s": self.block_s, "group": self.group})

    @classmethod
    def from_json(cls, text: str) -> PairedSpec:
        return cls.from_dict(json.loads(text))

    @classmethod
    def from_dict(cls, data: dict) -> PairedSpec:
        """The first of `modes` is the key's mode where `data` names none."""
        modes = tuple(data["modes"])
        return cls(_key({"mode": modes[0]} | data), modes, int(data["rounds"]),
                   float(data["block_s"]), str(data["group"]))


@dataclass(frozen=True)
class ColdSpec:
    """A cold-start process (bench/coldstart): `role` "measure" times one rung's first call
    and steady state; "save-aot" and "save-precompile" make the artifact a later process of
    the rung loads; "environment" only reports the environment and the rungs the release
    lacks. Paths are the process's own files: the artifact it saves or loads, the bundle it
    loads (whose bytes must hash to one of `bundle_trusted`) or saves."""

    role: str
    backend: str
    workload: str = ""
    batch_size: int | None = None
    shapes: str = "seed"
    mode: str = "default"
    rung: str = ""
    budget_s: float = 1.0
    machine: str | None = None
    artifact: str | None = None
    bundle_in: str | None = None
    bundle_trusted: tuple[str, ...] = ()
    bundle_out: str | None = None

    ROLES = ("measure", "save-aot", "save-precompile", "environment")

    def __post_init__(self) -> None:
        if self.role not in self.ROLES:
            raise ValueError(f"role {self.role!r} is not one of {', '.join(self.ROLES)}")

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> ColdSpec:
        data = json.loads(text)
        return cls(**data | {"bundle_trusted": tuple(data.get("bundle_trusted", ()))})


def _key(data: dict) -> CaseKey:
    return CaseKey(**{name: data[name] for name in _KEY_FIELDS if name in data})


def write_result(path: Path, result: dict, **empty) -> None:
    """Write `result` whole (through a rename, so the runner never reads half of it); a
    NaN or inf that slipped into a figure makes it an error that says so. `empty` gives
    the fields such an error result still needs."""
    try:
        text = json.dumps(result, allow_nan=False)
    except ValueError as error:
        text = json.dumps({**empty, "status": "error", "duration_s": result["duration_s"],
                           "reason": f"the result is not valid JSON: {error}"})
    partial = path.with_suffix(".partial")
    partial.write_text(text)
    os.replace(partial, path)
