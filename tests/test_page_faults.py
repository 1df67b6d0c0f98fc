"""Issue 91: every timed call's minor page faults are recorded (records version 8), in an
isolated and in a paired process, since a memory-bound eager case on a CPU runs in one of two
modes by how often glibc's malloc hands back the blocks it freed. Real calls, real counts."""

from __future__ import annotations

import dataclasses
import json

import pytest
import torch
from fixtures import host_records
from fixtures import make_results as fx

from bench import paired
from bench.backends import BACKENDS
from bench.host import probe as host_probe
from bench.modes import MODES
from bench.records import SCHEMA_VERSION, parse_line
from bench.spec import PairedSpec
from bench.timer import measure

CPU = BACKENDS["cpu"]
FRESH_BYTES = 64 << 20  # above glibc's largest mmap threshold (32 MiB): always fresh pages
# A 64 MiB block is 16,384 small pages, or 32 huge ones where transparent huge pages are on
# for every mapping: at least this many faults whichever the machine does.
FEWEST_FAULTS = 32


def fresh_pages():
    return torch.empty(FRESH_BYTES // 4).fill_(1.0)


def test_an_isolated_timing_counts_the_faults_of_fresh_pages_and_none_in_place():
    fresh = measure(fresh_pages, CPU, budget_s=0.05)
    kept = torch.ones(1 << 16)
    in_place = measure(lambda: kept.add_(1.0), CPU, budget_s=0.05)
    assert fresh.page_faults_per_call >= FEWEST_FAULTS
    assert in_place.page_faults_per_call < 1


def test_a_paired_mode_counts_its_own_blocks_faults_not_the_other_modes(monkeypatch):
    def allocating(fn, inputs):
        def call(*args):
            fresh_pages()
            return fn(*args)
        return call

    allocates = dataclasses.replace(MODES["eager"], name="eager-allocating", prepare=allocating)
    monkeypatch.setitem(paired.MODES, "eager-allocating", allocates)
    result = {"status": "ok", "reason": None, "modes": {}}
    spec = {"backend": "cpu", "workload": "trivial-call", "batch_size": None, "shapes": "tiny",
            "tag": "main", "rounds": 6, "block_s": 0.01, "group": "faults",
            "modes": ["eager", "eager-allocating"]}
    paired.run(PairedSpec.from_dict(spec), result)
    faults = {name: share["timing"]["page_faults_per_call"]
              for name, share in result["modes"].items()}
    assert faults["eager-allocating"] >= FEWEST_FAULTS
    assert faults["eager"] < 1


def test_glibc_settings_from_the_environment_are_named_with_the_allocator(monkeypatch):
    monkeypatch.setattr(host_probe, "_read", lambda path: "" if path == "/proc/self/maps" else None)
    for name in host_probe.GLIBC_SETTINGS:
        monkeypatch.delenv(name, raising=False)
    assert host_probe._allocator() == "glibc"
    monkeypatch.setenv("MALLOC_TRIM_THRESHOLD_", "1000000000")
    monkeypatch.setenv("MALLOC_MMAP_THRESHOLD_", "1000000000")
    assert host_probe._allocator() == ("glibc MALLOC_MMAP_THRESHOLD_=1000000000 "
                                       "MALLOC_TRIM_THRESHOLD_=1000000000")


def test_a_version_7_record_loads_without_faults_and_a_negative_count_is_refused():
    record = host_records.paired(fx.ENV_A, "vit16x6x384", "boot-1", 7e-6, 0)[0]
    counted = dataclasses.replace(record, timing=dataclasses.replace(record.timing,
                                                                     page_faults_per_call=12.5))
    assert parse_line(counted.to_json().encode()) == counted
    old = json.loads(counted.to_json())
    old["schema_version"] = 7
    del old["timing"]["page_faults_per_call"]
    found = parse_line(json.dumps(old).encode())
    assert found.schema_version == SCHEMA_VERSION >= 8
    assert found.timing.page_faults_per_call is None
    negative = json.loads(counted.to_json())
    negative["timing"]["page_faults_per_call"] = -1.0
    with pytest.raises(ValueError, match="page_faults_per_call"):
        parse_line(json.dumps(negative).encode())
