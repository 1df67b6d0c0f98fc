"""The host model as tables: per case, the line a host-bound side follows against the host
probe, the speedups it predicts, and how those predictions fared on a held-out lease and on
hosts slowed on purpose.

The model itself is bench/host/model.py, the one definition `python -m bench host` predicts
from; this module hands it the records' rows and turns what it returns into DataFrames keyed
as `analysis.cases` is (env_id, workload, batch_size, shapes, dtype, mode), so they join into
the published table and the export.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Protocol

import pandas as pd

from bench.host import model as host_model
from report.analysis.ordering import of_env, ordered, rows
from report.analysis.vocabulary import DEFAULT_DTYPE


class Data(Protocol):
    """What this module reads of report.analysis.Data, which builds on this module and so is
    named here by what it offers rather than imported (no circle between the two)."""

    host_models: HostModels

    def memo(self, name: str, build: Callable[[], Any]) -> Any: ...

COLUMNS = ["env_id", "device_name", "backend", "torch", "machine", "workload", "batch_size",
           "shapes", "case_dtype", "mode", "tag", "status", "process_timing", "repeat",
           "repeats", "started_at", "duration_s", "busy_fraction", "hostname", "boot_id", "op_s",
           "group", "round_s", "median_s", "cpu_ops_per_call", "op_long_s"]
KEY = ["env_id", "workload", "batch_size", "shapes", "case_dtype", "mode"]  # analysis.CASE
FIT_COLUMNS = [*KEY, "device_name", "backend", "torch", "intercept_s", "slope", "residual_sd_s",
               "residual_max", "band", "band_probability", "probe_lo_us", "probe_hi_us",
               "processes", "leases"]
MODEL_COLUMNS = [*KEY, "baseline", "device_name", "backend", "torch", "ratio", "fitted",
                 "probe_lo_us", "probe_hi_us", "processes", "leases", "speedup_lo_probe",
                 "low_lo_probe", "high_lo_probe", "speedup_hi_probe", "low_hi_probe",
                 "high_hi_probe", "device_s", "device_lo_s", "device_hi_s"]
CHECK_COLUMNS = [*KEY, "baseline", "device_name", "ratio", "lease", "host", "probe_us",
                 "probe_mean_us", "time_sliced", "probe_lo_us", "probe_hi_us", "outside_us",
                 "measured", "predicted", "low", "high", "inside", "processes", "processes_inside"]


@dataclass(frozen=True)
class HostModels:
    """Everything fitted once per site build."""

    models: list[host_model.SpeedupModel]
    held_out: list[host_model.Check]
    slowed: list[host_model.Check]
    references: dict[str, host_model.Reference]  # per GPU type (device_name)
    scores: list[host_model.Score]  # every estimator, leaving one lease out, per GPU type
    estimator: dict[str, str]  # the estimator chosen per GPU type (host_model.chosen)
    fresh: list[host_model.Check]  # every estimator fitted before FRESH_CUTOFF, on the leases after
    fresh_leases: set[str]


def host_rows(records: pd.DataFrame) -> list[dict]:
    """The records as bench/host/model.py reads them: plain values, missing ones None."""
    found = rows(records[COLUMNS])
    for row in found:
        row["op_s"] = row["op_s"] or ()
        row["op_long_s"] = row["op_long_s"] or ()
        row["round_s"] = row["round_s"] or ()
    return found


# The fresh-lease check's cut-off: the leases first seen from then on are checked against
# the models fitted on every lease before. It is the start of the first lease measured after
# the host models were first published, so the leases after it are ones no model had seen.
FRESH_CUTOFF = datetime(2026, 12, 6, 5, 40, tzinfo=timezone.utc)


def fit(records: pd.DataFrame, cutoff: datetime = FRESH_CUTOFF) -> HostModels:
    """Models from the cases' own paired processes (host_model.PROCESS_TAGS) by the
    estimator each GPU type's held-out leases chose (host_model.fit); checked on each
    held-out lease, on every process of a slowed run (host_model.SLOWED_TAGS), and on the
    leases first seen from `cutoff` on by models fitted before it."""
    found = host_rows(records)
    fitted = host_model.fit(found)
    models = fitted.models
    fresh, fresh_leases = host_model.fresh(found, cutoff)
    return HostModels(models=models, held_out=fitted.held_out,
                      slowed=host_model.slowed(host_model.processes(found, host_model.SLOWED_TAGS), models),
                      references=host_model.references(found), scores=fitted.scores,
                      estimator=fitted.estimator, fresh=fresh, fresh_leases=fresh_leases)


def of(data: Data) -> HostModels:
    """The models `Data` fitted once (`fit(data.records)`)."""
    return data.host_models


def fits(data: Data) -> pd.DataFrame:
    """One row per fitted host-bound side, keyed like a case (KEY): time = intercept_s +
    slope * probe, the residuals' standard deviation and largest relative size, `band`, the
    band's half-width relative to the fit at the centre of the probes, with the probability
    it is meant to hold (`band_probability`), and the probes it was fitted on in µs."""
    return data.memo("host-fits", lambda: _fits(data))


def _fits(data: Data) -> pd.DataFrame:
    out = []
    for side in host_model.fitted_sides(of(data).models):
        line: host_model.Line = side["line"]
        out.append({**{c: side[c] for c in (*KEY, "device_name", "backend", "torch")},
                    "intercept_s": line.intercept_s, "slope": line.slope,
                    "residual_sd_s": line.residual_sd_s, "residual_max": line.residual_max,
                    "band": line.band(), "band_probability": host_model.BAND,
                    "probe_lo_us": line.probe_lo_s * 1e6, "probe_hi_us": line.probe_hi_s * 1e6,
                    "processes": line.processes, "leases": line.leases})
    return _sorted(pd.DataFrame(out, columns=FIT_COLUMNS))


def models(data: Data) -> pd.DataFrame:
    """One row per modelled speedup (a mode over eager), keyed like a case: which side is
    fitted (`fitted`: the baseline's name, the mode's, or "both"), the probes the model holds for, and the
    predicted speedup with its band at either end of them (a band's top None where it has
    none); the device-bound side's figure."""
    return data.memo("host-model-rows", lambda: _models(data))


