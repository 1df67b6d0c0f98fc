"""Two result sets, case by case: `python -m report compare OLD NEW`.

    python -m report compare torch=2.14.1 torch=2.15.0
    python -m report compare machine=atlas-cpu,torch=2.14.1 results/new/ --fail-above 10%

OLD and NEW are each a results folder or file, or a selector of one environment within
`--results` (default `results`): comma-separated `field=value` terms over the
environment's fields (`machine`, `torch`, `python`, `backend`, ...), `env_id=PREFIX`,
`group=G` and `label=L` (the records of one side of an A/B group),
`profile=quick|full`, or a bare env_id prefix. `torch=2.15.0` also matches a local build
such as `2.15.0+cpu`. A side must come down to exactly one environment.

The rule that decides whether a case changed is `judge`, and it is the one definition:
the changes page (report/pages/changes.py) calls it too. A case changed when

1. both sides rest on two or more processes (a single run is never flagged),
2. the ranges [min, max] of the two sides' process medians do not overlap, and
3. the ratio of medians (new / old) is at least 1 + MIN_EFFECT or at most 1 / (1 + MIN_EFFECT).

Two figures are compared only when they share a host and a time. By default the command
looks for an A/B group (bench/ab.py) holding both sides: releases measured alternately on
one host in one run, judged by `report.releases.ab` against the group's A/A noise floor (`--group`
names one). Without one, it compares two environments' older runs, and only when every
record of both ran on the same host (host name and boot id): otherwise it prints one line
saying that the hosts differ, with the host probe beside it as a hint (never a correction),
and no faster/slower verdict, unless `--across-hosts` asks for one.

`--ratios` compares instead each case's paired speedup over eager (eager's time over the
mode's, both timed in alternating rounds in one process) on the two sides: the ratio the
atlas publishes, which two runners on one host should agree on (the local runner against a
one-node Ray cluster, examples/lent-machine/ray-check.sh). Each side's figure comes
from its own paired processes alone, through the definitions the published figures use
(`analysis.shown_round_ratios`, `analysis.paired_speedups`): the median over processes of
each one's median round ratio, with the smallest and largest process. An isolated ratio is
never set against a paired one: a side with no paired process is refused in one line, and
a case paired on one side only gets no verdict. A case is "within the noise" when the two
sides' ranges over processes overlap, or when new/old lies, either way, within the larger of
the case's A/A noise floor (`ratio_floors`: the A/A run on the sides' host,
`report.releases.ab`) and 1 + MIN_EFFECT; else it "differs", by the factor shown, unless a side rests on
one process ("single process": no spread to judge against). The host rule is the one above.

Exit status: 0, or 1 with `--fail-above X%` when a significant regression is slower by more
than X% (with `--ratios`: a case whose ratios differ by more than X% either way), or 2 with a
one-line error when a side names no environment, several, or no timed case (with `--ratios`:
no paired process, or no case paired on both sides). Cases pair up by workload, mode, batch,
shapes and profile (quick and full profiles time with different budgets, so they are never
paired with each other); paired ratios by dtype too.
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from report import analysis
from report.analysis import BASELINE, DTYPE
from report.formatting import latency
from report.releases import ab
from report.releases.vocabulary import (
    LINEAGE_FIELDS,
    MIN_EFFECT,
    host_text,
    hosts_of,
    public_release,
)

PAIR = ["workload", "mode", "batch_size", "shapes", DTYPE, "profile"]  # the same case on both sides
SIDE_COLUMNS = ["env_id", "torch", "machine", "status", "ok", "median_s", "lo_s", "hi_s",
                "n_processes"]
DIRECTIONS = ("slower", "faster", "same")
class SelectionError(ValueError):
    """A side that is not exactly one environment with timed cases; one line, exit 2."""


# ---- cases of one set of records --------------------------------------------------------

def case_table(records: pd.DataFrame) -> pd.DataFrame:
    """`analysis.cases` of `records`, one profile at a time, with a `profile` column: a
    case measured by both profiles is two cases here, never one of mixed budgets."""
    found = [analysis.cases(analysis.latest(records[records["profile"] == profile]))
             .assign(profile=profile)
             for profile in sorted(records["profile"].dropna().unique())]
    if not found:
        return analysis.cases(analysis.latest(records)).assign(profile=pd.Series(dtype=object))
    return analysis.ordered(pd.concat(found, ignore_index=True), "profile").reset_index(drop=True)


# ---- the rule ---------------------------------------------------------------------------

def judge(pairs: pd.DataFrame, min_effect: float = MIN_EFFECT) -> pd.DataFrame:
    """Add the verdict to rows with `old_`/`new_` median_s, lo_s, hi_s and n_processes.

    `ratio` is new median / old median (above 1: slower). `timed`: both sides have a
    median. `single_run`: timed, but a side rests on one process, so there is no spread
    to judge against; never significant. `separated`: the ranges [lo, hi] of the process
    medians do not overlap (touching ends overlap). `significant`: separated, not a single
    run, and the ratio at least 1 + min_effect or at most 1 / (1 + min_effect).
    `direction` is "slower" or "faster" where significant, else "same".
    """
    out = pairs.copy()
    out["timed"] = out["old_median_s"].notna() & out["new_median_s"].notna()
    out["ratio"] = (out["new_median_s"] / out["old_median_s"]).where(out["timed"])
    repeated = (out["old_n_processes"].fillna(0) >= 2) & (out["new_n_processes"].fillna(0) >= 2)
    out["single_run"] = out["timed"] & ~repeated
    out["separated"] = out["timed"] & ~analysis.ranges_overlap(
        out["old_lo_s"], out["old_hi_s"], out["new_lo_s"], out["new_hi_s"])
    big = (out["ratio"] >= 1 + min_effect) | (out["ratio"] <= 1 / (1 + min_effect))
    out["significant"] = out["separated"] & repeated & big.fillna(False)
    out["direction"] = "same"
    out.loc[out["significant"] & (out["ratio"] > 1), "direction"] = "slower"
    out.loc[out["significant"] & (out["ratio"] < 1), "direction"] = "faster"
    return out


def pair(old: pd.DataFrame, new: pd.DataFrame, min_effect: float = MIN_EFFECT) -> pd.DataFrame:
    """Two case tables (`case_table`) side by side, one row per case found on either side,
    judged. Columns: PAIR, then `old_*`/`new_*` (SIDE_COLUMNS), then `judge`'s verdict."""
    sides = [side[[*PAIR, *SIDE_COLUMNS]].rename(columns={c: f"{name}_{c}" for c in SIDE_COLUMNS})
             for name, side in (("old", old), ("new", new))]
    merged = sides[0].merge(sides[1], on=PAIR, how="outer")
    merged = judge(merged, min_effect)
    return analysis.ordered(merged, "profile").reset_index(drop=True)


