"""Claims, measured: every claim of report/claims.yaml judged per environment by
report/ledger/, over several pages so that none is too heavy to load:

- analysis/claims.md: one screen: verdicts per environment, the seeds with their counts,
  and an index of every claim;
- analysis/claims/seed-NNN.md: one page per seed, a section per claim with its verdict in
  every environment, each environment linked to the comparisons behind its verdict;
- analysis/claims/seed-NNN/<env_id>.md: one page per seed and environment, the comparisons
  of the seed's claims there, each claim's under its id (on the seed's page, folded, they
  took it near 300 KB of HTML and grew with every case measured);
- analysis/claims/contradictions.md: where the seeds disagree, with what the data says;
- analysis/claims/rules.md: how a claim is judged.

analysis/claims/.nav.json lists the pages for report/mkdocs_nav.py."""

from __future__ import annotations

import gc
import json
import os
from collections import Counter
from typing import Any

from bench.host import model as host_model
from report import analysis, formatting, ledger
from report.ledger import Claim, ClaimResult, Judgement
from report.site import Site

PAGE = "analysis/claims.md"
FOLDER = "analysis/claims"
RULES_PAGE = f"{FOLDER}/rules.md"
CONTRADICTIONS_PAGE = f"{FOLDER}/contradictions.md"
NAV = f"{FOLDER}/.nav.json"  # read by report/mkdocs_nav.py; dotfiles are not published
ALL_RESULTS = "analysis/all-results.md"
JUDGED = (ledger.HOLDS, ledger.EXCEEDS, ledger.FAILS, ledger.DEPENDS, ledger.UNSETTLED)

figure_text = ledger.figure_text


seed_page = ledger.seed_page


def comparisons_page(seed: str, env_id: str) -> str:
    return f"{seed_page(seed).removesuffix('.md')}/{env_id}.md"


def link(target: str, anchor: str = "", *, page: str = PAGE) -> str:
    """A docs-relative `target` as a link from the docs-relative `page`."""
    path = os.path.relpath(target, os.path.dirname(page)).replace(os.sep, "/")
    return f"{path}#{anchor}" if anchor else path


def spread_parts(lo: float | None, hi: float | None, processes: tuple[int, ...], unit: str,
                 n: int, paired: bool = False) -> dict[str, str]:
    """The spread of a figure as parts: `range`, over every combination of processes ("" where
    it reads as the figure itself), `processes` ("3×3", "3 paired"), or `single` where there is
    only one combination."""
    if not processes or n <= 1 or lo is None:
        return {"range": "", "processes": "", "single": bool(processes)}
    count = f"{processes[0]} paired" if paired else "×".join(str(p) for p in processes)
    same = unit == "pass" or figure_text(lo, unit) == figure_text(hi, unit)
    return {"range": "" if same else ledger.span_text(lo, hi, unit), "processes": count,
            "single": False}


def spread_text(lo: float | None, hi: float | None, processes: tuple[int, ...], unit: str,
                n: int, paired: bool = False) -> str:
    """"(1.38–1.47, 3×3 proc.)", "(3 paired proc.)" or "(single run)"."""
    parts = spread_parts(lo, hi, processes, unit, n, paired)
    if parts["single"]:
        return "(single run)"
    inner = ", ".join(p for p in (parts["range"], parts["processes"] and
                                  formatting.processes(parts["processes"])) if p)
    return f"({inner})" if inner else ""


def comparison_view(c: ledger.Comparison, unit: str, page: str) -> dict[str, Any]:
    measured = c.agrees is not None
    return {
        "workload": c.workload, "batch": c.batch, "axis": c.axis,
        "figure": figure_text(c.figure, unit) if measured else formatting.NOT_MEASURED,
        "spread": spread_text(c.lo, c.hi, c.processes, unit, c.n, c.paired) if measured else "",
        "outcome": c.outcome, "agrees": c.agrees, "settled": c.settled, "single": c.single,
        "note": c.note, "unsettled_because": c.unsettled_because,
        "floor": None if c.floor is None else figure_text(c.floor, unit),
        "allowance": None if c.allowance is None else ledger.figure_text(c.allowance, "count"),
        "host": ledger.words.host_region_text(c.host_region) if c.host_region else "",
        "link": link(*c.evidence, page=page) if c.evidence[0] else "",
    }


