"""Data checks of the pages' code on the committed results/ (tests/data_checks/test_committed_results.py
says what a data check is): each reads the one analysis of results/ that tests/conftest.py's
`committed` fixture builds per session, never a fresh load of its own."""

from __future__ import annotations

import json
import re

import pytest
from test_chooser_data import as_sent, computed, read_back
from test_report_pages import env_block, read, stability_env

from report import analysis, answers, formatting, ledger
from report.analysis import Data
from report.pages import guide, models, stability
from report.site import Site

pytestmark = pytest.mark.data


def test_every_committed_record_passes_the_relation_checks(committed: Data):
    assert len(committed.shown) > 0


def test_the_chooser_data_of_the_measured_results_reads_back_to_their_answers(committed: Data):
    assert as_sent(read_back(guide.chooser_data(committed))) == as_sent(computed(committed))


def test_the_chooser_data_of_the_measured_results_stays_under_300_kb(committed: Data):
    text = json.dumps(guide.chooser_data(committed), sort_keys=True, separators=(",", ":"))
    assert len(text.encode()) <= 300_000


def test_h100_gpt2_small_batch_1_at_100000_calls_is_the_mode_the_models_page_shows(committed: Data, tmp_path):
    models.render(Site(committed, tmp_path))
    page = (tmp_path / "analysis" / "models.md").read_text(encoding="utf-8")
    h100 = next(e for e in committed.envs("cuda") if "H100" in e.label)
    tab = page[page.index(h100.label):]
    lines = [line.strip() for line in tab.splitlines()]
    header = next(line for line in lines if line.startswith("| model, batch |"))
    column = [c.strip() for c in header.strip("|").split("|")].index(
        f"{formatting.number(100_000)} calls")
    line = next(line for line in lines if line.startswith("| gpt2-small, batch 1 |"))
    shown = [c.strip() for c in line.strip("|").split("|")][column].split(" (tie")[0]
    chooser = guide.chooser_data(committed)
    step = chooser["calls"].index(100_000)
    (by_calls,) = [p[4] for p in guide.chooser_points(chooser)
                   if tuple(p[:4]) == (h100.env_id, "gpt2-small", 1, analysis.DEFAULT_DTYPE)]
    assert by_calls[step][0] == shown


def test_an_answer_takes_the_environment_whose_figure_rests_on_paired_processes(committed: Data):
    """Two H200 environments of one torch release timed ViT-medium at batch 1: one in 2
    isolated processes a mode, with more records, the other in 3 paired processes. The
    answer came from the one with more records."""
    parts = {p["device"]: p for p in answers.fastest_at(committed, "vit32x12x768", 1, "cuda")}
    h200 = parts["NVIDIA H200"]
    assert h200["paired"] and h200["processes"] >= 3
    same = [e for e in committed.envs("cuda") if answers.device_of(e) == "NVIDIA H200"
            and dict(e.fields)["torch"] == dict(h200["env"].fields)["torch"]]
    assert len(same) >= 2 and h200["env"] is not answers._newest(same)[0]


def test_warmup_of_eager_is_near_zero_on_the_recorded_curves(committed: Data):
    """The noise floor: eager has nothing to compile, so its transient is a call or two."""
    procs = analysis.processes(committed.shown)
    curves = procs.loc[(procs["mode"] == "eager") & procs["ok"], "warmup_s"]
    figures = [ledger.warmup_calls(c) for c in curves if isinstance(c, tuple) and c]
    if not figures:
        pytest.skip("no eager warm-up curve in results/")
    assert max(figures) <= 10, figures


def test_stability_counts_the_real_paired_cases_its_environment_pages_list(committed: Data, tmp_path):
    stability.render(Site(committed, tmp_path))
    page = read(tmp_path, "analysis/stability.md")
    summaries = page[page.index("## Paired against isolated"):page.index("## Spread across")]
    env_ids = re.findall(r"\(environment `([0-9a-f]{12})`", summaries)
    assert env_ids
    for env_id in env_ids:
        summary = env_block(summaries, env_id)
        assert f"](stability/{env_id}.md#paired-against-isolated)" in summary
        counted = [int(line.split(" | ")[1]) for line in map(str.strip, summary.splitlines())
                   if line.startswith("| ") and not line.startswith("| bound")]
        cases = [line for line in stability_env(tmp_path, env_id, "paired-against-isolated")
                 .splitlines() if line.startswith("| ")][1:]
        assert sum(counted) == len(cases) > 0, env_id
    across = page[page.index("## Across leases"):page.index("## Paired against isolated")]
    for env_id in re.findall(r"\(environment `([0-9a-f]{12})`", across):
        cases = stability_env(tmp_path, env_id, "across-leases")
        assert f"](stability/{env_id}.md#across-leases)" in env_block(across, env_id)
        assert "lease: isolated median · paired speedup over eager" in cases
