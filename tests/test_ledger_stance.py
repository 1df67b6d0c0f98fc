"""Where a claim stands in a contradiction: supported only where it holds and no
environment, settled or leaning, points the other way; a claim that holds in one
environment and leans to failing in others is answered by region, not counted as
supported (issue 49: the warm-up question called three-warmup-calls-enough supported
although every GPU leaned to failing it)."""

from __future__ import annotations

from types import SimpleNamespace

from report import ledger
from report.pages import ledger as page
from report.site import Site
from tests.test_ledger import CPU, data_of, environment, speedups

H100, H200 = environment("cuda", "gpu-a"), environment("cuda", "gpu-b")
RO_FASTER = {"kind": "speedup", "mode": "reduce-overhead", "baseline": "default",
             "at_least": 1.5, "tolerance": 0}


def _claim(claim_id: str, test: dict) -> dict:
    return {"id": claim_id, "seed": "000", "line": 1, "paraphrase": "a claim made for a test",
            "figures": "", "metric": "speedup",
            "conditions": {"backend": "any", "training": False, "workloads": ["vit16x6x384"]},
            "test": test, "testable": True, "missing": ""}


BOOK = ledger.parse_ledger({
    "claims": [_claim("ro-wins", RO_FASTER),
               _claim("ro-no-gain", {**{k: v for k, v in RO_FASTER.items() if k != "at_least"},
                                      "below": 1.5})],
    "contradictions": [{"id": "ro-gain", "title": "Does reduce-overhead gain?",
                        "claims": ["ro-wins", "ro-no-gain"],
                        "question": "reduce-overhead against default at batch 1."}]})


def _split_records():
    """The CPU settles reduce-overhead at 2x in two processes; each GPU has one process a
    side at 1.1x: unsettled, leaning to fail the 1.5x claim."""
    one_process = {1: ((1e-3,), (1e-3 / 1.1,))}
    return (speedups(CPU, "vit16x6x384", "reduce-overhead", "default", {1: 2.0})
            + speedups(H100, "vit16x6x384", "reduce-overhead", "default", {1: 1.1},
                       processes=one_process)
            + speedups(H200, "vit16x6x384", "reduce-overhead", "default", {1: 1.1},
                       processes=one_process))


def _contradiction(tmp_path) -> tuple[dict, str]:
    data = data_of(tmp_path, _split_records())
    found = page.context(data, BOOK)
    site = Site(data, tmp_path / "docs")
    site.page(page.CONTRADICTIONS_PAGE, "ledger-contradictions.md.j2", **found)
    text = (tmp_path / "docs" / page.CONTRADICTIONS_PAGE).read_text(encoding="utf-8")
    return found["contradictions"][0], text[text.index("**Answer.**"):text.index("**Each claim.**")]


def test_an_unsettled_verdict_records_the_way_it_leans(tmp_path):
    results = ledger.judge(BOOK, data_of(tmp_path, _split_records()))
    wins = next(r for r in results if r.claim.id == "ro-wins")
    assert sorted((j.backend, j.verdict, j.leans) for j in wins.judgements) == [
        ("cpu", "holds", "holds"), ("cuda", "unsettled", "fails"), ("cuda", "unsettled", "fails")]


def test_holding_in_one_environment_and_leaning_to_fail_in_two_is_not_supported(tmp_path):
    contradiction, answer = _contradiction(tmp_path)
    wins = next(r for r in contradiction["rows"] if r["view"]["claim"].id == "ro-wins")
    assert wins["stance"] == "split"
    assert not contradiction["sides"]["supported"]
    assert "The data support" not in answer
    cpu = "AMD EPYC, 2 cores · torch 2.11.0 · cpu-host · 2026-01-01"
    gpus = "every GPU environment that measured it"
    assert f"[`ro-wins`](seed-000.md#ro-wins) is supported on {cpu} (2.00×, 2×2\u00a0proc.)" in answer
    assert f"; on {gpus} (NVIDIA H200 · torch 2.11.0 · gpu-a · 2026-01-01 (1.10×), " in answer
    assert 'it leans the other way ("fails") on single processes' in answer


def test_the_mirror_claim_is_refuted_on_one_environment_and_leans_to_hold_on_the_others(tmp_path):
    contradiction, answer = _contradiction(tmp_path)
    no_gain = next(r for r in contradiction["rows"] if r["view"]["claim"].id == "ro-no-gain")
    assert no_gain["stance"] == "split"
    assert "[`ro-no-gain`](seed-000.md#ro-no-gain) is refuted on" in answer
    assert 'it leans the other way ("holds") on single processes' in answer


def _env(verdict: str, leans: str) -> dict:
    return {"verdict": verdict, "leans": leans, "backend": "cuda"}


def test_a_side_is_supported_only_where_no_unsettled_environment_leans_against_it():
    holds, fails = _env("holds", "holds"), _env("fails", "fails")
    leans_holds, leans_fails = _env("unsettled", "holds"), _env("unsettled", "fails")
    leans_both = _env("unsettled", "depends")
    assert page.stance({"holds": [holds], "unsettled": [leans_holds]}) == "supported"
    assert page.stance({"holds": [holds], "unsettled": [leans_fails, leans_fails]}) == "split"
    assert page.stance({"holds": [holds], "unsettled": [leans_both]}) == "split"
    assert page.stance({"fails": [fails], "unsettled": [leans_fails]}) == "refuted"
    assert page.stance({"fails": [fails], "unsettled": [leans_holds]}) == "split"
    assert page.stance({"holds": [holds], "fails": [fails]}) == "partly"
    assert page.stance({"unsettled": [leans_fails]}) == "leaning"


def _unsettled(*outcomes: str) -> dict:
    """An environment per outcome, each with one unsettled comparison that leans to it."""
    return {f"env-{i}": SimpleNamespace(measured=[SimpleNamespace(
        settled=False, outcome=outcome, single=True)]) for i, outcome in enumerate(outcomes)}


def test_an_even_split_of_unsettled_comparisons_leans_to_neither_answer():
    # Before, the first of a tie in a set's order won, and a render under another hash
    # seed wrote "leaning to holds" where the last one wrote "leaning to fails".
    results = _unsettled("holds", "fails")
    lean = page._lean([{"env_id": env} for env in results], results)
    assert lean == {"to": "", "count": 2, "unanimous": False}
    results = _unsettled("fails", "holds", "fails")
    assert page._lean([{"env_id": env} for env in results], results)["to"] == "fails"
