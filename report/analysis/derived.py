"""Tables derived from the cases: comparisons, leases, spreads, the
concurrency check, break-even, CUDA-graph pairs, launch chains and probes."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pandas as pd

from bench.ab import TAG as AB_TAG
from report.analysis.loading import PROCESS
from report.analysis.ordering import mode_rank, of_env, ordered, per_frame, rows
from report.analysis.shown import (
    ISOLATED,
    SAVING,
    bound_of,
    fixed_seed,
    isolated,
    lease_of,
    probe_us,
    processes,
    ratio_bound,
    round_ratios,
)
from report.analysis.vocabulary import (
    ALONE_TAG,
    BASELINE,
    BUSY_TAG,
    CASE,
    CONCURRENT_SIDES,
    MOVED,
    NEVER,
    POINT,
    PROCESS_TAGS,
    SHOWN_SHAPES,
)


def _judge(ratio: pd.Series, at_least: float | None, below: float | None) -> pd.Series:
    answer = ratio >= at_least if at_least is not None else ratio < below
    return answer.where(ratio.notna())


def compare(cases: pd.DataFrame, mode: str, baseline: str = BASELINE, *,
            at_least: float | None = None, below: float | None = None) -> pd.DataFrame:
    """`mode` against `baseline` at every point (env, workload, batch) where either exists:
    the one function every published ratio of two modes goes through.

    `speedup` is baseline median / mode median (medians over each side's isolated
    processes, `isolated`; above 1 the mode is faster). `speedup_lo`/`speedup_hi` span
    every pairing of a baseline process with a mode process. With a threshold
    (`at_least`, or `below`; neither means "faster": at_least=1), `holds` is the answer
    of the medians and `settled` whether every pairing gives the same answer; `pairings`
    is how many there were (1: a single run on each side, settled by definition but
    resting on one draw; 0: the baseline against itself, exactly 1). Columns of the
    mode's case keep their names; the baseline's carry a `_base` suffix.

    Where paired processes timed both modes (`with_paired`), their figures replace those:
    `speedup` is the median over processes of each one's median round ratio, lo/hi the
    smallest and largest process, `pairings` the number of paired processes, and a
    comparison is `settled` only when every process, on every lease, gives the same answer
    and there are two or more. `paired` says which; `leases`, `rounds` and
    `host_probe_us` come with them. `bound` says whether the ratio carries to another
    host (`ratio_bound`). `timing` labels the ratio ("paired" or "isolated": never a
    paired median over an isolated one) and `compared_processes` is what it rests on (the
    paired processes, or the fewer side of isolated ones).

    `saving_s` is the time the mode saves per call (baseline median - mode median;
    `saving_lo_s`/`saving_hi_s` over every pairing), with the two medians behind it as
    `latency_base_s` and `latency_s`. Where paired, all five come from the paired
    processes (`paired_speedups`), as the speedup does, so a mode faster than the
    baseline always saves time.
    """
    if at_least is None and below is None:
        at_least = 1.0
    this = cases[cases["mode"] == mode]
    base = cases[cases["mode"] == baseline]
    out = this.merge(base, on=POINT, how="outer", suffixes=("", "_base")).copy()
    out["mode"], out["baseline"] = mode, baseline
    timed = out["ok"].eq(True) & out["ok_base"].eq(True)
    # Unpaired, both sides' isolated figures: a case that publishes paired figures (its
    # paired processes timed it beside eager) keeps its isolated ones beside them, so a
    # mode timed only in isolated processes is never divided by a paired median.
    iso = {f"{c}{side}": isolated(out, c, side) for c in ISOLATED for side in ("", "_base")}
    out["speedup"] = (iso["median_s_base"] / iso["median_s"]).where(timed)
    out["speedup_lo"] = (iso["lo_s_base"] / iso["hi_s"]).where(timed)
    out["speedup_hi"] = (iso["hi_s_base"] / iso["lo_s"]).where(timed)
    out["pairings"] = (iso["n_processes"] * iso["n_processes_base"]).where(timed)
    out["latency_base_s"], out["latency_s"] = iso["median_s_base"], iso["median_s"]
    out["saving_s"] = (iso["median_s_base"] - iso["median_s"]).where(timed)
    out["saving_lo_s"] = (iso["lo_s_base"] - iso["hi_s"]).where(timed)
    out["saving_hi_s"] = (iso["hi_s_base"] - iso["lo_s"]).where(timed)
    out["compared_processes"] = pd.concat([iso["n_processes"], iso["n_processes_base"]],
                                          axis=1).min(axis=1).where(timed)
    prefix = f"paired_{baseline}_"
    paired = pd.Series(False, index=out.index)
    if f"{prefix}speedup" in out:
        paired = (timed & out[f"{prefix}speedup"].notna()).astype(bool)
        for name in ("speedup", "speedup_lo", "speedup_hi", *SAVING):
            out[name] = out[prefix + name].astype(float).where(paired, out[name])
        out["pairings"] = out[f"{prefix}processes"].astype(float).where(paired, out["pairings"])
        for name in ("leases", "rounds", "host_probe_us"):
            out[name] = out[prefix + name].where(paired)
    out["paired"] = paired
    out["compared_processes"] = out["pairings"].where(paired, out["compared_processes"])
    if mode == baseline:  # the baseline against itself: exactly 1, no pairings to judge
        out.loc[timed, ["speedup", "speedup_lo", "speedup_hi", "pairings"]] = (1.0, 1.0, 1.0, 0)
        out.loc[timed, ["saving_s", "saving_lo_s", "saving_hi_s"]] = 0.0
        out["latency_base_s"] = out["latency_s"] = out["median_s"]
        out["compared_processes"] = out["n_processes"].where(timed)
        out["paired"] = False
    # The label of the ratio: what both its medians rest on. The baseline against itself
    # is no ratio, and keeps its case's own timing.
    label = paired.map({True: "paired", False: "isolated"}).where(timed)
    out["timing"] = (out["timing"].where(timed) if mode == baseline and "timing" in out
                     else label)
    out["holds"] = _judge(out["speedup"], at_least, below)
    lo, hi = _judge(out["speedup_lo"], at_least, below), _judge(out["speedup_hi"], at_least, below)
    out["settled"] = (lo == hi).where(timed)
    out.loc[out["paired"] & (out["pairings"] < 2), "settled"] = False
    out["ratio_bound"] = (ratio_bound(out["bound"], out["bound_base"]) if "bound_base" in out
                          else None)
    out["env_repeated"] = out["env_repeated"].fillna(out["env_repeated_base"])
    return ordered(out).reset_index(drop=True)


def one_timing(left: pd.DataFrame, right: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Two tables of cases whose row i are set against each other (one case on two GPU types,
    say), each side's latency figures (ISOLATED, `timing`) from one timing method, as
    `compare` forms a ratio: both sides' published paired figures where both publish paired
    ones, else both sides' isolated figures where both have isolated processes; never a
    paired median against an isolated one. Where neither holds, both sides' figures are
    None and `timing` None: not measured by one method."""
    def has_isolated(side: pd.DataFrame) -> pd.Series:
        return isolated(side, "median_s").notna() & (isolated(side, "n_processes") >= 1)

    paired = (left["timing"].eq("paired").to_numpy() & right["timing"].eq("paired").to_numpy())
    both_isolated = has_isolated(left).to_numpy() & has_isolated(right).to_numpy()
    out = []
    for side in (left, right):
        side = side.copy()
        for column in ISOLATED:
            figure = isolated(side, column).where(~paired, side[column])
            side[column] = figure.where(paired | both_isolated)
        side["timing"] = pd.Series(np.where(paired, "paired", np.where(
            both_isolated, "isolated", None)), index=side.index, dtype=object)
        out.append(side)
    return out[0], out[1]


