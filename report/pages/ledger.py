"""Claims, measured: every claim of report/claims.yaml judged per environment by
report/ledger.py, a summary per backend, a section per claim grouped by seed, and the
contradictions between seeds set side by side."""

from __future__ import annotations

import math
from typing import Any

from report import analysis, formatting, ledger
from report.ledger import Claim, ClaimResult, Judgement
from report.site import Site

PAGE = "analysis/claims.md"
ALL_RESULTS = "all-results.md"  # relative to PAGE


figure_text = ledger.figure_text


def spread_text(lo: float | None, hi: float | None, processes: tuple[int, ...], unit: str,
                n: int) -> str:
    """"(1.38–1.47, 3×3 proc.)": the range over every combination of processes and the
    processes behind each side; "(single run)" where there is only one combination."""
    if not processes or n <= 1 or lo is None:
        return "(single run)" if processes else ""
    count = "×".join(str(p) for p in processes)
    if unit == "pass":
        return f"({count} proc.)"
    if unit == "ratio":  # the unit once, after the range
        return f"({formatting.sig(lo)}–{formatting.sig(hi)}×, {count} proc.)"
    return f"({figure_text(lo, unit)}–{figure_text(hi, unit)}, {count} proc.)"


def link(page: str, anchor: str = "") -> str:
    """A docs-relative page as a link from PAGE."""
    target = page.removeprefix("analysis/") if page.startswith("analysis/") else f"../{page}"
    return f"{target}#{anchor}" if anchor else target


def comparison_view(c: ledger.Comparison, unit: str) -> dict[str, Any]:
    measured = c.agrees is not None
    return {
        "workload": c.workload, "batch": c.batch, "axis": c.axis,
        "figure": figure_text(c.figure, unit) if measured else formatting.NOT_MEASURED,
        "spread": spread_text(c.lo, c.hi, c.processes, unit, c.n) if measured else "",
        "agrees": c.agrees, "settled": c.settled, "note": c.note,
        "link": link(*c.evidence) if c.evidence[0] else "",
    }


def judgement_view(j: Judgement) -> dict[str, Any]:
    """A judgement as the page shows it: verdict, key figure, condition, comparisons."""
    if j.figure is not None:
        key = f"{figure_text(j.figure, j.unit)} {spread_text(j.lo, j.hi, _processes(j), j.unit, j.n)}"
        single = [c for c in j.measured if c.figure is not None]
        if len(single) == 1 and single[0].note:  # an aggregate: say which case it is
            where = single[0].workload + (f" at {single[0].axis} {single[0].batch}"
                                          if single[0].batch is not None else "")
            key += f" on {where}, {single[0].note}"
    elif j.figure_range is not None:
        lo, hi = j.figure_range
        key = (f"{figure_text(lo, j.unit)} to {figure_text(hi, j.unit)} over "
               f"{len(j.measured)} cases")
    else:
        key = ""
    if j.crossing is not None:
        key = j.condition
    return {"env_id": j.env_id, "label": j.label, "backend": j.backend, "verdict": j.verdict,
            "key": key.strip(), "condition": j.condition, "short": j.short,
            "reason": j.reason,
            "comparisons": [comparison_view(c, j.unit) for c in j.comparisons],
            "evidence": [{"text": w, "link": link(p, a)} for w, p, a in j.evidence]}


def _processes(j: Judgement) -> tuple[int, ...]:
    measured = [c for c in j.measured if c.figure is not None]
    return measured[0].processes if len(measured) == 1 else ()


def test_view(claim: Claim) -> dict[str, Any]:
    """The test's parts, formatted, for the template to put into words."""
    test, rule = claim.test, ledger.rule(claim.test)
    unit = ledger.unit_of(test)
    fmt = (lambda x: formatting.sig(x)) if unit == "ratio" else (
        lambda x: figure_text(x, unit))
    return {"kind": test.kind, "mode": test.mode, "baseline": test.baseline,
            "metric": test.metric, "field": test.field, "aggregate": test.aggregate,
            "axis": test.axis, "tolerance": test.tolerance,
            "comparator": rule.comparator, "direction": rule.direction,
            "stated": None if rule.stated is None else fmt(rule.stated),
            "lo": None if rule.lo is None else fmt(rule.lo), "lo_strict": rule.lo_strict,
            "hi": None if rule.hi is None else fmt(rule.hi),
            "crossover": (None if test.kind != "crossover" else
                          {"side": "above" if test.above is not None else "below",
                           "at": _num(test.above if test.above is not None else test.below),
                           "lo": _num((test.above or test.below) / (1 + test.tolerance)),
                           "hi": _num((test.above or test.below) * (1 + test.tolerance))}),
            "derived": test.field in ledger.DERIVED_FIELDS}


