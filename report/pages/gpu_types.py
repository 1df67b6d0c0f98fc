"""GPU types side by side: the same cases, under the same software, on two GPU types.

Two CUDA environments are paired when everything that builds, picks and runs the kernels
is the same (SOFTWARE) and the GPU is not. The host and the lease come with the GPU (other
CPUs, other busy neighbour GPUs), so a difference between the two sides is host and GPU
together; the page lists what else differs. A host-dependent speedup is set against the
other GPU's at one host cost, predicted by both host models, or named as measured on hosts
of different speed (`at_one_host`).
"""

from __future__ import annotations

import math

import pandas as pd

from report import analysis
from report.analysis import BASELINE, Data, Environment, host, of_env, ordered, processes, rows
from report.site import Site

PAGE = "analysis/gpu-types.md"
BACKEND = "cuda"
# What must match for two environments to differ "only in the GPU": the software that
# compiles and runs the kernels, and the precision settings that choose them. Host fields
# (machine, CPU, driver, OS) are not here: they come with the GPU a machine is lent with.
SOFTWARE = ("backend", "torch", "triton", "cuda_runtime", "cudnn", "python",
            "float32_matmul_precision", "cuda_matmul_allow_tf32", "cudnn_allow_tf32")
# The benchmark's own checkout, neither host nor GPU: left out of "what else differs".
CHECKOUT = ("git_commit", "git_dirty")
KEY = ["workload", "mode", "batch_size", "shapes", analysis.DTYPE]  # a case without its environment
POINT = ["workload", "batch_size", "shapes", analysis.DTYPE]  # the same without the mode
CLASSES = ("launch-bound", "mixed", "device-bound", "differs")  # eager's class, in page order


def field(env: Environment, name: str) -> tuple[str, ...]:
    return dict(env.fields)[name]


def pairs(envs: list[Environment]) -> list[tuple[Environment, Environment]]:
    """Every two environments of `BACKEND` with the same SOFTWARE fields and different GPUs,
    the GPU whose name sorts first on the left (the numerator of every ratio)."""
    groups: dict[tuple, list[Environment]] = {}
    for env in envs:
        if env.backend == BACKEND:
            groups.setdefault(tuple(field(env, n) for n in SOFTWARE), []).append(env)
    found = []
    for group in groups.values():
        group = sorted(group, key=lambda e: (field(e, "device_name"), e.label))
        devices = [field(e, "device_name") for e in group]
        # Sorted by GPU, each environment pairs with those after its GPU's last: testing
        # every two of them grew with the square of the environments of one GPU (issue 94).
        firsts, after = [], len(group)
        for i in range(len(group) - 1, -1, -1):
            if i + 1 < len(group) and devices[i + 1] != devices[i]:
                after = i + 1
            firsts.append(after)
        found += [(a, b) for a, first in zip(group, reversed(firsts), strict=True)
                  for b in group[first:]]
    return sorted(found, key=lambda p: (p[0].label, p[1].label))