def speedups(cases: pd.DataFrame, baseline: str = BASELINE) -> pd.DataFrame:
    """Every case with its speedup over `baseline` at the same point (`compare` columns)."""
    modes = list(cases["mode"].unique()) or [baseline]
    out = pd.concat([compare(cases, mode, baseline) for mode in modes], ignore_index=True)
    # The modes' frames differ in column dtypes (the baseline's own row is set to constants),
    # so concat leaves a block per such column; one copy joins them, or every column a
    # caller adds (the published table, break-even) warns of a fragmented frame.
    return ordered(out[out["ok"].notna()]).reset_index(drop=True).copy()


TRANSFERS = 0.10  # a figure that moves less than this between leases carries over


def _lease_records(records: pd.DataFrame, tags: re.Pattern = PROCESS_TAGS) -> pd.DataFrame:
    """Every ok seed-shape process record of `tags` that says which host it ran on, with
    `lease`."""
    fixed = fixed_seed(records)
    kept = fixed[fixed["ok"] & fixed["tag"].str.match(tags) & fixed["hostname"].notna()]
    return kept.assign(lease=lease_of(kept))


def leases(records: pd.DataFrame) -> pd.DataFrame:
    """Per environment and lease: when it was first measured, its host name and boot, its
    eager-op cost (`probe_us`: the median of its processes' probes, each the median of its
    blocks, as bench/host/model.py's reference host takes a lease's) and a bare kernel
    launch's figure (`launch_us`) the same way, and its ordinal among the environment's
    leases (`number`, 1 first)."""
    kept = _lease_records(records)
    if kept.empty:
        return pd.DataFrame(columns=["env_id", "lease", "first_at", "hostname", "boot_id",
                                     "probe_us", "launch_us", "number"])
    kept = kept.assign(probe_us=[probe_us(v) for v in kept["op_s"]],
                       launch_us=[probe_us(v) for v in kept["launch_s"]])
    out = kept.groupby(["env_id", "lease"]).agg(
        first_at=("started_at", "min"), hostname=("hostname", "first"), boot_id=("boot_id", "first"),
        probe_us=("probe_us", "median"), launch_us=("launch_us", "median")).reset_index()
    out = out.sort_values(["env_id", "first_at"], kind="stable")
    out["number"] = out.groupby("env_id").cumcount() + 1
    return out.reset_index(drop=True)


