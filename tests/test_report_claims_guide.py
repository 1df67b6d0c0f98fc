"""The claims page judges each claim from the records; the guide names the fastest mode
of each case, its margin, and ties inside the spread across processes."""

from __future__ import annotations

import pytest
from fixtures import make_results as fx
from test_report_pages import env_block, read, row

from bench.modes import MODES
from report.analysis import WORKLOAD_ORDER
from report.build import build
from report.claims import CLAIMS, COMPILED, Claim, verdict

ENV_A = fx.ENV_A.env_id()
VIT = "[vit16x6x384](../workloads/vit16x6x384.md)"
TRIVIAL = "[trivial-call](../workloads/trivial-call.md)"


@pytest.fixture(scope="module")
def docs(tmp_path_factory):
    """ViT eager and reduce-overhead at batch 1, 2, 4 (graphs stop helping at 4), and a
    trivial call whose default mode is 1% faster than eager: well inside the noise."""
    root = tmp_path_factory.mktemp("claims")
    records = [fx.ok_record(fx.ENV_A, "vit16x6x384", mode, batch)
               for batch in (1, 2, 4) for mode in ("eager", "reduce-overhead")]
    records += [fx.ok_record(fx.ENV_A, "trivial-call", "eager", None),
                fx.ok_record(fx.ENV_A, "trivial-call", "default", None, scale=0.99 / 0.8)]
    fx.write(root / "results" / "r.jsonl", records)
    build(root / "results", root / "docs")
    return root / "docs"


def section(page: str, slug: str) -> str:
    start = page.index(f"{{ #{slug} }}")
    end = page.find("\n## ", start)
    return page[start:end if end != -1 else None]


def test_claim_that_holds_for_some_batches_holds_in_part(docs):
    claim = section(read(docs, "analysis/claims.md"), "vit-advanced-modes")
    block = env_block(claim, ENV_A)
    assert "Verdict: **holds in part**, 2 of 3 measured comparisons agree with the claim." in block
    assert row(block, VIT, "1", "reduce-overhead").endswith("| 2.86× | yes |")
    # batch 4: eager / (eager * 1.05) — graphs no longer help, so the claim fails there.
    assert row(block, VIT, "4", "reduce-overhead").endswith("| 0.95× | **no** |")
    assert row(block, VIT, "1", "max-autotune").endswith("| not measured | not measured |")
    assert "The claim predicts a speedup of at least 1.30×." in claim


def test_claim_contradicted_by_every_comparison_does_not_hold(docs):
    block = env_block(section(read(docs, "analysis/claims.md"), "small-ops-slower"), ENV_A)
    assert "Verdict: **does not hold**, 0 of 1 measured comparisons agree with the claim." in block
    assert row(block, TRIVIAL, "—", "default").endswith("| 1.01× | **no** |")


def test_claim_without_records_is_not_measured_everywhere(docs):
    page = read(docs, "analysis/claims.md")
    summary = page[page.index("## Summary"):]
    assert row(summary, "[" + next(c.said for c in CLAIMS if c.slug == "graphs-cut-launch-cost")
               + "](#graphs-cut-launch-cost)").endswith("| not measured |")
    claim = section(page, "graphs-cut-launch-cost")
    assert "Tested on no measured workload:" in claim
    assert "Not measured: there are no results for this claim from a cuda machine yet." in claim


def test_verdict_ignores_comparisons_without_both_timings():
    def comparison(agrees):
        return {"holds": agrees}
    assert verdict([comparison(True), comparison(None)]) == "holds"
    assert verdict([comparison(False), comparison(None)]) == "does not hold"
    assert verdict([comparison(True), comparison(False)]) == "holds in part"
    assert verdict([comparison(None)]) == "not measured"
    assert verdict([]) == "not measured"


def test_claim_predicts_from_its_own_threshold():
    faster = Claim("x", "x", at_least=1.3)
    slower = Claim("y", "y", below=1.0)
    assert faster.predicts(1.3) and not faster.predicts(1.29)
    assert slower.predicts(0.99) and not slower.predicts(1.0)


