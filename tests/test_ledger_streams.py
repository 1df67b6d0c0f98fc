"""The claims on fixed and dynamic shapes judged on the shape streams as well (issue 96):
kinds stream-absolute and stream-ratio read the stream cases (report/shapes/data.py), which
the fixed-shape tables leave out, in environments that measured streams alone too; without
stream records their claims are not measured; the seed's page shows the verdict."""

from __future__ import annotations

from dataclasses import replace

from fixtures import make_results as fx
from fixtures.stream_records import (
    page_records,
    recompiling_records,
    static_against_dynamic_records,
)

from bench.records import append_records
from report import analysis, ledger
from report.pages import ledger as page
from report.shapes import data as shapes
from report.site import Site

BOOK = ledger.load_ledger()


def data_of(tmp_path, records) -> analysis.Data:
    append_records(tmp_path / "results" / "cuda.jsonl", records)
    return analysis.Data(analysis.load(tmp_path / "results"))


def judged(tmp_path, records, claim_id: str) -> ledger.Judgement:
    """The claim's one judgement in fx.ENV_A."""
    results = ledger.judge(BOOK, data_of(tmp_path, records))
    found = next(r for r in results if r.claim.id == claim_id).judgements
    return next(j for j in found if j.env_id == fx.ENV_A.env_id())


def test_recompiles_on_a_stream_judge_the_claim_in_an_environment_of_streams_alone(tmp_path):
    j = judged(tmp_path, page_records(), "shape-change-recaptures-streams")
    assert j.verdict == ledger.HOLDS  # default recompiled once in each of 3 processes
    [c] = j.comparisons
    assert (c.workload, c.figure, c.processes) == ("gpt2-small-prompts", 1.0, (3,))


def test_a_stream_that_recompiles_too_often_fails_the_claim(tmp_path):
    assert judged(tmp_path, page_records(), "dynamic-true-no-recompile-streams"
                  ).verdict == ledger.HOLDS
    j = judged(tmp_path / "again", recompiling_records(), "dynamic-true-no-recompile-streams")
    assert j.verdict == ledger.FAILS
    assert j.comparisons[0].figure == 3.0


def test_a_failed_float64_check_on_a_stream_fails_correctness(tmp_path):
    data = data_of(tmp_path, page_records())
    claim = BOOK.claim("compile-handles-varying-sizes-streams")
    judge = ledger.Judge(data)
    [env] = shapes.stream_environments(data).values()
    assert judge.judge(claim, env).verdict == ledger.HOLDS  # default passed
    failing = replace(claim, test=replace(claim.test, mode="default-dynamic"))
    assert judge.judge(failing, env).verdict == ledger.FAILS


def test_without_stream_records_a_stream_claim_is_not_measured(tmp_path):
    records = fx.environment_records(fx.ENV_A, repeats=3)
    j = judged(tmp_path, records, "shape-change-recaptures-streams")
    assert j.verdict == ledger.NOT_MEASURED
    assert "gpt2-small-prompts" in j.reason
    # A mode the streams did not run is not measured either.
    j = judged(tmp_path / "streams", page_records(), "ro-not-for-dynamic-shapes-streams")
    assert j.verdict == ledger.NOT_MEASURED


def test_an_environment_of_streams_alone_judges_only_the_stream_claims(tmp_path):
    results = ledger.judge(BOOK, data_of(tmp_path, page_records()))
    here = {r.claim.id for r in results
            for j in r.judgements if j.env_id == fx.ENV_A.env_id()}
    assert here == {c.id for c in BOOK.claims if ledger.KINDS[c.test.kind].streams}


def test_the_seed_page_shows_the_stream_verdict(tmp_path):
    site = Site(data_of(tmp_path, page_records()), tmp_path / "docs")
    page.render(site)
    seed = (tmp_path / "docs" / "analysis" / "claims" / "seed-003.md").read_text()
    section = seed.split("{ #shape-change-recaptures-streams }")[1].split("\n## ")[0]
    assert "| **holds** | gpt2-small-prompts: holds at batch 1 (1, 3\u00a0proc.) |" in section
    assert "[gpt2-small-prompts](../shapes.md)" in section  # the evidence: the streams' page


def test_a_stream_ratio_holds_where_the_mode_is_slower_than_the_baseline_in_every_pairing(
        tmp_path):
    records = static_against_dynamic_records(static_steady=0.001, dynamic_steady=0.002)
    j = judged(tmp_path, records, "fixed-shapes-fastest-streams")
    assert j.verdict == ledger.HOLDS
    [c] = j.comparisons
    page = {case["mode"]: case for case in shapes.cases(data_of(tmp_path / "page", records).records)}
    # The figure divides the medians the streams' page shows; the range pairs processes.
    assert c.figure == page["default-dynamic"]["p99_s"] / page["default-static"]["p99_s"]
    assert (c.processes, c.n, c.settled) == ((3, 3), 9, True)
    assert 1 < c.lo < c.figure < c.hi


def test_a_stream_ratio_fails_where_the_mode_is_faster(tmp_path):
    records = static_against_dynamic_records(static_steady=0.002, dynamic_steady=0.001)
    j = judged(tmp_path, records, "fixed-shapes-fastest-streams")
    assert j.verdict == ledger.FAILS
    assert j.comparisons[0].hi < 1


def test_a_stream_ratio_without_its_baseline_is_not_measured(tmp_path):
    # The page's stream ran default-dynamic but not static compile.
    j = judged(tmp_path, page_records(), "fixed-shapes-fastest-streams")
    assert j.verdict == ledger.NOT_MEASURED
    assert "no default-static record of the stream" in j.reason
    [c] = j.comparisons
    assert c.processes == (3, 0)