def run_spans(records: pd.DataFrame) -> pd.DataFrame:
    """One row per run (`env_id`, `run_id`: one invocation of `python -m bench`) of the
    seed shapes: its `profile`, `start` (first process started) and `end` (last process
    finished), and the `isolated` and `paired` processes it recorded. Processes are counted
    by kind, not runs labelled by one: a paired-timing run cut off before its paired
    processes recorded isolated ones only."""
    kept = records[records["run_id"].notna() & (records["shapes"] == SHOWN_SHAPES)]
    if kept.empty:  # typed like a full table, so callers may use .dt on start and end
        stamp = pd.Series(dtype="datetime64[ns, UTC]")
        return pd.DataFrame({"env_id": [], "run_id": [], "start": stamp, "end": stamp,
                             "profile": [], "isolated": [], "paired": []})
    is_paired = kept["process_timing"] == "paired"
    kept = kept.assign(
        finished_at=kept["started_at"] + pd.to_timedelta(kept["duration_s"].fillna(0), unit="s"),
        isolated=kept.groupby([*PROCESS, "started_at"], dropna=False).ngroup().where(~is_paired),
        paired=kept["group"].where(is_paired))
    return kept.groupby(["env_id", "run_id"]).agg(
        start=("started_at", "min"), end=("finished_at", "max"), profile=("profile", "first"),
        isolated=("isolated", "nunique"), paired=("paired", "nunique")).reset_index()


