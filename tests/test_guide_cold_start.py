"""Issue 53: the guide's "first call too slow" answer links the cold-start page and names the
rung that page recommends (`report.coldstart.data.Case.recommended`), or says not measured."""

from __future__ import annotations

import dataclasses

import pytest
from fixtures import RESULTS
from test_coldstart_page import H100, ab_records, fixture_records, record, write

from report import analysis
from report.coldstart.data import load
from report.formatting import seconds_range
from report.pages import cold_start, guide, overview
from report.site import Site


@pytest.fixture(scope="module")
def data():
    return analysis.Data(analysis.load(RESULTS))


def first_call_text(data, tmp_path, results) -> str:
    guide.render(Site(data, tmp_path / "docs", results=results))
    text = (tmp_path / "docs" / guide.PAGE).read_text("utf-8")
    start = text.index("**Is your first call too slow?**")
    return text[start:text.index("**Is compiled slower", start)]


def test_the_guide_names_the_cold_start_pages_recommended_rung(data, tmp_path):
    write(tmp_path / "results" / "coldstart", fixture_records())
    # the H200 has no rung over its eager
    (env,) = cold_start.first_call(load(tmp_path / "results" / "coldstart")[0])
    (case,) = env["cases"]
    # warm leaves 7.5 s over eager's 0.5 s first call, the bundle 8.5 s, cold 29.5 s.
    assert (case["workload"], case["rung"]) == ("gpt2-small", "warm")
    assert case["residual_s"] == pytest.approx(7.5) and case["cold_s"] == pytest.approx(29.5)
    text = first_call_text(data, tmp_path, tmp_path / "results")
    assert "](cold-start.md)" in text and "](cold-start.md#per-model)" in text
    header, row = [line for line in text.splitlines() if line.startswith("| ")]
    # aot (unsupported) and precompile (not measured) have no figure: named, not a column
    assert [cell.strip() for cell in header.strip("|").split("|")] == [
        "machine", "mode, dtype", "cold", "warm", "bundle", "least for"]
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    assert cells[0] == f"[NVIDIA H100 80GB HBM3 · torch 2.11.0+cu130](cold-start/{H100.env_id()}.md)"
    assert cells[1:] == ["default, float32", "29.5\u00a0s", "**7.50\u00a0s**", "8.50\u00a0s", "warm 1 of 1"]
    assert "At batch 1:" in text and "At batch 32" not in text
    assert "No figure at batch 1 on any of these machines: aot, precompile (" in text


def test_a_case_with_only_the_cold_rung_measured_is_no_recommendation(tmp_path):
    """Regional compilation's batch times eager, cold and the block rungs alone: cold is then
    the least residual only because it is the one compiled rung there."""
    regional_only = [record(H100, rung, first, 0.004, r, batch=32)
                     for r in range(3) for rung, first in (("eager", 0.6), ("cold", 20.0),
                                                           ("per-block", 9.0))]
    write(tmp_path / "coldstart", fixture_records() + regional_only)
    (env,) = cold_start.first_call(load(tmp_path / "coldstart")[0])
    assert [(c["batch"], c["rung"]) for c in env["cases"]] == [(1, "warm")]


def test_a_figure_from_fewer_processes_than_asked_says_how_many(data, tmp_path):
    """A median of one process has no spread: the answer names its count, and a case measured
    in every asked-for process reads as before."""
    one_process = [record(H100, rung, first, 0.004, 0, batch=32)
                   for rung, first in (("eager", 0.6), ("cold", 20.0), ("warm", 6.0),
                                       ("bundle", 7.0))]
    write(tmp_path / "results" / "coldstart", fixture_records() + one_process)
    (env,) = cold_start.first_call(load(tmp_path / "results" / "coldstart")[0])
    assert [(c["batch"], c["processes"]) for c in env["cases"]] == [(1, 3), (32, 1)]
    text = first_call_text(data, tmp_path, tmp_path / "results")
    one, thirty_two = text.split("At batch 32:")
    warm = [line.split("|")[4].strip() for text in (one, thirty_two)
            for line in text.splitlines() if line.startswith("| [")]
    assert warm == ["**7.50\u00a0s**", "**5.40\u00a0s**, 1 process"]


def test_without_cold_start_records_the_guide_says_not_measured(data, tmp_path):
    text = first_call_text(data, tmp_path, tmp_path / "none")
    assert "](cold-start.md)" in text and "not measured" in text and "least for" not in text


def test_the_cold_start_page_gives_the_guides_answer_at_its_head(data, tmp_path):
    """One answer per question: the rung the guide recommends is the one the cold-start page
    names first, from the same records, row for row."""
    write(tmp_path / "results" / "coldstart", fixture_records())
    guide_rows = [line for line in first_call_text(data, tmp_path, tmp_path / "results").splitlines()
                  if line.startswith("| ")]
    cold_start.render(Site(data, tmp_path / "docs", results=tmp_path / "results"))
    page = (tmp_path / "docs" / cold_start.PAGE).read_text("utf-8")
    start = page.index("## Which rung leaves the least")
    head = page[start:page.index("\n## ", start)]
    assert [line for line in head.splitlines() if line.startswith("| ")] == guide_rows
    assert len(guide_rows) == 2 and "**7.50\u00a0s**" in guide_rows[1]