def test_guide_names_the_fastest_mode_and_its_margin(docs):
    block = env_block(read(docs, "analysis/guide.md").split("## The fastest mode")[1], ENV_A)
    assert row(block, VIT, "1").startswith(
        f"| {VIT} | 1 | launch-bound | reduce-overhead | 2.86× | eager (1.00×) | 185.7% |")
    # One process a side: a lead of 5% is not called a tie, the environment is marked
    # as single runs instead.
    assert row(block, VIT, "4").startswith(
        f"| {VIT} | 4 | launch-bound | eager | 1.00× | reduce-overhead (0.95×) | 5.0% |")
    assert row(block, VIT, "4").endswith("| none | none |")
    assert "single runs: every figure rests on one process" in read(docs, "analysis/guide.md")


def test_guide_marks_a_lead_inside_the_spread_across_processes_as_a_tie(tmp_path):
    def runs(mode, scales):
        return [fx.ok_record(fx.ENV_A, "trivial-call", mode, None, scale=s, repeat=i,
                             repeats=len(scales)) for i, s in enumerate(scales)]
    records = runs("eager", (1.0, 1.0, 1.0)) + runs("default", (0.99 / 0.8, 1.1 / 0.8, 1.2 / 0.8))
    fx.write(tmp_path / "results" / "r.jsonl", records)
    build(tmp_path / "results", tmp_path / "docs")
    block = env_block(read(tmp_path / "docs", "analysis/guide.md").split("## The fastest mode")[1],
                      ENV_A)
    assert "| eager | 1.00× | default (0.91× (0.83–1.01)) | 10.0% (tie) |" in row(
        block, TRIVIAL, "—")


def test_guide_summary_counts_wins_per_class(docs):
    page = read(docs, "analysis/guide.md")
    summary = env_block(page[page.index("## By how busy"):page.index("## The fastest mode")],
                        ENV_A)
    assert row(summary, "launch-bound", "4").startswith(
        "| launch-bound | 4 | reduce-overhead (2), default (1), eager (1) | 1.00× (4) |")


def test_home_page_shows_each_claims_verdict_linked_to_its_evidence(docs):
    index = read(docs, "index.md")
    glance = index[index.index("## Claims at a glance"):index.index("## Speedup over eager")]
    said = next(c.said for c in CLAIMS if c.slug == "vit-advanced-modes")
    assert row(glance, f"[{said}](analysis/claims.md#vit-advanced-modes)").endswith(
        "| holds in part |")


def test_home_page_without_records_judges_no_claim(tmp_path):
    build(tmp_path / "missing", tmp_path / "docs")
    assert "no claim has been judged" in read(tmp_path / "docs", "index.md")


@pytest.mark.parametrize("claim", CLAIMS, ids=lambda claim: claim.slug)
def test_every_claim_names_modes_and_workloads_that_exist(claim):
    """A misspelt name would leave a claim "not measured" everywhere without any error."""
    assert {claim.baseline, *claim.modes} <= set(MODES) | {COMPILED}
    assert set(claim.workloads) <= set(WORKLOAD_ORDER)
    assert (claim.at_least is None) != (claim.below is None)


def test_comparison_that_another_process_contradicts_is_marked_unsettled(tmp_path):
    """Batch 1's rerun of reduce-overhead (a second process) is 2.5 times slower, enough to
    fall below the claim's 1.30x in one pairing; batch 2's rerun moves 1% and changes
    nothing. The speedup is the median over processes."""
    records = [fx.ok_record(fx.ENV_A, "vit16x6x384", mode, batch)
               for batch in (1, 2) for mode in ("eager", "reduce-overhead")]
    records += [fx.ok_record(fx.ENV_A, "vit16x6x384", "reduce-overhead", 1, tag="rerun-1",
                             scale=2.5),
                fx.ok_record(fx.ENV_A, "vit16x6x384", "reduce-overhead", 2, tag="rerun-1",
                             scale=1.01)]
    fx.write(tmp_path / "results" / "r.jsonl", records)
    build(tmp_path / "results", tmp_path / "docs")
    block = env_block(section(read(tmp_path / "docs", "analysis/claims.md"),
                              "vit-advanced-modes"), ENV_A)
    assert "Unsettled: 1 of the 2, that is, some pairing" in " ".join(block.split())
    # 2.86x with one process, 1.14x with the other: median 1.63x, still above 1.30x.
    assert row(block, VIT, "1", "reduce-overhead").endswith(
        "| 1.63× (1.14–2.86) | yes (unsettled) |")
    assert row(block, VIT, "2", "reduce-overhead").endswith("| yes |")