def fewer_text(lo: float, hi: float) -> str | None:
    """A ratio of counters below 1 as the seeds state it: "27–35× fewer"."""
    if not 0 < lo <= hi < 1:
        return None
    a, b = formatting.sig(1 / hi), formatting.sig(1 / lo)
    return f"{a}× fewer" if a == b else f"{a}–{b}× fewer"


def key_figure(j: Judgement, claim: Claim) -> dict[str, str]:
    """The judgement's key figure as parts the templates join: `figure` (or "N× fewer" for
    a ratio of counters below 1), `range` and `processes` of its spread, `where` (the case
    an "up to" claim rests on), `cases` (over how many cases a range of figures runs)."""
    single = [c for c in j.measured if c.figure is not None]
    lo, hi = j.figure_range or (j.figure, j.figure)
    fewer = (fewer_text(lo, hi) if claim.test.kind == "ratio-metric" and lo is not None
             else None)
    parts = {"figure": "", "range": "", "processes": "", "where": "", "note": "", "cases": ""}
    if j.figure is not None:
        one = single[0] if len(single) == 1 else None
        parts.update({k: v for k, v in spread_parts(
            j.lo, j.hi, one.processes if one else (), j.unit, j.n,
            bool(one and one.paired)).items() if k != "single"})
        parts["figure"] = fewer or figure_text(j.figure, j.unit)
        if one is not None and one.note:  # an aggregate: say which case it is
            parts["where"], parts["note"] = ledger.words.point(one), one.note
    elif j.figure_range is not None:
        parts["figure"] = fewer or ledger.span_text(lo, hi, j.unit)
        parts["cases"] = str(len(j.measured))
    return parts


def judgement_view(j: Judgement, claim: Claim, whole: bool = True) -> dict[str, Any]:
    """A judgement as the pages show it: verdict, key figure (as parts), where it holds
    (its regions, as data and in words), direction and size, and the comparisons behind it
    with the link from the seed's page to them. Not `whole`: without where it holds, its
    comparisons and evidence, which only the seed's pages read."""
    page = seed_page(claim.seed)
    if not whole:
        return {"env_id": j.env_id, "label": j.label, "backend": j.backend,
                "verdict": j.verdict, "key": key_figure(j, claim), "leans": j.leans,
                "settled_condition": j.settled_condition, "reason": j.reason,
                "one_process": _one_process(j)}
    # Not measured and not testable rest on no figure: their reason says it all.
    listed = (comparisons_page(claim.seed, j.env_id) if j.env_id and j.comparisons
              and j.verdict not in (ledger.NOT_TESTABLE, ledger.NOT_MEASURED) else "")
    return {"env_id": j.env_id, "label": j.label, "backend": j.backend, "verdict": j.verdict,
            "key": key_figure(j, claim), "crossing": j.condition if j.crossing is not None else "",
            "condition": j.condition, "short": j.short,
            "region": j.region or j.condition, "where": ledger.where(j),
            "settled_condition": j.settled_condition,
            "direction": j.direction, "size": j.size,
            "reason": j.reason, "leans": j.leans,
            "one_process": _one_process(j),
            "comparisons": [comparison_view(c, j.unit, listed) for c in j.comparisons]
            if listed else [],
            "comparisons_link": link(listed, claim.id, page=page) if listed else "",
            "evidence": [{"text": w, "link": link(p, a, page=page)} for w, p, a in j.evidence]}


def _one_process(j: Judgement) -> bool:
    """Unsettled only for resting on one process a side, wherever it is unsettled."""
    return j.verdict == ledger.UNSETTLED and all(c.single for c in j.measured if not c.settled)