def run_costs(records: pd.DataFrame) -> pd.DataFrame:
    """What measuring cost, per environment and profile: `runs` invocations of
    `python -m bench` (a run cut by --max-minutes and resumed counts each slice), the
    `isolated` and `paired` processes they recorded (`run_spans`), and `minutes`, the sum
    over runs of first start to last finish. Machine start-up and copying files are not in
    the records, so not counted. The turns of an A/B run (tag `ab-<group>-<label>`) are
    left out: `report.releases.ab.run_costs` counts each A/B run once, as a whole."""
    spans = run_spans(records[~records["tag"].str.match(AB_TAG)])
    if spans.empty:  # typed like a full table, so callers may use .dt on first_at
        return pd.DataFrame({"env_id": [], "profile": [], "runs": [], "isolated": [],
                             "paired": [], "minutes": [], "first_at": spans["start"]})
    spans["minutes"] = (spans["end"] - spans["start"]).dt.total_seconds() / 60
    out = spans.groupby(["env_id", "profile"]).agg(
        runs=("run_id", "nunique"), isolated=("isolated", "sum"), paired=("paired", "sum"),
        minutes=("minutes", "sum"), first_at=("start", "min")).reset_index()
    return out.sort_values(["env_id", "first_at"], kind="stable").reset_index(drop=True)


def across_leases(records: pd.DataFrame, bounds: pd.DataFrame) -> pd.DataFrame:
    """Cases measured on two or more leases of one environment (all records, not only the
    newest), one row per case and lease: the isolated median (`median_s`) and the paired
    speedup over eager (`speedup`, `speedup_lo`, `speedup_hi`, `processes`). Per case,
    `median_move` and `speedup_move` are (largest - smallest) / smallest across leases,
    and `median_transfers`/`speedup_transfers` whether that stays within TRANSFERS.
    `ratio_bound` comes from `bounds` (a `compare` against eager)."""
    kept = _lease_records(records)
    isolated = (kept[kept["process_timing"] == "isolated"].groupby([*CASE, "lease"], dropna=False)
                ["median_s"].median().reset_index())
    ratios = round_ratios(kept[kept["process_timing"] == "paired"].drop(columns="lease"))
    ratios = ratios[(ratios["baseline"] == BASELINE) & (ratios["mode"] != BASELINE)]
    paired = (ratios.groupby([*POINT, "mode", "lease"], dropna=False)
              .agg(speedup=("ratio", "median"), speedup_lo=("ratio", "min"),
                   speedup_hi=("ratio", "max"), processes=("ratio", "size")).reset_index())
    out = isolated.merge(paired, on=[*POINT, "mode", "lease"], how="outer")
    counts = out.groupby(CASE, dropna=False)["lease"].transform("nunique")
    out = out[counts >= 2].copy()
    if out.empty:
        return out.assign(median_move=[], speedup_move=[], median_transfers=[],
                          speedup_transfers=[], number=[], ratio_bound=[])
    for figure in ("median_s", "speedup"):
        name = figure.removesuffix("_s")
        grouped = out.groupby(CASE, dropna=False)[figure]
        # A figure measured on one lease only has nothing to move against: no move, rather
        # than a move of 0 that would count as carrying over.
        out[f"{name}_move"] = (grouped.transform("max") / grouped.transform("min") - 1.0
                               ).where(grouped.transform("count") >= 2)
        out[f"{name}_transfers"] = (out[f"{name}_move"] <= TRANSFERS).where(out[f"{name}_move"].notna())
    numbers = leases(records)[["env_id", "lease", "number", "probe_us"]]
    out = out.merge(numbers, on=["env_id", "lease"], how="left")
    out = out.merge(bounds[[*POINT, "mode", "ratio_bound"]], on=[*POINT, "mode"], how="left")
    return ordered(out, "number").reset_index(drop=True)


