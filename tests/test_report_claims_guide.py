"""The claims page judges each claim from the records; the guide names the fastest mode
of each case, its margin, and ties inside the spread across processes."""

from __future__ import annotations

import json
import re

import pytest
from fixtures import make_results as fx
from test_report_pages import env_block, read, row

from report.build import build
from report.ledger import load_ledger

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


def test_claims_pages_judge_every_ledger_claim_with_its_region(docs):
    """ViT reduce-overhead is 2.86x eager at batch 1 and below 1.8x from batch 2, one
    process a side: "2 to 4 times faster for inference" leans holding at batch 1 only,
    and one process settles nothing."""
    summary = read(docs, "analysis/claims.md")
    page = read(docs, "analysis/claims/seed-002.md")
    claim = section(page, "inference-ro-2-4x")
    assert ("vit16x6x384: unsettled, leans holds at batch 1 (2.86×, host-dependent, 1 proc.), "
            "unsettled, leans fails at batch 2–4 (0.952–1.43×, host-dependent, 1 proc.)") in claim
    assert "[vit16x6x384](../../workloads/vit16x6x384.md#latency)" in claim  # evidence
    assert all(f"{{ #{c.id} }}" in summary for c in load_ledger().claims)
    assert "## " in read(docs, "analysis/claims/contradictions.md")


def test_home_page_shows_each_claims_verdict_linked_to_its_evidence(docs):
    index = read(docs, "index.md")
    glance = index[index.index("## Claims at a glance"):index.index("## Speedup over eager")]
    said = load_ledger().claim("inference-ro-2-4x").paraphrase
    assert row(glance, f"[{said}](analysis/claims.md#inference-ro-2-4x)").endswith(
        "| unsettled |")


@pytest.mark.slow
def test_claims_pages_are_in_the_nav_split_and_light(fixture_site):
    """The built site: the nav lists every claims page under "Claims, measured", a seed's
    page links each environment to its comparisons on a page of their own, where the
    claim's anchor is, and no claims page passes 300 KB."""
    site = fixture_site
    home = (site / "index.html").read_text(encoding="utf-8")
    seeds = sorted({c.seed for c in load_ledger().claims})
    for target in ["analysis/claims/", "analysis/claims/rules/",
                   "analysis/claims/contradictions/", *(f"analysis/claims/seed-{s}/" for s in seeds)]:
        assert f'href="{target}"' in home, target
    seed = site / "analysis/claims/seed-001"
    text = (seed / "index.html").read_text("utf-8")
    assert "<details" not in text and "batch / n" not in text
    links = set(re.findall(r'href="([0-9a-f]{12})/#([a-z0-9-]+)"', text))
    assert links
    for env_id, claim in links:
        there = (seed / env_id / "index.html").read_text("utf-8")
        assert f'id="{claim}"' in there and "batch / n" in there, (env_id, claim)
    # A search for a claim lands on its seed's page, not on one page per environment.
    found = {d["location"].split("#")[0] for d in json.loads(
        (site / "search/search_index.json").read_text("utf-8"))["docs"]}
    assert "analysis/claims/seed-001/" in found
    assert not any(re.fullmatch(r"analysis/claims/seed-\d+/[0-9a-f]{12}/", f) for f in found)
    for html in (site / "analysis" / "claims").rglob("*.html"):
        assert html.stat().st_size <= 300_000, html