def test_view(claim: Claim) -> dict[str, Any]:
    """The test's parts, formatted, for the template to put into words."""
    test, rule = claim.test, ledger.rule(claim.test)
    unit = ledger.unit_of(test)
    fmt = (lambda x: formatting.sig(x)) if unit == "ratio" else (
        lambda x: figure_text(x, unit))
    return {"kind": test.kind, "mode": test.mode, "baseline": test.baseline,
            "metric": test.metric, "field": test.field, "aggregate": test.aggregate,
            "axis": test.axis, "tolerance": test.tolerance, "reference": test.reference,
            "fixed": test.fixed, "fixed_batch": test.fixed_batch, "range": rule.range,
            "comparator": rule.comparator, "direction": rule.direction,
            "stated": None if rule.stated is None else fmt(rule.stated),
            "stated_hi": None if rule.stated_hi is None else fmt(rule.stated_hi),
            "lo": None if rule.lo is None else fmt(rule.lo), "lo_strict": rule.lo_strict,
            "hi": None if rule.hi is None else fmt(rule.hi),
            "crossover": (None if test.kind != "crossover" else
                          {"side": "above" if test.above is not None else "below",
                           "at": _num(test.above if test.above is not None else test.below),
                           "lo": _num((test.above or test.below) / (1 + test.tolerance)),
                           "hi": _num((test.above or test.below) * (1 + test.tolerance))}),
            "derived": test.field in ledger.DERIVED_FIELDS or test.metric in ledger.DERIVED_FIELDS,
            "words": ledger.words_of(test), "rule_words": ledger.KINDS[test.kind].rule_words,
            "source": "documentation" if claim.seed == ledger.DOC_SEED else "seed"}


def _num(x: float) -> str:
    return formatting.sig(x) if not float(x).is_integer() else str(int(x))


def tally(judgements: list[dict[str, Any]]) -> str:
    """"holds 1, unsettled 2": how many environments gave each verdict."""
    return _tally([j["verdict"] for j in judgements])


def _tally(found: list[str]) -> str:
    return ", ".join(f"{v} {found.count(v)}" for v in ledger.VERDICTS if v in found)


def brief_view(result: ClaimResult) -> dict[str, Any]:
    """What the summary page reads of a claim (`claim`, `tally`, `verdicts`): the seed's
    page builds the whole `claim_view` when it is rendered, and drops it after (issue 94:
    every claim's views at once were the render's largest memory)."""
    verdicts = [j.verdict for j in result.judgements]
    return {"claim": result.claim, "tally": _tally(verdicts), "verdicts": verdicts}


def claim_view(result: ClaimResult, workloads: list[str]) -> dict[str, Any]:
    claim = result.claim
    page = seed_page(claim.seed)
    judgements = [judgement_view(j, claim) for j in result.judgements]
    evidence = []
    for j in judgements:
        evidence += [e for e in j["evidence"] if e not in evidence]
    judged = any(j.env_id for j in result.judgements)
    return {"claim": claim, "test": test_view(claim), "workloads": workloads if judged else [],
            "judgements": judgements, "page": page, "tally": tally(judgements),
            "verdicts": [j["verdict"] for j in judgements],
            "sized": any(j["direction"] for j in judgements),
            "evidence": evidence or
            ([{"text": "all results", "link": link(ALL_RESULTS, page=page)}] if any(
                j.verdict != ledger.NOT_TESTABLE for j in result.judgements) else [])}


def seed_views(book: ledger.Ledger, views: list[dict[str, Any]]) -> list[dict[str, Any]]:
    said = dict(book.seeds)
    seeds: dict[str, list] = {}
    for view in views:
        seeds.setdefault(view["claim"].seed, []).append(view)
    return [{"seed": seed, "about": said.get(seed, ""), "claims": found,
             "name": "the documentation" if seed == ledger.DOC_SEED else f"seed {seed}",
             "title": ("Claims of PyTorch's documentation" if seed == ledger.DOC_SEED
                       else f"Claims of seed {seed}"),
             "page": seed_page(seed), "link": link(seed_page(seed)),
             "counts": {v: sum(view["verdicts"].count(v) for view in found)
                        for v in ledger.VERDICTS}}
            for seed, found in sorted(seeds.items())]


