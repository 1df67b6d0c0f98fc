"""Data checks: facts of the committed results/ and properties of the code that only
those records exercise so far. They fail when results/ change (a new lease, a new GPU type,
fewer paired processes), not only when code breaks: read the docstring of a failing one
before changing code. `pytest -m data` runs them alone, `pytest -m "not data"` skips them;
`nox -s tests` runs them with the rest. Each reads the one analysis of results/ that
tests/conftest.py's `committed` fixture builds per session."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest
from test_report_gpu_types import row, section

from report import analysis
from report.analysis import Data
from report.pages import gpu_types, overview
from report.site import Site

pytestmark = pytest.mark.data


def gpu_page(committed: Data, docs: Path) -> str:
    """The GPU-types page of the committed results, then each pair's page."""
    gpu_types.render(Site(committed, docs))
    pairs = sorted((docs / gpu_types.PAGE).with_suffix("").glob("*-vs-*.md"))
    return "\n".join(path.read_text(encoding="utf-8") for path in [docs / gpu_types.PAGE, *pairs])


def test_a_figure_from_one_lease_has_no_move_across_leases(committed):
    """In the real records most cases have one isolated process (on one lease) and paired
    processes on several: the isolated median has nothing to move against there. Guards the
    lease-by-lease table on the real records, the only ones with several leases."""
    across = analysis.across_leases(committed.records, committed.speedups)
    for figure, move in (("median_s", "median_move"), ("speedup", "speedup_move")):
        leases = across.groupby(analysis.CASE, dropna=False)[figure].transform("count")
        assert across.loc[leases < 2, move].isna().all(), figure
        assert across.loc[leases >= 2, move].notna().all(), figure
    assert (across.groupby(analysis.CASE, dropna=False)["median_s"].count() < 2).any()


def test_a_case_with_paired_processes_publishes_their_figures_and_spreads_over_them(committed):
    """Guards that the real records still hold paired cases whose isolated side alone rests
    on one process (the code: the test of the same name in test_report_analysis.py)."""
    found = analysis.spreads(committed.cases)
    paired = found[found["timing"] == "paired"]
    assert len(paired) and (found["n_processes"] >= 2).all()
    case = paired.iloc[0]
    mine = committed.paired
    for column in analysis.CASE:
        mine = mine[mine[column].isna() if pd.isna(case[column]) else mine[column] == case[column]]
    medians = mine["median_s"]
    assert case["n_processes"] == case["paired_processes"] == len(medians) >= 2
    assert case["spread"] == pytest.approx(medians.max() / medians.min() - 1.0)
    alone = committed.isolated_cases.merge(paired[analysis.CASE], on=analysis.CASE)
    assert (alone["n_processes"] < 2).any()  # the isolated side alone has no spread there


def test_a_mode_timed_faster_than_eager_pays_back_its_compile_and_a_slower_one_never_does(committed):
    """The saving per call came from the isolated medians while the speedup beside it came
    from the paired processes: 39 cases of the real records read faster than eager yet
    never paid back, or the reverse (H100 vit32x12x768 at batch 4: default 1.48x, "never").
    Guards every timed case of the real records, over 100 of them paired."""
    table = analysis.with_break_even(committed.speedups)
    timed = table[(table["mode"] != analysis.BASELINE) & table["ok"].eq(True)
                  & table["ok_base"].eq(True) & table["cold_first_call_s"].notna()]
    assert timed["paired"].sum() > 100
    faster, slower = timed[timed["speedup"] > 1], timed[timed["speedup"] < 1]
    assert len(faster) and len(slower)
    assert (faster["cold_calls"] < analysis.NEVER).all(), faster.loc[
        faster["cold_calls"] == analysis.NEVER, ["env_id", "workload", "batch_size", "mode"]]
    assert (slower["cold_calls"] == analysis.NEVER).all()


def test_two_compiled_modes_compare_on_the_processes_that_timed_them_side_by_side(committed):
    """max-autotune against reduce-overhead (two claims ask it) fell back to one isolated
    process a side, though three paired processes had timed both: the claims read unsettled.
    Guards the claims' comparison on the real records (at least 5 paired points)."""
    found = analysis.compare(committed.cases, "max-autotune", "reduce-overhead")
    direct = committed.paired_speedups[(committed.paired_speedups["mode"] == "max-autotune")
                                  & (committed.paired_speedups["baseline"] == "reduce-overhead")]
    assert len(direct) >= 5
    paired = found[found["paired"]].merge(direct, on=analysis.POINT, suffixes=("", "_direct"))
    assert len(paired) == len(direct)
    assert (paired["speedup"] == paired["speedup_direct"]).all()
    assert (paired["pairings"] == paired["processes"]).all() and (paired["pairings"] >= 2).any()