def _models(data: Data) -> pd.DataFrame:
    out = []
    for model in of(data).models:
        lo, hi = model.probe_range_s
        at_lo, at_hi = model.at(lo), model.at(hi)
        device = next((s for s in (model.base, model.side) if isinstance(s, host_model.Figure)), None)
        out.append({**model.describes(), "ratio": model.ratio, "fitted": _fitted(model),
                    "probe_lo_us": lo * 1e6, "probe_hi_us": hi * 1e6,
                    "processes": model.processes,
                    "leases": max(line.leases for line in model.lines),
                    "speedup_lo_probe": at_lo.speedup, "low_lo_probe": at_lo.low,
                    "high_lo_probe": _bounded(at_lo.high), "speedup_hi_probe": at_hi.speedup,
                    "low_hi_probe": at_hi.low, "high_hi_probe": _bounded(at_hi.high),
                    "device_s": device.median_s if device else None,
                    "device_lo_s": device.lo_s if device else None,
                    "device_hi_s": device.hi_s if device else None})
    return _sorted(pd.DataFrame(out, columns=MODEL_COLUMNS))


LINE_TERMS = ("intercept_s", "slope", "residual_sd_s", "half_width_s", "processes",
              "probe_mean_us", "probe_sxx_us2")
FIGURE_TERMS = ("median_s", "lo_s", "hi_s")
def page_rows(data: Data, env_id: str, workload: str | None = None) -> list[dict]:
    """`models` rows of one environment (and workload), each with `lines`: its fitted
    sides' `fits` rows (mode, intercept_s, slope, band, ...), for the `_host_model.md.j2`
    table a workload, model or stability page shows."""
    here = of_env(models(data), env_id)
    if workload is not None:
        here = here[here["workload"] == workload]
    lines = {tuple(row[c] for c in KEY): row for row in rows(of_env(fits(data), env_id))}
    out = []
    for row in rows(here):
        point = tuple(row[c] for c in KEY[:-1])
        out.append({**row, "lines": [lines[(*point, mode)] for mode in (row["baseline"], row["mode"])
                                     if (*point, mode) in lines]})
    return out


REFERENCE_COLUMNS = ["host_reference_us", "host_reference_lo_us", "host_reference_hi_us",
                     "host_reference_leases", "host_reference_outside_us",
                     "host_speedup_at_reference", "host_low_at_reference", "host_high_at_reference"]
