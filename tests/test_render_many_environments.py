"""Issue 94, fault f, the parts of the render's time and memory that tests/test_render_scale.py
does not count: the GPU-type pairs without testing every two environments of one GPU, and the
garbage collector's state after a build (full collections run between pages only)."""

from __future__ import annotations

import gc
import itertools
import random

from fixtures import RESULTS

from report import build as report_build
from report.analysis import Environment
from report.pages import gpu_types


def environment(device: str, label: str, torch: str = "2.11.0") -> Environment:
    fields = {name: ("same",) for name in gpu_types.SOFTWARE}
    fields.update(backend=(gpu_types.BACKEND,), torch=(torch,), device_name=(device,))
    return Environment(f"{device}-{label}-{torch}", gpu_types.BACKEND, label, tuple(fields.items()),
                       record_count=2, repeated=False)


def every_two(envs: list[Environment]) -> list[tuple[Environment, Environment]]:
    """gpu_types.pairs as it was: every two environments of one software, GPUs different."""
    groups: dict[tuple, list[Environment]] = {}
    for env in envs:
        groups.setdefault(tuple(gpu_types.field(env, n) for n in gpu_types.SOFTWARE), []).append(env)
    found = []
    for group in groups.values():
        group = sorted(group, key=lambda e: (gpu_types.field(e, "device_name"), e.label))
        found += [(a, b) for a, b in itertools.combinations(group, 2)
                  if gpu_types.field(a, "device_name") != gpu_types.field(b, "device_name")]
    return sorted(found, key=lambda p: (p[0].label, p[1].label))


def test_gpu_type_pairs_are_every_two_environments_of_different_gpus_in_the_same_order():
    rng = random.Random(94)
    for _ in range(200):
        envs = [environment(rng.choice("ABC"), rng.choice("pqrs"), rng.choice(("2.11.0", "2.12.1")))
                for _ in range(rng.randint(0, 14))]
        assert [(id(a), id(b)) for a, b in gpu_types.pairs(envs)] == [
            (id(a), id(b)) for a, b in every_two(envs)]


def test_gpu_type_pairs_of_many_environments_of_one_gpu_are_none_and_quick():
    # Before, 3,000 environments of one GPU were 4.5 million comparisons of their fields.
    envs = [environment("H100", f"many-{i:05d}") for i in range(3000)]
    assert gpu_types.pairs(envs) == []
    two = [*envs[:2], environment("H200", "other")]
    assert [(a.label, b.label) for a, b in gpu_types.pairs(two)] == [
        ("many-00000", "other"), ("many-00001", "other")]


def test_a_build_leaves_the_garbage_collector_as_it_found_it(tmp_path):
    before = gc.get_threshold(), gc.get_freeze_count(), gc.isenabled()
    report_build.build(RESULTS, tmp_path / "docs", workers=1)
    assert (gc.get_threshold(), gc.get_freeze_count(), gc.isenabled()) == before
