"""Issue 91: every process records the settings that may make a memory-bound eager case on a
CPU bimodal across processes (records version 7): its CPUs, the transparent huge page mode,
the allocator and the NUMA nodes. Read from this machine, not made up."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

import pytest
from fixtures import host_records
from fixtures import make_results as fx

from bench.backends import BACKENDS
from bench.host import probe as host_probe
from bench.records import SCHEMA_VERSION, parse_line


def test_the_fingerprint_reads_this_process_cpus_thp_allocator_and_numa_nodes():
    fingerprint = host_probe.Fingerprint(BACKENDS["cpu"])
    probe = host_probe.Probe(BACKENDS["cpu"])
    probe.block()
    found = fingerprint.host(probe)
    assert found["cpus"] == sorted(os.sched_getaffinity(0))
    assert found["cpus_available"] == len(found["cpus"])
    enabled = Path("/sys/kernel/mm/transparent_hugepage/enabled")
    if enabled.exists():
        text = enabled.read_text()
        assert f"[{found['thp']}]" in text  # the chosen one, not the first listed
    else:
        assert found["thp"] is None
    assert found["allocator"] == "glibc"  # nothing preloads another malloc in the tests
    nodes = list(Path("/sys/devices/system/node").glob("node[0-9]*"))
    assert found["numa_nodes"] == (len(nodes) or None)


def test_a_preloaded_allocator_is_named(monkeypatch):
    maps = ("7f0000000000-7f0000001000 r-xp 00000000 08:01 1 /usr/lib/x86_64-linux-gnu/libc.so.6\n"
            "7f0000002000-7f0000003000 r-xp 00000000 08:01 2 "
            "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2\n")
    monkeypatch.setattr(host_probe, "_read", lambda path: maps if path == "/proc/self/maps" else None)
    assert host_probe._allocator() == "libjemalloc.so.2"
    assert host_probe._chosen("/sys/kernel/mm/transparent_hugepage/enabled") is None


@pytest.mark.parametrize("text, chosen", [("always [madvise] never", "madvise"),
                                          ("[always] madvise never", "always"),
                                          ("always defer defer+madvise [madvise] never", "madvise")])
def test_the_bracketed_choice_is_the_setting(monkeypatch, text, chosen):
    monkeypatch.setattr(host_probe, "_read", lambda path: text)
    assert host_probe._chosen("any") == chosen


def test_the_settings_round_trip_and_a_version_6_record_loads_without_them():
    record = host_records.paired(fx.ENV_A, "vit16x6x384", "boot-1", 7e-6, 0)[0]
    settings = dataclasses.replace(record.host, cpus=(0, 1), thp="madvise", thp_defrag="madvise",
                                   allocator="glibc", numa_nodes=1)
    with_settings = dataclasses.replace(record, host=settings)
    assert parse_line(with_settings.to_json().encode()) == with_settings
    old = json.loads(with_settings.to_json())
    old["schema_version"] = 6
    for name in ("cpus", "thp", "thp_defrag", "allocator", "numa_nodes"):
        del old["host"][name]
    found = parse_line(json.dumps(old).encode())
    assert found.schema_version == SCHEMA_VERSION
    assert (found.host.cpus, found.host.thp, found.host.allocator, found.host.numa_nodes) == \
        ((), None, None, None)
    assert found.host.op_s == record.host.op_s