def paired_against_isolated(shown_all: pd.DataFrame, bounds: pd.DataFrame,
                            tags: re.Pattern = PROCESS_TAGS) -> pd.DataFrame:
    """Per case and lease where both exist: the median of the isolated processes' medians
    and of the paired processes' per-mode medians, with their counts (`n_isolated`,
    `n_paired`) and median page faults per timed call (`faults_isolated`, `faults_paired`,
    NaN before records version 8); `agreement` = paired / isolated - 1; the case's side
    bound (`bound`: device, graph, host, mixed, cpu); and `two_modes`, the case's processes
    of both kinds split in two groups (see `two_modes`), or None. `tags`: the runs taken, the
    case's own processes by default; `run` keeps an A/B group's side apart from them, as
    its tag, while the case's own tags (PROCESS_TAGS) are one run, "main"."""
    kept = _lease_records(shown_all, tags)
    kept = kept.assign(run=kept["tag"].where(~kept["tag"].str.match(PROCESS_TAGS), "main"))
    key = [*CASE, "run", "lease"]
    sides = {}
    for side in ("isolated", "paired"):
        grouped = kept[kept["process_timing"] == side].groupby(key, dropna=False)
        sides[side] = pd.concat([grouped["median_s"].median().rename(f"{side}_s"),
                                 grouped["median_s"].size().rename(f"n_{side}"),
                                 grouped["page_faults_per_call"].median().rename(f"faults_{side}")],
                                axis=1)
    out = pd.concat(sides.values(), axis=1).dropna(subset=["isolated_s", "paired_s"]).reset_index()
    out["agreement"] = out["paired_s"] / out["isolated_s"] - 1.0
    both = kept[kept["process_timing"].isin(["isolated", "paired"])]
    found = {k: two_modes(g["median_s"].tolist(), g["page_faults_per_call"].tolist())
             for k, g in both.groupby(key, dropna=False)}
    out["two_modes"] = [found.get(tuple(r)) for r in out[key].itertuples(index=False)]
    out = out.merge(bounds[[*CASE, "bound"]], on=CASE, how="left")
    return ordered(out).reset_index(drop=True)


def two_modes(medians: list[float], faults: list[float]) -> dict[str, Any] | None:
    """A case's process medians in two groups, where they fall so: sorted, the widest gap
    between neighbours is over MOVED of the lower one and wider than either group's own
    spread (a wide spread with one gap in it is noise, not two modes), and each side holds
    two processes or more (one outlier is not a mode). Each group's median, count and median
    page faults per call (NaN where not recorded): a memory-bound eager case on a CPU may run
    in one mode or the other by how often malloc hands memory back, which the faults show."""
    pairs = sorted(zip(medians, faults, strict=True))
    if len(pairs) < 4:
        return None
    gaps = [(pairs[i + 1][0] / pairs[i][0] - 1.0, i + 1) for i in range(len(pairs) - 1)]
    gap, cut = max(gaps)
    if gap <= MOVED or cut < 2 or len(pairs) - cut < 2:
        return None
    low, high = pairs[:cut], pairs[cut:]
    if gap <= max(low[-1][0] / low[0][0], high[-1][0] / high[0][0]) - 1.0:
        return None

    def group(part):
        times, counts = zip(*part, strict=True)
        return {"median_s": float(pd.Series(times).median()), "n": len(part),
                "faults": float(pd.Series(counts, dtype=float).median())}

    return {"low": group(low), "high": group(high), "gap": gap}


def spreads(cases: pd.DataFrame) -> pd.DataFrame:
    """Published cases (`published_cases`) resting on two or more processes, with `spread`
    = (max - min) / min of their process medians and `moved` where it exceeds MOVED. The
    processes are those the case publishes (`timing`)."""
    out = cases[cases["n_processes"] >= 2].copy()
    out["moved"] = out["spread"] > MOVED
    return out