def geomean(judged: pd.DataFrame, by: list[str] | None = None) -> pd.DataFrame:
    """Per mode (and `by` columns first): the geometric mean of the ratios of the cases
    resting on two or more processes on both sides (`cases` of them), how many are
    significantly faster and slower, and how many single runs were left out."""
    by = [*(by or []), "mode"]
    timed = judged[judged["timed"]].assign(
        log=lambda d: d["ratio"].map(math.log),
        faster=lambda d: d["direction"] == "faster", slower=lambda d: d["direction"] == "slower")
    repeated = timed[~timed["single_run"]]
    out = repeated.groupby(by, sort=False).agg(
        cases=("log", "size"), log=("log", "mean"), faster=("faster", "sum"),
        slower=("slower", "sum")).reset_index()
    singles = timed[timed["single_run"]].groupby(by, sort=False).size().rename("single_runs")
    out = out.merge(singles.reset_index(), on=by, how="outer")
    out["cases"] = out["cases"].fillna(0).astype(int)
    for column in ("faster", "slower", "single_runs"):
        out[column] = out[column].fillna(0).astype(int)
    out["geomean"] = out["log"].map(math.exp)
    out["same"] = out["cases"] - out["faster"] - out["slower"]
    out = out.drop(columns="log")
    return out.sort_values([*by[:-1], "mode"], key=_rank_key, kind="stable").reset_index(drop=True)


def _rank_key(column: pd.Series) -> pd.Series:
    return column.map(analysis.mode_rank) if column.name == "mode" else column


def regressions(judged: pd.DataFrame, above: float) -> pd.DataFrame:
    """Significant regressions slower by more than `above` (0.10 for 10%)."""
    return judged[(judged["direction"] == "slower") & (judged["ratio"] > 1 + above)]


# ---- choosing a side --------------------------------------------------------------------

@dataclass(frozen=True)
class Side:
    spec: str  # what the user typed
    env_id: str
    label: str  # "atlas-cpu · cpu · torch 2.15.0 · env 1a2b3c4d5e6f"
    records: pd.DataFrame


# group and label pick the records of an A/B group (tag ab-<group>-<label>, bench/ab.py).
SELECTOR_FIELDS = ("env_id", "profile", "group", "label", *analysis.ENV_FIELDS)


def select(records: pd.DataFrame, selector: str) -> pd.DataFrame:
    """The records matching every term of `selector` (see the module docstring)."""
    mask = pd.Series(True, index=records.index)
    for term in (t.strip() for t in selector.split(",")):
        if not term:
            continue
        name, _, value = term.partition("=") if "=" in term else ("env_id", "", term)
        name, value = name.strip(), value.strip()
        if name not in SELECTOR_FIELDS:
            raise SelectionError(f"unknown field {name!r} in {selector!r}; use one of "
                                 f"{', '.join(SELECTOR_FIELDS)}")
        if name in ("group", "label"):
            from bench.ab import parse_tag

            part = 0 if name == "group" else 1
            found = [(parse_tag(t) or (None, None))[part] for t in records["tag"]]
            mask &= pd.Series(found, index=records.index, dtype=object) == value
            continue
        column = records[name].astype(str)
        if name == "env_id":
            mask &= column.str.startswith(value)
        elif name == "torch":
            mask &= (column == value) | (column.map(public_release) == value)
        else:
            mask &= column == value
    return records[mask]