def comparison_pages(group: dict[str, Any]) -> list[dict[str, Any]]:
    """A seed's comparisons per environment, in the order of the verdict tables: the
    page, and per claim with comparisons there, the claim's view and its judgement."""
    envs: dict[str, dict[str, Any]] = {}
    for view in group["claims"]:
        for j in view["judgements"]:
            if j["comparisons"]:
                page = comparisons_page(group["seed"], j["env_id"])
                env = envs.setdefault(j["env_id"], {
                    "page": page, "seed_link": link(group["page"], page=page),
                    "env_id": j["env_id"], "label": j["label"], "claims": []})
                env["claims"].append({"view": view, "judgement": j})
    return list(envs.values())


STANCES = ("supported", "refuted", "split", "partly", "leaning", "untested")
GOOD = (ledger.HOLDS, ledger.EXCEEDS)
BACKEND_NAMES = {"cuda": "GPU", "cpu": "CPU", "mps": "MPS"}


def _side(judged: dict[str, list]) -> tuple[str, ...]:
    """The answers on the side its settled verdicts take: holding, or failing."""
    return GOOD if any(judged.get(v) for v in GOOD) else (ledger.FAILS,)


def stance(judged: dict[str, list]) -> str:
    """Where a claim stands in a contradiction, from its verdicts over environments (each
    a judgement view, whose `leans` says where an unsettled one points):
    supported (holds or exceeds somewhere, fails nowhere, and every unsettled environment
    leans the same way), refuted (the mirror), split (settled one way only, while some
    unsettled environment leans the other way or both ways: the answer names each region),
    partly (settled both ways, or depends), leaning (only unsettled) or untested."""
    good = any(judged.get(v) for v in GOOD)
    bad = bool(judged.get(ledger.FAILS))
    if judged.get(ledger.DEPENDS) or (good and bad):
        return "partly"
    if good or bad:
        side = _side(judged)
        if any(j["leans"] not in side for j in judged.get(ledger.UNSETTLED, [])):
            return "split"
        return "supported" if good else "refuted"
    return "leaning" if judged.get(ledger.UNSETTLED) else "untested"


def region_name(js: list[dict[str, Any]], views: list[dict[str, Any]]) -> str:
    """"every GPU environment that measured it" where `js` are every environment of one
    backend that judged the claim (`views`, more than one of them); otherwise "" (the
    template lists the environments alone)."""
    backends = {j["backend"] for j in js}
    if len(js) < 2 or len(backends) != 1:
        return ""
    backend = backends.pop()
    every = [v for v in views if v["backend"] == backend and v["verdict"] in JUDGED]
    if len(every) != len(js):
        return ""
    return f"every {BACKEND_NAMES.get(backend, backend)} environment that measured it"


def split_view(judged: dict[str, list], views: list[dict[str, Any]]) -> dict[str, Any]:
    """A claim settled one way in some environments and leaning elsewhere, by region:
    `settled` (the environments that settle it, `side` "supported" or "refuted"),
    `against` (unsettled, leaning the other way, `against_name` naming them as a region
    where it can), `mixed` (unsettled, pointing both ways) and `along` (unsettled, leaning
    the same way)."""
    side = _side(judged)
    settled = [j for v in (*side,) for j in judged.get(v, [])]
    unsettled = judged.get(ledger.UNSETTLED, [])
    against = [j for j in unsettled if j["leans"] not in side and j["leans"] != ledger.DEPENDS]
    return {"side": "supported" if side == GOOD else "refuted", "settled": settled,
            "settled_name": region_name(settled, views),
            "against": against, "against_name": region_name(against, views),
            "mixed": [j for j in unsettled if j["leans"] == ledger.DEPENDS],
            "along": [j for j in unsettled if j["leans"] in side]}


