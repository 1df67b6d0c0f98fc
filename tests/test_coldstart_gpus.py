"""`python -m bench.coldstart --gpus`: a case's rungs of one repeat run in order on one slot
(warm reuses the cold process's caches), the slots take those chains from one queue at the
same time, every process is pinned to its slot's share of the cores, and every record says
on which slot and beside how many it ran. The slots here are CPU slots: the scheduling and
pinning are the same, and a CUDA_VISIBLE_DEVICES value means nothing to a CPU process."""

from __future__ import annotations

import json
import os
import shutil
from datetime import datetime
from pathlib import Path

import pytest

from bench import pool
from bench.coldstart.__main__ import environment
from bench.coldstart.records import ColdKey, read_folder
from bench.coldstart.runner import Config, Job, Runner, chains, plan, run_child
from bench.spec import ColdSpec

ROOT = Path(__file__).resolve().parents[1]


def test_a_chain_is_one_case_and_repeat_in_ladder_order():
    config = Config(backend="cpu", workloads=("mlp", "entropy"), batch_sizes=(1,),
                    modes=("default",), rungs=("eager", "cold", "warm", "bundle"), repeats=2,
                    shapes="tiny", results_dir=Path("r"), cache_dir=Path("c"))
    found = chains(plan(config, []))
    described = [[(j.key.workload, j.key.rung, j.repeat) for j in chain] for chain in found]
    assert described[:2] == [[("mlp", "eager", 0)],
                             [("mlp", "cold", 0), ("mlp", "warm", 0), ("mlp", "bundle", 0)]]
    assert len(found) == 8  # 2 workloads x 2 repeats x (eager, the compiled ladder)
    # one slot runs the chains one after another: the plan's own order
    assert [j for chain in found for j in chain] == plan(config, [])


def test_a_foreign_bundle_is_a_chain_of_its_own():
    key = ColdKey("cpu", "mlp", "default", 1, "foreign-bundle", "tiny", "from-x")
    one, two = Job(key, 0, foreign=type("F", (), {"path": Path("a.bin")})()), \
        Job(key, 0, foreign=type("F", (), {"path": Path("b.bin")})())
    assert chains([one, two]) == [[one], [two]]


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity"), reason="CPU affinity is Linux's")
def test_a_process_is_pinned_to_its_slot_by_the_shared_launcher(tmp_path):
    """A cold-start process goes through bench/pool.py's launcher, which applies the slot's
    cores and threads before the child imports anything of its own: the environment it
    reports has the slot's threads."""
    slot = pool.Slot(gpu=None, threads=1, cpus=(0,))
    scratch = pool.new_scratch()
    try:
        code = run_child(pool.Launcher("spawn"), ColdSpec("environment", "cpu", machine="pinned"),
                         {}, slot, scratch, 300)
        assert code == 0, (scratch / "log.txt").read_text()[-2000:]
        found = json.loads((scratch / "result.json").read_text())
        assert found["environment"]["torch_threads"] == 1
        assert found["environment"]["machine"] == "pinned"
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def test_two_slots_run_chains_at_once_and_each_chain_on_one_slot(tmp_path):
    gpus = ("0", "1")
    slots = pool.slots_for(list(gpus))
    env, missing = environment("cpu", "two-slots", slots[0])
    assert env.torch_threads == slots[0].threads  # the environment as a slot's process sees it
    config = Config(backend="cpu", workloads=("matmul-128",), batch_sizes=(1,),
                    modes=("default",), rungs=("eager", "cold", "warm"), repeats=1, shapes="tiny",
                    results_dir=tmp_path / "results", cache_dir=tmp_path / "cache",
                    machine="two-slots", gpus=gpus)
    said = []
    assert Runner(config, env, say=said.append, missing_rungs=missing).run(plan(config, [])) == 3
    records = {r.key.rung: r for r in read_folder(tmp_path / "results")}
    assert all(r.status == "ok" for r in records.values()), [r.reason for r in records.values()]
    assert {r.workers for r in records.values()} == {2}
    # warm found the caches its cold process left, on the same slot
    assert records["warm"].gpu == records["cold"].gpu != records["eager"].gpu
    assert records["warm"].counters.get("inductor.fxgraph_cache_hit", 0) >= 1
    # eager's chain and the compiled chain started together, not one after the other
    began = {rung: datetime.fromisoformat(r.started_at) for rung, r in records.items()}
    assert abs((began["cold"] - began["eager"]).total_seconds()) < records["eager"].duration_s
    assert any(line.startswith("gpu") for line in said)


def test_every_rung_of_the_table_has_its_loader_and_saver():
    """A rung is one table entry and, for something new to load, a loader: nothing else
    names it (bench/coldstart/rungs.py)."""
    from bench.coldstart import child
    from bench.coldstart.records import RUNG_TEXT, RUNGS
    from bench.coldstart.rungs import TABLE

    assert tuple(TABLE) == RUNGS and set(RUNG_TEXT) == set(TABLE)
    for rung in TABLE.values():
        assert rung.loader in child.LOADERS, rung.name
        assert rung.saver is None or (rung.saver in child.SAVERS
                                      and rung.saver in ColdSpec.ROLES), rung.name
        assert rung.caches in ("empty", "cold") and rung.bundle in (None, "save", "own", "foreign")
    # the release check reads the table: what this torch has, it does not call missing
    assert set(child.missing_rungs()) <= {name for name, r in TABLE.items() if r.needs}