def environment_lines(records: pd.DataFrame) -> list[str]:
    """One line per environment: env_id, machine, backend, torch, profiles, record count."""
    if records.empty:
        return []
    found = records.groupby("env_id").agg(
        machine=("machine", "first"), backend=("backend", "first"), torch=("torch", "first"),
        profiles=("profile", lambda p: "+".join(sorted(set(p)))), n_records=("env_id", "size"))
    return [f"{env_id} (machine={r.machine}, backend={r.backend}, torch={r.torch}, "
            f"{r.profiles}, {r.n_records} records)" for env_id, r in found.iterrows()]


def _read(path: Path) -> pd.DataFrame:
    """Every record of a results folder, or of one file."""
    if path.is_dir():
        return analysis.load(path)
    return analysis.load_file(path)  # that file alone: its neighbours are not asked


def resolve(spec: str, results_dir: Path) -> Side:
    """The one environment that `spec` names: a folder or file of records, or a selector
    within `results_dir`. SelectionError, one line, when it is none, several or empty."""
    path = Path(spec)
    if "\0" not in spec and path.exists():
        records = _read(path)
        if records.empty:
            raise SelectionError(f"{path} holds no records")
        return choose(records, "", str(path), spec, hint=f" with --results {path}")
    return choose(analysis.load(results_dir), spec, f"{spec!r} in {results_dir}")


def choose(records: pd.DataFrame, selector: str, where: str | None = None,
           spec: str | None = None, hint: str = "") -> Side:
    """The Side of the one environment of `records` that `selector` matches ("" matches all).
    `where` names the set in messages, `spec` is what the user typed (default: selector),
    and `hint` ends the advice on an ambiguous set."""
    where = where or repr(selector)
    found = select(records, selector) if selector else records
    if found.empty:
        known = "; ".join(environment_lines(records)) or "none"
        raise SelectionError(f"no environment matches {where}; environments: {known}")
    env_ids = sorted(found["env_id"].unique())
    if len(env_ids) > 1:
        raise SelectionError(f"{where} is ambiguous: {len(env_ids)} environments match: "
                             f"{'; '.join(environment_lines(found))}; narrow it, e.g. "
                             f"env_id={env_ids[0]}{hint}")
    if not found["ok"].any():
        raise SelectionError(f"{where} holds no timed case (every record failed)")
    first = found.iloc[0]
    label = f"{first['machine']} · {first['backend']} · torch {first['torch']} · env {env_ids[0]}"
    return Side(spec if spec is not None else selector, env_ids[0], label, found)


def selector_for(records: pd.DataFrame, env_id: str) -> str:
    """The shortest readable selector naming `env_id` among `records`: `machine=M,torch=T`
    where that is unambiguous, else the env_id."""
    row = analysis.of_env(records, env_id).iloc[0]
    readable = f"machine={row['machine']},torch={row['torch']}"
    if set(select(records, readable)["env_id"]) == {env_id}:
        return readable
    return f"env_id={env_id}"


def lineage_differences(old: Side, new: Side) -> list[str]:
    """The identity fields, versions aside, in which the two sides' environments differ."""
    a, b = old.records.iloc[0], new.records.iloc[0]
    return [f for f in LINEAGE_FIELDS if str(a[f]) != str(b[f])]


# ---- the text table ---------------------------------------------------------------------

def _cell(row: pd.Series, side: str) -> str:
    if pd.isna(row[f"{side}_ok"]):
        return "not measured"
    if not row[f"{side}_ok"]:
        return str(row[f"{side}_status"])
    return latency({"median_s": row[f"{side}_median_s"], "lo_s": row[f"{side}_lo_s"],
                    "hi_s": row[f"{side}_hi_s"], "n_processes": int(row[f"{side}_n_processes"]),
                    "env_repeated": True})


def verdict(row: pd.Series) -> str:
    """What the table's last column says: the direction, or why a case was not judged."""
    if not row["timed"]:
        if pd.isna(row["old_ok"]) or pd.isna(row["new_ok"]):
            return "new only" if pd.isna(row["old_ok"]) else "old only"
        return f"{row['old_status']} -> {row['new_status']}"
    if row["single_run"]:
        return "single run"
    return row["direction"]


def status_changed(judged: pd.DataFrame) -> pd.DataFrame:
    """Cases measured on both sides that ran on one and failed on the other (or failed
    differently): not timed on both, so `judge` says nothing of them."""
    both = judged["old_ok"].notna() & judged["new_ok"].notna()
    return judged[both & ~judged["timed"] & (judged["old_status"] != judged["new_status"])]


