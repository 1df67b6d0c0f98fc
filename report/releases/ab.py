"""A/B groups: releases measured alternately on one host in one run (bench/ab.py), judged.

A group's records carry the tag `ab-<group>-<label>`: one label per side, and every side
has a paired process per workload size and repeat, taken in ABBA order. Repeat r of side
A and repeat r of side B ran next to each other on one host, so their ratio (new median
over old, for each case) is taken under one host state, like a paired round inside one
process, only across two processes. A case's figure is the median of its ratios, its
spread the smallest and largest.

- `sides(records)`: one row per group and label: its environment, release, hosts and the
  host probe (the eager cost of a trivial op, bench/host/probe.py).
- `comparisons(sides)`: which labels of a group are set against which: consecutive
  releases ("ab"), and a release against itself under a second label ("aa").
- `floors(records)`: the A/A noise floor per case: how far the ratios of a release against
  itself strayed from 1 (the largest of r and 1/r), on one host and in one run.
- `steps(records)`: every case of every A/B comparison with its ratio, spread, floor and
  verdict. A step is called only when the whole spread of the ratios lies beyond the
  case's A/A floor (and beyond `vocabulary.MIN_EFFECT`): "slower" when its smallest ratio is
  above the floor, "faster" when its largest is below its inverse. Without an A/A run on
  the group's host nothing is called ("no A/A run yet"), and a case resting on one pair of
  processes is a "single pair".
- `other_runs(published, records)`, `speedups_against_other_runs`: each published latency
  and speedup set against an A/B group's run of the same environment, and whether they
  differ beyond the case's A/A floor: a noisy run, flagged where its answer is shown.
- `run_costs(records)`: what each A/B run took, as a whole (the methodology page's cost
  table): turns, processes, and wall minutes from its first start to its last finish.
- `release_answer(data)`: what the newest release changed, for the home page's answer, from
  the same table as the changes page and the history chart: every A/B group that measured
  it against the release before it, each with its backend, host and A/A floor.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from bench.ab import parse_tag
from report import analysis
from report.analysis import BASELINE, rows
from report.analysis.derived import run_spans
from report.formatting import sig
from report.releases.vocabulary import (
    MIN_EFFECT,
    host_text,
    hosts_of,
    lineage_id,
    public_release,
    release_key,
)

CASE = ["backend", "workload", "mode", "batch_size", "shapes", "profile"]
VERDICTS = ("slower", "faster", "same", "single pair", "no A/A run yet")
NO_FLOOR = "no A/A run yet"
SINGLE = "single pair"
STEP_COLUMNS = ["group", "kind", "old_label", "new_label", "old_release", "new_release",
                "old_env_id", "new_env_id", "hosts", *CASE, "old_median_s", "new_median_s",
                "ratio", "lo", "hi", "pairs", "floor", "floor_group", "verdict"]


def ab_records(records: pd.DataFrame) -> pd.DataFrame:
    """The records of A/B groups, with `ab_group` and `ab_label`; of a process recorded
    twice (a group resumed with --force) the newest."""
    parsed = records["tag"].map(parse_tag) if not records.empty else pd.Series(dtype=object)
    found = records[parsed.notna()] if not records.empty else records
    if found.empty:
        return found.assign(ab_group=pd.Series(dtype=object), ab_label=pd.Series(dtype=object))
    found = found.assign(ab_group=parsed[parsed.notna()].map(lambda p: p[0]),
                         ab_label=parsed[parsed.notna()].map(lambda p: p[1]))
    process = ["ab_group", "ab_label", *CASE, "process_timing", "repeat"]
    return found.sort_values("started_at", kind="stable").drop_duplicates(process, keep="last")


def sides(records: pd.DataFrame) -> pd.DataFrame:
    """One row per group and label, in the order the run measured the labels."""
    found = ab_records(records)
    columns = ["group", "label", "env_id", "release", "machine", "backend", "lineage",
               "hosts", "probe_us", "started", "ended", "processes"]
    out = []
    for (group, label), part in found.groupby(["ab_group", "ab_label"], sort=False):
        first = part.iloc[0]
        probes = [p for p in map(analysis.probe_us, part["op_s"]) if p is not None]
        out.append({"group": group, "label": label, "env_id": first["env_id"],
                    "release": first["torch"], "machine": first["machine"],
                    "backend": first["backend"],
                    "lineage": lineage_id(first),
                    "hosts": hosts_of(part), "probe_us": float(pd.Series(probes).median())
                    if probes else None, "started": part["started_at"].min(),
                    "ended": part["started_at"].max(), "processes": len(part)})
    table = pd.DataFrame(out, columns=columns)
    return table.sort_values(["started", "group"], kind="stable").reset_index(drop=True)


def comparisons(side_rows: pd.DataFrame) -> pd.DataFrame:
    """Per group: "ab" between the first label of each release and the first label of the
    next release (version order), "aa" between a release's first label and its others."""
    found = []
    for group, part in side_rows.groupby("group", sort=False):
        by_release: dict[str, list[pd.Series]] = {}
        for _, row in part.iterrows():
            by_release.setdefault(row["release"], []).append(row)
        ordered_releases = sorted(by_release, key=lambda r: (release_key(r), r))
        for old, new in zip(ordered_releases, ordered_releases[1:], strict=False):
            found.append(_comparison(group, "ab", by_release[old][0], by_release[new][0]))
        for release in ordered_releases:
            first, *others = by_release[release]
            found += [_comparison(group, "aa", first, other) for other in others]
    columns = ["group", "kind", "old_label", "new_label", "old_release", "new_release",
               "old_env_id", "new_env_id", "hosts", "started"]
    return pd.DataFrame(found, columns=columns)


