"""`python -m bench.host.slowed`: the slowed-host test planned from the host models, the probe
calibrated with busy loops, and the checks it prints; on made-up records (fixtures)."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import pytest
from fixtures import host_records
from fixtures import make_results as fx

from bench import REPO
from bench.host import model as host_model
from bench.host import slowed

ENV = fx.ENV_A  # machine h100-a


def write(folder: Path, records) -> Path:
    fx.write(folder / "host.jsonl", records)
    return folder


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "bench.host.slowed", *args], capture_output=True,
                          text=True, cwd=REPO, timeout=120)


# ---- the plan -------------------------------------------------------------------------------

def test_the_plan_measures_each_modelled_speedup_with_eager_in_its_own_size():
    selections = slowed.plan(host_records.records(ENV), ENV.machine, "cuda", repeats=3)
    assert [s.args() for s in selections] == [
        ["--profile", "full", "--workload", "launch-chain-100", "--mode", "eager",
         "--mode", "reduce-overhead"],
        ["--profile", "full", "--workload", "vit16x6x384", "--batch-size", "1",
         "--mode", "eager", "--mode", "reduce-overhead"]]
    # Two cold isolated processes of 12.5 s and three paired ones of 12.5 s (two modes each).
    assert [s.expected_s for s in selections] == [pytest.approx(62.5)] * 2


def test_the_plan_keeps_to_the_machine_and_the_workloads_asked_for():
    records = host_records.records(ENV)
    assert slowed.plan(records, "another-machine", "cuda") == []
    assert slowed.plan(records, ENV.machine, "cpu") == []
    only = slowed.plan(records, ENV.machine, "cuda", workloads=["vit16x6x384"])
    assert [s.workloads for s in only] == [("vit16x6x384",)]


def test_points_sharing_a_size_and_modes_run_together_cheapest_first():
    records = host_records.records(ENV)
    # launch-chain-100 made a size-1 workload: both points now share one run.
    resized = [dataclasses.replace(r, key=dataclasses.replace(r.key, batch_size=1))
               if r.key.workload == "launch-chain-100" else r for r in records]
    longer = [dataclasses.replace(r, duration_s=40.0)
              if r.key.workload == "vit16x6x384" and r.paired is None else r for r in resized]
    [selection] = slowed.plan(longer, ENV.machine, "cuda", repeats=3)
    assert selection.workloads == ("launch-chain-100", "vit16x6x384")
    assert selection.expected_s == pytest.approx(62.5 + 80.0 + 37.5)


def test_a_case_without_quiet_durations_has_no_estimate():
    records = [r for r in host_records.records(ENV)
               if not (r.key.workload == "vit16x6x384" and r.paired is None
                       and r.key.mode == "reduce-overhead")]
    # Its isolated reduce-overhead process is gone, so it is no longer modelled either...
    assert [s.workloads for s in slowed.plan(records, ENV.machine, "cuda")] == [
        ("launch-chain-100",)]
    # ...while an isolated process that took no cold compile leaves it modelled, unestimated.
    warm = [dataclasses.replace(r, process=dataclasses.replace(r.process, cache="warm"))
            if r.key.workload == "vit16x6x384" and r.paired is None else r
            for r in host_records.records(ENV)]
    found = {s.workloads: s.expected_s for s in slowed.plan(warm, ENV.machine, "cuda")}
    assert found == {("launch-chain-100",): pytest.approx(62.5), ("vit16x6x384",): None}


def test_each_run_is_tagged_slowed_host_and_gets_the_time_left():
    [selection, _] = slowed.plan(host_records.records(ENV), ENV.machine, "cuda")
    command = slowed.bench_command("cuda", selection, "lent-h100", Path("/r"), 2, 4.256,
                                   ["--rounds", "9"])
    assert command[1:3] == ["-m", "bench"]
    assert command[3:] == ["--backend", "cuda", *selection.args(), "--repeats", "2",
                           "--machine", "lent-h100", "--tag", host_model.SLOWED_TAG, "--order",
                           "grouped", "--results-dir", "/r", "--rounds", "9",
                           "--max-minutes", "4.26"]


def test_each_run_plans_exactly_the_modelled_points_in_their_modes():
    """Read by the runner's own parser and planner: a sized run leaves the unsized workloads
    out (a --batch-size filter would drop them), so each size has its own run."""
    from bench import cli, runner

    records = host_records.records(ENV)
    planned = set()
    for selection in slowed.plan(records, ENV.machine, "cuda"):
        args = cli.parser().parse_args(
            slowed.bench_command("cuda", selection, "m", Path("r"), 3, None)[3:])
        planned |= {(k.workload, k.batch_size, k.mode, k.tag, k.dtype) for k in runner.plan(
            "cuda", args.workload, args.mode, args.profile, set(args.batch_size or []),
            args.shapes, args.tag, args.dtype or ["float32"])}
    assert planned == {(workload, batch, mode, host_model.SLOWED_TAG, "float32")
                       for workload, batch in (("launch-chain-100", None), ("vit16x6x384", 1))
                       for mode in ("eager", "reduce-overhead")}


# ---- slowing the host ---------------------------------------------------------------------

def test_cpu_lists_read_as_the_kernel_writes_them():
    assert slowed.parse_cpu_list("0-3,8,10-11\n") == [0, 1, 2, 3, 8, 10, 11]
    assert slowed.parse_cpu_list("5") == [5]


def test_the_ladder_loads_the_smt_siblings_first_then_shares_each_cpu():
    pairs = {14: [6, 14], 15: [7, 15]}
    steps = slowed.ladder([14, 15], lambda cpu: pairs[cpu], per_core=3)
    assert [s.loops for s in steps] == [(6, 7), (14, 15), (14, 15), (14, 15)]
    assert steps[0].says == "a busy loop on each SMT sibling (6,7)"
    assert steps[2].says == "2 busy loops on each of CPUs 14,15"
    # Siblings already among the CPUs, or none: no sibling step.
    assert [s.loops for s in slowed.ladder([6, 14], lambda cpu: [6, 14], 1)] == [(6, 14)]
    assert [s.loops for s in slowed.ladder([3], lambda cpu: [cpu], 2)] == [(3,), (3,)]


def test_fixed_loops_are_pinned_round_robin_or_not_at_all():
    assert slowed.fixed(3, [14, 15])[0].loops == (14, 15, 14)
    assert slowed.fixed(1, None)[0].loops == (None,)
    assert slowed.chosen_cpus({0, 1, 2, 3}, 2) == [2, 3]


def test_calibration_stops_at_the_target_or_when_the_steps_run_out():
    steps = slowed.ladder([1], lambda cpu: [cpu], per_core=4)
    probe_at = {0: 7e-6, 1: 9e-6, 2: 13e-6, 3: 20e-6, 4: 30e-6}  # by loops running
    running = []

    def read(quiet_s):
        return slowed.Reading(probe_at[len(running)], 0.0)

    quiet, levels = slowed.calibrate(read, lambda step: running.extend(step.loops), steps, 1.8)
    assert quiet.median_s == 7e-6
    assert [(level.loops, level.reading.median_s) for level in levels] == [(1, 9e-6), (2, 13e-6)]
    running.clear()
    _, levels = slowed.calibrate(read, lambda step: running.extend(step.loops), steps, 10.0)
    assert [level.loops for level in levels] == [1, 2, 3, 4]  # never reached: every step
    running.clear()
    _, levels = slowed.calibrate(read, lambda step: running.extend(step.loops),
                                 slowed.fixed(3, None), None)
    assert [(level.loops, level.reading.median_s) for level in levels] == [(3, 20e-6)]


def test_a_reading_counts_the_blocks_the_scheduler_cut():
    found = slowed.reading([7e-6, 7.2e-6, 30e-6, 7.1e-6], quiet_s=7e-6)
    assert found.median_s == pytest.approx(7.15e-6) and found.slow_share == 0.25


def test_loops_are_pinned_to_their_cpu_and_all_end_at_stop(monkeypatch):
    """With a sleeping stand-in for the busy loop: nothing here may load the CPU."""
    monkeypatch.setattr(slowed, "BUSY", "import time; time.sleep(60)")
    monkeypatch.setattr(slowed, "SETTLE_S", 0.0)
    cpu = max(os.sched_getaffinity(0))
    loops = slowed.Loops()
    try:
        loops.add(slowed.Step((cpu, None), "test"))
        pinned, free = loops.running
        assert os.sched_getaffinity(pinned.pid) == {cpu}
        assert os.sched_getaffinity(free.pid) == os.sched_getaffinity(0)
    finally:
        loops.stop()
    assert loops.running == [] and pinned.poll() is not None and free.poll() is not None


# ---- the checks and the command line --------------------------------------------------------

def test_the_checks_say_where_the_slowed_probe_lies_and_whether_the_band_held():
    records = (host_records.records(ENV)
               + host_records.slowed(ENV, "vit16x6x384", 12.0e-6)
               + host_records.slowed(ENV, "launch-chain-100", 12.0e-6,
                                     eager=host_records.eager_s("launch-chain-100", 7e-6)))
    lines = slowed.check_lines(records, ENV.machine, "cuda", "gpu-box/boot-slowed")
    assert lines[0] == "slowed host gpu-box/boot-slowed: 2 modelled speedups measured"
    launch, vit = lines[1:]
    assert launch.startswith("  launch-chain-100 reduce-overhead over eager: probe 12.00 us "
                             "(blocks' mean 12.00 us), 1.00 us above the probes fitted "
                             "(6.50-11.00 us); predicted ")
    assert launch.endswith(": OUTSIDE (0 of 2 processes inside)")
    assert vit.startswith("  vit16x6x384 batch 1 reduce-overhead over eager: probe 12.00 us")
    assert vit.endswith(": inside (2 of 2 processes inside)")
    assert slowed.check_lines(records, ENV.machine, "cuda", "gpu-box/boot-1") == [
        "slowed host gpu-box/boot-1: 0 modelled speedups measured"]


def test_a_check_on_a_time_sliced_host_says_the_probe_under_reports():
    """One probe block in three cut by 20 us: the blocks average 18.67 us against a median of
    12 us, more than NEAR above it."""
    records = host_records.records(ENV) + host_records.slowed(ENV, "vit16x6x384", 12.0e-6,
                                                              cut_s=20e-6)
    line = slowed.check_lines(records, ENV.machine, "cuda", "gpu-box/boot-slowed")[1]
    assert line.startswith("  vit16x6x384 batch 1 reduce-overhead over eager: probe 12.00 us "
                           "(blocks' mean 18.67 us: time-sliced, the probe under-reports), ")


def test_slowed_records_of_an_unmodelled_environment_are_named_not_comparable():
    other = dataclasses.replace(ENV, driver="580.1")  # the same machine on another driver
    records = host_records.records(ENV) + host_records.slowed(other, "vit16x6x384", 12.0e-6)
    lines = slowed.check_lines(records, ENV.machine, "cuda", "gpu-box/boot-slowed")
    assert lines[-1] == (f"  no host model for environment {other.env_id()}, which these records "
                         f"measured (modelled: {ENV.env_id()}): not comparable")


def test_a_dry_run_prints_the_plan_and_starts_nothing(tmp_path):
    done = run("--backend", "cuda", "--machine", ENV.machine, "--results-dir",
               str(write(tmp_path, host_records.records(ENV))), "--dry-run", "--repeats", "2")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == ("plan: 2 runs of python -m bench, about 1.7 min on a quiet host "
                        "(a slowed one takes longer)")
    assert lines[2].endswith(f"--workload vit16x6x384 --batch-size 1 --mode eager --mode "
                             f"reduce-overhead --repeats 2 --machine {ENV.machine} --tag "
                             f"slowed-host --order grouped --results-dir {tmp_path}")
    assert list(tmp_path.iterdir()) == [tmp_path / "host.jsonl"]


@pytest.mark.parametrize(("tags", "expected"), [
    ((), "slowed-host"),
    (("main", "rerun-2", "ab-g-a"), "slowed-host"),
    (("main", "slowed-host"), "slowed-host-2"),
    (("slowed-host", "slowed-host-3", "slowed-hostile-9"), "slowed-host-4"),
])
def test_each_slowed_run_gets_a_tag_after_the_ones_recorded(tags, expected):
    assert host_model.next_slowed_tag(tags) == expected
    assert host_model.SLOWED_TAGS.match(expected)


def retagged(record, tag: str):
    """`record` as a process of another run: its tag, and a paired group of its own."""
    paired = record.paired and dataclasses.replace(record.paired,
                                                   group=f"{record.paired.group}-{tag}")
    return dataclasses.replace(record, key=dataclasses.replace(record.key, tag=tag),
                               paired=paired)


def test_a_second_slowed_run_measures_under_a_new_tag_and_both_are_checked(tmp_path):
    """A second run under the first one's tag would find every case recorded and measure
    nothing; the checks read every slowed tag."""
    records = host_records.records(ENV)
    earlier = [retagged(r, "slowed-host") for r in records if r.key.tag == "main"]
    done = run("--backend", "cuda", "--machine", ENV.machine, "--results-dir",
               str(write(tmp_path, records + earlier)), "--dry-run")
    assert done.returncode == 0, done.stderr
    assert "--tag slowed-host-2 --order grouped" in done.stdout
    assert "--tag slowed-host " not in done.stdout
    rows = [host_model.row_of(retagged(r, tag)) for r in records
            for tag in ("slowed-host", "slowed-host-2")]
    assert len(host_model.processes(rows, host_model.SLOWED_TAGS)) == 2 * len(
        host_model.processes([host_model.row_of(r) for r in records]))


@pytest.mark.parametrize(("args", "status", "message"), [
    (["--machine", "nowhere"], 1, "error: no cuda case of machine 'nowhere' has a host model in "),
    (["--machine", ENV.machine, "--workload", "gpt2-small"], 1,
     "(workloads with one: launch-chain-100, vit16x6x384)"),
    (["--machine", ENV.machine, "--cores", "0"], 2, "argument --cores: must be 1 or more, got 0"),
    (["--machine", ENV.machine, "--", "--tag", "x"], 2, "error: --tag: set by this command itself"),
    (["--machine", ENV.machine, "--target", "-1"], 2, "argument --target: must be a positive"),
])
def test_bad_input_is_one_line_and_a_non_zero_status(tmp_path, args, status, message):
    done = run("--backend", "cuda", "--results-dir",
               str(write(tmp_path, host_records.records(ENV))), "--dry-run", *args)
    assert done.returncode == status and message in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


@pytest.mark.slow
def test_the_probe_server_times_blocks_on_request():
    """The server the calibration reads, on the CPU: a few hundred trivial calls, no figure kept."""
    server = slowed.ProbeServer("cpu")
    try:
        first = server.read(None)
        again = server.read(first.median_s)
    finally:
        server.close()
    assert 0 < first.median_s < 1e-3 and 0 < again.median_s < 1e-3
    assert server.child.returncode == 0