def table_rows(judged: pd.DataFrame) -> list[dict[str, str]]:
    """The table as text cells, one dict per case, in page order."""
    return [{"workload": r["workload"], "mode": r["mode"],
             "batch": "—" if pd.isna(r["batch_size"]) else str(int(r["batch_size"])),
             "profile": r["profile"], "old": _cell(r, "old"), "new": _cell(r, "new"),
             "ratio": "—" if pd.isna(r["ratio"]) else f"{r['ratio']:.3f}",
             "significant": "yes" if r["significant"] else "no", "change": verdict(r)}
            for _, r in judged.iterrows()]


def _aligned(header: list[str], body: list[list[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in [header, *body]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        return "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip()

    return [line(header), line(["-" * w for w in widths]), *map(line, body)]


def _times(ratio: float) -> str:
    if ratio > 1:
        return f"{ratio:.3f} ({ratio:.2f}x slower)"
    if ratio < 1:
        return f"{ratio:.3f} ({1 / ratio:.2f}x faster)"
    return f"{ratio:.3f} (same)"


def text(old: Side, new: Side, judged: pd.DataFrame, min_effect: float = MIN_EFFECT,
         only_changed: bool = False) -> str:
    """The command's output: both sides, the rule, the table per case (only the significant
    ones with `only_changed`), the geometric means and the counts over every case."""
    columns = ["workload", "mode", "batch", "profile", "old", "new", "ratio", "significant",
               "change"]
    if judged["profile"].nunique() <= 1:
        columns.remove("profile")
    found = table_rows(judged[judged["significant"]] if only_changed else judged)
    lines = [f"old: {old.label}", f"new: {new.label}",
             *([same_environment_note(old, new)] if old.env_id == new.env_id else []),
             *(f"note: the environments differ in {', '.join(d)}, not only in their torch release"
               for d in [lineage_differences(old, new)] if d),
             "timing: isolated, on both sides: each latency is the median over that side's "
             "isolated processes (paired processes do not enter it)",
             f"rule: significant = both sides in 2+ processes, their ranges of process medians "
             f"do not overlap, and new/old >= {1 + min_effect:.2f} or <= 1/{1 + min_effect:.2f}",
             "", *(_aligned(columns, [[row[c] for c in columns] for row in found]) if found
                   else ["no case changed significantly" if only_changed else "no case"]), ""]
    means = geomean(judged)
    if means.empty or not means["cases"].any():
        lines.append("geometric mean: no case rests on 2+ processes on both sides")
    else:
        body = [[m["mode"], str(m["cases"]),
                 _times(m["geomean"]) if m["cases"] else "—", str(m["faster"]),
                 str(m["slower"]), str(m["same"]), str(m["single_runs"])]
                for _, m in means.iterrows()]
        lines += ["geometric mean of new/old per mode (cases in 2+ processes on both sides):",
                  *_aligned(["mode", "cases", "geomean", "faster", "slower", "same",
                             "single runs"], body)]
    counts = judged["direction"].where(judged["significant"]).value_counts()
    lines += ["", f"{len(judged)} cases: {counts.get('slower', 0)} significantly slower, "
              f"{counts.get('faster', 0)} significantly faster, "
              f"{int(judged['single_run'].sum())} single runs, "
              f"{int((~judged['timed']).sum())} not timed on both sides"]
    return "\n".join(lines) + "\n"


def same_environment_note(old: Side, new: Side) -> str:
    """What to say when OLD and NEW are one environment: not a comparison of two."""
    same = set(old.records["source"]) == set(new.records["source"])
    return (f"note: both sides are the same environment (env {old.env_id})"
            + (", and the same records: every case is set against itself" if same else
               ": one machine and release measured twice, not two releases or machines"))


def compare_sides(old: Side, new: Side, min_effect: float = MIN_EFFECT) -> pd.DataFrame:
    return pair(case_table(old.records), case_table(new.records), min_effect)


# ---- paired ratios (--ratios) ------------------------------------------------------------

RATIO_FIGURES = ["speedup", "speedup_lo", "speedup_hi", "processes"]
WITHIN, DIFFERS, SINGLE_PROCESS = "within the noise", "differs", "single process"


def paired_ratios(records: pd.DataFrame) -> pd.DataFrame:
    """Per case of one side (PAIR, and `backend`): its speedup over eager from its
    paired processes alone, as the published figures take it (`analysis.shown_round_ratios`
    of the shown paired processes, `analysis.paired_speedups`): `speedup` the median over
    processes of each one's median round ratio (eager / mode), `speedup_lo`/`speedup_hi`
    the smallest and largest process, `processes` how many. One profile at a time, as
    `case_table`. Empty where the side has no paired process."""
    found = []
    for profile in sorted(records["profile"].dropna().unique()):
        of = records[records["profile"] == profile]
        ratios = analysis.shown_round_ratios(analysis.paired_processes(analysis.latest(of)), of)
        ratios = ratios[(ratios["baseline"] == BASELINE) & (ratios["mode"] != BASELINE)
                        & ratios["ratio"].notna()]
        if not ratios.empty:  # a side is one environment, so of one backend
            found.append(analysis.paired_speedups(ratios).assign(
                profile=profile, backend=ratios["backend"].iloc[0]))
    columns = [*PAIR, "backend", *RATIO_FIGURES]
    if not found:
        return pd.DataFrame(columns=columns)
    return pd.concat(found, ignore_index=True)[columns]


def ratio_floors(records: pd.DataFrame, hosts: tuple[str, ...] | None) -> pd.DataFrame:
    """Per case (`ab.CASE`): the A/A noise floor that applies to a paired ratio on `hosts`,
    the larger of the mode's and eager's floors (a ratio of two latencies strays at most as
    far as either), from the newest A/A run on those hosts (`ab.floor_for`); `floor_group`
    names it. Empty without one, or when the sides' hosts differ (`hosts` None)."""
    applied = ab.floor_for(ab.floors(records), "", hosts)
    if applied.empty:
        return pd.DataFrame(columns=[*ab.CASE, "floor", "floor_group"])
    point = [c for c in ab.CASE if c != "mode"]
    eager = applied[applied["mode"] == BASELINE][[*point, "floor"]]
    out = applied.merge(eager, on=point, how="left", suffixes=("", "_eager"))
    out["floor"] = out[["floor", "floor_eager"]].max(axis=1)
    return out[[*ab.CASE, "floor", "floor_group"]]


def _either_way(factor: float) -> float:
    """How far a factor lies from 1, up or down: 1.25 for 1.25 and for 0.8."""
    return max(factor, 1 / factor)


def judge_ratios(pairs: pd.DataFrame, min_effect: float = MIN_EFFECT) -> pd.DataFrame:
    """Add the verdict to rows with `old_`/`new_` RATIO_FIGURES and a `floor` (NaN: none).

    `timed`: paired on both sides. `factor` is new speedup / old speedup. `overlap`: the
    ranges over processes overlap (`analysis.ranges_overlap`, touching ends overlap).
    `verdict`: WITHIN where they overlap or the factor lies, either way, within the larger of
    the floor and 1 + min_effect; else SINGLE_PROCESS where a side rests on one process, else
    DIFFERS. A case paired on one side only says which side ("old only", "new only")."""
    out = pairs.copy()
    out["timed"] = out["old_speedup"].notna() & out["new_speedup"].notna()
    out["factor"] = (out["new_speedup"] / out["old_speedup"]).where(out["timed"])
    out["overlap"] = out["timed"] & analysis.ranges_overlap(
        out["old_speedup_lo"], out["old_speedup_hi"], out["new_speedup_lo"], out["new_speedup_hi"])
    far = out["factor"].map(_either_way, na_action="ignore")
    threshold = pd.to_numeric(out["floor"], errors="coerce").fillna(1.0).clip(lower=1 + min_effect)
    within = out["timed"] & (out["overlap"] | (far <= threshold).fillna(False))
    single = (out["old_processes"].fillna(0) < 2) | (out["new_processes"].fillna(0) < 2)
    out["verdict"] = DIFFERS
    out.loc[out["timed"] & ~within & single, "verdict"] = SINGLE_PROCESS
    out.loc[within, "verdict"] = WITHIN
    out.loc[out["old_speedup"].isna(), "verdict"] = "new only"
    out.loc[out["new_speedup"].isna(), "verdict"] = "old only"
    return out


def compare_ratios(old: Side, new: Side, floor_rows: pd.DataFrame,
                   min_effect: float = MIN_EFFECT) -> pd.DataFrame:
    """The two sides' `paired_ratios` side by side, one row per case paired on either side,
    with the case's A/A floor (`ratio_floors` rows) and `judge_ratios`' verdict. A
    SelectionError, one line, when a side has no paired process: its isolated ratios are
    never set against the other side's paired ones."""
    tables = []
    for name, side in (("old", old), ("new", new)):
        table = paired_ratios(side.records)
        if table.empty:
            raise SelectionError(
                f"{side.spec!r} has no paired process (its cases were timed in isolated "
                f"processes only): --ratios compares speedups over eager timed in one side's "
                f"own paired processes, never an isolated ratio against a paired one; drop "
                f"--ratios to compare isolated latencies")
        tables.append(table.rename(columns={c: f"{name}_{c}" for c in ["backend", *RATIO_FIGURES]}))
    merged = tables[0].merge(tables[1], on=PAIR, how="outer")
    merged["backend"] = merged["old_backend"].fillna(merged["new_backend"])
    merged = merged.merge(floor_rows, on=ab.CASE, how="left") if not floor_rows.empty else (
        merged.assign(floor=float("nan"), floor_group=None))
    merged = judge_ratios(merged, min_effect)
    return analysis.ordered(merged, "profile").reset_index(drop=True)


def _ratio_cell(row: pd.Series, side: str) -> str:
    if pd.isna(row[f"{side}_speedup"]):
        return "not paired"
    n = int(row[f"{side}_processes"])
    return (f"{row[f'{side}_speedup']:.3f} ({row[f'{side}_speedup_lo']:.3f}–"
            f"{row[f'{side}_speedup_hi']:.3f}, {n} paired {'process' if n == 1 else 'processes'})")


def ratio_verdict(row: pd.Series) -> str:
    """The table's last column: the verdict, with the factor where the ratios differ."""
    if row["verdict"] == DIFFERS:
        factor = row["factor"]
        return f"{DIFFERS}: {_either_way(factor):.2f}x {'higher' if factor > 1 else 'lower'}"
    return str(row["verdict"])


def ratios_text(old: Side, new: Side, judged: pd.DataFrame, min_effect: float = MIN_EFFECT,
                only_changed: bool = False) -> str:
    """The output of `--ratios`: both sides, where every figure comes from, the A/A floor,
    the rule, the table per case (only those that differ with `only_changed`), the counts."""
    columns = ["workload", "mode", "batch", "dtype", "profile", "old", "new", "new/old",
               "A/A floor", "verdict"]
    for column, source in (("dtype", DTYPE), ("profile", "profile")):
        if judged[source].nunique() <= 1:
            columns.remove(column)
    shown = judged[judged["verdict"] == DIFFERS] if only_changed else judged
    body = [{"workload": r["workload"], "mode": r["mode"], "batch": _batch(r["batch_size"]),
             "dtype": r[DTYPE], "profile": r["profile"], "old": _ratio_cell(r, "old"),
             "new": _ratio_cell(r, "new"),
             "new/old": "—" if pd.isna(r["factor"]) else f"{r['factor']:.3f}",
             "A/A floor": ab.factor(r["floor"]), "verdict": ratio_verdict(r)}
            for _, r in shown.iterrows()]
    floors_here = judged["floor"].dropna()
    groups = sorted(set(judged["floor_group"].dropna()))
    floor_line = (f"A/A noise floor: {ab.factor(floors_here.median())} (median over "
                  f"{len(floors_here)} cases, largest {ab.factor(floors_here.max())}; A/A run "
                  f"of group {', '.join(groups)} on the sides' host)" if len(floors_here) else
                  f"A/A noise floor: {ab.NO_FLOOR} on the sides' host, so only the ranges over "
                  f"processes and {1 + min_effect:.2f} decide (measure one: python -m bench.ab "
                  f"with one interpreter under two labels)")
    lines = [f"old: {old.label}", f"new: {new.label}",
             *([same_environment_note(old, new)] if old.env_id == new.env_id else []),
             "timing: paired, on both sides: each figure is a speedup over eager (eager's time "
             "over the mode's), the median over that side's own paired processes of each "
             "one's median round ratio, with the smallest and largest process; no isolated "
             "process enters it",
             floor_line,
             f"rule: within the noise = the two sides' ranges overlap, or new/old lies within "
             f"the larger of the case's A/A floor and {1 + min_effect:.2f} (or their inverses); else "
             f"it differs (a side resting on one paired process: single process, not judged)",
             "", *(_aligned(columns, [[row[c] for c in columns] for row in body]) if body
                   else ["no case differs" if only_changed else "no case"]), ""]
    counts = judged["verdict"].value_counts()
    one_side = int(counts.get("old only", 0) + counts.get("new only", 0))
    lines.append(f"{len(judged)} cases: {counts.get(WITHIN, 0)} within the noise, "
                 f"{counts.get(DIFFERS, 0)} differ, {counts.get(SINGLE_PROCESS, 0)} single "
                 f"process, {one_side} paired on one side only (not judged: an isolated figure "
                 f"is never set against a paired one)")
    return "\n".join(lines) + "\n"


def has_paired(records: pd.DataFrame) -> bool:
    """Whether `records` hold an ok paired process of a case (tags main, rerun-N)."""
    return not analysis.paired_processes(records).empty


def main_ratios(args: argparse.Namespace, everything: pd.DataFrame) -> int:
    """`python -m report compare --ratios OLD NEW` (see the module docstring)."""
    try:
        if args.group:
            raise SelectionError("--group reads an A/B group; --ratios compares the paired "
                                 "processes of two environments' runs")
        old, new = resolve(args.old, args.results), resolve(args.new, args.results)
        differ = hosts_differ_line(old, new)
        if not differ or args.across_hosts:
            hosts = None if differ else side_hosts(old.records)
            pools = pd.concat([everything, old.records, new.records]).drop_duplicates("source")
            judged = compare_ratios(old, new, ratio_floors(pools, hosts))
            if not judged["timed"].any():
                raise SelectionError(f"{old.spec!r} and {new.spec!r} have no case paired on "
                                     f"both sides")
    except (SelectionError, analysis.ResultsError) as error:
        print(f"report compare: error: {error}", file=sys.stderr)
        return 2
    if differ and not args.across_hosts:
        print(differ)
        return 0
    if differ:
        print(f"note: {differ.split(';')[0]}; compared anyway (--across-hosts), without an A/A "
              f"floor: a difference here may be the hosts', not the runs'")
    sys.stdout.write(ratios_text(old, new, judged, only_changed=args.only_changed))
    if args.fail_above is not None:
        failing = judged[(judged["verdict"] == DIFFERS) & (judged["factor"].map(
            _either_way, na_action="ignore") > 1 + args.fail_above)]
        if not failing.empty:
            print(f"FAIL: {len(failing)} case(s) whose paired ratios differ by more than "
                  f"{100 * args.fail_above:g}%", file=sys.stderr)
            return 1
    return 0


# ---- the command ------------------------------------------------------------------------

def percentage(value: str) -> float:
    """"10%" or "10" -> 0.10."""
    try:
        number = float(value.strip().rstrip("%"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a percentage such as 10%") from None
    if not math.isfinite(number) or number < 0:
        raise argparse.ArgumentTypeError(f"{value!r} must be a percentage of 0 or more")
    return number / 100


# ---- hosts and A/B groups ----------------------------------------------------------------

def side_hosts(records: pd.DataFrame) -> tuple[str, ...] | None:
    """The hosts of a side's older runs (process tags), None when any record lacks one."""

    return hosts_of(records[records["tag"].str.match(analysis.PROCESS_TAGS)])


def probe_us(records: pd.DataFrame) -> float | None:
    """The median host probe (eager trivial op, µs) over a side's records that timed it."""
    found = [p for p in map(analysis.probe_us, records["op_s"]) if p is not None]
    return float(pd.Series(found).median()) if found else None


def hosts_differ_line(old: Side, new: Side) -> str | None:
    """The one line saying that the two sides ran on different hosts, or None if they share
    one. The probe is a hint of how fast each host dispatches, not a correction."""

    a, b = side_hosts(old.records), side_hosts(new.records)
    if a is not None and a == b:
        return None
    probes = [probe_us(side.records) for side in (old, new)]
    hint = " vs ".join("not recorded" if p is None else f"{p:.2f} µs" for p in probes)
    differ = "the hosts differ" if a is not None and b is not None else (
        "the hosts are not known to be the same")
    return (f"{differ}: {old.spec} ran on {host_text(a)}, {new.spec} on "
            f"{host_text(b)}; no faster/slower verdict across hosts (--across-hosts "
            f"compares anyway); host probe, a hint and not a correction: eager trivial op {hint}")


def _pool(spec: str, results_dir: Path, everything: pd.DataFrame) -> pd.DataFrame:
    path = Path(spec)
    if "\0" not in spec and path.exists():
        return _read(path)
    return select(everything, spec) if not everything.empty else everything


def ab_pair(old_pool: pd.DataFrame, new_pool: pd.DataFrame, group: str | None
            ) -> tuple[str, str, str] | None:
    """(group, old label, new label) of the newest A/B group with a label on each side (or
    of `group`), or None."""
    old_sides, new_sides = ab.sides(old_pool), ab.sides(new_pool)
    common = [g for g in dict.fromkeys(new_sides["group"]) if g in set(old_sides["group"])
              and (group is None or g == group)]
    for g in reversed(common):  # sides() is in run order: the newest group last
        old_labels = list(old_sides.loc[old_sides["group"] == g, "label"])
        new_labels = [x for x in new_sides.loc[new_sides["group"] == g, "label"]
                      if x not in old_labels]
        if old_labels and new_labels:
            return g, old_labels[0], new_labels[0]
    return None


def _where(old_hosts, new_hosts) -> str:
    """Where the two sides ran: one host, hosts that differ (named), or not recorded."""
    if old_hosts and old_hosts == new_hosts:
        return f"one host, one run: {host_text(old_hosts)}"
    if old_hosts is None or new_hosts is None:
        return "a side's host is not recorded, so one host is not known"
    return f"the sides ran on different hosts: old {host_text(old_hosts)}; new {host_text(new_hosts)}"


def ab_text(records: pd.DataFrame, group: str, old_label: str, new_label: str) -> tuple[str, pd.DataFrame]:
    """The command's output for one A/B comparison, and its judged rows."""
    found = ab.pair_steps(records, group, old_label, new_label)
    rows = ab.summary(found)
    first = rows.iloc[0] if not rows.empty else None
    every_side = ab.sides(records)
    side_rows = every_side.set_index(["group", "label"])
    old_side, new_side = side_rows.loc[(group, old_label)], side_rows.loc[(group, new_label)]
    lines = [f"A/B group {group}: old {old_side['release']} (label {old_label}, env "
             f"{old_side['env_id']}), new {new_side['release']} (label {new_label}, env "
             f"{new_side['env_id']}); " + _where(old_side["hosts"], new_side["hosts"])]
    if first is not None and first["floor_cases"]:
        lines.append(f"A/A noise floor: {ab.factor(first['floor_median'])} (median over "
                     f"{first['floor_cases']} cases, largest {ab.factor(first['floor_max'])}; "
                     f"A/A run of group {first['floor_group']}: "
                     f"{ab.aa_runs(every_side, first['floor_group'])})")
    else:
        lines.append(f"A/A noise floor: {ab.NO_FLOOR} on this host, so no step is called "
                     f"(measure one: python -m bench.ab with one interpreter under two labels)")
    lines += [f"rule: a step is called when every ABBA pair's new/old ratio lies beyond the "
              f"case's A/A floor and beyond {1 + MIN_EFFECT:.2f} (or below their inverses)", ""]
    header = ["workload", "mode", "batch", "old", "new", "ratio", "range", "pairs", "A/A floor",
              "change"]
    body = [[r.workload, r.mode, _batch(r.batch_size), latency_text(r.old_median_s),
             latency_text(r.new_median_s), f"{r.ratio:.3f}", f"{r.lo:.3f}–{r.hi:.3f}",
             str(r.pairs), ab.factor(r.floor), r.verdict] for r in found.itertuples()]
    lines += _aligned(header, body) if body else ["no case timed on both sides"]
    if first is not None:
        lines += ["", f"{first['cases']} cases: {first['slower']} slower, {first['faster']} "
                  f"faster, {first['same']} same, {first[ab.NO_FLOOR] + first[ab.SINGLE]} not "
                  f"judged"]
    return "\n".join(lines) + "\n", found


def latency_text(seconds: float) -> str:
    from report.formatting import seconds as as_text

    return as_text(seconds)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m report compare",
        description="Compare two result sets or environments case by case, like asv compare "
                    "and pyperf compare_to. OLD and NEW: a results folder or file, or a "
                    "selector such as torch=2.15.0, machine=atlas-cpu,torch=2.14.1 or an "
                    "env_id prefix, looked up in --results.")
    p.add_argument("old", metavar="OLD")
    p.add_argument("new", metavar="NEW")
    p.add_argument("--results", type=Path, default=Path("results"),
                   help="folder that selectors are looked up in (default: results)")
    p.add_argument("--fail-above", type=percentage, metavar="PCT", default=None,
                   help="exit 1 if any significant regression is slower by more than PCT, "
                        "e.g. 10%%")
    p.add_argument("--only-changed", action="store_true",
                   help="list only the cases that changed significantly")
    p.add_argument("--group", help="the A/B group to read (default: the newest holding both)")
    p.add_argument("--ratios", action="store_true",
                   help="compare each case's paired speedup over eager (both timed in one "
                        "side's own paired processes) instead of isolated latencies")
    p.add_argument("--across-hosts", action="store_true",
                   help="compare older runs even when their hosts differ (default: one line "
                        "saying so, and no verdict)")
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        everything = analysis.load(args.results)
        if args.ratios:
            return main_ratios(args, everything)
        pools = [_pool(spec, args.results, everything) for spec in (args.old, args.new)]
        found = ab_pair(*pools, args.group)
        if found is None and args.group:
            raise SelectionError(f"no A/B group {args.group!r} has a label on each side")
        if found is None:
            old, new = resolve(args.old, args.results), resolve(args.new, args.results)
    except (SelectionError, analysis.ResultsError) as error:
        print(f"report compare: error: {error}", file=sys.stderr)
        return 2
    if found is not None:
        output, rows = ab_text(pd.concat([everything, *pools]).drop_duplicates("source"), *found)
        sys.stdout.write(output)
        failing = rows[(rows["verdict"] == "slower") & (rows["ratio"] > 1 + (args.fail_above or 0))]
        if args.fail_above is not None and not failing.empty:
            print(f"FAIL: {len(failing)} step(s) slower by more than {100 * args.fail_above:g}% "
                  f"in A/B group {found[0]}", file=sys.stderr)
            return 1
        return 0
    differ = hosts_differ_line(old, new)
    if differ and not args.across_hosts:
        print(differ)
        return 0
    judged = compare_sides(old, new)
    if not judged["timed"].any():
        print(f"report compare: error: {old.spec!r} and {new.spec!r} have no timed case in "
              f"common", file=sys.stderr)
        return 2
    if differ:
        print(f"note: {differ.split(';')[0]}; compared anyway (--across-hosts): a verdict here "
              f"may be the hosts' difference, not the releases'")
    sys.stdout.write(text(old, new, judged, only_changed=args.only_changed))
    if has_paired(old.records) and has_paired(new.records):
        print("note: both sides have paired processes; --ratios compares their paired "
              "speedups over eager")
    if args.fail_above is not None:
        failing = regressions(judged, args.fail_above)
        if not failing.empty:
            worst = failing.sort_values("ratio").iloc[-1]
            print(f"FAIL: {len(failing)} significant regression(s) slower by more than "
                  f"{100 * args.fail_above:g}%; the worst: {worst['workload']} {worst['mode']} "
                  f"batch {_batch(worst['batch_size'])}, {worst['ratio']:.3f}x", file=sys.stderr)
            return 1
    return 0


def _batch(value) -> str:
    return "—" if pd.isna(value) else str(int(value))


if __name__ == "__main__":
    sys.exit(main())
