"""Choosing a mode: a decision flow whose every threshold is found in the records
(report/guide_rules.py), what its rules recommend at each measured point, and as the
evidence the fastest mode of every case and which mode won most often for launch-bound,
mixed and device-bound eager runs. The guide sums each environment up; every point and case
is on the environment's own page (the guide with every case neared 300 KB of HTML)."""

from __future__ import annotations

import json
import math
import re
import statistics
from collections import Counter

import pandas as pd

from report import analysis, answers, formatting, guide_rules
from report.analysis import BASELINE, Environment, choice, host, of_env, rows
from report.analysis.ordering import per_frame
from report.analysis.shown import STREAM_FAMILY
from report.coldstart import data as coldstart_data
from report.pages import cold_start
from report.shapes import data as shapes
from report.site import Site

UNPROFILED = analysis.UNPROFILED
CLASSES = ("launch-bound", "mixed", "device-bound", UNPROFILED)
PAGE = "analysis/guide.md"
# Leaves that ask no threshold of their own: where the branch's environment has no such
# points, the chart shows another environment's of the same backend, and names it.
BORROWED = ("training", "varying")


def env_page(env_id: str) -> str:
    return f"analysis/guide/{env_id}.md"


def flows(data: analysis.Data) -> dict[tuple[str, str], guide_rules.Flow]:
    """The guide's flow of every environment and dtype, by (env_id, dtype)."""
    return data.memo("guide-flows", lambda: guide_rules.flows_of(
        data.cases[data.cases["env_id"].isin(set(data.environments))]))


def dtypes_of(found: dict[tuple[str, str], guide_rules.Flow], env_id: str) -> list[str]:
    """The dtypes `env_id` has a flow in, the default dtype first."""
    return _dtypes_by_env(found).get(env_id, [])


def _dtypes_by_env(found: dict[tuple[str, str], guide_rules.Flow]) -> dict[str, list[str]]:
    """`dtypes_of` of every environment at once: a page that walks the environments asks
    this, since a scan of every flow per environment grew with their square (issue 94)."""
    out: dict[str, list[str]] = {}
    for env_id, dtype in found:
        out.setdefault(env_id, []).append(dtype)
    return {e: sorted(ds, key=lambda d: (d != analysis.DEFAULT_DTYPE, d)) for e, ds in out.items()}


def primary(data: analysis.Data, backend: str) -> Environment | None:
    """The environment of `backend` the flowchart shows: the one with the most timed cases."""
    timed = data.cases[data.cases["ok"]]["env_id"].value_counts()
    envs = [e for e in data.envs(backend) if timed.get(e.env_id, 0)]
    return max(envs, key=lambda e: (timed[e.env_id], e.label)) if envs else None


def sources(data: analysis.Data, env_id: str) -> list[str]:
    """The results files holding an environment's shown records."""
    return per_frame(data.shown, "sources", _sources_by_env).get(env_id, [])


def _sources_by_env(shown: pd.DataFrame) -> dict[str, list[str]]:
    # One pass over the records, not a mask per environment (quadratic, issue 94).
    out: dict[str, set[str]] = {}
    for env_id, source in zip(shown["env_id"], shown["source"], strict=True):
        out.setdefault(env_id, set()).add(source.rsplit(":", 1)[0])
    return {env_id: sorted(found) for env_id, found in out.items()}


def chart(data: analysis.Data, found: dict[str, guide_rules.Flow]) -> list[dict]:
    """One branch of the flowchart per backend with results, and in it one flow per dtype:
    the questions of its primary environment in that dtype, and each leaf from there or,
    where that environment did not measure it (training, varying shapes), from the
    environment of the same backend with the most points for it in that dtype, which the
    leaf then names."""
    out = []
    for backend in data.backends:
        env = primary(data, backend)
        if env is None:
            continue
        by_dtype = []
        for dtype in dtypes_of(found, env.env_id):
            fl = found[(env.env_id, dtype)]
            leaves = {}
            for key in guide_rules.LEAVES:
                candidates = [(found[(e.env_id, dtype)].leaves[key], e) for e in data.envs(backend)
                              if (e.env_id, dtype) in found
                              and key in found[(e.env_id, dtype)].leaves]
                own = fl.leaves.get(key)
                if key not in BORROWED:
                    candidates = []
                if own is not None and (own.pick.measured or not candidates):
                    leaves[key] = {"leaf": own, "env": None}
                elif candidates:
                    leaf, other = max(candidates, key=lambda c: (c[0].pick.n, c[1].label))
                    leaves[key] = {"leaf": leaf if leaf.pick.measured else own,
                                   "env": other if leaf.pick.measured and other != env else None}
            by_dtype.append({"dtype": dtype, "flow": fl, "leaves": leaves})
        out.append({"name": backend, "id": re.sub(r"\W", "_", backend), "env": env,
                    "dtypes": by_dtype})
    return out


