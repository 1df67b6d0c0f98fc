"""Shape streams across torch releases (report/shapes/releases.py): an A/B group of stream
workloads is judged step by step against its A/A floor, and its records never count as
processes of the varying-shapes page's own cases."""

from __future__ import annotations

from dataclasses import replace

import ab_fixtures as abfx
import pytest
from fixtures.stream_records import failed_stream_record, stream_record

from bench.ab import tag
from bench.records import append_records
from report.analysis import Data
from report.analysis.loading import load
from report.formatting import times
from report.pages import shapes as page
from report.shapes import data as shapes
from report.shapes import releases
from report.site import Site

GROUP = "shapes1"
LABELS = {"2.14.1": "2.14.1", "2.15.0": "2.15.0", "2.15.0-aa": "2.15.0"}
FIRST_PASS = (2.0, 1.0, 1.0, 1.0)  # 5 s in all
# The new release halves default's total; eager and the A/A side stay within 2%.
FACTOR = {("2.15.0", "default"): 0.5, ("2.15.0-aa", "default"): 0.5}
NOISE = {0: 1.0, 1: 1.02, 2: 0.99}


def side_record(label: str, mode: str, strategy: str, repeat: int, minute: int):
    factor = FACTOR.get((label, mode), 1.0) * NOISE[repeat]
    made = stream_record(abfx.environment(LABELS[label]), mode, strategy,
                         tuple(s * factor for s in FIRST_PASS), 0.01 * factor, repeat=repeat)
    return replace(made, key=replace(made.key, tag=tag(GROUP, label)), host=abfx.host(),
                   started_at=f"2026-12-01T10:{minute:02d}:00+00:00")


def group_records() -> list:
    out, minute = [], 0
    for repeat in range(3):
        for label in LABELS if repeat % 2 == 0 else list(LABELS)[::-1]:  # ABBA, as bench.ab
            for mode, strategy in (("eager", "eager"), ("default", "automatic-dynamic")):
                out.append(side_record(label, mode, strategy, repeat, minute))
                minute += 1
            # torch 2.14 has the specification, but say this side could not run it.
            if label == "2.14.1":
                failed = failed_stream_record(abfx.environment(LABELS[label]),
                                              "default-shapes-spec", "unsupported",
                                              "no dynamic_shapes= here", repeat=repeat)
                out.append(replace(failed, key=replace(failed.key, tag=tag(GROUP, label))))
    return out


@pytest.fixture
def found(tmp_path):
    append_records(tmp_path / "results" / "ab.jsonl", group_records())
    return Data(load(tmp_path / "results"))


def _row(found, mode):
    (group,) = releases.groups(found.records)
    (stream,) = group["streams"]
    return group, next(r for r in stream["modes"] if r["mode"] == mode)


def test_a_halved_total_is_called_faster_beyond_the_aa_floor(found):
    group, row = _row(found, "default")
    assert group["labels"] == ["2.14.1", "2.15.0", "2.15.0-aa"]
    assert group["names"]["2.15.0-aa"] == "2.15.0 (2.15.0-aa)"
    (step,) = row["steps"]  # the total alone is judged
    assert (step["old"], step["new"], step["verdict"]) == ("2.14.1", "2.15.0", "faster")
    assert step["median"] == pytest.approx(0.5) and step["n"] == 3
    assert row["floors"]["total_s"] == pytest.approx(1.0)  # both sides of the A/A run halved alike
    assert row["sides"]["2.14.1"]["total_s"]["median"] == pytest.approx(5.0 * 1.0)
    assert row["sides"]["2.14.1"]["total_s"]["hi"] == pytest.approx(5.0 * 1.02)


def test_an_unchanged_mode_is_the_same_and_a_side_that_failed_says_why(found):
    _, eager = _row(found, "eager")
    assert {s["verdict"] for s in eager["steps"]} == {"same"}
    _, spec = _row(found, "default-shapes-spec")
    assert spec["sides"]["2.14.1"]["failed"][0]["status"] == "unsupported"
    assert spec["sides"]["2.15.0"]["total_s"] is None and not spec["steps"]


def test_a_first_pass_that_built_the_headers_is_not_set_beside_the_other_side(tmp_path):
    """Repeat 0 of the new release's default built Inductor's precompiled headers (the
    machine's first compile of that release): its step rests on the other two repeats."""
    records = []
    for record in group_records():
        if (record.key.mode, record.process.repeat, record.key.tag) == (
                "default", 0, tag(GROUP, "2.15.0")):
            record = replace(record, compile=replace(record.compile, headers_built=1))
        records.append(record)
    append_records(tmp_path / "results" / "ab.jsonl", records)
    _, row = _row(Data(load(tmp_path / "results")), "default")
    (step,) = row["steps"]
    assert step["n"] == 2 and step["verdict"] == "faster"
    assert row["sides"]["2.15.0"]["total_s"]["median"] == pytest.approx(2.5 * 1.005)


def test_group_records_are_not_processes_of_the_pages_own_cases(found):
    assert shapes.cases(found.records) == []
    assert shapes.stream_environments(found) == {}


def test_the_page_shows_each_release_and_the_step_it_called(found, tmp_path):
    site = Site(found, tmp_path / "docs")
    page.render(site)
    text = (tmp_path / "docs" / page.PAGE).read_text()
    section = text.split("## Across torch releases")[1].split("## How it is measured")[0]
    assert f"**A/B group {GROUP}**" in section
    row = next(line for line in section.splitlines() if line.startswith("| `default` |"))
    assert f"2.14.1 → 2.15.0: faster, {times(0.5)}" in row
    eager = next(line for line in section.splitlines() if line.startswith("| `eager` |"))
    assert eager.rstrip().endswith("| none |")
    assert "**unsupported**: no dynamic\\_shapes= here" in section  # escaped for Markdown
    p99 = section.split("p99 of a call")[1]
    assert "steps called" not in p99 and "The p99 is shown, not judged" in p99
