"""Paired timing: every mode of a case in one process, timed in alternating rounds.

The unit tests drive `bench.paired.run` in this process on CPU with tiny shapes and eager
modes (nothing compiles, so they take a second); the smoke run at the end goes through
`python -m bench` with a compiled mode, then through the report and its export.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import math
import subprocess
import sys
import time

import pytest
from bench_helpers import (
    ROOT,
    bench_env,
    fake_environment,
    fake_record,
    only_results_file,
    records,
    run_bench,
)

from bench import core, paired, pool, runner
from bench.cli import main as bench_main
from bench.modes import MODES, Mode
from bench.records import CaseKey, append_records
from bench.runner import Recorded, groups, jobs
from bench.spec import PairedSpec
from bench.stats import paired_speedup, round_ratios

SPEC = {"backend": "cpu", "workload": "trivial-call", "batch_size": None, "shapes": "tiny",
        "tag": "main", "rounds": 6, "block_s": 0.002, "group": "test-group"}


def eager_like(name: str, prepare) -> Mode:
    return dataclasses.replace(MODES["eager"], name=name, prepare=prepare)


def fails_in_rounds(monkeypatch, calls: int, after=None):
    """A mode whose callable raises once it has made `calls` calls since `after` (a
    function of bench.paired, or of its probe) first ran: timing, not setup."""
    rounds_began = {"yes": False}
    owner, name = after or (paired, "_time_rounds")
    original = getattr(owner, name)

    def began(*args, **kwargs):
        rounds_began["yes"] = True
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, began)

    def prepare(fn, inputs):
        count = {"n": 0}

        def call(*args):
            count["n"] += rounds_began["yes"]
            if count["n"] > calls:
                raise RuntimeError("out of luck")
            return fn(*args)

        return call

    return prepare


def measure(monkeypatch, modes: dict[str, Mode], **spec) -> dict:
    for name, mode in modes.items():
        monkeypatch.setitem(paired.MODES, name, mode)
    result = {"status": "ok", "reason": None, "modes": {}}
    paired.run(PairedSpec.from_dict(SPEC | {"modes": list(modes)} | spec), result)
    return result


@pytest.fixture
def two_eagers(monkeypatch):
    return measure(monkeypatch, {"eager": MODES["eager"],
                                 "eager-again": eager_like("eager-again", MODES["eager"].prepare)})


def test_every_round_times_every_mode_once(two_eagers):
    for share in two_eagers["modes"].values():
        assert share["status"] == "ok"
        assert len(share["paired"]["round_s"]) == SPEC["rounds"] == len(share["paired"]["round_position"])


def test_each_round_puts_every_mode_and_the_probe_in_one_order(two_eagers):
    shares = list(two_eagers["modes"].values())
    # Two modes and the probe: positions 0..2, two of them taken by the modes each round.
    for positions in zip(*(s["paired"]["round_position"] for s in shares), strict=True):
        assert len(set(positions)) == len(positions) and set(positions) <= {0, 1, 2}
    assert len(two_eagers["host"]["op_s"]) == SPEC["rounds"]


def test_the_order_changes_between_rounds(monkeypatch):
    result = measure(monkeypatch, {"eager": MODES["eager"],
                                   "eager-again": eager_like("eager-again", MODES["eager"].prepare)},
                     rounds=24)
    orders = {tuple(p) for p in zip(*(s["paired"]["round_position"]
                                      for s in result["modes"].values()), strict=True)}
    assert len(orders) > 1


def test_the_record_sections_name_the_group_and_build_order(two_eagers):
    shares = two_eagers["modes"]
    built = {s["paired"]["build_position"] for s in shares.values()}
    assert built == {0, 1}
    for name, share in shares.items():
        assert share["paired"]["group"] == "test-group"
        assert share["paired"]["modes"][share["paired"]["build_position"]] == name
        assert share["timing"]["samples"] == share["paired"]["round_s"]
        assert share["correctness"]["passed"]


def test_every_mode_is_profiled_after_its_rounds_as_an_isolated_process_is(two_eagers):
    for share in two_eagers["modes"].values():
        activity = share["activity"]
        assert activity["profiled_calls"] >= 1 and activity["cpu_ops_per_call"] >= 1
        assert activity["device_kernels_per_call"] is None  # a CPU has no device timeline


def test_a_mode_whose_profiler_fails_is_recorded_so_and_the_others_profiled(monkeypatch):
    original = core.profile

    def profile(call, backend, wall_per_call_s, inner_calls):
        if call is broken_call["call"]:
            raise RuntimeError("profiler broke")
        return original(call, backend, wall_per_call_s, inner_calls)

    broken_call = {}
    original_set_up = paired._set_up

    def set_up(member, *args):
        original_set_up(member, *args)
        if member.mode.name == "eager-again":
            broken_call["call"] = member.call

    monkeypatch.setattr(core, "profile", profile)
    monkeypatch.setattr(paired, "_set_up", set_up)
    result = measure(monkeypatch, {"eager": MODES["eager"],
                                   "eager-again": eager_like("eager-again", MODES["eager"].prepare)})
    assert result["modes"]["eager-again"]["reason"] == "during profiler: RuntimeError: profiler broke"
    assert result["modes"]["eager"]["status"] == "ok" and result["modes"]["eager"]["activity"]


def test_a_mode_failing_at_setup_is_recorded_and_the_others_measured(monkeypatch):
    def broken(fn, inputs):
        raise RuntimeError("cannot compile this")

    result = measure(monkeypatch, {"eager": MODES["eager"], "broken": eager_like("broken", broken)})
    assert result["modes"]["broken"]["status"] == "error"
    assert result["modes"]["broken"]["reason"] == "during setup: RuntimeError: cannot compile this"
    assert len(result["modes"]["eager"]["paired"]["round_s"]) == SPEC["rounds"]


def test_a_mode_failing_mid_rounds_keeps_the_others_going(monkeypatch):
    # Setup and its estimate take a few dozen calls; the failure comes during the rounds.
    flaky_mode = eager_like("flaky", fails_in_rounds(monkeypatch, 1))
    result = measure(monkeypatch, {"eager": MODES["eager"], "flaky": flaky_mode})
    flaky = result["modes"]["flaky"]
    assert flaky["status"] == "error" and flaky["reason"] == "during warm-up: RuntimeError: out of luck"
    assert "paired" not in flaky
    assert len(result["modes"]["eager"]["paired"]["round_s"]) == SPEC["rounds"]


def test_a_mode_failing_in_a_round_keeps_its_earlier_rounds_out_and_the_others_going(monkeypatch):
    # The probe's first block comes after every warm-up block: from there on it is timing.
    flaky_mode = eager_like("flaky", fails_in_rounds(monkeypatch, 1, after=(paired.Probe, "block")))
    result = measure(monkeypatch, {"eager": MODES["eager"], "flaky": flaky_mode})
    flaky = result["modes"]["flaky"]
    assert flaky["reason"] == "during timing: RuntimeError: out of luck"
    assert len(result["modes"]["eager"]["paired"]["round_s"]) == SPEC["rounds"]


def test_every_mode_failing_is_recorded_mode_by_mode(monkeypatch):
    def broken(fn, inputs):
        raise ValueError("no")

    result = measure(monkeypatch, {"a": eager_like("a", broken), "b": eager_like("b", broken)})
    assert {s["status"] for s in result["modes"].values()} == {"error"}


def test_a_training_mode_is_checked_after_warm_up_not_after_its_rounds(monkeypatch):
    # The order of events, not step counts: on a slow host a block is one step, and the
    # warm-up's steps can outnumber the rounds'.
    events = []
    original_check, original_rounds = core.check_against_float64, paired._time_rounds

    def check(workload, built, *args):
        events.append(("check", int(built.steps.item())))
        return original_check(workload, built, *args)

    def rounds(*args, **kwargs):
        events.append(("rounds", None))
        return original_rounds(*args, **kwargs)

    monkeypatch.setattr(core, "check_against_float64", check)
    monkeypatch.setattr(paired, "_time_rounds", rounds)
    entry = measure(monkeypatch, {"eager": MODES["eager"]}, workload="train-mlp",
                    batch_size=4)["modes"]["eager"]
    assert [name for name, _ in events] == ["check", "rounds"]
    warm_up_steps = len(entry["compile"]["cold_first_calls_s"])
    assert events[0][1] > warm_up_steps  # the first calls, then the speed estimate's
    assert entry["correctness"]["passed"]


def test_round_ratios_are_taken_round_by_round():
    # Both modes slow down together in round 2: the ratio stays 2, the medians would not.
    eager, compiled = [2.0, 20.0, 2.2], [1.0, 10.0, 1.1]
    assert round_ratios(eager, compiled) == [2.0, 2.0, 2.0]
    assert paired_speedup(eager, compiled) == 2.0
    assert paired_speedup([], []) is None


KEYS = [CaseKey("cpu", "mlp", mode, 8) for mode in ("eager", "default", "cuda-graph")]


def test_paired_plan_runs_the_isolated_cases_once_then_one_group_per_repeat():
    todo = jobs(KEYS, 3, Recorded(), "paired")
    isolated = [j for j in todo if not j.group]
    grouped = [j for j in todo if j.group]
    assert [(j.key.mode, j.repeat) for j in isolated] == [("eager", 0), ("default", 0), ("cuda-graph", 0)]
    # cuda-graph cannot run on CPU: it is left out of the group, not measured in it.
    assert [(tuple(k.mode for k in j.group), j.repeat) for j in grouped] == [
        (("eager", "default"), 0), (("eager", "default"), 1), (("eager", "default"), 2)]
    assert todo.index(grouped[0]) > todo.index(isolated[-1])


def test_grouped_order_runs_each_sizes_processes_back_to_back():
    two_sizes = KEYS[:2] + [CaseKey("cpu", "mlp", mode, 32) for mode in ("eager", "default")]
    def order(kind):
        return [(j.key.batch_size, "paired" if j.group else j.key.mode, j.repeat)
                for j in jobs(two_sizes, 2, Recorded(), "paired", kind)]
    assert order("grouped") == [
        (8, "eager", 0), (8, "default", 0), (8, "paired", 0), (8, "paired", 1),
        (32, "eager", 0), (32, "default", 0), (32, "paired", 0), (32, "paired", 1)]
    assert order("interleaved") == [
        (8, "eager", 0), (8, "default", 0), (8, "paired", 0),
        (32, "eager", 0), (32, "default", 0), (32, "paired", 0),
        (8, "paired", 1), (32, "paired", 1)]


def test_resume_plans_only_the_groups_not_recorded():
    done = Recorded(isolated=frozenset({(KEYS[0], 0), (KEYS[1], 0)}),
                    unsupported=frozenset({KEYS[2]}),
                    paired=frozenset({(KEYS[0], 0), (KEYS[1], 0)}))
    todo = jobs(KEYS, 3, done, "paired")
    assert [(j.repeat, bool(j.group)) for j in todo] == [(1, True), (2, True)]


def test_a_group_missing_one_mode_is_measured_again_whole():
    done = Recorded(isolated=frozenset({(KEYS[0], 0), (KEYS[1], 0)}),
                    unsupported=frozenset({KEYS[2]}), paired=frozenset({(KEYS[0], 0)}))
    todo = jobs(KEYS, 1, done, "paired")
    assert [tuple(k.mode for k in j.group) for j in todo] == [("eager", "default")]


def test_groups_are_the_modes_of_one_workload_and_size():
    keys = [*KEYS, CaseKey("cpu", "mlp", "eager", 32)]
    assert [len(g) for g in groups(keys)] == [3, 1]


# ---- a mode whose isolated process timed out ----------------------------------------------

ENV = fake_environment()
THREE = [CaseKey("cpu", "mlp", mode, 8) for mode in ("eager", "default", "reduce-overhead")]


def test_recorded_notes_a_first_isolated_process_that_timed_out(tmp_path):
    eager, default, overhead = THREE
    append_records(runner.results_path(tmp_path, ENV), [
        fake_record(ENV, eager, "timeout"),
        fake_record(ENV, default, "error"),
        fake_record(ENV, overhead, "timeout", repeat=1),  # a warm repeat: not the first
        fake_record(ENV, default, "timeout", timing="paired")])
    done = runner.recorded(tmp_path, ENV)
    assert done.timed_out == {eager}
    assert done.isolated_process(eager, 0)  # still recorded, so it is not run again
    assert done.paired == {(default, 0)}  # a paired share is no isolated process
    assert not done.isolated_process(overhead, 0)


def test_a_first_process_measured_again_after_its_timeout_rejoins_its_groups(tmp_path):
    eager, default, overhead = THREE
    append_records(runner.results_path(tmp_path, ENV), [
        fake_record(ENV, eager), fake_record(ENV, default, "timeout"),
        fake_record(ENV, overhead), fake_record(ENV, default)])  # --force, a longer timeout
    todo = jobs(THREE, 1, runner.recorded(tmp_path, ENV), "paired")
    assert [tuple(k.mode for k in j.group) for j in todo] == [
        ("eager", "default", "reduce-overhead")]


def test_a_timed_out_mode_is_left_out_of_its_groups():
    done = Recorded(isolated=frozenset((key, 0) for key in THREE),
                    timed_out=frozenset({THREE[1]}))
    todo = jobs(THREE, 2, done, "paired")
    assert [(tuple(k.mode for k in j.group), j.key.mode, j.repeat) for j in todo] == [
        (("eager", "reduce-overhead"), "eager", 0), (("eager", "reduce-overhead"), "eager", 1)]


def test_a_group_left_with_one_mode_gets_no_paired_process():
    done = Recorded(isolated=frozenset({(KEYS[0], 0), (KEYS[1], 0)}),
                    unsupported=frozenset({KEYS[2]}), timed_out=frozenset({KEYS[0]}))
    assert jobs(KEYS, 3, done, "paired") == []


def scheduler(tmp_path, todo, max_minutes=None, durations=None) -> runner._Run:
    config = runner.RunConfig(profile="quick", shapes="seed", tag="main", force=False,
                              timeout_s=5.0, budget_s=0.1, results_dir=tmp_path / "results",
                              max_minutes=max_minutes, repeats=2, cache_dir=tmp_path / "cache",
                              timing="paired")
    config.results_dir.mkdir()
    return runner._Run(todo, ENV, config, runner.results_path(config.results_dir, ENV),
                       [pool.Slot()], pool.Launcher("spawn"), io.StringIO(), durations)


def time_out(run: runner._Run, job: runner.Job, tmp_path, ran_s: float = 0.0) -> None:
    """`job` started `ran_s` ago and ran into its timeout, as the run's loop finishes it."""
    run.queue.remove(job)
    (tmp_path / "scratch").mkdir()
    running = runner.Running(job, pool.Slot(), None, tmp_path / "scratch", "cold",
                             "2025-01-01T00:00:00+00:00", time.monotonic() - ran_s, 0.0, 1)
    run.finish(running, {"status": "timeout", "reason": "no result within 5 s", "log_tail": []})