PUBLISHED_COLUMNS = ["host_fitted", "host_probe_lo_us", "host_probe_hi_us", "host_probe_median_us",
                     "host_band_probability", "host_processes", "host_ratio_sd", *REFERENCE_COLUMNS,
                     *(f"host_{side}_{term}" for side in ("base", "mode")
                       for term in (*LINE_TERMS, *FIGURE_TERMS))]
EXPORT_COLUMNS = [*KEY, "baseline", *PUBLISHED_COLUMNS]


def columns(found: HostModels) -> pd.DataFrame:
    """The host model of each modelled speedup as columns (PUBLISHED_COLUMNS) for the
    published table and the export, keyed as a case is (KEY) with its `baseline`: which side
    is fitted, the probes it was fitted on and their median (a typical measured host: what
    a reader's own probe starts from), and per side (`base`, `mode`) either its line or
    its figure, the other's columns None: the terms bench/host/model.py `SpeedupModel.at`
    predicts from (`Line.at` for a line, with half_width_s; t the Student quantile of
    host_band_probability with host_processes - 2 degrees of freedom where both sides are
    lines and `host_ratio_sd` sets the band), the formula's one definition.
    The same prediction is given at the GPU type's reference host (REFERENCE_COLUMNS,
    `reference_columns`). A speedup without a model has no row."""
    out = []
    for model in found.models:
        lo, hi = model.probe_range_s
        row = {**{c: model.describes()[c] for c in (*KEY, "baseline")},
               "host_fitted": _fitted(model),
               "host_probe_lo_us": lo * 1e6, "host_probe_hi_us": hi * 1e6,
               "host_probe_median_us": model.probe_median_s * 1e6,
               "host_band_probability": host_model.BAND, "host_processes": model.processes,
               "host_ratio_sd": model.ratio_sd,
               **reference_columns(model, found.references.get(model.device_name))}
        for name, side in (("base", model.base), ("mode", model.side)):
            row.update({f"host_{name}_{term}": value for term, value in _terms(side).items()})
        out.append(row)
    return _sorted(pd.DataFrame(out, columns=EXPORT_COLUMNS).astype({"batch_size": "Int64"}))


def reference_columns(model: host_model.SpeedupModel,
                      reference: host_model.Reference | None) -> dict:
    """REFERENCE_COLUMNS of one model: its GPU type's reference host (`host_model.references`:
    the median lease's probe, the fastest and slowest lease, how many), how far that lies
    outside the probes the model was fitted on (0 inside), and inside them the speedup
    predicted there with its band (its top None where unbounded; all three None outside)."""
    if reference is None:
        return dict.fromkeys(REFERENCE_COLUMNS)
    outside = model.outside(reference.probe_s)
    found = None if outside else model.at(reference.probe_s)
    return {"host_reference_us": reference.probe_s * 1e6,
            "host_reference_lo_us": reference.lo_s * 1e6,
            "host_reference_hi_us": reference.hi_s * 1e6,
            "host_reference_leases": reference.leases,
            "host_reference_outside_us": outside * 1e6,
            "host_speedup_at_reference": found.speedup if found else None,
            "host_low_at_reference": found.low if found else None,
            "host_high_at_reference": _bounded(found.high) if found else None}


def reference_of(data: Data, device_name: str) -> host_model.Reference | None:
    """The reference host of one GPU type (or CPU model), None where no lease timed the probe."""
    return of(data).references.get(device_name)


def with_columns(table: pd.DataFrame, found: HostModels) -> pd.DataFrame:
    """The published table (one row per case over eager) with the host model's columns
    beside each modelled speedup, empty elsewhere."""
    over_eager = columns(found)
    over_eager = over_eager[over_eager["baseline"] == host_model.BASELINE].drop(columns="baseline")
    return table.merge(over_eager, on=KEY, how="left")


def model_for(data: Data, env_id: str, workload: str, batch_size: int | None, mode: str,
              dtype: str = DEFAULT_DTYPE) -> host_model.SpeedupModel | None:
    """The host model of one speedup over eager, None where it has none. Its `at(probe_s)`
    predicts for a reader's probe, `region(at_least)` says where a claim holds."""
    found = [m for m in of(data).models if (m.env_id, m.workload, m.batch_size, m.mode, m.dtype)
             == (env_id, workload, batch_size, mode, dtype)]
    return found[0] if found else None


