"""Several workers (one per GPU on a CUDA host) take cases from one ordered queue.

On CPU there are no GPUs to pin, so the test gives the runner two slots made by the same
`pool.slots_for` that `--gpus 0,1` uses, in a runner process of its own (forking from pytest
would inherit whatever pytest has compiled). One case hangs on one slot while the other
slot works through the queue; a later repeat of the hung case waits for the earlier one.
"""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import datetime

import pytest
from bench_helpers import ROOT, bench_env, only_results_file, records, scratch_folders

TIMEOUT_S = 5  # the other slot's four tiny eager cases take about a second

RUNNER = f"""
import sys, time
from pathlib import Path
from bench import pool, runner
started = time.perf_counter()
config = runner.RunConfig(profile="quick", shapes="tiny", tag="main", force=False,
                          timeout_s={TIMEOUT_S}, budget_s=0.02, results_dir=Path(sys.argv[1]),
                          max_minutes=None, repeats=2, cache_dir=Path(sys.argv[2]))
cases = runner.plan("cpu", ["launch-chain-10", "trivial-call", "matmul-128"], ["eager"],
                    "quick", set(), "tiny", "main")
slots = pool.slots_for(["0", "1"])
launcher = pool.Launcher("fork")
launcher.preload(started)
env = runner.collect_environment("cpu", "slots", launcher, slots[0])
runner.run(cases, env, config, slots=slots, launcher=launcher)
"""


@pytest.fixture(scope="module")
def two_slots(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("slots")
    result = subprocess.run(
        [sys.executable, "-c", RUNNER, str(tmp / "results"), str(tmp / "cache")], cwd=ROOT,
        env=bench_env(tmp, "launch-chain-10=hang"), capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    return {"records": records(only_results_file(tmp / "results")), "stdout": result.stdout,
            "tmp": tmp}


def test_other_slot_works_through_the_queue_while_one_case_hangs(two_slots):
    order = [(r.key.workload, r.process.repeat, r.status) for r in two_slots["records"]]
    assert order[:4] == [("trivial-call", 0, "ok"), ("matmul-128", 0, "ok"),
                         ("trivial-call", 1, "ok"), ("matmul-128", 1, "ok")]
    assert order[4:] == [("launch-chain-10", 0, "timeout"), ("launch-chain-10", 1, "timeout")]


def test_a_later_repeat_waits_for_the_earlier_one_of_its_case(two_slots):
    hung = [r for r in two_slots["records"] if r.key.workload == "launch-chain-10"]
    first, second = (datetime.fromisoformat(r.started_at) for r in hung)
    assert (second - first).total_seconds() >= TIMEOUT_S - 1  # started_at has whole seconds


def test_records_say_which_slot_and_how_many_ran_beside(two_slots):
    found = two_slots["records"]
    assert {r.process.workers for r in found} == {2}
    assert {r.process.gpu for r in found} == {0, 1}
    share = max(1, len(os.sched_getaffinity(0)) // 2)  # each slot's half of the cores
    assert {r.env.torch_threads for r in found} == {share}


def test_progress_lines_name_the_slot_and_results_name_their_case(two_slots):
    stdout = two_slots["stdout"]
    assert " gpu0 " in stdout and " gpu1 " in stdout
    assert f"    [1] timeout: no result within {TIMEOUT_S:g} s" in stdout


def test_no_scratch_folder_is_left(two_slots):
    assert scratch_folders(two_slots["tmp"]) == []