def _num(x: float) -> str:
    return formatting.sig(x) if not float(x).is_integer() else str(int(x))


def claim_view(result: ClaimResult, workloads: list[str]) -> dict[str, Any]:
    claim = result.claim
    judgements = [judgement_view(j) for j in result.judgements]
    evidence = []
    for j in judgements:
        evidence += [e for e in j["evidence"] if e not in evidence]
    judged = any(j.env_id for j in result.judgements)
    return {"claim": claim, "test": test_view(claim), "workloads": workloads if judged else [],
            "judgements": judgements, "evidence": evidence or
            ([{"text": "all results", "link": ALL_RESULTS}] if any(
                j.verdict not in (ledger.NOT_TESTABLE,) for j in result.judgements) else [])}


def summary(views: list[dict[str, Any]], data: analysis.Data) -> list[dict[str, Any]]:
    """One table per backend: the claims judged there, a column per environment."""
    tables = []
    for backend in data.backends:
        envs = data.envs(backend)
        rows = []
        for view in views:
            claim = view["claim"]
            if not claim.judged_on(backend) or (not envs and claim.backend == "any"):
                continue
            cells = ([next((j for j in view["judgements"] if j["env_id"] == e.env_id), None)
                      for e in envs] if envs else
                     [next((j for j in view["judgements"] if j["env_id"] is None), None)])
            rows.append({"view": view, "cells": cells})
        labels = [e.label for e in envs] or [f"{backend}: no environment"]
        tables.append({"backend": backend, "labels": labels, "rows": rows})
    return tables


def by_seed(views: list[dict[str, Any]]) -> list[dict[str, Any]]:
    seeds: dict[str, list] = {}
    for view in views:
        seeds.setdefault(view["claim"].seed, []).append(view)
    return [{"seed": seed, "claims": found} for seed, found in sorted(seeds.items())]


def contradiction_views(book: ledger.Ledger, views: list[dict[str, Any]]
                        ) -> list[dict[str, Any]]:
    by_id = {v["claim"].id: v for v in views}
    out = []
    for item in book.contradictions:
        found = [by_id[c] for c in item.claims]
        labels = []
        for view in found:
            labels += [j["label"] for j in view["judgements"] if j["label"] not in labels]
        rows = [{"view": v, "cells": [next((j for j in v["judgements"] if j["label"] == label),
                                           None) for label in labels]} for v in found]
        out.append({"item": item, "labels": labels, "rows": rows})
    return out


_LAST: list = []  # (data, ledger, results) of the last judging: pages share one site's data


def results_for(data: analysis.Data, book: ledger.Ledger | None = None) -> list[ClaimResult]:
    """The ledger judged against `data`, once per site build."""
    book = ledger.load_ledger() if book is None else book
    if _LAST and _LAST[0] is data and _LAST[1] == book:
        return _LAST[2]
    found = ledger.judge(book, data)
    _LAST[:] = [data, book, found]
    return found


def verdict_table(data: analysis.Data, results: list[ClaimResult] | None = None
                  ) -> dict[str, Any]:
    """Verdicts per environment label, for summary tables elsewhere (the home page)."""
    results = results_for(data) if results is None else results
    labels = [env.label for backend in data.backends for env in data.envs(backend)]
    rows = [{"claim": {"said": r.claim.paraphrase, "slug": r.claim.id},
             "verdicts": {j.label: j.verdict for j in r.judgements if j.env_id}}
            for r in results if any(j.env_id for j in r.judgements)]
    return {"rows": rows, "labels": labels}


def context(data: analysis.Data, book: ledger.Ledger | None = None) -> dict[str, Any]:
    book = ledger.load_ledger() if book is None else book
    results = results_for(data, book)
    judge = ledger.Judge(data)
    views = [claim_view(r, judge.workloads(r.claim)) for r in results]
    counts = ledger.counts(results, data)
    return {"summary": summary(views, data), "seeds": by_seed(views),
            "contradictions": contradiction_views(book, views),
            "counts": analysis.rows(counts), "verdicts": ledger.VERDICTS,
            "claim_count": len(book.claims),
            "rules": {"band": ledger.STEADY_BAND, "smoothing": ledger.SMOOTHING}}


def render(site: Site) -> None:
    site.page(PAGE, "ledger.md.j2", **context(site.data))