# The host cost a reader's prediction is looked up at: the chooser's box steps by a tenth of
# a µs, and the grid holds the model's prediction at every such cost inside its fitted
# probes, so the browser looks a figure up and never evaluates the model itself.
GRID_STEP_US = 0.1
GRID_FIELDS = ("probe_lo_us", "probe_hi_us", "probe_median_us", "processes", "first_us",
               "speedup", "low", "high")


def grid(model: host_model.SpeedupModel) -> list:
    """`model` as the chooser carries it, in GRID_FIELDS order: the probes it was fitted
    on, their median and its paired processes, then its prediction (`model.at`) at every
    multiple of GRID_STEP_US inside those probes, from `first_us` up: the speedup, the
    band's low and high end, each in hundredths as `python -m bench host` prints them
    (2 decimals), the first absolute and every later one the change from the one before
    (a band's top None where it has none, its change then counted from the last top that
    was). Outside the probes the chooser predicts nothing, as the command does."""
    lo, hi = model.probe_range_s
    tenths = [k for k in range(math.ceil(lo * 1e6 / GRID_STEP_US) - 1,
                               math.floor(hi * 1e6 / GRID_STEP_US) + 2)
              if model.outside(probe_us(k) * 1e-6) == 0]
    found = [model.at(probe_us(k) * 1e-6) for k in tenths]
    series = [[p.speedup for p in found], [p.low for p in found], [_bounded(p.high) for p in found]]
    return [_short(lo * 1e6), _short(hi * 1e6), _short(model.probe_median_s * 1e6),
            model.processes, probe_us(tenths[0]) if tenths else None,
            *(_changes([None if v is None else hundredths(v) for v in values])
              for values in series)]


def probe_us(tenth: int) -> float:
    """The host cost of a grid step: what a reader types, and `--op-us` takes, as a figure."""
    return tenth / round(1 / GRID_STEP_US)


def hundredths(value: float) -> int:
    """A speedup as the pages and the command print it (2 decimals), in hundredths."""
    return int(f"{value:.2f}".replace(".", ""))


def _changes(values: list[int | None]) -> list[int | None]:
    out, last = [], 0
    for value in values:
        out.append(None if value is None else value - last)
        last = last if value is None else value
    return out


def _short(value: float) -> float:
    """A probe figure with the digits the chooser prints (a tenth of a µs) and a few more."""
    return float(f"{value:.6g}")


def for_export(data: Data) -> pd.DataFrame:
    """`columns` of the site's models."""
    return columns(of(data))


def checks(found: list[host_model.Check]) -> pd.DataFrame:
    """One row per check: the lease, its median probe and the mean of its probe's blocks
    (`probe_mean_us`, with the time preemptions took; `time_sliced` where that is more than
    host_model.NEAR above the probe), where the model's probes lie, how far outside them the
    lease was (`outside_us`, 0 inside), the measured and predicted speedup with the band,
    and whether the measured one is inside it."""
    out = []
    for check in found:
        model, prediction = check.model, check.prediction
        lo, hi = model.probe_range_s
        host, _, boot = check.lease.partition("/")
        out.append({**model.describes(), "ratio": model.ratio, "lease": check.lease,
                    "host": f"{host} boot {boot[:8]}",
                    "probe_us": check.probe_s * 1e6,
                    "probe_mean_us": check.probe_mean_s * 1e6, "time_sliced": check.time_sliced,
                    "probe_lo_us": lo * 1e6,
                    "probe_hi_us": hi * 1e6, "outside_us": prediction.outside_s * 1e6,
                    "measured": check.measured, "predicted": prediction.speedup,
                    "low": prediction.low,
                    "high": _bounded(prediction.high),
                    "inside": check.inside, "processes": check.processes,
                    "processes_inside": check.processes_inside})
    return _sorted(pd.DataFrame(out, columns=CHECK_COLUMNS))


def held_out(data: Data) -> pd.DataFrame:
    return checks(of(data).held_out)


def slowed(data: Data) -> pd.DataFrame:
    return checks(of(data).slowed)


