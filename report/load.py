"""Read results/**/*.jsonl into validated, immutable `Result`s.

Every problem with a line raises `ResultsError` whose message is one line that
starts with `file:line:`, so the CLI can print it and a person can open the line.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from report.schema import (
    REQUIRED_SECTIONS,
    SCHEMA_VERSION,
    SECTIONS,
    STATUSES,
    TOP_LEVEL,
    Field,
)


class ResultsError(ValueError):
    """A results file that cannot be read; the message is one line naming file:line."""


@dataclass(frozen=True)
class Result:
    """One record, flattened where pages need it and keeping every section as read."""

    source: str  # "results/x.jsonl:17", where this record came from
    backend: str
    workload: str
    mode: str
    batch_size: int | None
    shapes: str
    tag: str
    status: str
    reason: str | None
    profile: str
    env_id: str
    env: dict[str, Any]
    started_at: datetime
    duration_s: float
    workload_info: dict[str, Any] | None
    timing: dict[str, Any] | None
    compile: dict[str, Any] | None
    memory: dict[str, Any] | None
    activity: dict[str, Any] | None
    dynamo: dict[str, Any] | None
    correctness: dict[str, Any] | None
    probes: dict[str, dict[str, Any]]

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def median_s(self) -> float | None:
        return self.timing["median_s"] if self.ok and self.timing else None


def load_results(results_dir: Path) -> list[Result]:
    """All records under `results_dir`, in file then line order. A missing dir is empty."""
    results_dir = Path(results_dir)
    if not results_dir.exists():
        return []
    if not results_dir.is_dir():
        raise ResultsError(f"{results_dir}: not a directory")
    results: list[Result] = []
    for path in sorted(results_dir.rglob("*.jsonl")):
        results.extend(read_file(path))
    return results


def read_file(path: Path) -> list[Result]:
    results = []
    # Bytes, decoded line by line, so that even bad UTF-8 is reported with its line.
    with open(path, "rb") as lines:
        for number, raw in enumerate(lines, start=1):
            source = f"{path}:{number}"
            try:
                line = raw.decode("utf-8")
                if line.strip():
                    results.append(parse_line(line, source))
            except (ValueError, TypeError) as error:  # UnicodeDecodeError is a ValueError
                raise ResultsError(f"{source}: {error}") from None
    return results


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not valid JSON (bench writes with allow_nan=False)")


def parse_line(line: str, source: str) -> Result:
    try:
        data = json.loads(line, parse_constant=_reject_constant)
    except json.JSONDecodeError as error:
        raise ValueError(f"not valid JSON ({error.msg} at column {error.colno})") from None
    if not isinstance(data, dict):
        raise ValueError(f"expected a JSON object, got {type(data).__name__}")
    # The version decides how everything else is read, so it is checked first.
    version = data.get("schema_version")
    if version != SCHEMA_VERSION:
        raise ValueError(
            f"schema_version {version!r} is not supported (this reader knows {SCHEMA_VERSION})"
        )
    top = _fields(data, TOP_LEVEL, "")
    sections = {}
    for name, fields in SECTIONS.items():
        value = data.get(name)
        if value is None:
            if name in REQUIRED_SECTIONS:
                raise ValueError(f"missing required field {name!r}")
            sections[name] = None
            continue
        if not isinstance(value, dict):
            raise ValueError(f"{name}: expected an object, got {type(value).__name__}")
        sections[name] = _fields(value, fields, f"{name}.")
    if top["status"] not in STATUSES:
        raise ValueError(f"status {top['status']!r} is not one of {', '.join(STATUSES)}")
    key, env = sections["key"], sections["env"]
    if env["backend"] != key["backend"]:
        raise ValueError(
            f"env.backend {env['backend']!r} differs from key.backend {key['backend']!r}")
    return Result(
        source=source,
        backend=key["backend"],
        workload=key["workload"],
        mode=key["mode"],
        batch_size=key["batch_size"],
        shapes=key["shapes"],
        tag=key["tag"],
        status=top["status"],
        reason=top["reason"],
        profile=top["profile"],
        env_id=top["env_id"],
        env=env,
        started_at=_timestamp(top["started_at"]),
        duration_s=top["duration_s"],
        workload_info=sections["workload_info"],
        timing=sections["timing"],
        compile=sections["compile"],
        memory=sections["memory"],
        activity=sections["activity"],
        dynamo=sections["dynamo"],
        correctness=sections["correctness"],
        probes=_probes(top["extra"]),
    )


def _fields(data: dict[str, Any], fields: dict[str, Field], prefix: str) -> dict[str, Any]:
    """Check each declared field; unknown keys are ignored so a newer writer that only
    adds optional fields stays readable."""
    out = {}
    for name, spec in fields.items():
        if name not in data:
            if spec.required:
                raise ValueError(f"missing required field '{prefix}{name}'")
            out[name] = spec.default
            continue
        out[name] = _checked(data[name], spec, f"{prefix}{name}")
    return out


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return (_is_int(value) or isinstance(value, float)) and math.isfinite(value)


_KIND_CHECKS = {
    "str": (lambda v: isinstance(v, str), "a string"),
    "int": (_is_int, "an integer"),
    "number": (_is_number, "a finite number"),
    "bool": (lambda v: isinstance(v, bool), "true or false"),
    "dict": (lambda v: isinstance(v, dict), "an object"),
    "numbers": (lambda v: isinstance(v, list) and all(map(_is_number, v)), "a list of numbers"),
    "strs": (lambda v: isinstance(v, list) and all(isinstance(s, str) for s in v),
             "a list of strings"),
    "shapes": (lambda v: isinstance(v, list)
               and all(isinstance(s, list) and all(map(_is_int, s)) for s in v),
               "a list of integer lists"),
}


def _checked(value: Any, spec: Field, name: str) -> Any:
    if value is None:
        if spec.nullable:
            return None
        raise ValueError(f"field {name!r} must not be null")
    accepts, expected = _KIND_CHECKS[spec.kind]
    if not accepts(value):
        raise ValueError(f"field {name!r} must be {expected}, got {value!r}")
    if spec.kind == "shapes":
        return tuple(tuple(shape) for shape in value)
    if spec.kind in ("numbers", "strs"):
        return tuple(value)
    return value


def _timestamp(text: str) -> datetime:
    # Python 3.10 does not parse a trailing "Z"; the contract says UTC, so naive means UTC.
    try:
        stamp = datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith("Z") else text)
    except ValueError:
        raise ValueError(f"field 'started_at' is not an ISO 8601 time: {text!r}") from None
    return stamp if stamp.tzinfo else stamp.replace(tzinfo=timezone.utc)


def _probes(extra: dict[str, Any]) -> dict[str, dict[str, Any]]:
    probes = extra.get("probes", {})
    if not isinstance(probes, dict):
        raise ValueError("field 'extra.probes' must be an object")
    for name, probe in probes.items():
        # "value" may be any JSON value (tf32-matmul writes an object); only the
        # one-line summary is required, since it is what pages show.
        if not (isinstance(probe, dict) and isinstance(probe.get("summary"), str)):
            raise ValueError(f"probe {name!r} must be an object with a string 'summary'")
    return {name: {"summary": p["summary"], "value": p.get("value")}
            for name, p in sorted(probes.items())}
