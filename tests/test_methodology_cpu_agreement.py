"""The methodology page's CPU check (issue 91): every CPU case timed both isolated and
paired on one lease, with both medians side by side, so that a CPU figure one process
cannot carry shows before any ratio rests on it."""

from __future__ import annotations

import dataclasses

import pytest
from fixtures import make_results as fx
from fixtures import model_records as mr

from bench.records import Host
from report import analysis
from report.pages.methodology import cpu_agreement

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