def summary(table: pd.DataFrame) -> dict | None:
    """How many checks, cases and processes fell inside their band, and the share; how many
    checks were at a probe beyond the probes fitted (`extrapolated`), and inside it; how many
    fell outside on a time-sliced host, and how many outside beyond the probes fitted on one
    that was not."""
    if table.empty:
        return None
    inside = table[table["inside"]]
    return {"checks": len(table), "inside": len(inside), "share": len(inside) / len(table),
            "cases": table[[*KEY, "baseline"]].drop_duplicates().shape[0],
            "extrapolated": int((table["outside_us"] != 0).sum()),
            "extrapolated_inside": int(((table["outside_us"] != 0) & table["inside"].astype(bool)).sum()),
            "processes": int(table["processes"].sum()),
            "processes_inside": int(table["processes_inside"].sum()),
            "time_sliced_outside": int(_missed_time_sliced(table).sum()),
            "extrapolated_outside": int(_missed_extrapolated(table).sum())}


COVERAGE_GOAL = host_model.COVERAGE_GOAL


def coverage(table: pd.DataFrame, by: list[str]) -> list[dict]:
    """Leave-one-lease-out coverage (`checks` rows of `held_out`) per value of `by`: the
    held-out processes and how many fell inside their band at their own probe, the share,
    the checks (a case on one lease) and cases, and whether the share meets COVERAGE_GOAL."""
    if table.empty:
        return []
    out = []
    for key, group in table.groupby(by, dropna=False, sort=False):
        processes, inside = int(group["processes"].sum()), int(group["processes_inside"].sum())
        out.append({**dict(zip(by, key if isinstance(key, tuple) else (key,), strict=True)),
                    "processes": processes, "processes_inside": inside,
                    "share": inside / processes if processes else None,
                    "checks": len(group), "leases": group["lease"].nunique(),
                    "cases": group[[*KEY, "baseline"]].drop_duplicates().shape[0],
                    "meets": bool(processes) and inside / processes >= COVERAGE_GOAL})
    return out


def coverage_by_gpu(table: pd.DataFrame) -> list[dict]:
    """`coverage` per GPU type (device_name), every environment of it together."""
    return sorted(coverage(table, ["device_name"]), key=lambda r: str(r["device_name"]))


def coverage_by_case(table: pd.DataFrame) -> list[dict]:
    """`coverage` per case (KEY and baseline), in page order."""
    return coverage(table, [*KEY, "baseline"])


def _missed_time_sliced(table: pd.DataFrame) -> pd.Series:
    """The checks outside their band on a time-sliced host."""
    return ~table["inside"].astype(bool) & table["time_sliced"].astype(bool)


def _missed_extrapolated(table: pd.DataFrame) -> pd.Series:
    """The checks outside their band at a probe beyond the probes fitted, on a host that was
    not time-sliced."""
    return (~table["inside"].astype(bool) & (table["outside_us"] != 0)
            & ~table["time_sliced"].astype(bool))


def not_predictable(table: pd.DataFrame) -> pd.DataFrame:
    """The cases (KEY and baseline) with a check outside its band."""
    return table.loc[~table["inside"].astype(bool), [*KEY, "baseline"]].drop_duplicates()


def time_sliced(table: pd.DataFrame) -> list[dict]:
    """Per lease (`host`), its checks outside their band where the probe's blocks averaged
    more than host_model.NEAR above their median (`checks` rows, as `checks`): there
    preemptions cut the probe's blocks, the median left the cuts out, and the model was
    read at a probe below what an eager op cost."""
    found = table[_missed_time_sliced(table)]
    return [{"host": host, "checks": rows(group)}
            for host, group in found.groupby("host", sort=False)]


def extrapolated_misses(table: pd.DataFrame) -> list[dict]:
    """Per lease (`host`), its checks outside their band at a probe beyond the probes fitted,
    on a host that was not time-sliced (`time_sliced` has those): the probe range it was at,
    and which way the measured speedups missed, "below" or "above" where all missed one way
    (the line, fitted on the leases measured, over- or under-predicts that far out), else
    None."""
    found = table[_missed_extrapolated(table)]
    out = []
    for lease_host, group in found.groupby("host", sort=False):
        below = group["high"].notna() & (group["measured"] < group["high"])
        side = "below" if below.all() else "above" if not below.any() else None
        out.append({"host": lease_host, "checks": rows(group), "side": side,
                    "probe_low_us": group["probe_us"].min(), "probe_high_us": group["probe_us"].max(),
                    "fitted_low_us": group["probe_lo_us"].min(),
                    "fitted_high_us": group["probe_hi_us"].max()})
    return out


