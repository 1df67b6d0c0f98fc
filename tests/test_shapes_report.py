"""The varying-shapes page (report/pages/shapes.py) on stream records made here: it picks
the soonest and the steadiest case that passed its float64 check, per device, and says
"not measured" where no record is."""

from __future__ import annotations

import pytest
from fixtures import make_results as fx
from fixtures.stream_records import WORKLOAD, failed_stream_record, page_records, stream_record

from bench.records import append_records
from report.analysis import Data
from report.analysis.loading import load
from report.pages import shapes as page
from report.shapes import data as shapes
from report.site import Site

SHAPES_SPEC_ERROR = "during first pass: AssertionError: expected size 64==64, stride 1==12544"


@pytest.fixture
def page_text(tmp_path):
    # A case whose every process failed carries no stream section; it still has its row.
    records = page_records() + [
        failed_stream_record(fx.ENV_A, "default-shapes-spec", "error", SHAPES_SPEC_ERROR,
                             repeat=repeat) for repeat in range(3)]
    # A batch stream whose largest request (16) is under pad64's only bucket.
    batches = {"workload": "vit-base16-batches", "sizes": (2, 9, 2, 16)}
    records += [stream_record(fx.ENV_A, "eager", "eager", (1.0, 1.0, 1.0, 1.0), 1.0, **batches),
                stream_record(fx.ENV_A, "default-pad64", "pad64", (9.0, 0.5, 0.5, 0.5), 0.5,
                              run_sizes=(64, 64, 64, 64), **batches)]
    append_records(tmp_path / "results" / "cuda.jsonl", records)
    site = Site(Data(load(tmp_path / "results")), tmp_path / "docs")
    page.render(site)
    return (tmp_path / "docs" / page.PAGE).read_text()


def test_the_answer_picks_the_soonest_and_steadiest_cases_that_passed(page_text):
    answer = page_text.split("## Every strategy")[0]
    row = next(line for line in answer.splitlines() if f"| {WORKLOAD}, batch 1" in line)
    cells = [c.strip() for c in row.strip().strip("|").split("|")]
    assert cells[0].endswith("sequence 16–100, 4 calls")
    assert cells[1] == "`default`"  # 14.03 s, against 16.0 s padded and 20 s eager
    assert cells[4] == "`reduce-overhead-pad-pow2`"  # the lowest p99 that passed
    assert cells[8] == "3.00\u00a0MiB"  # its memory per size it ran at
    assert cells[7] == "3"  # its running total first at or below eager's: 12.0 s against 15 s


def test_a_device_and_a_stream_without_records_read_not_measured(page_text):
    assert "Not measured: there are no shape-stream results from a cpu or mps machine yet." in page_text
    assert "| resnet50-batches | not measured |" in page_text


def test_break_even_is_the_first_call_at_which_the_running_total_is_no_more_than_eager():
    eager = {"ok": True, "calls": 4, "running_s": [1.0, 2.0, 3.0, 4.0]}
    assert shapes.break_even({"ok": True, "calls": 4, "running_s": [5.0, 5.1, 5.2, 5.3]},
                             eager) is None
    assert shapes.break_even({"ok": True, "calls": 4, "running_s": [1.5, 2.5, 2.9, 3.0]},
                             eager) == 3


def test_a_case_whose_every_process_failed_shows_its_strategy_status_and_reason(page_text):
    row = next(line for line in page_text.splitlines()
               if line.strip().startswith("| `default-shapes-spec` |"))
    cells = [c.strip() for c in row.strip().strip("|").split("|")]
    assert cells[1:3] == ["shapes-spec", "0"]
    assert f"**error**: {SHAPES_SPEC_ERROR}" in row


def test_a_padding_strategy_whose_bucket_is_above_every_request_is_said_so(page_text):
    assert ("`default-pad64` ran every call of this stream (sizes 2–16) at 64, above its "
            "largest request: 1 compiled size, and at least 4.00× the work any call asked "
            "for.") in page_text
    # pad-pow2 ran 16-100 at 16, 64 and 128: its smallest bucket serves requests as asked.
    assert "`reduce-overhead-pad-pow2` ran every call" not in page_text
