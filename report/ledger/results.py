"""The whole ledger judged: every claim in every environment of its backend, and the
views other pages read (verdicts with their regions per environment)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from report import analysis
from report.ledger.comparison import NOT_MEASURED, NOT_TESTABLE, VERDICTS, Judgement, Region
from report.ledger.judge import Judge
from report.ledger.kinds import KINDS, unit_of
from report.ledger.loader import load_ledger
from report.ledger.schema import Claim, Ledger
from report.ledger.words import region_words
from report.shapes import data as shapes

DOES_NOT_APPLY = "—"  # a claim about another backend, in summary tables
SEED_PAGE = "analysis/claims/seed-{seed}.md"  # where report/pages/ledger.py puts each seed's claims


@dataclass
class ClaimResult:
    claim: Claim
    judgements: list[Judgement]


def judge(ledger: Ledger, data: analysis.Data, by: Judge | None = None) -> list[ClaimResult]:
    """Every claim in every environment of its backend. A backend with no environment
    gets one judgement with env_id None: not testable (the ledger says why) or not
    measured. `by` is a Judge of `data` already built (a site build's `Judge.of`)."""
    judge_ = Judge(data) if by is None else by
    # Environments that measured only shape streams judge the stream claims alone: every
    # other claim has nothing there to judge.
    streams_only = {env_id: env for env_id, env in shapes.stream_environments(data).items()
                    if env_id not in data.environments}
    envs = sorted([*data.environments.values(), *streams_only.values()],
                  key=lambda e: (e.backend, e.label))
    # Environment by environment: the judge keeps what one environment's claims share.
    of_claim: dict[str, list[Judgement]] = {claim.id: [] for claim in ledger.claims}
    for env in envs:
        for claim in ledger.claims:
            if claim.judged_on(env.backend) and (env.env_id not in streams_only
                                                 or KINDS[claim.test.kind].streams):
                of_claim[claim.id].append(judge_.judge(claim, env))
    judge_.forget()
    results = []
    for claim in ledger.claims:
        found = of_claim[claim.id]
        if not found:
            backend = claim.backend
            verdict = NOT_TESTABLE if not claim.testable else NOT_MEASURED
            reason = claim.missing if not claim.testable else f"no {backend} environment"
            found = [Judgement(None, f"{backend}: no environment", backend, verdict,
                               unit=unit_of(claim.test), reason=reason)]
        results.append(ClaimResult(claim, found))
    return results


def counts(results: list[ClaimResult], data: analysis.Data) -> pd.DataFrame:
    """Verdicts per environment: one row per environment label, a column per verdict."""
    # Counted, not pivoted: a row per judgement was a million dicts with ten thousand
    # environments (issue 94).
    found = Counter((j.label, j.verdict) for r in results for j in r.judgements)
    labels = sorted({label for label, _ in found})
    return pd.DataFrame({"env": labels, **{v: [found[(label, v)] for label in labels]
                                          for v in VERDICTS}}, columns=["env", *VERDICTS])


def seed_page(seed: str) -> str:
    return SEED_PAGE.format(seed=seed)


def site_ledger(data: analysis.Data) -> Ledger:
    """report/claims.yaml, read once per site build."""
    return data.memo("ledger", load_ledger)


def results_for(data: analysis.Data, book: Ledger | None = None) -> list[ClaimResult]:
    """The ledger judged against `data`, once per site build: the home page, its answers
    and the claims pages all read these results, and judging is seconds of work."""
    book = site_ledger(data) if book is None else book
    judged_book, results = data.memo("claims", lambda: (book, judge(book, data, Judge.of(data))))
    return results if judged_book == book else judge(book, data, Judge.of(data))


def verdict_table(data: analysis.Data, results: list[ClaimResult] | None = None
                  ) -> dict[str, Any]:
    """Verdicts per environment label, for summary tables on other pages (the home page).
    An environment of a backend the claim is not about reads DOES_NOT_APPLY ("—"), not
    "not measured"; `href` is the claim's section, docs-relative."""
    results = results_for(data) if results is None else results
    envs = [env for backend in data.backends for env in data.envs(backend)]
    rows = []
    for r in results:
        if not any(j.env_id for j in r.judgements):
            continue
        mine = {j.env_id: j for j in r.judgements if j.env_id}
        rows.append({"claim": {"said": r.claim.paraphrase, "slug": r.claim.id,
                               "href": f"{seed_page(r.claim.seed)}#{r.claim.id}"},
                     "verdicts": {e.label: mine[e.env_id].verdict if e.env_id in mine
                                  else DOES_NOT_APPLY for e in envs},
                     "where": Where({e.label: mine[e.env_id] for e in envs
                                     if e.env_id in mine})})
    return {"rows": rows, "labels": [e.label for e in envs]}


class Where(Mapping):
    """`where` of each label's judgement, worked out as the page reads it: kept, every
    claim's in every environment were the home page's largest memory (issue 94)."""

    def __init__(self, judgements: dict[str, Judgement]):
        self._of = judgements

    def __getitem__(self, label: str) -> dict[str, Any]:
        return where(self._of[label])

    def __iter__(self) -> Iterator[str]:
        return iter(self._of)

    def __len__(self) -> int:
        return len(self._of)


def where(j: Judgement) -> dict[str, Any]:
    """A verdict with its region, for any page that shows a verdict (the home page's
    claims table, the quick answers, the seed summaries): `verdict`; `regions`, each a
    `Region` as a dict plus `text` (its words, e.g. "holds at batch 1–2 (1.7–3.0×,
    launch-bound, eager op 5 µs on the host, 3 proc.)", then where a host-dependent point's
    host model says it holds); `brief`, the whole region in
    one line (the condition of a depends or unsettled verdict, or why not measured)."""
    if j.verdict in (NOT_MEASURED, NOT_TESTABLE):
        return {"verdict": j.verdict, "regions": [], "brief": j.reason, "short": j.reason}
    regions = [{**region.__dict__, "host_regions": [h.__dict__ for h in region.host_regions],
                "text": region_words(region, j.unit)} for region in j.regions]
    return {"verdict": j.verdict, "regions": regions, "brief": j.region or j.condition,
            "short": short_region(j)}


def shown_regions(j: Judgement, most: int = 2) -> list[Region]:
    """The settled stretches a summary shows of a verdict: each answer's first (or, for
    fewer than `most` answers, the first `most`), a real model's ahead of the synthetic
    workloads', since a reader's question is about a model."""
    settled = sorted((r for r in j.regions if r.settled),
                     key=lambda r: r.workload not in analysis.MODEL_WORKLOADS)
    picked, seen = [], set()
    for r in settled:
        if r.outcome not in seen or len(picked) < most:
            picked.append(r)
            seen.add(r.outcome)
    return picked[:max(most, len(seen))]


def short_region(j: Judgement, most: int = 2) -> str:
    """The region in a table cell: the `shown_regions`, "vit16x6x384: holds at batch 1–4
    (1.6–1.9×)", then how many more; a crossover's or an unsettled verdict's condition
    where it has no settled region."""
    picked = shown_regions(j, most)
    if not picked:
        return j.condition or j.region
    text = "; ".join(f"{r.workload}: {region_words(r, j.unit, with_host=False)}" for r in picked)
    rest = len(j.regions) - len(picked)
    return text + (f"; {rest} more" if rest else "")