def by_lean(judged: dict[str, list]) -> dict[str, list]:
    """The verdicts for the list of a contradiction's claims, an unsettled one split by
    the way it leans: "unsettled (leaning fails)"."""
    out: dict[str, list] = {}
    for verdict, js in judged.items():
        for j in js:
            key = (f"unsettled (leaning {j['leans']})" if verdict == ledger.UNSETTLED
                   and j["leans"] else verdict)
            out.setdefault(key, []).append(j)
    return out


def _lean(js: list[dict[str, Any]], results: dict[str, Judgement]) -> dict[str, Any]:
    """Which answer the unsettled comparisons lean to (`to`), over how many (`count`), and
    whether all lean that way and each is unsettled only for resting on one process a
    side (`unanimous`)."""
    found = [c for j in js for c in results[j["env_id"]].measured if not c.settled]
    if not found:
        return {"to": "", "count": 0, "unanimous": False}
    counts = Counter(c.outcome for c in found).most_common()
    # An even split leans to neither answer: taking the first of a tie let the hash seed's
    # order of a set pick "holds" in one render and "fails" in the next.
    to = counts[0][0] if len(counts) == 1 or counts[0][1] > counts[1][1] else ""
    unanimous = len(counts) == 1 and all(c.single for c in found)
    return {"to": to, "count": len(found), "unanimous": unanimous}


def settled_answer(judgements: list[Judgement]) -> dict[str, Any]:
    """What a claim's settled comparisons say, over every environment that judged it:
    `answer` "supported" (every one holds or exceeds), "refuted" (every one fails),
    "depends" (some each way) or "" (none settled); how many agree (`agree`, with the
    span of their figures `agree_span`) and fail (`fail`, `fail_span`), and `count`."""
    settled = [c for j in judgements if j.verdict in JUDGED for c in j.measured if c.settled]
    unit = next((j.unit for j in judgements), "")

    def span(found: list) -> str:
        figures = [c.figure for c in found if c.figure is not None]
        return ledger.span_text(min(figures), max(figures), unit) if figures else ""

    agree = [c for c in settled if c.outcome in GOOD]
    fail = [c for c in settled if c.outcome == ledger.FAILS]
    answer = ("depends" if agree and fail else "supported" if agree else "refuted" if fail
              else "")
    return {"answer": answer, "count": len(settled), "agree": len(agree),
            "agree_span": span(agree), "fail": len(fail), "fail_span": span(fail),
            "exceed": sum(1 for c in agree if c.outcome == ledger.EXCEEDS)}


def contradiction_views(book: ledger.Ledger, views: list[dict[str, Any]],
                        results: list[ClaimResult]) -> list[dict[str, Any]]:
    """Each contradiction's claims, every one of them, with its stance (`stance`), its
    verdicts grouped per environment (`judged`; `listed` splits the unsettled ones by
    their lean), the span of its figures over every judged environment (`span`), for an
    unsettled one the answer it leans to, for a split one its regions (`split`), and
    what its settled comparisons say (`settled`, `settled_answer`): the answer opens with
    those; `open`, its first environment that did not judge it. `sides` groups the rows by
    stance for the sentences after it. The judgements are viewed here, and only those the
    page reads (issue 94: every judgement of every claim in a contradiction, viewed whole,
    was most of the render's memory with ten thousand environments)."""
    by_id = {v["claim"].id: v for v in views}
    results_of = {r.claim.id: r for r in results}
    out = []
    for item in book.contradictions:
        rows = []
        for view in (by_id[c] for c in item.claims):
            claim = view["claim"]
            result = results_of[claim.id]
            judged = {v: [judgement_view(j, claim, whole=False) for j in result.judgements
                          if j.verdict == v] for v in JUDGED}
            judged = {v: js for v, js in judged.items() if js}
            mine = {j.env_id: j for j in result.judgements}
            figures = [c.figure for j in mine.values() for c in j.measured
                       if c.figure is not None and j.verdict in JUDGED]
            unit = next((j.unit for j in mine.values()), "")
            found = stance(judged)
            first_open = next((j for j in result.judgements if j.verdict not in JUDGED), None)
            rows.append({
                "view": view, "link": link(seed_page(claim.seed), claim.id, page=CONTRADICTIONS_PAGE),
                "judged": judged, "listed": by_lean(judged), "stance": found,
                "split": split_view(judged, [j for js in judged.values() for j in js])
                if found == "split" else None,
                "span": ledger.span_text(min(figures), max(figures), unit) if figures else "",
                "lean": _lean(judged.get(ledger.UNSETTLED, []), mine) if mine else
                {"to": "", "count": 0, "unanimous": False},
                "open": [] if first_open is None else [judgement_view(first_open, claim,
                                                                      whole=False)],
                "settled": settled_answer(list(mine.values()))})
        out.append({"item": item, "rows": rows,
                    "sides": {s: [r for r in rows if r["stance"] == s] for s in STANCES}})
    return out