def _comparison(group: str, kind: str, old: pd.Series, new: pd.Series) -> dict[str, Any]:
    hosts = old["hosts"] if old["hosts"] == new["hosts"] else None
    return {"group": group, "kind": kind, "old_label": old["label"], "new_label": new["label"],
            "old_release": old["release"], "new_release": new["release"],
            "old_env_id": old["env_id"], "new_env_id": new["env_id"], "hosts": hosts,
            "started": min(old["started"], new["started"])}


def slot_medians(records: pd.DataFrame) -> pd.DataFrame:
    """Each ok paired process's own median per case: group, label, case, repeat."""
    found = ab_records(records)
    paired = found[(found["process_timing"] == "paired") & found["ok"]]
    return paired[["ab_group", "ab_label", *CASE, "repeat", "median_s"]]


def pair_ratios(slots: pd.DataFrame, group: str, old_label: str, new_label: str) -> pd.DataFrame:
    """Per case and repeat: new median / old median, from the two sides' processes that
    ran next to each other (the same repeat of the same size)."""
    of = slots[slots["ab_group"] == group]
    old = of[of["ab_label"] == old_label].drop(columns=["ab_group", "ab_label"])
    new = of[of["ab_label"] == new_label].drop(columns=["ab_group", "ab_label"])
    merged = old.merge(new, on=[*CASE, "repeat"], suffixes=("_old", "_new"))
    return merged.assign(ratio=merged["median_s_new"] / merged["median_s_old"])


def _per_case(ratios: pd.DataFrame) -> pd.DataFrame:
    return ratios.groupby(CASE, dropna=False).agg(
        ratio=("ratio", "median"), lo=("ratio", "min"), hi=("ratio", "max"),
        pairs=("ratio", "size"), old_median_s=("median_s_old", "median"),
        new_median_s=("median_s_new", "median")).reset_index()