def answered(data: analysis.Data) -> pd.DataFrame:
    """`analysis.choose` at analysis.CALLS_ANSWERED at every point where two or more modes
    were timed, with how eager is bound there (`class`): the guide's tables give the answer
    the chooser, the workload pages and the quick answers give, by the same function."""
    def compute() -> pd.DataFrame:
        table = data.published
        timed = table[table["ok"].eq(True) & table["speedup"].notna()]
        timed = timed[timed.groupby(analysis.POINT, dropna=False)["mode"].transform("size") >= 2]
        found = analysis.choose(timed, analysis.CALLS_ANSWERED)
        eager = timed.loc[timed["mode"] == BASELINE, [*analysis.POINT, "busy_fraction"]]
        found = found.merge(eager, on=analysis.POINT, how="left")
        found["class"] = analysis.boundedness(found["busy_fraction"]).fillna(UNPROFILED)
        found["dtype"] = found[analysis.DTYPE]
        return found
    return data.memo("guide-answered", compute)


# What a reader's model is like, found in a workload's name: the chooser's picker groups the
# workloads under these words. A workload matching none is listed under its family.
KINDS = (("gpt2", "GPT-style decoder"), ("llama", "GPT-style decoder"),
         ("bert", "BERT-style encoder"), ("vit", "ViT"), ("resnet", "ResNet (convolutions)"),
         ("conv", "convolutions"), ("mlp", "small MLP"), ("elementwise", "element-wise ops"),
         ("matmul", "matrix multiply"), ("entropy", "row reduction"))


def model_kind(workload: str, family: str) -> str:
    return next((kind for part, kind in KINDS if part in workload), family)


# The calls to pay back travel as "pays_back" and "pays_back_runner_up", the home page's text.
CHOICE_FIELDS = ("mode", "speedup", "speedup_lo", "speedup_hi", "cold_compile_s", "processes",
                 "timing", "mode_runner_up", "speedup_runner_up", "margin", "tie",
                 "host_dependent", "compiling", "cuda_graphs", "cold_compile_s_runner_up")
# How the pages print each figure the chooser prints: the JSON keeps the digits that print
# the same (report/formatting.py; chooser.js rounds as Python does). Compile times travel
# as the pages' text: chooser.js prints them as they are.
SHOWN = {"speedup": formatting.times, "speedup_lo": formatting.times,
         "speedup_hi": formatting.times, "speedup_runner_up": formatting.times,
         "margin": formatting.percent}
AS_TEXT = {"cold_compile_s": formatting.seconds, "cold_compile_s_runner_up": formatting.seconds}


def _precise(value):
    """A probe figure with the digits the chooser needs (it prints a tenth of a µs)."""
    if value is None:
        return None
    value = float(value)
    return None if value != value else float(f"{value:.9g}")


def chooser_answers(data: analysis.Data) -> dict[tuple, list]:
    """The chooser's answer at each point (env_id, workload, batch, dtype) and each of
    analysis.CALLS_STEPS, computed here by `analysis.choose`: a list of CHOICE_FIELDS then
    "pays_back" and "pays_back_runner_up" (`chooser_data`'s `fields`), or None where the
    point has no answer at those calls."""
    answers_by_point: dict[tuple, list] = {}
    for step, calls in enumerate(analysis.CALLS_STEPS):
        for r in rows(analysis.choose(data.published, calls)):
            key = (r["env_id"], r["workload"], r["batch_size"], r[analysis.DTYPE])
            answers_by_point.setdefault(key, [None] * len(analysis.CALLS_STEPS))[step] = [
                *(_text(r.get(f), AS_TEXT[f]) if f in AS_TEXT else _compact(r.get(f), SHOWN.get(f))
                  for f in CHOICE_FIELDS), _pays_back(r),
                _pays_back(r, "_runner_up")]
    return answers_by_point


