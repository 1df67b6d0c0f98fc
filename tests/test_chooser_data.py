"""The chooser's data keeps each distinct answer once and reads back, as chooser.js reads
it, to every answer `guide.chooser_answers` computed, value for value and type for type."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fixtures import dtype_records as dx

from report import analysis
from report.analysis import Data, load
from report.pages import guide

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """The fixture results with a second dtype of one model."""
    return Data(load(dx.beside_the_fixture_results(tmp_path_factory.mktemp("results"))))


def as_sent(value) -> str:
    """JSON text, where 1, 1.0 and True differ as they do in the file."""
    return json.dumps(value, sort_keys=True)


def read_back(chooser: dict) -> list:
    """The points and answers of the chooser's file as the browser gets them, through JSON
    text, in the file's order."""
    sent = json.loads(json.dumps(chooser, sort_keys=True, separators=(",", ":")))
    return [[p[:4], p[4]] for p in guide.chooser_points(sent)]


def computed(data: Data) -> list:
    """`guide.chooser_answers` in the same shape, in its order."""
    return [[list(point), answers] for point, answers in guide.chooser_answers(data).items()]


def test_the_chooser_data_reads_back_to_every_answer_at_every_calls(data):
    assert len(computed(data)) >= 20
    assert as_sent(read_back(guide.chooser_data(data))) == as_sent(computed(data))


def test_each_distinct_answer_and_value_is_kept_once(data):
    chooser = guide.chooser_data(data)
    every = [a for answers in guide.chooser_answers(data).values() for a in answers if a]
    assert len(chooser["answers"]) == len({as_sent(a) for a in every}) < len(every)
    for field, values in zip(chooser["fields"], chooser["values"], strict=True):
        assert len({as_sent(v) for v in values}) == len(values), field
    assert all(len(p[4]) == len(analysis.CALLS_STEPS) for p in chooser["points"])