def floors(records: pd.DataFrame, pairs: pd.DataFrame | None = None,
           slots: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per A/A comparison and case: `floor`, the largest of r and 1/r over its ratios (1.0:
    the release matched itself exactly), with the group and hosts it was measured on."""
    pairs = comparisons(sides(records)) if pairs is None else pairs
    slots = slot_medians(records) if slots is None else slots
    found = []
    for p in pairs[pairs["kind"] == "aa"].itertuples():
        ratios = pair_ratios(slots, p.group, p.old_label, p.new_label)
        if ratios.empty:
            continue
        far = ratios.assign(far=ratios["ratio"].map(lambda r: max(r, 1 / r)))
        per_case = far.groupby(CASE, dropna=False)["far"].max().rename("floor").reset_index()
        found.append(per_case.assign(group=p.group, hosts=[p.hosts] * len(per_case),
                                     started=p.started))
    columns = ["group", "hosts", "started", *CASE, "floor"]
    return pd.concat(found, ignore_index=True)[columns] if found else pd.DataFrame(columns=columns)


def floor_for(floor_rows: pd.DataFrame, group: str, hosts) -> pd.DataFrame:
    """The A/A floors that apply to `group`: its own A/A run (the largest per case where it
    has several), else the newest other group's on the same hosts; empty if none."""
    if floor_rows.empty or hosts is None:
        return floor_rows.iloc[0:0]
    own = floor_rows[floor_rows["group"] == group]
    if own.empty:
        same = floor_rows[floor_rows["hosts"].map(lambda h: h == hosts)]
        if same.empty:
            return same
        own = same[same["group"] == same.sort_values("started")["group"].iloc[-1]]
    return own.groupby(CASE, dropna=False).agg(floor=("floor", "max"),
                                               floor_group=("group", "first")).reset_index()


def judge(row_lo: float, row_hi: float, pairs: int, floor: float | None) -> str:
    """The verdict of one case (see the module docstring)."""
    if pairs < 2:
        return SINGLE
    if floor is None or floor != floor:
        return NO_FLOOR
    threshold = max(floor, 1 + MIN_EFFECT)
    if row_lo > threshold:
        return "slower"
    if row_hi < 1 / threshold:
        return "faster"
    return "same"


def steps(records: pd.DataFrame, slots: pd.DataFrame | None = None) -> pd.DataFrame:
    """Every case of every A/B comparison (kind "ab"), with its verdict; STEP_COLUMNS.
    `slots` (as `slot_medians` gives them) sets what is compared, for a figure other than
    the paired processes' medians (report/shapes/releases.py: a stream's total)."""
    pairs = comparisons(sides(records))
    slots = slot_medians(records) if slots is None else slots
    floor_rows = floors(records, pairs, slots)
    found = [_judged(p, slots, floor_rows) for p in pairs[pairs["kind"] == "ab"].itertuples()]
    return _steps_table(found)


def pair_steps(records: pd.DataFrame, group: str, old_label: str, new_label: str) -> pd.DataFrame:
    """`steps` for any two labels of one group, consecutive releases or not."""
    side_rows = sides(records)
    pick = {row["label"]: row for _, row in side_rows[side_rows["group"] == group].iterrows()}
    pair = pd.DataFrame([_comparison(group, "ab", pick[old_label], pick[new_label])])
    slots = slot_medians(records)
    floor_rows = floors(records, comparisons(side_rows), slots)
    return _steps_table([_judged(next(pair.itertuples()), slots, floor_rows)])


def _judged(p, slots: pd.DataFrame, floor_rows: pd.DataFrame) -> pd.DataFrame:
    per_case = _per_case(pair_ratios(slots, p.group, p.old_label, p.new_label))
    if per_case.empty:
        return per_case
    applied = floor_for(floor_rows, p.group, p.hosts)
    per_case = (per_case.merge(applied, on=CASE, how="left") if not applied.empty
                else per_case.assign(floor=float("nan"), floor_group=None))
    if p.hosts is None:  # the sides ran on different hosts: no floor can apply
        per_case["floor"] = float("nan")
    per_case["verdict"] = [judge(r.lo, r.hi, r.pairs, r.floor) for r in per_case.itertuples()]
    for column in ("group", "kind", "old_label", "new_label", "old_release", "new_release",
                   "old_env_id", "new_env_id"):
        per_case[column] = getattr(p, column)
    per_case["hosts"] = [p.hosts] * len(per_case)
    return per_case


def _steps_table(found: list[pd.DataFrame]) -> pd.DataFrame:
    found = [f for f in found if not f.empty]
    if not found:
        return pd.DataFrame(columns=STEP_COLUMNS)
    out = pd.concat(found, ignore_index=True)[STEP_COLUMNS]
    return analysis.ordered(out, "group").reset_index(drop=True)


def summary(step_rows: pd.DataFrame) -> pd.DataFrame:
    """Per group and comparison: cases compared, how many are slower, faster, same, not
    judged, and the A/A floor's median and largest over the cases it covers."""
    if step_rows.empty:
        return pd.DataFrame(columns=["group", "old_label", "new_label", "old_release",
                                     "new_release", "hosts", "backend", "cases", *VERDICTS,
                                     "floor_median", "floor_max", "floor_cases", "floor_group"])
    out = []
    keys = ["group", "old_label", "new_label", "old_release", "new_release"]
    for key, part in step_rows.groupby(keys, sort=False):
        counts = part["verdict"].value_counts()
        floors_here = part["floor"].dropna()
        out.append({**dict(zip(keys, key, strict=True)), "hosts": part["hosts"].iloc[0],
                    "backend": ", ".join(sorted(set(part["backend"]))),
                    "cases": len(part), **{v: int(counts.get(v, 0)) for v in VERDICTS},
                    "floor_median": float(floors_here.median()) if len(floors_here) else None,
                    "floor_max": float(floors_here.max()) if len(floors_here) else None,
                    "floor_cases": len(floors_here),
                    "floor_group": part["floor_group"].dropna().iloc[0]
                    if part["floor_group"].notna().any() else None})
    return pd.DataFrame(out)


def points(records: pd.DataFrame) -> pd.DataFrame:
    """Per group, release (its first label; an A/A label is left out) and case: the median
    of its paired processes' medians, their smallest and largest (`median_s`, `lo_s`,
    `hi_s`, `n_processes`), with the release and lineage: a group's series on a chart."""
    side_rows = sides(records)
    second = comparisons(side_rows)
    second = second[second["kind"] == "aa"][["group", "new_label"]]
    kept = side_rows.merge(second, left_on=["group", "label"], right_on=["group", "new_label"],
                           how="left", indicator=True)
    kept = kept[kept["_merge"] == "left_only"][["group", "label", "release", "lineage", "hosts"]]
    slots = slot_medians(records)
    if slots.empty or kept.empty:
        return pd.DataFrame(columns=["group", "label", "release", "lineage", "hosts", *CASE,
                                     "median_s", "lo_s", "hi_s", "n_processes"])
    figures = slots.groupby(["ab_group", "ab_label", *CASE], dropna=False).agg(
        median_s=("median_s", "median"), lo_s=("median_s", "min"), hi_s=("median_s", "max"),
        n_processes=("median_s", "size")).reset_index()
    figures = figures.rename(columns={"ab_group": "group", "ab_label": "label"})
    return kept.merge(figures, on=["group", "label"])


def run_costs(records: pd.DataFrame) -> pd.DataFrame:
    """What each A/B run cost, from its records (`run_spans` of its turns): per
    group, the `machine`, `backend` and `profile`, its `releases` (public, in version order)
    and `labels`, `turns` (one `python -m bench` run per label, size and repeat that
    recorded something), the `isolated` and `paired` processes, `wall_minutes` from the first
    turn's start to the last turn's finish (the orchestrator's time between turns included)
    and `turn_minutes`, the sum of the turns' own spans. Every record counts, a process
    measured again included: this is what the run took, not what the pages read."""
    columns = ["group", "machine", "backend", "profile", "releases", "labels", "turns",
               "isolated", "paired", "wall_minutes", "turn_minutes", "started"]
    parsed = records["tag"].map(parse_tag) if not records.empty else pd.Series(dtype=object)
    found = records[parsed.notna()]
    out = []
    for group, part in found.groupby(parsed[parsed.notna()].map(lambda p: p[0]), sort=False):
        spans = run_spans(part)
        if spans.empty:
            continue
        labels = {p[1] for p in part["tag"].map(parse_tag)}
        out.append({
            "group": group, "machine": ", ".join(sorted(set(part["machine"]))),
            "backend": ", ".join(sorted(set(part["backend"]))),
            "profile": ", ".join(sorted(set(spans["profile"]))),
            "releases": sorted({public_release(t) for t in part["torch"]},
                               key=lambda r: (release_key(r), r)),
            "labels": len(labels), "turns": len(spans), "isolated": int(spans["isolated"].sum()),
            "paired": int(spans["paired"].sum()),
            "wall_minutes": (spans["end"].max() - spans["start"].min()).total_seconds() / 60,
            "turn_minutes": float((spans["end"] - spans["start"]).dt.total_seconds().sum() / 60),
            "started": spans["start"].min()})
    table = pd.DataFrame(out, columns=columns)
    table["started"] = pd.to_datetime(table["started"], utc=True)  # typed even when empty
    return table.sort_values("started", kind="stable").reset_index(drop=True)


def site_points(data: analysis.Data) -> pd.DataFrame:
    return data.memo("ab_points", lambda: points(site_records(data)))


def site_records(data: analysis.Data) -> pd.DataFrame:
    """The records a site shows: seed shapes of fixed-shape workloads (a shape stream is
    the varying-shapes page's alone)."""
    return analysis.fixed_seed(data.records)


def site_steps(data: analysis.Data) -> pd.DataFrame:
    """`steps` of a site's records, once per build (changes, history and the home page)."""
    return data.memo("ab_steps", lambda: steps(site_records(data)))


def site_sides(data: analysis.Data) -> pd.DataFrame:
    return data.memo("ab_sides", lambda: sides(site_records(data)))


OTHER_RUN_KEY = ["env_id", "workload", "mode", "batch_size"]


def other_runs(published: pd.DataFrame, records: pd.DataFrame) -> pd.DataFrame:
    """Each published case (default dtype, paired processes) that an A/B group's side of the
    same environment also timed: the published median, range and processes beside the group's (`ab_*`), the
    case's A/A floor in that group, `ratio` (published over the group's median) and
    `beyond`: whether the medians lie further apart than the floor (and than MIN_EFFECT)
    with their process ranges apart. A case without an A/A floor in the group is left out."""
    columns = [*OTHER_RUN_KEY, "median_s", "lo_s", "hi_s", "processes", "timing", "speedup",
               "group", "label", "ab_median_s", "ab_lo_s", "ab_hi_s", "ab_processes", "floor",
               "ratio", "beyond"]
    side_rows = sides(records)
    found = points(records)
    if found.empty or published.empty:
        return pd.DataFrame(columns=columns)
    found = found.merge(side_rows[["group", "label", "env_id"]], on=["group", "label"])
    floor_rows = floors(records)
    judged = []
    for (group, _), part in found.groupby(["group", found["hosts"].map(repr)], sort=False):
        applied = floor_for(floor_rows, group, part["hosts"].iloc[0])
        if not applied.empty:
            judged.append(part.merge(applied[[*CASE, "floor"]], on=CASE))
    if not judged:
        return pd.DataFrame(columns=columns)
    ab_figures = pd.concat(judged, ignore_index=True).rename(columns={
        "median_s": "ab_median_s", "lo_s": "ab_lo_s", "hi_s": "ab_hi_s",
        "n_processes": "ab_processes"})
    # Paired processes alone, as the groups' figures are: an isolated median is not
    # compared with a paired one (the stability page sets the two methods side by side).
    timed = published[published["ok"].eq(True) & published["median_s"].notna()
                      & (published[analysis.DTYPE] == analysis.DEFAULT_DTYPE)
                      & (published["timing"] == "paired")]
    both = timed[[*OTHER_RUN_KEY, "median_s", "lo_s", "hi_s", "processes", "timing",
                  "speedup"]].merge(ab_figures.drop(columns=["backend", "shapes", "profile"]),
                                    on=OTHER_RUN_KEY)
    both = both.drop_duplicates([*OTHER_RUN_KEY, "group"])
    both["ratio"] = both["median_s"].astype(float) / both["ab_median_s"].astype(float)
    far = both["ratio"].map(lambda r: max(r, 1 / r))
    apart = ((both["lo_s"] > both["ab_hi_s"]) | (both["hi_s"] < both["ab_lo_s"])).fillna(False)
    both["beyond"] = (far > both["floor"].astype(float).clip(lower=1 + MIN_EFFECT)) & apart
    return analysis.ordered(both[columns]).reset_index(drop=True)


def speedups_against_other_runs(compared: pd.DataFrame) -> pd.DataFrame:
    """Per published speedup over eager (`other_runs` rows of a mode and of eager at one
    point and group): the group's speedup (eager's median over the mode's), `ratio` of the
    published speedup over it, and `beyond`: whether they differ by more than the two
    latencies' A/A floors together (and than MIN_EFFECT), so that the answer is not the one
    another run of the same environment gives."""
    point = ["env_id", "workload", "batch_size", "group"]
    eager = compared[compared["mode"] == BASELINE][[*point, "ab_median_s", "floor"]]
    modes = compared[compared["mode"] != BASELINE].merge(eager, on=point,
                                                         suffixes=("", "_eager"))
    modes = modes[modes["speedup"].notna()]
    modes = modes.assign(ab_speedup=modes["ab_median_s_eager"] / modes["ab_median_s"])
    modes["ratio"] = modes["speedup"].astype(float) / modes["ab_speedup"]
    far = modes["ratio"].map(lambda r: max(r, 1 / r))
    allowed = (modes["floor"].astype(float) * modes["floor_eager"].astype(float)).clip(
        lower=1 + MIN_EFFECT)
    modes["beyond"] = far > allowed
    return modes[[*OTHER_RUN_KEY, "group", "speedup", "ab_speedup", "ratio", "floor",
                  "floor_eager", "beyond"]].reset_index(drop=True)


def site_other_runs(data: analysis.Data) -> pd.DataFrame:
    """`other_runs` of a site's published table and records, once per build."""
    return data.memo("ab_other_runs", lambda: other_runs(data.published, site_records(data)))


def noisy(data: analysis.Data, env_id: str, workload: str, batch_size, mode: str) -> list[str]:
    """The A/B groups whose run of the same environment contradicts the speedup of `mode`
    at a point beyond the A/A floor: its latency or eager's there, or the speedup itself
    (`other_runs`, `speedups_against_other_runs`); [] where none does (or none compared)."""
    def index() -> dict[tuple, set[str]]:
        compared = site_other_runs(data)
        out: dict[tuple, set[str]] = {}
        for table in (compared, speedups_against_other_runs(compared)):
            for r in rows(table[table["beyond"]]):
                out.setdefault((r["env_id"], r["workload"], r["batch_size"], r["mode"]),
                               set()).add(r["group"])
        return out
    found = data.memo("ab_noisy", index)
    point = (env_id, workload, None if batch_size != batch_size else batch_size)
    return sorted(found.get((*point, mode), set()) | found.get((*point, BASELINE), set()))


def factor(floor: float | None) -> str:
    """An A/A floor in the one unit every page gives it: the factor the release's ratios
    against itself reached either way, to three figures (1.034 -> "1.03×", 15.13 ->
    "15.1×"); a percentage stops reading true past 2× (÷2 is not -100%)."""
    if floor is None or floor != floor:
        return "—"
    return f"{sig(floor)}×"


def aa_runs(side_rows: pd.DataFrame, group: str) -> str:
    """The A/A comparisons of `group` in words: "torch 2.15.0 under labels 2.15.0 and
    2.15.0-aa"; "" where the group has none."""
    pairs = comparisons(side_rows)
    pairs = pairs[(pairs["group"] == group) & (pairs["kind"] == "aa")]
    return "; ".join(f"torch {public_release(p.old_release)} under labels {p.old_label} and "
                     f"{p.new_label}" for p in pairs.itertuples())


def floor_words(floor: dict | None, group: str) -> str:
    """The clause that puts a group's A/A noise floor beside its counts."""
    if floor is None:
        return f"no step called: {NO_FLOOR} on this host"
    where = "" if floor["group"] == group else f" (group {floor['group']}'s, same host)"
    return (f"a step counts beyond an A/A floor{where} of {floor['median']} in the median "
            f"case, {floor['max']} at most")


def release_answer(data: analysis.Data) -> dict[str, Any] | None:
    """What the newest release measured A/B changed against the release before it: every A/B
    group that compared the two (each group's newest comparison of that release), newest
    group first, with the same figures as the changes page and the history chart, and the
    backends they ran on. None when no A/B group has two releases."""
    table = summary(site_steps(data))
    if table.empty:
        return None
    table = table.assign(_key=table["new_release"].map(lambda r: release_key(r)),
                         _public=table["new_release"].map(public_release))
    newest = table[table["_key"] == table["_key"].max()]
    started = site_sides(data).groupby("group")["started"].min()
    newest = newest.assign(_started=newest["group"].map(started)).sort_values(
        "_started", ascending=False, kind="stable").drop_duplicates("group")
    groups = []
    for row in rows(newest):
        floor = (None if row["floor_median"] is None or row["floor_median"] != row["floor_median"]
                 else {"median": factor(row["floor_median"]), "max": factor(row["floor_max"]),
                       "cases": int(row["floor_cases"]), "group": row["floor_group"],
                       "against": aa_runs(site_sides(data), row["floor_group"])})
        groups.append({"group": row["group"], "old": public_release(row["old_release"]),
                       "backend": row["backend"], "host": host_text(row["hosts"]),
                       "compared": int(row["cases"]), "faster": int(row["faster"]),
                       "slower": int(row["slower"]), "same": int(row["same"]),
                       "undecided": int(row[NO_FLOOR] + row[SINGLE]), "floor": floor,
                       "floor_text": floor_words(floor, row["group"])})
    olds = {g["old"] for g in groups}
    hosts = {g["host"] for g in groups}
    return {"release": public_release(newest["new_release"].iloc[0]),
            "old": olds.pop() if len(olds) == 1 else None,
            "backends": sorted({g["backend"] for g in groups}),
            "host": hosts.pop() if len(hosts) == 1 else None, "groups": groups}