def _process_range(procs: pd.DataFrame, key: list[str]) -> pd.DataFrame:
    """Per `key`: the median of the process medians, their min and max, their number, the
    largest `workers` (cases the run measured at the same time), the largest `threads`
    (torch's thread count) and when the first process started (`first_at`)."""
    return procs.groupby(key, dropna=False).agg(
        median_s=("median_s", "median"), lo_s=("median_s", "min"), hi_s=("median_s", "max"),
        n_processes=("median_s", "size"), workers=("workers", "max"),
        threads=("torch_threads", "max"), first_at=("started_at", "min")).reset_index()


def ranges_overlap(lo_a: pd.Series, hi_a: pd.Series, lo_b: pd.Series, hi_b: pd.Series) -> pd.Series:
    """Whether two ranges [lo, hi] of process medians overlap; touching ends overlap. The one
    rule for "within the across-process spread" (compare.judge, concurrency)."""
    return (lo_b <= hi_a) & (lo_a <= hi_b)


def concurrency(shown: pd.DataFrame) -> pd.DataFrame:
    """The concurrency check: every case measured alone (tag ALONE_TAG, one worker, the
    host's other GPUs idle), against two concurrent sides in the same environment and
    profile: `busy`, the same subset under tag BUSY_TAG on the same GPU while a second
    runner kept the other GPUs busy (the check proper: one session, one host), and `main`,
    the case's own processes (`processes`) that the main run measured with more than one
    worker. Columns `median_s`, `lo_s`, `hi_s`, `n_processes`, `workers`, `threads` and
    `first_at` of each side carry the suffix `_alone`, `_busy` or `_main`; per concurrent
    side, `measured_<side>` says whether it exists, `ratio_<side>` is its median / alone's,
    and `overlap_<side>` whether the two ranges of process medians overlap (`ranges_overlap`):
    if they do, the difference is within the across-process spread. Alone records run with
    more than one worker are not alone and are left out."""
    ok = shown[shown["ok"]]
    key = [*CASE, "profile"]
    procs = processes(ok)
    sides = {"alone": ok[(ok["tag"] == ALONE_TAG) & (ok["workers"] == 1)],
             "busy": ok[ok["tag"] == BUSY_TAG], "main": procs[procs["workers"] > 1]}
    ranges = {name: _process_range(side, key).add_suffix(f"_{name}").rename(
        columns={f"{k}_{name}": k for k in key}) for name, side in sides.items()}
    out = ranges["alone"].merge(ranges["busy"], on=key, how="left").merge(
        ranges["main"], on=key, how="left")
    for side in CONCURRENT_SIDES:
        measured = out[f"n_processes_{side}"].notna()
        out[f"measured_{side}"] = measured
        out[f"ratio_{side}"] = out[f"median_s_{side}"] / out["median_s_alone"]
        overlap = ranges_overlap(out["lo_s_alone"], out["hi_s_alone"], out[f"lo_s_{side}"],
                                 out[f"hi_s_{side}"])
        out[f"overlap_{side}"] = overlap.astype(object).where(measured, None)
    return ordered(out).reset_index(drop=True)


def move_summary(spread_rows: pd.DataFrame) -> dict[str, Any] | None:
    """How many repeated cases moved, the median and largest move, and the median in-run
    IQR / median of the same cases, to set against it."""
    if spread_rows.empty:
        return None
    largest = spread_rows.sort_values("spread", kind="stable").iloc[-1]
    median_spread = float(spread_rows["spread"].median())
    in_run = spread_rows["iqr_ratio"].median()
    in_run = None if pd.isna(in_run) else float(in_run)
    return {"compared": len(spread_rows), "moved": int(spread_rows["moved"].sum()),
            "median_spread": median_spread, "median_in_run_iqr": in_run,
            "in_run_understates": in_run is not None and median_spread > 2 * in_run,
            "largest": rows(largest.to_frame().T)[0]}


def by_mode(spread_rows: pd.DataFrame) -> pd.DataFrame:
    """Per mode: how many repeated cases, the median and the largest move."""
    out = spread_rows.groupby("mode")["spread"].agg(cases="size", median="median",
                                                    largest="max").reset_index()
    return out.sort_values("mode", key=lambda s: s.map(mode_rank), kind="stable")