def test_the_home_page_points_a_slow_first_call_at_the_answer(data, tmp_path):
    """The home page has no room for another quick answer (two screens at 1440×900), so it
    links the cold-start page's answer by an anchor that page sets."""
    write(tmp_path / "results" / "coldstart", fixture_records())
    site = Site(data, tmp_path / "docs", results=tmp_path / "results")
    overview.render(site)
    cold_start.render(site)
    home = (tmp_path / "docs" / "index.md").read_text("utf-8")
    assert "](analysis/cold-start.md#which-rung)" in home
    page = (tmp_path / "docs" / cold_start.PAGE).read_text("utf-8")
    assert "## Which rung leaves the least { #which-rung }" in page


def test_the_answer_says_what_upgrading_torch_did_from_the_releases_ab(data, tmp_path):
    """The A/B section's verdicts, counted per rung beside the rung recommended: 2.13.0 halved
    the cold first call (beyond its A/A floor) and left eager's the same."""
    write(tmp_path / "results" / "coldstart", [*fixture_records(), *ab_records()])
    text = first_call_text(data, tmp_path, tmp_path / "results")
    assert "](cold-start.md#releases)" in text
    lines = text.splitlines()
    (line,) = [line for line in lines if line.startswith("- torch ")]
    assert lines[lines.index(line) - 1] == ""  # else Markdown runs the list into the paragraph
    assert line == ("- torch 2.12.1+cu130 → 2.13.0+cu130 on atlas-cpu (NVIDIA H100 80GB HBM3, "
                    "16 cores, torch using 16): **eager** the same in 1 of 1 (1.00); "
                    "**cold** faster in 1 of 1 (0.50).")
    cold_start.render(Site(data, tmp_path / "docs", results=tmp_path / "results"))
    page = (tmp_path / "docs" / cold_start.PAGE).read_text("utf-8")
    assert line in page[:page.index("## How each rung is measured")]


def test_releases_ab_on_different_hosts_says_nothing_of_upgrading(data, tmp_path):
    write(tmp_path / "results" / "coldstart", [*fixture_records(), *ab_records(other_host=True)])
    text = first_call_text(data, tmp_path, tmp_path / "results")
    assert "warm 1 of 1" in text and "Upgrading torch" not in text and "- torch " not in text


def _ladder(env, workload, firsts, processes=3):
    """`firsts`: each rung's first call; eager's is 0.5 s, so a residual is the first call less
    0.5 s."""
    return [record(env, rung, first, 0.005, r, workload=workload)
            for r in range(processes) for rung, first in (("eager", 0.5), *firsts.items())]


def test_at_a_glance_a_device_row_is_one_machine_with_the_most_models_and_their_range(tmp_path):
    """Two H100 machines: the newer release measured one model, the older two; the row is the
    older machine's, its figures the range over its two models, never a mix of machines. A
    workload that is no real model stays out, and a tie bolds no rung."""
    newer = dataclasses.replace(H100, torch="2.12.0+cu130")
    write(tmp_path, [
        *_ladder(H100, "gpt2-small", {"cold": 20.5, "warm": 6.5, "bundle": 7.5}),
        *_ladder(H100, "llama-small", {"cold": 30.5, "warm": 9.5, "bundle": 8.5}),
        *_ladder(H100, "mlp", {"cold": 90.5, "warm": 0.6, "bundle": 0.7}),
        *_ladder(newer, "gpt2-small", {"cold": 10.5, "warm": 2.5, "bundle": 3.5}),
    ])
    (row,) = cold_start.at_a_glance(load(tmp_path)[0])
    assert (row["link"], row["torch"], row["models"]) == (
        cold_start.env_link(H100.env_id()), "2.11.0+cu130", 2)
    assert row["rungs"]["cold"] == {"words": None, "low": pytest.approx(20.0),
                                    "high": pytest.approx(30.0), "models": 2, "processes": 3}
    assert row["rungs"]["aot"] == {"words": "not measured"}
    assert row["least"] == [("bundle", 1), ("warm", 1)] and row["lead"] is None


@pytest.mark.parametrize(("low", "high", "text"), [
    (13.5, 23.2, "13.5\u2013\u206023.2\u00a0s"),  # one unit; the word joiner keeps it on one line
    (0.95, 1.2, "950\u00a0ms\u2013\u20601.20\u00a0s"),  # two units: each end says its own
    (5.4, 5.4, "5.40\u00a0s"),
    (0.0, 0.23, "0\u2013\u2060230\u00a0ms"),  # zero takes the other end's unit
    (None, 5.4, "not measured"),
])
def test_a_range_of_seconds_reads_as_one_figure(low, high, text):
    assert seconds_range(low, high) == text
