"""report.analysis.environment.environments reads every environment's fields in one pass
over the columns (issue 94, fault f: a groupby reading ~21 fields per group was most of the
load of ten thousand environments). It must describe every environment exactly as the
groupby did; `by_groups` below is that former code, kept as the reference."""

from __future__ import annotations

import pandas as pd
import pytest
from fixtures import RESULTS, many_environments
from fixtures.hostile import write_hostile_results

from report.analysis import Data, load
from report.analysis.environment import (
    BASELINE,
    ENV_FIELDS,
    Environment,
    _text,
    _unique_labels,
    environments,
    left_to_twins,
)


def by_groups(shown: pd.DataFrame, case_rows: pd.DataFrame) -> dict[str, Environment]:
    """environments() as it was before the one-pass read (commit 6fe6af5)."""
    fields = {env_id: {name: tuple(sorted({_text(v) for v in group[name]}))
                       for name in ENV_FIELDS}
              for env_id, group in shown.groupby("env_id")}
    days = shown.groupby("env_id")["started_at"].agg(["min", "max"])
    labels = _unique_labels(fields, {env_id: (str(first)[:10], str(last)[:10])
                                     for env_id, first, last in days.itertuples()})
    repeated = set(case_rows.loc[case_rows["n_processes"] > 1, "env_id"])
    if f"paired_{BASELINE}_processes" in case_rows:
        repeated |= set(case_rows.loc[case_rows[f"paired_{BASELINE}_processes"] > 1, "env_id"])
    counts = shown["env_id"].value_counts()
    modes = {env_id: set(group["mode"]) for env_id, group in shown.groupby("env_id")}
    return {env_id: Environment(env_id, f["backend"][0], labels[env_id], tuple(f.items()),
                                int(counts[env_id]), env_id in repeated,
                                left_to_twins(modes[env_id], f["backend"][0]))
            for env_id, f in sorted(fields.items())}


def same_as_before(data: Data) -> None:
    now = environments(data.shown, data.cases)
    before = by_groups(data.shown, data.cases)
    assert list(now) == list(before)  # the same environments in the same order
    for env_id, env in now.items():
        assert env == before[env_id], env_id


def test_the_fixture_environments_are_described_as_before():
    data = Data(load(RESULTS))
    assert len(data.environments) == 3
    same_as_before(data)


def test_fields_that_differ_between_runs_or_were_not_recorded_read_as_before(tmp_path):
    """Two values of one field in one environment, a flag, and a field never recorded."""
    data = Data(load(RESULTS))
    shown = data.shown.copy()
    first = shown.index[shown["env_id"] == shown["env_id"].iloc[0]]
    flags = [name for name in ENV_FIELDS if shown[name].dtype == bool]
    assert flags, "the fixture has boolean environment fields"
    shown.loc[first[0], flags[0]] = not shown.loc[first[0], flags[0]]
    texts = [name for name in ENV_FIELDS if shown[name].dtype == object]
    shown.loc[first[-1], texts[-1]] = None
    now, before = environments(shown, data.cases), by_groups(shown, data.cases)
    assert now == before
    changed = dict(now[shown.loc[first[0], "env_id"]].fields)
    assert len(changed[flags[0]]) == 2 and "not recorded" in changed[texts[-1]]


@pytest.mark.parametrize("records", ["many", "hostile"])
def test_other_record_sets_are_described_as_before(tmp_path, records):
    folder = tmp_path / "results"
    if records == "many":
        many_environments.write(folder, 25)
    else:
        write_hostile_results(folder)
    same_as_before(Data(load(folder)))


def test_an_environments_days_span_its_paired_processes():
    """A label's days are those of every figure the pages print for it: an environment whose
    later processes were all paired (the H100's leases of December) must not read as if it
    ended with its last isolated process."""
    data = Data(load(RESULTS))
    env_id = sorted(data.environments)[0]
    mine = data.shown[data.shown["env_id"] == env_id]
    last = mine["started_at"].max()
    assert str(last)[:10] in data.environments[env_id].label
    later = mine.head(1).assign(started_at=last + pd.Timedelta(days=40))
    elsewhere = later.assign(env_id="not-an-environment-here")
    found = environments(data.shown, data.cases, pd.concat([later, elsewhere]))
    assert found[env_id].label.endswith(f" to {str(last + pd.Timedelta(days=40))[:10]}")
    assert set(found) == set(data.environments)  # a paired-only env_id adds no environment
    others = [e for e in found if e != env_id]
    assert all(found[e].label == data.environments[e].label for e in others)