def boundedness(busy: pd.Series) -> pd.Series:
    """`bound_of` GPU busy fractions (a CUDA backend)."""
    return pd.Series([bound_of(b, "cuda") for b in busy], index=busy.index, dtype=object)


def break_even_calls(compile_s: np.ndarray, saving_s: np.ndarray) -> np.ndarray:
    """Calls after which compiling pays off: compile time / per-call saving, rounded up;
    NEVER where there is no saving, NaN where anything is missing (float arrays)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        calls = compile_s / np.where(saving_s > 0, saving_s, np.nan)
        # A whole quotient that floating point leaves a hair above (3.0000000000000004)
        # would otherwise cost one more call than it does.
        calls = np.ceil(calls * (1.0 - 1e-12))
    return np.where((saving_s <= 0) & ~np.isnan(compile_s), NEVER, calls)


def break_even(compile_s: pd.Series, saving_s: pd.Series) -> pd.Series:
    """`break_even_calls` of two columns, as a column."""
    def floats(column: pd.Series) -> np.ndarray:
        return pd.to_numeric(column, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    return pd.Series(break_even_calls(floats(compile_s), floats(saving_s)), index=compile_s.index)


def with_break_even(table: pd.DataFrame) -> pd.DataFrame:
    """`speedups` rows with the calls to break even with a cold and with a warm compile
    (`cold_calls`, `warm_calls`), over the time saved per call (`saving_s`)."""
    return table.assign(cold_calls=break_even(table["cold_first_call_s"], table["saving_s"]),
                        warm_calls=break_even(table["warm_first_call_s"], table["saving_s"]))


def graph_pairs(cases: pd.DataFrame) -> list[tuple[str, str]]:
    """What CUDA graphs add on top of the same code: the first compiled graph-replaying mode
    against the baseline, then each such mode against the mode whose traits differ from it
    only in not replaying graphs (from the records' mode traits)."""
    traits = {m: {k: t[k] for k in TRAITS} for m, t in modes_traits(cases).items()}
    graphed = [m for m, t in traits.items() if t["compiled"] and t["cuda_graphs"]]
    pairs = [(graphed[0], BASELINE)] if graphed and BASELINE in traits else []
    return pairs + [(mode, twin) for mode in graphed for twin, t in traits.items()
                    if t == {**traits[mode], "cuda_graphs": False}]


TRAITS = ("compiled", "cuda_graphs", "autotune", "dynamic")


def modes_traits(df: pd.DataFrame) -> dict[str, dict[str, Any]]:
    """Each mode seen, in page order, with its traits and description from its records
    (the last row of each mode). Pages ask it of whole tables once per environment."""
    return per_frame(df, "modes_traits", _modes_traits)


def _modes_traits(df: pd.DataFrame) -> dict[str, dict[str, Any]]:
    if df.empty:
        return {}
    last = {mode: i for i, mode in enumerate(df["mode"].tolist())}
    columns = {c: df[c].tolist() for c in (*TRAITS, "mode_description")}
    return {m: {**{t: bool(columns[t][last[m]]) for t in TRAITS},
                "mode_description": columns["mode_description"][last[m]]}
            for m in sorted(last, key=mode_rank)}


def mode_with(df: pd.DataFrame, **traits: bool) -> str | None:
    """The first mode (page order) whose traits are exactly `traits` (others false)."""
    want = {t: traits.get(t, False) for t in TRAITS}
    return next((m for m, t in modes_traits(df).items()
                 if {k: t[k] for k in TRAITS} == want), None)


def crossovers(cases: pd.DataFrame, pairs: list[tuple[str, str]]) -> pd.DataFrame:
    """For every batched case, each pair (mode, base) of `pairs` compared at its batch
    (`compare` rows), named in the column `pair` as "mode vs base"."""
    batched = cases[cases["batch_size"].notna()]
    found = [compare(batched, mode, base).assign(pair=f"{mode} vs {base}") for mode, base in pairs]
    return pd.concat(found or [compare(batched[:0], BASELINE).assign(pair=None)],
                     ignore_index=True)


# The launch-overhead microbenchmarks are found by name: launch-chain-N runs N tiny
# kernels back to back, trivial-call is one tiny op.
TRIVIAL = "trivial-call"
_CHAIN = re.compile(r"^launch-chain-(\d+)$")


def chains(workloads) -> list[str]:
    """The launch-chain-N workloads among `workloads`, shortest chain first."""
    return sorted((w for w in workloads if _CHAIN.match(w)),
                  key=lambda w: int(_CHAIN.match(w).group(1)))


def per_kernel(cases: pd.DataFrame) -> pd.DataFrame:
    """Cases of the launch chains with their timings divided by the chain length N
    (`chain`): the cost of one launch plus one tiny kernel, with its spread."""
    out = cases[cases["workload"].isin(chains(cases["workload"].unique()))].copy()
    out["chain"] = out["workload"].map(lambda w: int(_CHAIN.match(w).group(1)))
    for column in ("median_s", "lo_s", "hi_s"):
        out[column] = out[column] / out["chain"]
    out["per_kernel_s"] = out["median_s"].where(out["ok"])
    return out


def headline_per_kernel(cases: pd.DataFrame, env_id: str) -> dict[str, Any] | None:
    """The longest chain of `env_id` with per-kernel costs in eager and from a replayed
    graph without compilation: {n, workload, eager, graph, ratio}."""
    graph = mode_with(cases, cuda_graphs=True)
    table = per_kernel(of_env(cases, env_id))
    table = table[table["per_kernel_s"].notna()]
    for workload in reversed(chains(table["workload"].unique())):
        costs = table[table["workload"] == workload].set_index("mode")["per_kernel_s"]
        if BASELINE in costs and graph in costs:
            n = int(_CHAIN.match(workload).group(1))
            e, g = float(costs[BASELINE]), float(costs[graph])
            return {"n": n, "workload": workload, "eager": e, "graph": g, "ratio": e / g}
    return None


def compile_summary(cases: pd.DataFrame) -> pd.DataFrame:
    """Per env and mode, over cases with both a cold and a warm first call: their count,
    the median cold and warm first call, and cold / warm."""
    both = cases[cases["cold_first_call_s"].gt(0) & cases["warm_first_call_s"].gt(0)]
    out = both.groupby(["env_id", "mode"]).agg(
        cases=("mode", "size"), cold=("cold_first_call_s", "median"),
        warm=("warm_first_call_s", "median")).reset_index()
    out["ratio"] = out["cold"] / out["warm"]
    return out.sort_values("mode", key=lambda s: s.map(mode_rank), kind="stable")


def probe_value(probe) -> Any:
    """What a probe found, as one value: its outcome, else its figures (a v1 probe's single
    number was upgraded to the figure "value" and is shown as that number)."""
    if probe.outcome is not None:
        return probe.outcome
    if set(probe.figures) == {"value"}:
        value = probe.figures["value"]
        return int(value) if value.is_integer() else value
    return probe.figures or None


def probes(shown: pd.DataFrame) -> pd.DataFrame:
    """One row per probe result of every process: the record's columns plus `probe`,
    `summary` and `value` (`probe_value`)."""
    procs = processes(shown)
    found = [(index, p.name, p.summary, probe_value(p))
             for index, found in zip(procs.index, procs["probes"], strict=True) for p in found]
    table = pd.DataFrame(found, columns=["_index", "probe", "summary", "value"])
    out = procs.drop(columns=["probes"]).merge(table, left_index=True, right_on="_index")
    return ordered(out.drop(columns="_index"), "tag", "repeat")