def aligned(table: pd.DataFrame, a: str, b: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The ok rows of `table` for environments `a` and `b` at every case (KEY) both have,
    in page order, row i of one the same case as row i of the other."""
    ok = table[table["ok"].eq(True)]
    side = {env: of_env(ok, env) for env in (a, b)}
    keys = ordered(side[a][KEY].merge(side[b][KEY], on=KEY)).reset_index(drop=True)
    left, right = (keys.merge(side[env], on=KEY, how="left") for env in (a, b))
    return left, right


def _sides(table: pd.DataFrame) -> list[dict]:
    """Template rows of one side. env_repeated: a side resting on one process always reads
    "single run" here, since the other side may rest on several."""
    return [dict(r, env_repeated=True) for r in rows(table)]


def _eager_class(cases: pd.DataFrame, env_id: str) -> pd.DataFrame:
    eager = cases[(cases["env_id"] == env_id) & (cases["mode"] == BASELINE) & cases["ok"]]
    return eager[POINT].assign(bound=analysis.boundedness(eager["busy_fraction"]))


def latencies(cases: pd.DataFrame, a: str, b: str) -> pd.DataFrame:
    """Every case ok on both sides: `ratio` (a's median / b's), `agree` where the two ranges
    of process medians overlap (`analysis.ranges_overlap`), else `faster` ("a" or "b");
    `single` where either side rests on one process; `bound`, eager's boundedness at the
    point on both sides ("differs" where the two GPUs class it differently); the sides'
    own rows in `a` and `b`. Both sides' latencies come from one timing method
    (`analysis.one_timing`, `timing` says which): where none timed both, the ratio and
    verdict are None, not measured."""
    left, right = analysis.one_timing(*aligned(cases, a, b))
    out = left[KEY].copy()
    out["timing"] = left["timing"]
    measured = out["timing"].notna()
    out["ratio"] = (left["median_s"] / right["median_s"]).where(measured)
    out["agree"] = (analysis.ranges_overlap(left["lo_s"], left["hi_s"], right["lo_s"], right["hi_s"])
                    & measured)
    out["faster"] = (out["ratio"] < 1).map({True: "a", False: "b"}).where(
        ~out["agree"] & measured, None)
    out["single"] = ((left["n_processes"] < 2) | (right["n_processes"] < 2)) & measured
    bounds = _eager_class(cases, a).merge(_eager_class(cases, b), on=POINT, how="left",
                                          suffixes=("_a", "_b"))
    bounds["bound"] = bounds["bound_a"].where(bounds["bound_a"] == bounds["bound_b"], "differs")
    out = out.merge(bounds[[*POINT, "bound"]], on=POINT, how="left")
    out["bound"] = out["bound"].fillna("not measured")  # eager failed, or no busy fraction
    out["a"], out["b"] = _sides(left), _sides(right)
    return out


def speedups(table: pd.DataFrame, a: str, b: str) -> pd.DataFrame:
    """Every compiled or graphed case with a speedup over eager on both sides (`table`:
    `analysis.speedups` rows): `faster_a`/`faster_b`, whether the mode beats eager on each
    GPU, `differs` where those answers differ, and `settled` where every pairing of
    processes gives the same answer on both sides."""
    timed = table[(table["mode"] != BASELINE) & table["speedup"].notna()]
    left, right = aligned(timed, a, b)
    out = left[KEY].copy()
    out["faster_a"], out["faster_b"] = left["holds"].astype(bool), right["holds"].astype(bool)
    out["differs"] = out["faster_a"] != out["faster_b"]
    out["settled"] = left["settled"].astype(bool) & right["settled"].astype(bool)
    out["a"], out["b"] = _sides(left), _sides(right)
    return out


def fastest(table: pd.DataFrame, a: str, b: str) -> pd.DataFrame:
    """Per point with two or more modes measured on both sides (`table`: the published
    table): the fastest of those modes on each GPU by the site's one rule (`analysis.choose`
    at any number of calls: ranked by the published speedup over eager, the two leaders
    set head to head where paired processes timed both, a tie naming the cheaper mode
    first), with `margin` over the runner-up, `tie`, and `pairings`, the processes the
    margin rests on (head to head: those that timed both; else the fewer of the two
    modes'); b's with the suffix `_b`, and `same` where both GPUs name one mode."""
    left, right = aligned(table, a, b)
    best = analysis.choose(pd.concat([left, right], ignore_index=True), math.inf)
    best = best[best["mode_runner_up"].notna()]
    fewer = best[["processes", "processes_runner_up"]].astype(float).min(axis=1)
    best = best.assign(pairings=best["margin_processes"].astype(float).fillna(fewer))
    columns = [*POINT, "mode", "margin", "tie", "pairings"]
    out = best.loc[best["env_id"] == a, columns].merge(
        best.loc[best["env_id"] == b, columns], on=POINT, suffixes=("", "_b"))
    out["same"] = out["mode"] == out["mode_b"]
    return ordered(out, batch_first=True).reset_index(drop=True)


def lease_speedups(across: pd.DataFrame, a: str, b: str) -> pd.DataFrame:
    """Per case with a paired speedup over eager on two or more leases of either GPU type
    (`across`: `analysis.across_leases`): on each side, the median of the leases' paired
    speedups, the smallest and largest lease, and how many leases (`_a`, `_b`)."""
    timed = across[across["speedup"].notna() & (across["mode"] != BASELINE)]
    sides = []
    for env, suffix in ((a, "_a"), (b, "_b")):
        here = of_env(timed, env).groupby(KEY, dropna=False).agg(
            speedup=("speedup", "median"), lo=("speedup", "min"), hi=("speedup", "max"),
            leases=("lease", "nunique"), ratio_bound=("ratio_bound", "first"))
        sides.append(here.add_suffix(suffix))
    out = sides[0].join(sides[1], how="outer").reset_index()
    # `across` holds a case seen on two leases in any way (isolated on one, paired on the
    # other): its speedup may still come from one lease on each side
    out = out[out[["leases_a", "leases_b"]].max(axis=1) >= 2].copy()
    out["ratio_bound"] = out["ratio_bound_a"].fillna(out["ratio_bound_b"])
    # the outer join turns a count that one side lacks into NaN, and the column into floats
    out[["leases_a", "leases_b"]] = out[["leases_a", "leases_b"]].astype("Int64")
    return ordered(out, batch_first=True).reset_index(drop=True)


HOST_DEPENDENT = "host-dependent"  # a published row's `ratio_bound` where the host sets the gain


def at_one_host(data: Data, a: Environment, b: Environment) -> list[dict]:
    """Every speedup over eager that is host-dependent on either GPU and ok on both (issue
    90): each side's figure as measured with the host cost it was measured at
    (`host_probe_us`), and, where both sides have a host model, both predicted at one host
    cost (`at_us`): the left GPU type's reference host, else the right's, else the middle
    of the probes both were fitted on, the first that lies inside both fits (`at`: which).
    Where no host cost lies inside both, or a side has no model (`modelled`: the sides that
    have one), `at_us` is None: the two figures come from hosts of different speed, and
    only the costs can be set side by side."""
    table = data.published
    table = table[table["ok"].eq(True) & table["speedup"].notna() & (table["mode"] != BASELINE)]
    left, right = aligned(table, a.env_id, b.env_id)
    dependent = left["ratio_bound"].eq(HOST_DEPENDENT) | right["ratio_bound"].eq(HOST_DEPENDENT)
    references = [host.reference_of(data, field(env, "device_name")[0]) for env in (a, b)]
    out = []
    for one, two in zip(rows(left[dependent]), rows(right[dependent]), strict=True):
        models = [host.model_for(data, env.env_id, one["workload"], one["batch_size"],
                                 one["mode"], one[analysis.DTYPE]) for env in (a, b)]
        found = {**{c: one[c] for c in KEY}, "speedup_a": one["speedup"],
                 "speedup_b": two["speedup"], "host_a_us": one.get("host_probe_us"),
                 "host_b_us": two.get("host_probe_us"), "at": None, "at_us": None,
                 "predicted_a": None, "predicted_b": None,
                 "modelled": [side for side, m in zip("ab", models, strict=True) if m]}
        if all(models):
            common = _common_probe(models, references)
            if common is not None:
                at, probe_s = common
                predicted = [m.at(probe_s) for m in models]
                found.update(at=at, at_us=probe_s * 1e6,
                             predicted_a=_predicted(predicted[0]), predicted_b=_predicted(predicted[1]))
        out.append(found)
    return out


def _common_probe(models: list, references: list) -> tuple[str, float] | None:
    """(which, probe in s): the first of the two reference hosts, then the middle of the
    probes both models were fitted on, that lies inside both; None where none does."""
    lo = max(m.probe_range_s[0] for m in models)
    hi = min(m.probe_range_s[1] for m in models)
    candidates = [(side, r.probe_s) for side, r in zip(("a", "b"), references, strict=True)
                  if r is not None]
    if lo <= hi:
        candidates.append(("overlap", (lo + hi) / 2))
    return next(((which, p) for which, p in candidates
                 if all(m.outside(p) == 0 for m in models)), None)


def _predicted(found) -> dict:
    return {"speedup": found.speedup, "low": found.low,
            "high": None if found.high == float("inf") else found.high}


def summary(latency: pd.DataFrame, speedup: pd.DataFrame, by: str) -> list[dict]:
    """Per value of `by` (a column of both tables): cases compared (by one timing method on
    both sides: `latencies`), how many agree, how many each side is faster in, the median
    ratio, how many rest on a single run; of the
    speedups over eager, how many were compared and how many give a different
    faster-than-eager answer (`differs`), settled on both sides or not."""
    if latency.empty:
        return []
    counted = latency.assign(faster_a=latency["faster"] == "a", faster_b=latency["faster"] == "b")
    out = counted.groupby(by, sort=False).agg(
        cases=("ratio", "count"), agree=("agree", "sum"), faster_a=("faster_a", "sum"),
        faster_b=("faster_b", "sum"), ratio=("ratio", "median"), single=("single", "sum"))
    answers = speedup.assign(settled_differs=speedup["differs"] & speedup["settled"]).groupby(
        by, sort=False).agg(speedups=("differs", "size"), differs=("differs", "sum"),
                            settled_differs=("settled_differs", "sum"))
    out = out.join(answers, how="left").reset_index()
    return rows(out)


def _by_mode(latency: pd.DataFrame, speedup: pd.DataFrame) -> list[dict]:
    found = summary(latency, speedup, "mode")
    return sorted(found, key=lambda r: analysis.mode_rank(r["mode"]))


def _by_bound(latency: pd.DataFrame, speedup: pd.DataFrame) -> list[dict]:
    order = [*CLASSES, "not measured"]
    return sorted(summary(latency, speedup, "bound"), key=lambda r: order.index(r["bound"]))


def environment_view(data: Data, env: Environment) -> dict:
    """What the page says of one environment: its GPU, host and how it was measured."""
    cases = data.cases[(data.cases["env_id"] == env.env_id) & data.cases["ok"]]
    procs = processes(data.shown)
    procs = procs[(procs["env_id"] == env.env_id) & procs["ok"]]
    paired = cases["paired_processes"].where(cases["paired_processes"] > 0)
    return {"env": env, "device": ", ".join(field(env, "device_name")),
            "fields": dict(env.fields),
            "workers": sorted({int(w) for w in procs["workers"].dropna()}),
            "profiles": {p: int(n) for p, n in cases["profile"].value_counts().items()},
            "processes": sorted({int(n) for n in cases["n_processes"]}),
            "paired": sorted({int(n) for n in paired.dropna()}),
            "unpaired": int(paired.isna().sum()),
            # another environment under the same machine name: headings add the env id
            "shared_machine": any(e.env_id != env.env_id and field(e, "machine") == field(env, "machine")
                                  for e in data.envs(BACKEND))}


def pair_page(a: Environment, b: Environment) -> str:
    """Every case of one pair: a page of its own, since the tables grow with the profiles."""
    return f"analysis/gpu-types/{a.env_id}-vs-{b.env_id}.md"


def differences(a: Environment, b: Environment) -> list[dict]:
    """Every environment field other than the GPU's name and the checkout that differs."""
    fa, fb = dict(a.fields), dict(b.fields)
    return [{"field": name, "a": fa[name], "b": fb[name]} for name in fa
            if name not in ("device_name", *CHECKOUT) and fa[name] != fb[name]]


def render(site: Site) -> None:
    data = site.data
    found = pairs(list(data.environments.values()))
    sections = []
    across = analysis.across_leases(data.records, data.speedups)
    for a, b in found:
        latency = latencies(data.cases, a.env_id, b.env_id)
        speedup = speedups(data.speedups, a.env_id, b.env_id)
        speedup = speedup.merge(latency[[*KEY, "bound"]], on=KEY, how="left")
        total = summary(latency.assign(all="all"), speedup.assign(all="all"), "all")
        leads = rows(fastest(data.published, a.env_id, b.env_id))
        section = {
            "a": environment_view(data, a), "b": environment_view(data, b),
            "differences": differences(a, b), "total": total[0] if total else None,
            "by_mode": _by_mode(latency, speedup), "by_bound": _by_bound(latency, speedup),
            "latency": rows(latency), "speedups": rows(speedup), "fastest": leads,
            "fastest_same": sum(bool(r["same"]) for r in leads),
            "fastest_within": sum(not r["same"] and bool(r["tie"] or r["tie_b"]) for r in leads),
            "leases": rows(lease_speedups(across, a.env_id, b.env_id)),
            "host": at_one_host(data, a, b),
            "page": pair_page(a, b).removeprefix("analysis/")}
        site.page(pair_page(a, b), "gpu-types-pair.md.j2", s=section)
        sections.append(section)
    shown = {e.env_id: e for pair in found for e in pair}
    site.page(PAGE, "gpu-types.md.j2", sections=sections, backend=BACKEND,
              environments=[environment_view(data, e) for e in sorted(
                  shown.values(), key=lambda e: e.label)],
              measured=sorted({d for e in data.envs(BACKEND) for d in field(e, "device_name")}))