results_for = ledger.results_for
verdict_table = ledger.verdict_table


def context(data: analysis.Data, book: ledger.Ledger | None = None,
            brief: bool = False) -> dict[str, Any]:
    """What the ledger's pages read. `brief`: the views are `brief_view`s, for the summary;
    the seed's page builds their whole views (`full`)."""
    book = ledger.site_ledger(data) if book is None else book
    results = results_for(data, book)
    views = [brief_view(r) if brief else full(data, r) for r in results]
    counts = ledger.counts(results, data)
    return {"seeds": seed_views(book, views), "views": views,
            "contradictions": contradiction_views(book, views, results),
            "counts": analysis.rows(counts), "verdicts": ledger.VERDICTS,
            "claim_count": len(book.claims),
            "links": {"rules": link(RULES_PAGE), "contradictions": link(CONTRADICTIONS_PAGE)},
            "rules": {"band": ledger.STEADY_BAND, "window": ledger.LEVEL_WINDOW,
                      "run": ledger.STEADY_RUN, "processes": ledger.MIN_PROCESSES,
                      "gain": analysis.MEANINGFUL_GAIN, "point": ledger.POINT_TOLERANCE,
                      "much_slower": formatting.sig(ledger.MUCH_SLOWER),
                      "host_band": host_model.BAND, "host_processes": host_model.MIN_PROCESSES}}


def full(data: analysis.Data, result: ClaimResult) -> dict[str, Any]:
    return claim_view(result, ledger.Judge.of(data).workloads(result.claim))


def render(site: Site) -> None:
    found = context(site.data, brief=True)
    site.page(PAGE, "ledger.md.j2", **found)
    site.page(RULES_PAGE, "ledger-rules.md.j2", **found)
    site.page(CONTRADICTIONS_PAGE, "ledger-contradictions.md.j2", **found)
    results = {id(r.claim): r for r in results_for(site.data)}
    for summary in found["seeds"]:
        # The seed's whole views while its pages render, then dropped (see brief_view).
        group = {**summary, "claims": [view if "judgements" in view else
                                       full(site.data, results[id(view["claim"])])
                                       for view in summary["claims"]]}
        site.page(group["page"], "ledger-seed.md.j2", group=group, **found)
        for env in comparison_pages(group):
            site.page(env["page"], "ledger-seed-env.md.j2", group=group, env=env, **found)
        del group
        gc.collect()  # Jinja's macros hold a page's context in a cycle, the views with it
    pages = [["Summary", PAGE], ["How a claim is judged", RULES_PAGE],
             *[[g["name"].capitalize(), g["page"]] for g in found["seeds"]],
             ["Contradictions", CONTRADICTIONS_PAGE]]
    site.write(NAV, json.dumps(pages, indent=1) + "\n")