def test_a_mode_timing_out_alone_leaves_the_queued_groups_of_its_run(tmp_path):
    run = scheduler(tmp_path, jobs(THREE, 2, Recorded(), "paired"))
    time_out(run, run.queue[0], tmp_path)  # eager, repeat 0
    assert [(tuple(k.mode for k in j.group), j.key.mode) for j in run.queue if j.group] == [
        (("default", "reduce-overhead"), "default")] * 2
    assert run.total == 5  # nothing dropped: both groups still pair two modes
    assert ("leaving eager out of the paired groups of mlp bs=8: its isolated process timed "
            "out") in run.out.getvalue()
    (saved,) = records(run.path)
    assert saved.status == "timeout" and saved.key == THREE[0]


def test_a_group_left_with_one_mode_is_dropped_from_the_run(tmp_path):
    run = scheduler(tmp_path, jobs(KEYS, 2, Recorded(), "paired"))
    assert run.total == 5  # three isolated processes, two paired ones
    time_out(run, run.queue[1], tmp_path)  # default, repeat 0
    assert [(j.key.mode, bool(j.group)) for j in run.queue] == [("eager", False),
                                                                 ("cuda-graph", False)]
    assert run.total == 3
    assert "leaving default out of the paired groups of mlp bs=8" in run.out.getvalue()


