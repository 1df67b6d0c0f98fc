"""A/B groups judged against their A/A noise floor (report/ab.py), from `ab_fixtures`."""

from __future__ import annotations

from pathlib import Path

import pytest
from ab_fixtures import group_records, host
from test_report_compare import write

from report import ab, analysis
from report.analysis import Data

LABELS = {"2.14.1": "2.14.1", "2.15.0": "2.15.0", "2.15.0-aa": "2.15.0"}
EFFECTS = {("2.15.0", "mlp", "default"): 1.30,  # slower by far more than the floor
           ("2.15.0", "matmul-128", "eager"): 0.70,  # faster
           ("2.15.0", "matmul-128", "default"): 1.04}  # beyond the A/A floor, under 5%
# The A/A side drifts by up to 2% from repeat to repeat: that is the floor.
NOISE = {("2.15.0-aa", 0): 1.02, ("2.15.0-aa", 1): 0.995, ("2.15.0", 2): 1.01}


def load(tmp_path: Path, records) -> analysis.pd.DataFrame:
    return analysis.load(write(tmp_path / "results", records))


@pytest.fixture
def records(tmp_path: Path):
    return load(tmp_path, group_records("g1", LABELS, EFFECTS, NOISE))


def verdicts(step_rows) -> dict:
    return {(r.workload, r.mode): r.verdict for r in step_rows.itertuples()}


def test_labels_of_one_release_are_an_aa_pair_and_consecutive_releases_an_ab_pair(records):
    pairs = ab.comparisons(ab.sides(records))
    assert sorted(zip(pairs["kind"], pairs["old_label"], pairs["new_label"], strict=True)) == [
        ("aa", "2.15.0", "2.15.0-aa"), ("ab", "2.14.1", "2.15.0")]
    assert set(pairs["hosts"]) == {("quiet/boot-1",)}


def test_the_floor_is_how_far_the_release_strayed_from_itself(records):
    found = ab.floors(records)
    assert set(found["group"]) == {"g1"} and len(found) == 4
    assert found["floor"].round(4).tolist() == [1.02] * 4


def test_a_step_is_called_only_beyond_the_floor_and_the_minimum_effect(records):
    found = ab.steps(records)
    assert verdicts(found) == {("matmul-128", "eager"): "faster",
                               ("matmul-128", "default"): "same",
                               ("mlp", "eager"): "same", ("mlp", "default"): "slower"}
    slower = found[found["verdict"] == "slower"].iloc[0]
    assert slower["pairs"] == 3 and slower["lo"] == pytest.approx(1.30)
    assert slower["hi"] == pytest.approx(1.313)
    assert set(found["floor_group"]) == {"g1"}


def test_without_an_aa_run_nothing_is_called(tmp_path):
    records = load(tmp_path, group_records("g1", {"2.14.1": "2.14.1", "2.15.0": "2.15.0"},
                                           EFFECTS))
    assert set(verdicts(ab.steps(records)).values()) == {ab.NO_FLOOR}


def test_an_aa_run_of_another_group_applies_on_the_same_host_only(tmp_path):
    ab_only = group_records("g2", {"2.14.1": "2.14.1", "2.15.0": "2.15.0"}, EFFECTS)
    same_host = group_records("g1", {"2.15.0": "2.15.0", "2.15.0-aa": "2.15.0"}, noise=NOISE)
    found = ab.steps(load(tmp_path / "same", ab_only + same_host))
    assert verdicts(found)[("mlp", "default")] == "slower"
    assert set(found["floor_group"]) == {"g1"}
    elsewhere = group_records("g1", {"2.15.0": "2.15.0", "2.15.0-aa": "2.15.0"}, noise=NOISE,
                              the_host=host("noisy", "boot-9"))
    found = ab.steps(load(tmp_path / "other", ab_only + elsewhere))
    assert set(verdicts(found).values()) == {ab.NO_FLOOR}


def test_one_pair_of_processes_is_a_single_pair_never_a_step(tmp_path):
    records = load(tmp_path, group_records("g1", LABELS, EFFECTS, NOISE, repeats=1))
    assert set(verdicts(ab.steps(records)).values()) == {ab.SINGLE}


def test_older_runs_are_not_read_as_a_group(tmp_path):
    from test_report_compare import release_records

    records = load(tmp_path, release_records())
    assert ab.sides(records).empty and ab.steps(records).empty


def test_the_release_answer_reads_the_same_table_as_the_pages(records):
    answer = ab.release_answer(Data(records))
    assert answer == {
        "release": "2.15.0", "old": "2.14.1", "group": "g1", "host": "quiet (boot boot-1)",
        "compared": 4, "faster": 1, "slower": 1, "same": 2, "undecided": 0,
        "floor": {"median": "±2.0%", "max": "±2.0%", "cases": 4, "group": "g1",
                  "against": "torch 2.15.0 under labels 2.15.0 and 2.15.0-aa"},
        "floor_text": "A step is called only beyond the A/A noise floor, measured in the same "
                      "run with torch 2.15.0 under labels 2.15.0 and 2.15.0-aa: ±2.0% in the "
                      "median case, ±2.0% at most, over 4 cases"}


def test_the_release_answer_is_none_without_an_ab_group(tmp_path):
    from test_report_compare import release_records

    assert ab.release_answer(Data(load(tmp_path, release_records()))) is None


def test_a_record_that_timed_nothing_does_not_hide_the_host(tmp_path):
    import dataclasses

    from ab_fixtures import environment
    from test_report_compare import failed_record

    records = group_records("g1", LABELS, EFFECTS, NOISE)
    unsupported = [dataclasses.replace(
        failed_record(environment(release), "mlp", "eager", "unsupported", repeats=1),
        key=dataclasses.replace(records[0].key, workload="mlp", tag=f"ab-g1-{label}"), host=None)
        for label, release in LABELS.items()]
    found = ab.steps(load(tmp_path, records + unsupported))
    assert set(found["hosts"]) == {("quiet/boot-1",)}
    assert verdicts(found)[("mlp", "default")] == "slower"