def chooser_data(data: analysis.Data) -> dict:
    """The chooser's answers (`chooser_answers`), only looked up in the browser, with each
    workload what the picker shows (family, description, training, varying shapes). Most
    answers repeat from calls to calls and from point to point (eager wherever nothing pays
    back), so each distinct one is kept once and the file grows with the answers, not with
    points times calls: `values` holds, per field of `fields`, the distinct values it takes;
    `answers` each distinct answer as the index of its value of each field; `points` each
    point as [env_id, workload, batch, dtype, the index in `answers` of its answer at each
    of `calls` (None where it has none)], and a point whose chosen mode has a host model
    carries it as a sixth item, {mode: its prediction at every host cost the chooser takes,
    `host.grid`, in host.GRID_FIELDS order}. `chooser_points` reads it back as chooser.js does."""
    answers_by_point = chooser_answers(data)
    hosts: dict[tuple, dict] = {}
    for r in rows(data.published[data.published["host_probe_median_us"].notna()]):
        key = (r["env_id"], r["workload"], r["batch_size"], r[analysis.DTYPE])
        chosen = {a[0] for a in answers_by_point.get(key, []) if a}
        model = host.model_for(data, r["env_id"], r["workload"], r["batch_size"], r["mode"],
                               r[analysis.DTYPE]) if r["mode"] in chosen else None
        if model is not None:
            hosts.setdefault(key, {})[r["mode"]] = host.grid(model)
    fields = [*CHOICE_FIELDS, "pays_back", "pays_back_runner_up"]
    # Keyed by their JSON text: as dict keys 1, 1.0 and True are one value.
    values: list[dict[str, int]] = [{} for _ in fields]
    distinct: dict[tuple, int] = {}

    def index_of(answer: list | None) -> int | None:
        if answer is None:
            return None
        coded = tuple(values[i].setdefault(json.dumps(v), len(values[i]))
                      for i, v in enumerate(answer))
        return distinct.setdefault(coded, len(distinct))

    points = [[*key, [index_of(a) for a in answers],
               *([hosts[key]] if key in hosts else [])]
              for key, answers in answers_by_point.items()]
    envs = [e for e in data.environments.values() if any(k[0] == e.env_id for k in answers_by_point)]
    names = {e.env_id: e.label for e in envs}  # the one name (analysis/environment.py)
    found_streams = stream_answers(data)
    for env_id, env in shapes.stream_environments(data).items():
        if env_id not in names:  # measured streams alone: named as the shapes page names it
            envs.append(env)
            names[env_id] = env.label
    workloads = {}
    for workload in data.workloads:
        info = data.workload_info(workload) or {}
        workloads[workload] = {"training": bool(info.get("training")),
                               "varying": guide_rules._varying(info.get("batch_cycle")),
                               "family": data.family(workload), "axis": info.get("axis"),
                               "description": info.get("description"),
                               "kind": model_kind(workload, data.family(workload))}
    return {"calls": list(analysis.CALLS_STEPS), "calls_answered": analysis.CALLS_ANSWERED,
            "dtype_answered": analysis.DEFAULT_DTYPE, "tie_below": choice.TIE_BELOW,
            "fields": fields,
            "values": [[json.loads(v) for v in found] for found in values],
            "answers": [list(coded) for coded in distinct],
            "reference_probe_us": reference_probe_us(data.published),
            "probe_us": _precise(median_probe_us(data.published)),
            "environments": [{"id": e.env_id, "label": names[e.env_id], "backend": e.backend}
                             for e in sorted(envs, key=lambda e: (e.backend != "cuda", e.label))],
            "workloads": workloads,
            "host_fields": list(host.GRID_FIELDS),
            "points": points, "streams": found_streams}


def stream_answers(data: analysis.Data) -> list[list]:
    """The chooser's answers where shapes vary: per shape stream measured, [env_id, workload,
    batch, dtype, its kind of model, the varying-shapes page's answer (report/shapes/data.py
    `answer`, the text the page prints)]."""
    return [[s["env_id"], s["workload"], s["batch_size"], s[analysis.DTYPE],
             model_kind(s["workload"], STREAM_FAMILY), s["answer"]]
            for s in shapes.streams(data.records)]


def chooser_points(chooser: dict) -> list[list]:
    """`chooser_data`'s points with their answers read back from its tables, as chooser.js
    reads them: [env_id, workload, batch, dtype, per calls step the answer as a list in
    `fields` order or None, then the host models where the point has them]."""
    answers = [[chooser["values"][i][v] for i, v in enumerate(coded)]
               for coded in chooser["answers"]]
    return [[*point[:4], [None if i is None else answers[i] for i in point[4]], *point[5:]]
            for point in chooser["points"]]