def test_a_job_finished_in_this_run_sets_what_the_next_of_its_kind_is_expected_to_take(
        tmp_path):
    run = scheduler(tmp_path, jobs(THREE, 3, Recorded(), "paired"))
    first, second = [j for j in run.queue if j.group][:2]
    time_out(run, first, tmp_path, ran_s=30.0)
    run.longest_s = 500.0  # a cold autotune earlier in the run, say
    assert 30.0 <= run.expected_s(second) < 40.0  # not the longest job so far


def test_a_cold_paired_process_in_this_run_sets_what_its_warm_repeats_are_expected_to_take(
        tmp_path):
    run = scheduler(tmp_path, jobs(THREE, 3, Recorded(), "paired"), max_minutes=30)
    first, second = [j for j in run.queue if j.group][:2]
    time_out(run, first, tmp_path, ran_s=30.0)
    run.longest_s = 500.0
    cache = runner.group_cache_dir(run.config.cache_dir, ENV.env_id(), second.group)
    (cache / "inductor").mkdir(parents=True)  # what the first process left on disk
    assert not run.would_compile_cold(second)
    assert 30.0 <= run.expected_s(second) < 40.0  # not the longest job so far


def test_an_isolated_run_says_nothing_of_groups_when_a_case_times_out(tmp_path):
    run = scheduler(tmp_path, jobs(THREE, 2, Recorded(), "isolated"))
    time_out(run, run.queue[0], tmp_path)
    assert (len(run.queue), run.total) == (5, 6)  # one taken by time_out, none dropped
    assert "leaving" not in run.out.getvalue()


