"""The claims page judges each claim from the records; the guide names the answer at each
point (analysis.choose's), its lead, and in a tie the cheaper mode with both costs."""

from __future__ import annotations

import json
import re
from statistics import median

import pytest
from fixtures import make_results as fx
from test_report_pages import env_block, link_target, read, row, table, under_heading

from report.build import build
from report.ledger import load_ledger
from report.pages import guide

ENV_A = fx.ENV_A.env_id()
GUIDE_ENV = f"analysis/guide/{ENV_A}.md"
VIT = "[vit16x6x384](../../workloads/vit16x6x384.md)"
TRIVIAL_HERE = "[trivial-call](../../workloads/trivial-call.md)"


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


def answer_at_each_point(docs) -> str:
    return under_heading(read(docs, GUIDE_ENV), "The answer at each point")


def test_guide_names_the_answer_and_its_lead(docs):
    block = answer_at_each_point(docs)
    assert row(block, VIT, "1") == (
        f"| {VIT} | 1 | float32 | launch-bound | **reduce-overhead** | 2.86× | eager (1.00×) | "
        "185.7% | 4.00\u00a0s, 2,462 calls |")
    # Slower than eager, reduce-overhead never pays back: eager is the answer, alone. The
    # workload links on its first row only.
    assert row(block, "vit16x6x384", "4") == (
        "| vit16x6x384 | 4 | float32 | launch-bound | **eager** | 1.00× | none paid back | — | none |")
    assert "single runs: every figure rests on one process" in read(docs, GUIDE_ENV)
    assert "single runs: every figure rests on one process" in read(docs, "analysis/guide.md")


def tied_docs(tmp_path):
    """ViT at batch 1 in three processes a mode: max-autotune 2% ahead of reduce-overhead,
    their processes overlapping, at six times the compile time."""
    def runs(mode, times):
        base = fx.latency(fx.ENV_A, "vit16x6x384", mode, 1)
        return [fx.ok_record(fx.ENV_A, "vit16x6x384", mode, 1, scale=t / base, repeat=i,
                             repeats=len(times)) for i, t in enumerate(times)]
    eager = fx.latency(fx.ENV_A, "vit16x6x384", "eager", 1)
    records = (runs("eager", (eager,) * 3)
               + runs("reduce-overhead", tuple(eager / 2 * f for f in (1.0, 1.01, 0.99)))
               + runs("max-autotune", tuple(eager / 2 / 1.02 * f for f in (1.0, 1.03, 0.97))))
    fx.write(tmp_path / "results" / "r.jsonl", records)
    build(tmp_path / "results", tmp_path / "docs")
    return tmp_path / "docs"


def test_a_tie_names_the_cheaper_mode_first_with_both_costs_everywhere(tmp_path):
    docs = tied_docs(tmp_path)
    cells = row(answer_at_each_point(docs), VIT, "1").strip("| ").split(" | ")
    assert cells[4] == "reduce-overhead (tie)"
    assert cells[6].startswith("max-autotune (2.04×")
    assert cells[7].startswith("-") and cells[7].endswith("%")  # the faster one is named second
    cold, other = cells[8].split("; max-autotune: ")
    assert cold.startswith("4.00\u00a0s, ") and other.startswith("24.0\u00a0s, ")
    assert int(cold.split(", ")[1].split()[0].replace(",", "")) < int(
        other.split(", ")[1].split()[0].replace(",", ""))
    # The chooser's data gives the same answer, the same tie and both costs.
    chooser = json.loads((docs / "analysis" / "guide-data.json").read_text("utf-8"))
    step = chooser["calls"].index(chooser["calls_answered"])
    ((*_, by_calls),) = [p[:5] for p in guide.chooser_points(chooser) if p[1] == "vit16x6x384"]
    answer = dict(zip(chooser["fields"], by_calls[step], strict=True))
    assert (answer["mode"], answer["mode_runner_up"], answer["tie"]) == (
        "reduce-overhead", "max-autotune", True)
    assert (answer["cold_compile_s"], answer["cold_compile_s_runner_up"]) == ("4.00\u00a0s", "24.0\u00a0s")
    assert f"{100 * answer['margin']:.1f}%" == cells[7]
    summary = under_heading(read(docs, "analysis/guide.md"), "The answer at each point")
    assert row(env_block(summary, ENV_A), "float32", "reduce-overhead").startswith(
        "| float32 | reduce-overhead | 1 | 1 | 2.00× | -")