def unchecked(modelled: pd.DataFrame, table: pd.DataFrame) -> pd.DataFrame:
    """The modelled speedups (`models` rows: KEY and baseline) without a check in `table`."""
    key = [*KEY, "baseline"]
    found = modelled[key].merge(table[key].drop_duplicates(), on=key, how="left", indicator=True)
    return found.loc[found["_merge"] == "left_only", key].reset_index(drop=True)


def _terms(side: host_model.Line | host_model.Figure) -> dict:
    """A side's export columns: a line's terms or a figure's, None for the other kind."""
    found = dict.fromkeys((*LINE_TERMS, *FIGURE_TERMS))
    if isinstance(side, host_model.Line):
        found.update(intercept_s=side.intercept_s, slope=side.slope,
                     residual_sd_s=side.residual_sd_s, half_width_s=side.half_width_s,
                     processes=side.processes, probe_mean_us=side.probe_mean_s * 1e6,
                     probe_sxx_us2=side.probe_sxx * 1e12)
    else:
        found.update(median_s=side.median_s, lo_s=side.lo_s, hi_s=side.hi_s)
    return found


def _fitted(model: host_model.SpeedupModel) -> str:
    """Which side the model fits as a line: the baseline's name, the mode's, or "both"."""
    if len(model.lines) == 2:
        return "both"
    return model.baseline if isinstance(model.base, host_model.Line) else model.mode


def _bounded(high: float) -> float | None:
    """A band's top, None where the mode's band reaches zero time (no upper bound)."""
    return None if math.isinf(high) else high


def _sorted(table: pd.DataFrame) -> pd.DataFrame:
    """Page order, each environment's rows together."""
    return ordered(table, batch_first=True).sort_values("env_id", kind="stable").reset_index(drop=True)


ESTIMATOR_WORDS = {
    host_model.LINE: "a straight line per case, on its own processes",
    host_model.OPS: "the case's floor + a cost per eager op shared by the GPU type × the ops it dispatches",
    host_model.ELASTICITY: "the case's floor + a relative slope (time per probe) shared by the GPU type",
}


def estimator_comparison(found: HostModels) -> list[dict]:
    """Per GPU type and estimator (host_model.ESTIMATORS): how it predicted the leases it
    never saw (host_model.Score: models published, held-out processes inside their band,
    median |centre error|), whether it reaches COVERAGE_GOAL, and whether it is the one
    chosen (host_model.chosen), in GPU-type order."""
    out = []
    for score in sorted(found.scores, key=lambda s: (s.device_name,
                                                     host_model.ESTIMATORS.index(s.estimator))):
        out.append({"device_name": score.device_name, "estimator": score.estimator,
                    "described": ESTIMATOR_WORDS[score.estimator], "models": score.models,
                    "processes": score.processes, "processes_inside": score.inside,
                    "share": score.share, "centre_error": score.centre_error,
                    "meets": score.meets,
                    "chosen": found.estimator.get(score.device_name) == score.estimator})
    return out


def fresh_check(found: HostModels) -> list[dict]:
    """The fresh-lease check per GPU type and estimator: the models fitted on the leases
    before FRESH_CUTOFF, set against the processes of the leases first seen after it (one
    row each: the fresh leases, cases checked, processes inside their band at their own
    probe, the median |centre error| over them, how many checks were at a probe beyond
    the probes fitted), and whether the estimator is the one chosen today."""
    groups: dict[tuple, list[host_model.Check]] = {}
    for check in found.fresh:
        groups.setdefault((check.model.device_name, check.model.estimator), []).append(check)
    out = []
    for (device, estimator), checks in sorted(groups.items(), key=lambda kv: (
            kv[0][0], host_model.ESTIMATORS.index(kv[0][1]))):
        errors = [e for c in checks for e in c.centre_errors]
        processes = sum(c.processes for c in checks)
        inside = sum(c.processes_inside for c in checks)
        out.append({"device_name": device, "estimator": estimator,
                    "leases": len({c.lease for c in checks}),
                    "cases": len({(c.model.env_id, c.model.point, c.model.mode) for c in checks}),
                    "processes": processes, "processes_inside": inside,
                    "share": inside / processes if processes else None,
                    "centre_error": statistics.median(errors) if errors else None,
                    "extrapolated": sum(c.extrapolated for c in checks),
                    "chosen": found.estimator.get(device) == estimator})
    return out