def reference_probe_us(published: pd.DataFrame) -> dict[str, float]:
    """Per environment whose host model names one, the reference host's probe (µs) that its
    host-dependent figures are published at (`host_reference_us`: one per GPU type). One value
    for every environment mixed GPU types and the CPU, and read the band's upper edge."""
    if "host_reference_us" not in published:
        return {}
    found = published.dropna(subset=["host_reference_us"]).groupby("env_id")["host_reference_us"]
    return {env_id: _precise(value) for env_id, value in found.median().items()}


def median_probe_us(published: pd.DataFrame) -> float | None:
    """The median of the measured hosts' median probes."""
    found = published["host_probe_median_us"].dropna() if "host_probe_median_us" in published else []
    return float(pd.Series(found).median()) if len(found) else None


def _pays_back(answer: dict, suffix: str = "") -> str | None:
    """The break-even as the home page's quick answers write it, so that the chooser and
    the home page give one figure at one precision."""
    mode = answer.get("mode" + suffix)
    if mode is None or mode != mode or mode == BASELINE:
        return None
    return formatting.about(answer["cold_calls" + suffix])


def _text(value, shown) -> str | None:
    return None if value is None or value != value else shown(value)


def _compact(value, shown=None):
    """A figure as the chooser's JSON holds it: the fewest significant digits (4 at least)
    that `shown`, the pages' formatting, prints as it prints the full figure, and prints so
    a hair either side too; NEVER as "never". A figure on a rounding tie (0.5925 as a
    percent) would print 59.2% here, where Python rounds to even, and 59.3% in chooser.js,
    where toFixed rounds up."""
    from math import inf, nextafter

    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, float):
        if value != value:
            return None
        if value == analysis.NEVER:
            return "never"
        for digits in range(4, 18):
            short = float(f"{value:.{digits}g}")
            if shown is None or all(shown(s) == shown(value)
                                    for s in (short, nextafter(short, inf), nextafter(short, -inf))):
                return short
    return value


def _median(values) -> float | None:
    """The median of the known values (pandas' rule: missing ones are skipped); None if none."""
    known = [float(v) for v in values if v is not None and v == v]
    return statistics.median(known) if known else None


def fastest_by_mode(best: list[dict]) -> list[dict]:
    """Per mode that was the answer somewhere (`answered` rows of one environment and
    dtype), most answers first: at how many points, how many of those are ties, and over
    them the median speedup over eager, lead over the runner-up and cold calls to break even."""
    by_mode: dict[str, list[dict]] = {}
    for r in best:
        by_mode.setdefault(r["mode"], []).append(r)
    found = [{"mode": mode, "cases": len(mine), "ties": sum(r["tie"] is True for r in mine),
              "speedup": _median(r["speedup"] for r in mine),
              "margin": _median(r["margin"] for r in mine),
              "break_even": _median(r["cold_calls"] for r in mine),
              "compiles": mode != BASELINE}
             for mode, mine in by_mode.items()]
    return sorted(found, key=lambda r: (-r["cases"], analysis.mode_rank(r["mode"])))


def recommended_by_path(points: list[dict]) -> list[dict]:
    """Per leaf of the flow the points' paths end in (in the flow's order, points with no
    leaf last): how many points, what the leaf recommends, the modes the points picked on
    their own (most picked first) and how many of those agree with the leaf."""
    paths: dict[str | None, dict] = {}
    for p in points:
        rec = p["rec"]
        path = paths.setdefault(rec.leaf, {"leaf": rec.leaf, "leaf_mode": rec.leaf_mode,
                                           "points": 0, "agree": 0, "modes": Counter()})
        path["points"] += 1
        path["agree"] += bool(rec.agrees)
        path["modes"][rec.mode] += 1
    order = list(guide_rules.LEAVES)
    return [{**path, "modes": sorted(path["modes"].items(),
                                     key=lambda kv: (-kv[1], analysis.mode_rank(kv[0] or "")))}
            for path in sorted(paths.values(), key=lambda p: order.index(p["leaf"])
                               if p["leaf"] in order else len(order))]


def by_dtype(found: list[dict]) -> list[tuple[str, list[dict]]]:
    """Rows split by dtype, the default dtype first."""
    parts: dict[str, list[dict]] = {}
    for r in found:
        parts.setdefault(str(r[analysis.DTYPE]), []).append(r)
    return sorted(parts.items(), key=lambda kv: (kv[0] != analysis.DEFAULT_DTYPE, kv[0]))


