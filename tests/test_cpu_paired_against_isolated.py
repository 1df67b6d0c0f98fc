"""The CPU check of paired against isolated timing (issue 91), on a page of its own: every
CPU case timed both isolated and paired on one lease, with both medians side by side, so
that a CPU figure one process cannot carry shows before any ratio rests on it."""

from __future__ import annotations

import dataclasses

import pytest
from fixtures import make_results as fx
from fixtures import model_records as mr

from bench.records import Host
from report import analysis
from report.build import build
from report.pages.stability import cpu_agreement, cpu_page

CPU = fx.environment("cpu-box", "cpu", "AMD EPYC", None)
HOST = Host("cpu-box", "boot-1", "AMD EPYC", None, 2, (0.0,), (0.0,), None, None,
            op_s=(9e-6, 9e-6))


def on_cpu(record):
    """The record as if measured on one lease of a CPU host."""
    return dataclasses.replace(record, env=CPU, env_id=CPU.env_id(), memory=None, host=HOST,
                               key=dataclasses.replace(record.key, backend="cpu"))


def test_every_cpu_case_timed_both_ways_sets_its_two_medians_side_by_side(tmp_path):
    records = [on_cpu(r) for r in mr.records() if r.key.workload == "resnet50"]
    fx.write(tmp_path / "r.jsonl", records)
    data = analysis.Data(analysis.load(tmp_path))
    [found] = cpu_agreement(data)
    assert found["env"].env_id == CPU.env_id() and found["cases"] == 3
    by_mode = {r["mode"]: r for r in found["rows"]}
    # isolated: 4 ms x FACTOR x the repeats' (1, 1.04, 0.98); paired: 4 ms x FACTOR
    eager = by_mode["eager"]
    assert eager["isolated_s"] == pytest.approx(4e-3) and eager["paired_s"] == pytest.approx(4e-3)
    assert found["within"] == 3


def with_eager(record, median_s: float, faults: float | None):
    """`record` with its eager timing moved to `median_s` and `faults` page faults per call."""
    timing = record.timing
    scale = median_s / timing.median_s
    moved = dataclasses.replace(
        timing, samples=tuple(s * scale for s in timing.samples), median_s=median_s,
        q1_s=timing.q1_s * scale, q3_s=timing.q3_s * scale, iqr_s=timing.iqr_s * scale,
        min_s=timing.min_s * scale, wall_per_call_s=timing.wall_per_call_s * scale,
        page_faults_per_call=faults)
    return dataclasses.replace(record, timing=moved)


def bimodal_eager(records):
    """resnet50 on the CPU lease, its eager isolated processes fast with few faults and its
    paired ones twice as slow with many, as elementwise-chain's eager ran on this machine."""
    out = []
    for r in records:
        if r.key.mode == "eager":
            fast = r.process.timing == "isolated"
            r = with_eager(r, (2.6e-3 if fast else 5.6e-3) * (1 + 0.01 * r.process.repeat),
                           4032.0 if fast else 7072.0)
        out.append(r)
    return out


def test_a_case_whose_processes_fall_in_two_groups_shows_both_with_their_faults(tmp_path):
    records = bimodal_eager([on_cpu(r) for r in mr.records() if r.key.workload == "resnet50"])
    fx.write(tmp_path / "results" / "r.jsonl", records)
    data = analysis.Data(analysis.load(tmp_path / "results"))
    [found] = cpu_agreement(data)
    by_mode = {r["mode"]: r for r in found["rows"]}
    modes = by_mode["eager"]["two_modes"]
    assert (modes["low"]["n"], modes["high"]["n"]) == (3, 3)
    assert modes["low"]["median_s"] == pytest.approx(2.6e-3 * 1.01)
    assert modes["high"]["median_s"] == pytest.approx(5.6e-3 * 1.01)
    assert (modes["low"]["faults"], modes["high"]["faults"]) == (4032.0, 7072.0)
    assert by_mode["eager"]["faults_isolated"] == 4032.0 and by_mode["eager"]["n_isolated"] == 3
    assert by_mode["default"]["two_modes"] is None  # its processes stay within a few percent
    assert found["two_modes"] == 1

    build(tmp_path / "results", tmp_path / "docs")
    summary = (tmp_path / "docs" / "methodology.md").read_text()
    assert "; 1 case runs in two modes" in summary and cpu_page(CPU.env_id()) in summary
    page = (tmp_path / "docs" / cpu_page(CPU.env_id())).read_text()
    assert "1 of them runs in two modes" in page
    assert ("| main | resnet50 | 1 | eager | 2.63 ms (3) | 5.66 ms (3) | 115.4% | 4,032 / 7,072 | "
            "2.63 ms (3 proc., 4,032 faults) and 5.66 ms (3 proc., 7,072 faults) |"
            ).replace(" ms", "\N{NO-BREAK SPACE}ms").replace(" proc.", "\N{NO-BREAK SPACE}proc.") in page
    assert "| main | resnet50 | 1 | default |" in page and "| 0.0% | – | – |" in page


@pytest.mark.parametrize("medians, found", [
    ([1.0, 1.02, 1.05, 1.08], False),        # one mode: neighbours within MOVED
    ([1.0, 1.01, 1.02, 2.0], False),         # one slow outlier is not a mode
    ([1.0, 1.01, 2.0, 2.02], True),
    ([1.0, 2.0, 2.01], False),               # three processes cannot show two modes
    ([1.0, 1.2, 1.45, 1.75, 2.1, 2.5], False),  # spread evenly: a group wider than the gap
])
def test_two_modes_need_a_wide_gap_and_two_processes_on_each_side(medians, found):
    assert (analysis.two_modes(medians, [0.0] * len(medians)) is not None) == found


def test_an_ab_groups_side_is_set_beside_the_main_run_as_a_run_of_its_own(tmp_path):
    main = [on_cpu(r) for r in mr.records() if r.key.workload == "resnet50"]
    side = bimodal_eager([dataclasses.replace(r, key=dataclasses.replace(r.key, tag="ab-g1-a"))
                          for r in main])
    fx.write(tmp_path / "r.jsonl", main + side)
    data = analysis.Data(analysis.load(tmp_path))
    [found] = cpu_agreement(data)
    eager = {r["run"]: r for r in found["rows"] if r["mode"] == "eager"}
    assert set(eager) == {"main", "ab-g1-a"} and found["cases"] == 6
    assert eager["main"]["two_modes"] is None and eager["main"]["paired_s"] == pytest.approx(4e-3)
    assert eager["ab-g1-a"]["two_modes"]["high"]["faults"] == 7072.0


def test_two_modes_of_records_without_fault_counts_name_no_faults(tmp_path):
    records = [with_eager(r, r.timing.median_s, None) if r.key.mode == "eager" else r
               for r in bimodal_eager([on_cpu(r) for r in mr.records()
                                       if r.key.workload == "resnet50"])]
    fx.write(tmp_path / "results" / "r.jsonl", records)
    build(tmp_path / "results", tmp_path / "docs")
    page = (tmp_path / "docs" / cpu_page(CPU.env_id())).read_text()
    assert ("| – | 2.63 ms (3 proc.) and 5.66 ms (3 proc.) |"
            ).replace(" ms", "\N{NO-BREAK SPACE}ms").replace(" proc.", "\N{NO-BREAK SPACE}proc.") in page