def test_the_real_results_set_both_gpu_types_side_by_side(committed, tmp_path):
    """Guards the GPU-types page on the real records: the H100 and H200 leases pair, and
    the lease table stays whole-numbered where batched and unbatched cases and modes
    measured on one GPU type only meet (two bugs these records showed)."""
    page = gpu_page(committed, tmp_path / "docs")
    # Two H200 environments share the machine name lent-h200: their ids tell them apart.
    heading = "## NVIDIA H100 80GB HBM3 (lent-h100) vs NVIDIA H200 (lent-h200 · 9c1485e7594b)"
    assert heading in page
    # Both GPUs timed the models at batch 8 in three paired processes or more each (the
    # H100's leases go on adding processes).
    pair = page[page.index(heading[1:] + ": every case"):]  # the pair's own page
    cells = row(section(pair, "Latency, case by case"), "[resnet50](../../workloads/resnet50.md)",
                "8", "eager")
    counts = [re.search(r", (\d+)\u00a0paired\u00a0proc\.\)$", cell) for cell in cells[3:5]]
    assert all(found and int(found.group(1)) >= 3 for found in counts), cells[3:5]
    assert "| NVIDIA H100 80GB HBM3 faster | NVIDIA H200 faster |" in page
    assert "Not measured" not in page
    # The lease table joins batched and unbatched cases, which makes its batches floats.
    leases = section(page, "Speedup over eager, lease by lease")
    assert re.search(r"\| (\[mlp\]\(\.\./\.\./workloads/mlp\.md\)|mlp) \| 32 \| default \|", leases)
    assert "| 32.0 |" not in leases and "| 1.0 |" not in leases
    # ...and a mode measured on one GPU type only made the other's lease counts floats
    assert "not measured |" in leases and not re.search(r"×, \d+\.0\)", leases)
    # a row rests on two or more leases of at least one GPU type
    counts = [[int(n) for n in re.findall(r"×, (\d+)\)", line)]
              for line in leases.splitlines() if line.startswith("| ") and "×, " in line]
    assert counts and all(max(c) >= 2 for c in counts)


@pytest.fixture(scope="module")
def home(committed, tmp_path_factory) -> str:
    """The home page rendered from the committed records."""
    docs = tmp_path_factory.mktemp("home")
    overview.render(Site(committed, docs))
    return (docs / overview.PAGE).read_text(encoding="utf-8")


def test_an_answers_break_even_is_rounded_to_what_its_compile_time_supports(home):
    """A count of calls from one cold compile time, which varies by a third between fresh
    processes: the home page's "pays back in 53,162 calls" claimed five figures the
    measurement does not hold. Guards that the real records still give answers with one."""
    counts = re.findall(r"(?:pays back in|but needs) (.+?) calls", home)
    assert len(counts) >= 3, "fewer answers say when their compile pays back"
    for count in counts:
        assert re.fullmatch(r"about [1-9](?:,?0)+|[1-9]", count), count


def test_counts_on_the_home_page_carry_thousands_separators(home):
    """"747 of 1571 cases" beside "about 50,000 calls": every count in the home page's
    words is grouped the same way. The real records have counts past 999 to show it."""
    counts = re.findall(r"\b(\d[\d,]*) of (\d[\d,]*)\b", home)
    assert any(len(b.replace(",", "")) >= 4 for _, b in counts), counts
    for pair in counts:
        for n in pair:
            assert n == f"{int(n.replace(',', '')):,}", pair


def test_the_vit_base_questions_are_answered_from_the_real_vit_b16(home):
    """The first two quick answers came from vit32x12x768, a synthetic ViT of ViT-Base's
    width and depth with a quarter of its tokens, although timm's ViT-B/16 was measured on
    both GPU types at batch 1 and 32."""
    quick = home[home.index("## Quick answers"):home.index("### The GPU answers in bfloat16")]
    first, second = quick.split("**1. ")[1].split("**2. ")
    for answer, batch in ((first, 1), (second.split("**3. ")[0], 32)):
        # the workload's name is the link to its evidence
        assert f"<small>[vit-base16](workloads/vit-base16.md), batch {batch}, float32:" in answer, answer
        assert answer.count("**NVIDIA") == 2, answer  # both GPU types answer