def render(site: Site) -> None:
    data = site.data
    found = flows(data)
    recs = guide_rules.recommendations(data.cases, found, data.published)
    best = answered(data)
    table, spread = data.published, analysis.spreads(data.cases)
    # What classes_of reads of the published rows: converted to dicts once, and narrow.
    published_speedups = table[[*analysis.POINT, "mode", "speedup"]]

    # Each environment's published rows from one conversion of the table, not a filter and
    # a conversion per environment.
    published_of: dict[str, list[dict]] = {}
    for r in rows(table):
        published_of.setdefault(r["env_id"], []).append(r)

    def classes_of(here: list[dict], env_id: str) -> list[dict]:
        # In Python over the environment's rows: pandas merges of its small frames, class
        # by class, were most of this page's time.
        classes = []
        at_point: dict[tuple, list[dict]] = {}
        for r in analysis.env_rows(published_speedups, env_id):  # its points are in its part alone
            at_point.setdefault(tuple(r[c] for c in analysis.POINT), []).append(r)
        for name in CLASSES:
            members = [r for r in here if r["class"] == name]
            if not members:
                continue
            wins = Counter(r["mode"] for r in members)
            of = [r for point in dict.fromkeys(tuple(m[c] for c in analysis.POINT)
                                               for m in members)
                  for r in at_point.get(point, [])]
            speedups = {}
            for mode in data.modes:
                values = [r["speedup"] for r in of if r["mode"] == mode]
                known = [v for v in values if v is not None]
                speedups[mode] = {"median": statistics.median(known) if known else math.nan,
                                  "count": len(known)}
            classes.append({"name": name, "cases": len(members),
                            "wins": sorted(wins.items(), key=lambda kv: (-kv[1], kv[0])),
                            "speedups": speedups})
        return classes

    dtypes_by_env = _dtypes_by_env(found)

    def build(env: Environment):
        here = of_env(best, env.env_id)
        dtypes = dtypes_by_env.get(env.env_id, [])
        if not dtypes and here.empty:
            return None
        moves = analysis.move_summary(of_env(spread, env.env_id))
        mine = of_env(recs, env.env_id)
        flows_here = [{"dtype": d, "flow": found[(env.env_id, d)],
                       "points": [{"workload": r["workload"], "batch_size": r["batch_size"],
                                   "rec": r["recommendation"]}
                                  for r in rows(mine[mine[analysis.DTYPE] == d])]}
                      for d in dtypes]
        shared = {"flows": flows_here, "sources": sources(data, env.env_id),
                  "move": moves["median_spread"] if moves else None}
        # Each answer with the published rows of its two modes, so that its figures are
        # printed as the workload page prints them (formatting.speedup of the row).
        listed = rows(analysis.ordered(here, batch_first=True))
        of_case = {tuple(r[c] for c in (*analysis.POINT, "mode")): r
                   for r in published_of.get(env.env_id, [])}
        for r in listed:
            point = tuple(r[c] for c in analysis.POINT)
            r["row"] = of_case.get((*point, r["mode"]))
            r["runner_up_row"] = of_case.get((*point, r["mode_runner_up"]))
        site.page(env_page(env.env_id), "guide-env.md.j2", env=env, rows=listed,
                  leaves=guide_rules.LEAVES, calls=analysis.CALLS_ANSWERED,
                  gain=analysis.MEANINGFUL_GAIN, **shared)
        return {"dtypes": [{"dtype": d, "classes": classes_of(part, env.env_id),
                            "fastest": fastest_by_mode(part), "cases": len(part),
                            "paths": recommended_by_path(next(
                                (f["points"] for f in flows_here if f["dtype"] == d), []))}
                           for d, part in by_dtype(rows(here))],
                "page": env_page(env.env_id).removeprefix("analysis/"), **shared}

    site.page(PAGE, "guide.md.j2", backends=site.by_backend(build),
              modes=data.modes, chart=chart(data, found), leaves=guide_rules.LEAVES,
              gain=analysis.MEANINGFUL_GAIN, never=analysis.NEVER, calls=analysis.CALLS_ANSWERED,
              graph_modes=graph_modes(data),
              outlier_spread=answers.OUTLIER_SPREAD, first_call=cold_start.first_call_answer(
                  site.results / coldstart_data.COLDSTART if site.results else None))
    site.write("analysis/guide-data.json",
               json.dumps(chooser_data(data), sort_keys=True, separators=(",", ":")) + "\n")


def graph_modes(data: analysis.Data) -> set[str]:
    """The modes that capture CUDA graphs by hand without compiling: not torch.compile modes,
    which the guide says wherever one is the answer."""
    traits = analysis.modes_traits(data.cases)
    return {m for m, t in traits.items() if t.get("cuda_graphs") and not t.get("compiled")}
