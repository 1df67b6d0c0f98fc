"""Issue 94, fault f: the home page's answers look cases up in an index of the published
table built once, so their work grows with the environments, not with their square. Counted,
not timed: the table is scanned a fixed number of times however many environments there are."""

from __future__ import annotations

import pandas as pd
import pytest
from fixtures import many_environments

from report import analysis, answers
from report.analysis import Data, load

ENVIRONMENTS = 40


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    folder = tmp_path_factory.mktemp("many") / "results"
    many_environments.write(folder, ENVIRONMENTS)
    found = Data(load(folder))
    assert len(found.environments) == ENVIRONMENTS
    return found


def test_fastest_chooses_once_for_every_environment(data, monkeypatch):
    tables = []
    choose = analysis.choose

    def counted(table: pd.DataFrame, calls):
        tables.append(len(table))
        return choose(table, calls)

    monkeypatch.setattr(analysis, "choose", counted)
    parts = answers.fastest_at(data, many_environments.WORKLOAD, many_environments.BATCH, "cuda")
    (part,) = parts  # one device, its other environments listed beside it
    assert len(part["others"]) == ENVIRONMENTS - 1
    assert tables == [2 * ENVIRONMENTS]  # one choice over every environment's two cases


def test_precision_never_scans_the_table_per_environment(data, monkeypatch):
    def refused(*args, **kwargs):
        raise AssertionError("a scan of the published table per case")

    monkeypatch.setattr(analysis, "row_of", refused)
    found = answers.precision(data)
    (device,) = found["devices"]
    assert device["moves"] == [] and device["apart"] is None
    assert device["dtypes"][0]["cases"] == 2 * ENVIRONMENTS