def test_guide_sums_up_the_answers_of_the_points_on_the_environment_page(docs):
    every = table(answer_at_each_point(docs), "| workload | batch | dtype | eager is | answer |")
    won: dict[str, list[list[str]]] = {}
    for cells in every:
        won.setdefault(cells[4].strip("*").removesuffix(" (tie)"), []).append(cells)
    guide = read(docs, "analysis/guide.md")
    block = env_block(under_heading(guide, "The answer at each point"), ENV_A)
    summary = table(block, "| dtype | answer | points | ties |")
    assert len(summary) == len(won) == 2  # reduce-overhead twice, eager twice
    for dtype, mode, cases, ties, speedup, lead, _ in summary:
        mine = won.pop(mode)
        assert dtype == "float32" and cases == str(len(mine))
        assert ties == str(sum(c[4].endswith("(tie)") for c in mine))
        # The summary takes medians of the exact figures, the rows show them rounded.
        assert float(speedup.rstrip("×")) == pytest.approx(
            median(float(c[5].split("×")[0]) for c in mine), abs=0.01)
        leads = [float(c[7].rstrip("%")) for c in mine if c[7] != "—"]
        if leads:
            assert float(lead.rstrip("%")) == pytest.approx(median(leads), abs=0.1)
        else:
            assert lead == "— (no runner-up paid back)"
    assert every == table(link_target(docs, "analysis/guide.md", block,
                                      "Every point of this environment"),
                          "| workload | batch | dtype | eager is | answer |")
    assert "| workload | batch | dtype | eager is |" not in guide


def test_guide_sums_up_each_path_of_the_rules_from_the_points_on_the_environment_page(docs):
    points = table(under_heading(read(docs, GUIDE_ENV), "What the rules recommend at each point"),
                   "| dtype | workload | batch | path |")
    guide = read(docs, "analysis/guide.md")
    block = env_block(under_heading(guide, "What the rules recommend at each point"), ENV_A)
    summary = table(block, "| dtype | path | points |")
    assert sorted(cells[1] for cells in summary) == sorted({p[3] for p in points})
    for dtype, path, count, leaf_mode, picked, agree in summary:
        mine = [p for p in points if p[3] == path and p[0] == dtype]
        assert count == str(len(mine)) and {p[4] for p in mine} == {leaf_mode}
        modes = sorted({p[5] for p in mine}, key=lambda m: (-[p[5] for p in mine].count(m), m))
        assert picked == ", ".join(f"{m} ({[p[5] for p in mine].count(m)})" for m in modes)
        assert agree == f"{sum(p[7] == 'yes' for p in mine)} of {len(mine)}"
    # ViT at batch 1 and 2 pick reduce-overhead against the leaf's eager: two disagree.
    assert summary[0][5] == "2 of 4"
    assert link_target(docs, "analysis/guide.md", block, "Each point's path and pick")
    assert "| dtype | workload | batch | path |" not in guide


def test_guide_counts_the_points_of_each_leaf_that_its_environment_page_names(docs):
    guide = read(docs, "analysis/guide.md")
    block = env_block(under_heading(guide, "The branches, as measured"), ENV_A)
    assert "In float32:" in block
    named = table(under_heading(link_target(docs, "analysis/guide.md", block,
                                      "The points behind each count"),
                          "The branches, as measured"), "| path | recommended |")
    counted = table(block, "| path | recommended |")
    assert [c[:3] for c in counted] == [c[:3] for c in named]
    for summed, listed in zip(counted, named, strict=True):
        assert int(summed[3]) == listed[3].count("](../../workloads/")
        assert listed[3].startswith(f"{summed[3]}: " if summed[3] != "0" else "0")
    assert int(counted[-1][3]) == 4
    assert "](../workloads/" not in block  # the points are named on the environment's page


def test_guide_summary_counts_answers_per_class_and_dtype(docs):
    page = read(docs, "analysis/guide.md")
    summary = env_block(page[page.index("## By how busy"):page.index("## The answer at each point")],
                        ENV_A)
    assert row(summary, "float32", "launch-bound", "4").startswith(
        "| float32 | launch-bound | 4 | eager (2), reduce-overhead (2) | 1.00× (4) |")


def test_claims_pages_judge_every_ledger_claim_with_its_region(docs):
    """ViT reduce-overhead is 2.86x eager at batch 1 and below 1.8x from batch 2, one
    process a side: "2 to 4 times faster for inference" leans holding at batch 1 only,
    and one process settles nothing."""
    summary = read(docs, "analysis/claims.md")
    page = read(docs, "analysis/claims/seed-002.md")
    claim = section(page, "inference-ro-2-4x")
    assert ("vit16x6x384: unsettled, leans holds at batch 1 (2.86×, host-dependent, 1\u00a0proc.), "
            "unsettled, leans fails at batch 2–4 (0.952–1.43×, host-dependent, 1\u00a0proc.)") in claim
    assert "[vit16x6x384](../../workloads/vit16x6x384.md#latency)" in claim  # evidence
    assert all(f"{{ #{c.id} }}" in summary for c in load_ledger().claims)
    assert "## " in read(docs, "analysis/claims/contradictions.md")


def test_home_page_shows_each_claims_verdict_linked_to_its_evidence(docs):
    index = read(docs, "index.md")
    glance = index[index.index("## Claims at a glance"):index.index("## Speedup over eager")]
    said = load_ledger().claim("inference-ro-2-4x").paraphrase
    # The verdict comes with its region (issue 49): no bare verdict on the home page.
    assert row(glance, f"[{said}](analysis/claims/seed-002.md#inference-ro-2-4x)").endswith(
        "| **unsettled**<br><small>every comparison rests on one process a side</small> |")


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
