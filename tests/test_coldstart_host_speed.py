"""The speed of the host that compiled a first call: recorded in every cold-start process
(tests/test_coldstart_bench.py checks the fields), and shown on the cold-start page beside
the seconds, with which ratios carry from one host to another."""

from __future__ import annotations

import dataclasses

from test_coldstart_page import H100, record, write

from bench.coldstart.records import read
from bench.host import task
from bench.records import Host
from report.coldstart.data import host_speed
from report.pages.cold_start import host_speed_section


def host(boot: str, op_us: float) -> Host:
    return Host(hostname="vm", boot_id=boot, cpu_model="Xeon", cpu_mhz=2100.0, cpus_available=16,
                load_before=(0.1, 0.1, 0.1), load_after=(0.2, 0.1, 0.1), gpu_sm_clock_mhz=1980,
                gpu_memory_clock_mhz=2619, op_s=(op_us * 1e-6,) * 15)


def ladder(boot: str, slow: float, run: str, repeat: int = 0) -> list:
    """One chain on one host: the host `slow` times slower at compiling. Warm costs a fixed
    share of cold on every host; the bundle pays a fixed 2 s of loading on top of its share."""
    speed = {"host": host(boot, 6.0 * slow), "host_task_s": (0.04 * slow,) * 5}
    cold = 10.0 * slow
    return [dataclasses.replace(r, run_id=run) for r in (
        record(H100, "cold", cold, 0.005, repeat, **speed),
        record(H100, "warm", 0.3 * cold, 0.005, repeat, **speed),
        record(H100, "bundle", 0.3 * cold + 2.0, 0.005, repeat, **speed))]


def test_each_rung_is_set_against_the_cold_call_of_its_own_host(tmp_path):
    records = ladder("a", 1.0, "run-a") + ladder("b", 1.5, "run-b", 1) + ladder("c", 2.0, "run-c", 2)
    write(tmp_path, records)
    (row,) = host_speed([r for f in tmp_path.glob("*.ndjson") for r in read(f)])
    assert row["hosts"] == 3 and row["processes"] == 3
    assert (row["cold"].low, row["cold"].high) == (10.0, 20.0)
    assert (round(row["task_ms"].low, 6), round(row["task_ms"].high, 6)) == (40.0, 80.0)
    warm, bundle = row["to_cold"]["warm"], row["to_cold"]["bundle"]
    assert round(warm["ratio"].low, 9) == round(warm["ratio"].high, 9) == 0.3
    assert round(warm["ratio_apart"], 9) == 0.0 and round(warm["seconds_apart"], 9) == 1.0
    # the bundle's fixed load makes its share move with the host, less than the seconds do
    assert 0 < bundle["ratio_apart"] < bundle["seconds_apart"]
    section = host_speed_section(records)
    assert section["rungs"] == ["warm", "bundle"]
    assert {c["rung"]: (c["closer"], c["cases"]) for c in section["compared"]} == {
        "warm": (1, 1), "bundle": (1, 1)}


def test_a_rung_is_never_set_against_a_cold_call_of_another_host():
    """A warm process whose cold partner ran in another run (another lease, where the runner
    made the cold caches again unrecorded) has no ratio."""
    records = ladder("a", 1.0, "run-a")
    moved = [dataclasses.replace(r, run_id="run-b") if r.key.rung != "cold" else r for r in records]
    (row,) = host_speed(moved)
    assert row["to_cold"] == {}


def test_records_without_the_host_speed_show_as_not_recorded():
    assert host_speed([record(H100, "cold", 10.0, 0.005)]) == []
    assert host_speed_section([record(H100, "cold", 10.0, 0.005)]) == {
        "rows": [], "rungs": [], "compared": []}


def test_the_compile_like_task_times_the_same_work_each_block():
    samples = task.measure(3)
    assert len(samples) == 3 and all(0 < s < 30 for s in samples)
    assert task.seconds(samples) == sorted(samples)[1]


def test_the_page_shows_each_first_call_with_its_hosts_speed(tmp_path):
    from test_coldstart_page import rendered

    records = ladder("a", 1.0, "run-a") + ladder("b", 2.0, "run-b", 1)
    text = rendered(tmp_path, records)
    section = text.split("## The host that compiled", 1)[1].split("\n## ", 1)[0]
    assert "| NVIDIA H100 80GB HBM3 | gpt2-small | default, float32 | 1 | 2 |" in section
    assert "40.0–80.0 ms" in section and "6.00–12.00 µs" in section
    assert "Warm ÷ cold landed closer across hosts than the cold seconds did in 1 of 1 case" in section


def test_the_page_says_when_no_process_recorded_its_host(tmp_path):
    from test_coldstart_page import rendered

    text = rendered(tmp_path, [record(H100, "eager", 0.5, 0.01), record(H100, "cold", 10.0, 0.005)])
    section = text.split("## The host that compiled", 1)[1].split("\n## ", 1)[0]
    assert "Not recorded yet: no committed cold-start process recorded the speed of its host." in section


def test_a_case_whose_ladder_stopped_before_its_bundle_reads_not_measured_there(tmp_path):
    """The H100's max-autotune-no-cudagraphs ladder stopped after cold and warm (a cold first
    call of 119 s filled the lease): its row has no bundle ratio while other rows have one."""
    from test_coldstart_page import rendered

    full = ladder("a", 1.0, "run-a")
    stopped = [dataclasses.replace(r, key=dataclasses.replace(r.key, workload="bert-base"))
               for r in ladder("b", 2.0, "run-b") if r.key.rung != "bundle"]
    text = rendered(tmp_path, full + stopped)
    section = text.split("## The host that compiled", 1)[1].split("\n## ", 1)[0]
    (row,) = [line for line in section.splitlines() if "| bert-base |" in line]
    assert row.endswith("| 0.30 | not measured |")
