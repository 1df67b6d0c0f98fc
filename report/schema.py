"""The record format that `report/` reads, version 1.

This mirrors the field names of `bench/records.py`, which is the contract. It is
restated here, not imported, because `report/` must run without torch and without
`bench`: the results files are the only thing the two packages share.

A field is (kind, nullable, default). Fields with a default in `bench/records.py`
may be absent; every other field is required.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

SCHEMA_VERSION = 1

STATUSES = ("ok", "error", "timeout", "oom", "unsupported", "skipped")

_REQUIRED = object()


@dataclass(frozen=True)
class Field:
    kind: str  # "str", "int", "number", "bool", "numbers", "strs", "shapes", "dict"
    nullable: bool = False
    default: Any = _REQUIRED

    @property
    def required(self) -> bool:
        return self.default is _REQUIRED


SECTIONS: dict[str, dict[str, Field]] = {
    "key": {
        "backend": Field("str"),
        "workload": Field("str"),
        "mode": Field("str"),
        "batch_size": Field("int", nullable=True),
        "shapes": Field("str", default="seed"),
        "tag": Field("str", default="main"),
    },
    "env": {
        "machine": Field("str"),
        "backend": Field("str"),
        "os": Field("str"),
        "python": Field("str"),
        "torch": Field("str"),
        "torch_requested": Field("str", nullable=True),
        "triton": Field("str", nullable=True),
        "cuda_runtime": Field("str", nullable=True),
        "cudnn": Field("str", nullable=True),
        "driver": Field("str", nullable=True),
        "device_name": Field("str"),
        "gpu_sm_count": Field("int", nullable=True),
        "gpu_memory_bytes": Field("int", nullable=True),
        "cpu_model": Field("str"),
        "cpu_count": Field("int"),
        "torch_threads": Field("int"),
        "float32_matmul_precision": Field("str"),
        "cuda_matmul_allow_tf32": Field("bool", nullable=True),
        "cudnn_allow_tf32": Field("bool", nullable=True),
        "git_commit": Field("str", nullable=True),
        "git_dirty": Field("bool", nullable=True),
    },
    "workload_info": {
        "family": Field("str"),
        "description": Field("str"),
        "input_shapes": Field("shapes"),
        "dtype": Field("str"),
        "flops": Field("int", nullable=True),
        "bytes_moved": Field("int", nullable=True),
        "parameters": Field("int"),
    },
    "timing": {
        "samples": Field("numbers"),
        "calls_per_sample": Field("int"),
        "warmup_calls": Field("int"),
        "median_s": Field("number"),
        "q1_s": Field("number"),
        "q3_s": Field("number"),
        "iqr_s": Field("number"),
        "min_s": Field("number"),
        "count": Field("int"),
        "wall_per_call_s": Field("number"),
        "timer": Field("str"),
    },
    "compile": {
        "cold_first_call_s": Field("number", nullable=True),
        "warm_first_call_s": Field("number", nullable=True),
        "cold_first_calls_s": Field("numbers", default=()),
    },
    "memory": {
        "peak_device_bytes": Field("int", nullable=True),
        "peak_rss_bytes": Field("int", nullable=True),
    },
    "activity": {
        "profiled_calls": Field("int"),
        "device_kernels_per_call": Field("number", nullable=True),
        "launches_per_call": Field("number", nullable=True),
        "graph_launches_per_call": Field("number", nullable=True),
        "cpu_ops_per_call": Field("number", nullable=True),
        "device_busy_s_per_call": Field("number", nullable=True),
        "busy_fraction": Field("number", nullable=True),
    },
    "dynamo": {
        "graph_breaks": Field("int"),
        "recompiles": Field("int"),
        "unique_graphs": Field("int"),
        "cudagraph_skips": Field("int"),
        "skip_reasons": Field("strs", default=()),
    },
    "correctness": {
        "reference": Field("str"),
        "rel_error": Field("number"),
        "tolerance": Field("number"),
        "passed": Field("bool"),
    },
}

# Top-level fields that are not sections. `key` and `env` are required sections;
# the other sections may be null or absent (a failed case has no timing).
TOP_LEVEL: dict[str, Field] = {
    "status": Field("str"),
    "reason": Field("str", nullable=True),
    "profile": Field("str"),
    "env_id": Field("str"),
    "started_at": Field("str"),
    "duration_s": Field("number"),
    "schema_version": Field("int"),
    "extra": Field("dict", default={}),
}
REQUIRED_SECTIONS = ("key", "env")