@pytest.mark.parametrize("value", ["0", "-1", "nan", "two"])
def test_bad_rounds_are_refused_in_one_line(capsys, value):
    assert bench_main(["--backend", "cpu", "--rounds", value]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--rounds" in err


# ---- through python -m bench, the report and the export ----------------------------------

# Seed shapes: the site and its export show those alone, and a 128x128 matmul is cheap anyway.
SELECTION = ("--backend", "cpu", "--machine", "paired-smoke", "--workload",
             "matmul-128", "--mode", "eager", "--mode", "default", "--repeats", "2",
             "--rounds", "5", "--budget", "0.05")


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    base = tmp_path_factory.mktemp("paired")
    results, tmp = base / "results", base / "tmp"
    tmp.mkdir()
    done = run_bench(*SELECTION, "--results-dir", str(results), "--cache-dir", str(base / "cache"),
                     env=bench_env(tmp))
    assert done.returncode == 0, done.stderr[-3000:]
    return {"results": results, "records": records(only_results_file(results)),
            "stdout": done.stdout, "base": base}


@pytest.mark.slow
def test_a_paired_run_records_one_isolated_process_per_mode_and_the_groups(smoke):
    kinds = sorted((r.key.mode, r.process.timing, r.process.repeat) for r in smoke["records"])
    assert kinds == [("default", "isolated", 0), ("default", "paired", 0), ("default", "paired", 1),
                     ("eager", "isolated", 0), ("eager", "paired", 0), ("eager", "paired", 1)]
    groups_seen = {r.paired.group for r in smoke["records"] if r.paired}
    assert len(groups_seen) == 2


@pytest.mark.slow
def test_every_process_records_its_host_and_probe(smoke):
    for record in smoke["records"]:
        assert record.host is not None and record.host.op_s and record.host.cpus_available >= 1
        assert all(x > 0 for x in record.host.op_s)


@pytest.mark.slow
def test_every_paired_process_records_its_profiled_activity(smoke):
    profiled = [r.activity for r in smoke["records"] if r.paired]
    assert len(profiled) == 4 and all(a and a.cpu_ops_per_call >= 1 for a in profiled)


@pytest.mark.slow
def test_paired_processes_start_from_the_isolated_caches(smoke):
    assert {r.process.cache for r in smoke["records"] if r.paired} == {"warm"}


@pytest.mark.slow
def test_the_same_run_again_measures_nothing(smoke):
    again = run_bench(*SELECTION, "--results-dir", str(smoke["results"]),
                      "--cache-dir", str(smoke["base"] / "cache"), env=bench_env(smoke["base"] / "tmp"))
    assert again.returncode == 0 and "0 case process(es) to run of 4" in again.stdout


@pytest.mark.slow
def test_export_writes_paired_speedups_over_eager_and_default(smoke, tmp_path):
    done = subprocess.run([sys.executable, "-m", "report", "export", str(tmp_path / "out"),
                           "--results", str(smoke["results"])], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    with open(tmp_path / "out" / "speedups.csv") as handle:
        rows = list(csv.DictReader(handle))
    assert list(rows[0])[:15] == ["backend", "device", "torch", "workload", "size", "mode",
                                  "baseline", "speedup", "speedup_min", "speedup_max",
                                  "processes", "leases", "rounds", "bound", "host_probe_us"]
    over_eager = [r for r in rows if r["mode"] == "default" and r["baseline"] == "eager"]
    over_default = [r for r in rows if r["mode"] == "eager" and r["baseline"] == "default"]
    assert len(over_eager) == 1 and len(over_default) == 1
    one, other = over_eager[0], over_default[0]
    assert one["paired"] == "True" and one["processes"] == "2" and one["rounds"] == "5"
    assert float(one["speedup_min"]) <= float(one["speedup"]) <= float(one["speedup_max"])
    # The same processes read from the other side: reciprocal, process by process.
    assert math.isclose(float(one["speedup_min"]) * float(other["speedup_max"]), 1.0, rel_tol=1e-4)
    data = json.loads((tmp_path / "out" / "speedups.json").read_text())
    assert len(data) == len(rows)


@pytest.mark.slow
def test_bench_host_places_this_host_among_the_measured_ones(smoke):
    done = subprocess.run([sys.executable, "-m", "bench", "host", "--backend", "cpu",
                           "--results", str(smoke["results"])], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "an eager op costs" in done.stdout and "paired-smoke" in done.stdout
    took = float(done.stdout.rsplit("(took ", 1)[1].split(" s)")[0])
    assert took <= 60


def test_bench_host_refuses_a_backend_that_is_not_here(capsys):
    from bench.host import predict

    assert predict.main(["--backend", "mps"]) == 2
    assert capsys.readouterr().err.strip().startswith("python -m bench host: error: backend 'mps'")
