"""Which records the site shows: newest wins, environments stay apart, tags and
test-sized shapes stay off the main pages."""

from __future__ import annotations

import dataclasses

import pytest
from fixtures import RESULTS
from fixtures import make_results as fx

from bench.records import CaseKey
from report.dataset import Dataset
from report.load import load_results


@pytest.fixture(scope="module")
def data() -> Dataset:
    return Dataset(load_results(RESULTS))


def load(tmp_path, *records) -> Dataset:
    fx.write(tmp_path / "r.jsonl", list(records))
    return Dataset(load_results(tmp_path))


def test_newest_record_of_a_case_wins(tmp_path):
    old = fx.ok_record(fx.ENV_A, "matmul-128", "eager", None, scale=5.0,
                       started="2026-01-01T00:00:00+00:00")
    new = fx.ok_record(fx.ENV_A, "matmul-128", "eager", None,
                       started="2026-02-01T00:00:00Z")
    # Written newest first, so file order alone would pick the wrong one.
    data = load(tmp_path, new, old)
    shown = data.get(fx.ENV_A.env_id(), "matmul-128", "eager", None)
    assert shown.median_s == pytest.approx(new.timing.median_s)
    assert data.superseded == 1


def test_newest_wins_across_files_in_fixtures(data):
    # The older 3x-slower record sits in results/older/; the newer one is shown.
    shown = data.get(fx.ENV_A.env_id(), "matmul-128", "default", None)
    assert "older" not in shown.source
    assert shown.median_s == pytest.approx(fx.latency(fx.ENV_A, "matmul-128", "default", None),
                                           rel=0.01)


def test_environments_with_the_same_gpu_are_not_merged(data):
    a, b = data.environments[fx.ENV_A.env_id()], data.environments[fx.ENV_B.env_id()]
    assert a.env_id != b.env_id
    assert a.label != b.label
    assert "h100-a" in a.label and "h100-b" in b.label
    assert [e.env_id for e in data.envs("cuda")] == sorted([a.env_id, b.env_id],
                                                           key=lambda i: data.environments[i].label)
    # Each keeps its own numbers for the same case.
    median_a = data.get(a.env_id, "trivial-call", "default", None).median_s
    median_b = data.get(b.env_id, "trivial-call", "default", None).median_s
    assert median_a != median_b


def test_unique_environment_keeps_the_short_label(data):
    cpu = data.environments[fx.ENV_CPU.env_id()]
    assert cpu.label == "Intel Xeon Platinum 8480+ · torch 2.11.0"


def test_tiny_shapes_are_left_out_and_counted(data):
    assert data.hidden_shapes == {"tiny": 1}
    assert all(r.shapes == "seed" for r in data.latest)


def test_rerun_tags_never_replace_main(tmp_path):
    main = fx.ok_record(fx.ENV_A, "matmul-128", "eager", None,
                        started="2026-01-01T00:00:00+00:00")
    rerun = fx.ok_record(fx.ENV_A, "matmul-128", "eager", None, tag="rerun-1", scale=2.0,
                         started="2026-03-01T00:00:00+00:00")
    data = load(tmp_path, main, rerun)
    assert data.get(fx.ENV_A.env_id(), "matmul-128", "eager", None).tag == "main"
    assert data.tags == ["main", "rerun-1"]
    assert len(data.results(tag=None)) == 2 and data.superseded == 0


def test_every_known_backend_and_mode_is_listed_even_unmeasured(data):
    assert data.backends == ["cuda", "cpu", "mps"]
    assert data.envs("mps") == []
    assert data.modes[:2] == ["eager", "default"] and "cuda-graph" in data.modes


def test_unknown_mode_and_family_are_shown_after_known_ones(tmp_path):
    record = fx.ok_record(fx.ENV_A, "matmul-128", "eager", None)
    new_mode = dataclasses.replace(record, key=CaseKey("cuda", "matmul-128", "aa-mode", None))
    new_family = dataclasses.replace(
        record, key=CaseKey("cuda", "aa-workload", "eager", None),
        workload_info=dataclasses.replace(record.workload_info, family="aa-family"))
    data = load(tmp_path, new_family, new_mode, record)
    assert data.modes[-1] == "aa-mode"
    assert data.workloads == ["matmul-128", "aa-workload"]


def test_representative_batch_is_one_where_measured(data):
    assert data.representative_batch("vit16x6x384") == 1
    assert data.representative_batch("matmul-128") is None
