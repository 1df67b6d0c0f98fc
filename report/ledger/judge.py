"""The Judge: a claim's cases in one environment, the helpers every test kind shares
(the two modes' rows side by side, a point's identity, the per-process values of each
side), and the verdict of one claim in one environment."""

from __future__ import annotations

import functools
import math

import pandas as pd

from report import analysis
from report.analysis.host import model_for
from report.ledger.comparison import NOT_MEASURED, NOT_TESTABLE, Comparison, HostRegion, Judgement
from report.ledger.kinds import KINDS, unit_of
from report.ledger.rules import rule
from report.ledger.schema import Claim, Rule, Test
from report.ledger.values import LATER_MEMORY, judged_cases, median, missing, records
from report.ledger.verdicts import settle
from report.shapes import data as shapes

# What the evidence for a figure is: the anchor on the workload's page.
EVIDENCE_ANCHOR = {"speedup": "latency", "break-even": "compile-time",
                   "cold_first_call_s": "compile-time", "warm_first_call_s": "compile-time",
                   "recompiles": "graph-breaks-recompiles-and-cuda-graph-skips",
                   "correctness": "correctness", "rel_error": "correctness",
                   "warmup_calls_to_steady": "", "first_calls_much_slower": ""}


def _env_of(here: pd.DataFrame) -> str:  # by position: ten times faster than by column
    return here.iat[0, here.columns.get_loc("env_id")]


def _point_keys(frame: pd.DataFrame) -> list[tuple]:
    """analysis.POINT of each row, hashable and with every missing value as None."""
    columns = [frame[c].to_numpy(dtype=object) for c in analysis.POINT]
    return [tuple(None if missing(v) else v for v in row) for row in zip(*columns, strict=True)]


class Judge:
    """Judges claims against one analysed Data (report.analysis.Data)."""

    def __init__(self, data: analysis.Data):
        self.data = data
        self._scope: dict[str, list[str]] = {}
        self._shared: dict = {}
        self.forget()

    def shared(self, value):
        """One object for each equal text or tuple the judgements keep: a few recur in every
        environment, and a copy each was a quarter of the judged ledger's memory (issue 94)."""
        return self._shared.setdefault(value, value)

    # The tables judging reads (values.judged_cases), built when first asked; `_measured`: a
    # claim about workloads an environment never ran is told so without filtering its cases.
    with_values = functools.cached_property(lambda self: judged_cases(self.data))
    _by_env = functools.cached_property(lambda self: analysis.by_env(self.with_values))
    _none = functools.cached_property(lambda self: self.with_values.iloc[:0])  # sliced once
    _measured = functools.cached_property(
        lambda self: {env_id: set(cases["workload"]) for env_id, cases in self._by_env.items()})

    def forget(self) -> None:
        """Drop the tables and what judging keeps per pair of modes and environment: once every
        claim is judged only `workloads` is asked, and at ten thousand environments they were
        hundreds of MB kept to the render's end (issue 94)."""
        for name in ("with_values", "_by_env", "_none", "_measured"):
            self.__dict__.pop(name, None)
        self._pairs: dict[tuple, dict] = {}
        self._memo: tuple[str | None, dict] = (None, {})
        self._per_kernel: tuple[pd.DataFrame, dict[str, pd.DataFrame]] | None = None

    @classmethod
    def of(cls, data: analysis.Data) -> Judge:
        """The one Judge of a site build: every page judges against the same data."""
        return data.memo(cls, lambda: cls(data))

    # -- scope ------------------------------------------------------------------------------
    def workloads(self, claim: Claim) -> list[str]:
        """The measured workloads a claim is about, in registry order."""
        if claim.id not in self._scope:
            self._scope[claim.id] = [
                w for w in self.data.workloads
                if (w in claim.workloads or self.data.family(w) in claim.families)
                and bool((self.data.workload_info(w) or {}).get("training") or False)
                == claim.training]
        return self._scope[claim.id]

    def env_cases(self, env_id: str) -> pd.DataFrame:
        return self._by_env.get(env_id, self._none)

    def per_kernel(self, env_id: str) -> pd.DataFrame:
        """analysis.per_kernel of one environment's cases (the launch chains), computed
        over every environment at once: each launch claim and side reads it."""
        if self._per_kernel is None:
            every = analysis.per_kernel(self.with_values)
            self._per_kernel = (every.iloc[:0], analysis.by_env(every))
        none, parts = self._per_kernel
        return parts.get(env_id, none)

    def points(self, claim: Claim, env_id: str) -> pd.DataFrame:
        """Cases of `env_id` in the claim's scope (every mode)."""
        scope = tuple(w for w in self.workloads(claim) if w in self._measured.get(env_id, ()))
        if not scope:
            return self._none
        memo = self._of_env(env_id)
        key = ("points", scope, claim.batch_range)  # many claims share a scope
        if key not in memo:
            c = self.env_cases(env_id)
            here = c[c["workload"].isin(scope)]
            if claim.batch_range:
                lo, hi = claim.batch_range
                b = here["batch_size"]
                here = here[b.isna() | ((b >= (lo or 0)) & (b <= (math.inf if hi is None
                                                                    else hi)))]
            memo[key] = here
        return memo[key]

    def stream_points(self, claim: Claim, env_id: str) -> list[dict]:
        """The shape-stream cases (report.shapes.data.cases) of `env_id` in the claim's
        scope: the workloads it names and those of the families it names, every mode."""
        every = self.data.memo(("ledger", "stream cases"), lambda: shapes.cases(self.data.records))
        return [case for case in every if case["env_id"] == env_id and (
            case["workload"] in claim.workloads
            or self.data.family(case["workload"]) in claim.families)]

    def _of_env(self, env_id: str) -> dict:
        """What judging one environment computes once for all its claims (results.judge
        judges environment by environment); dropped when the next environment begins."""
        if self._memo[0] != env_id:
            self._memo = (env_id, {})
        return self._memo[1]

    def _kept(self, here: pd.DataFrame, what: str, compute):
        """`compute(here)`, kept with the frame for the claims of its environment that share
        it (the frame is kept too, so that its id names it)."""
        memo = self._of_env(_env_of(here))
        found = memo.get((what, id(here)))
        if found is None or found[0] is not here:
            found = memo[(what, id(here))] = (here, compute(here))
        return found[1]

    def _wanted(self, here: pd.DataFrame) -> set[tuple]:
        """The points of `here`."""
        return self._kept(here, "points of", lambda frame: set(_point_keys(frame)))

    def mode_rows(self, here: pd.DataFrame, mode: str) -> list[dict]:
        """The rows of `here` in `mode`, as dicts (values.records)."""
        if here.empty:
            return []
        return [row for row in self._kept(here, "records", records) if row["mode"] == mode]

    # -- what the kinds share -----------------------------------------------------------------
    def compared(self, mode: str, baseline: str) -> pd.DataFrame:
        """analysis.compare of the two over every environment, once per pair of modes."""
        key = (mode, baseline, "compared")
        if key not in self._pairs:
            self._pairs[key] = analysis.compare(self.with_values, mode, baseline)
        return self._pairs[key]

    def pairs(self, here: pd.DataFrame, mode: str, baseline: str) -> pd.DataFrame:
        """analysis.compare of `mode` and `baseline` at the points of `here`."""
        key = (mode, baseline)
        if key not in self._pairs:
            self._pairs[key] = {env_id: (rows, _point_keys(rows)) for env_id, rows in
                                analysis.by_env(self.compared(mode, baseline)).items()}
        found = self._pairs[key].get(_env_of(here)) if len(here) else None
        if found is None:
            return here.iloc[:0]
        rows, keys = found
        wanted = self._wanted(here)
        return rows[[k in wanted for k in keys]]

    def pair_rows(self, here: pd.DataFrame, mode: str, baseline: str) -> list[dict]:
        """`pairs` as dicts (values.records)."""
        return self.rows_at(here, (mode, baseline, "rows"), lambda: self.compared(mode, baseline))

    def rows_at(self, here: pd.DataFrame, key: tuple, compute) -> list[dict]:
        """The rows of `compute()` (a table over every environment) at the points of `here`,
        as dicts, converted once for every environment under `key`: the kinds that walk the
        rows ask for the same environment claim after claim."""
        if key not in self._pairs:
            grouped = self._pairs[key] = {}
            for row in records(compute()):
                converted, keys = grouped.setdefault(row["env_id"], ([], []))
                converted.append(row)
                keys.append(tuple(None if missing(row[c]) else row[c] for c in analysis.POINT))
        found = self._pairs[key].get(_env_of(here)) if len(here) else None
        converted, keys = found or ([], [])
        wanted = self._wanted(here) if found else set()
        return [row for row, k in zip(converted, keys, strict=True) if k in wanted]

    def point(self, row: dict, anchor_key: str) -> Comparison:
        """A comparison at `row`'s point, with what the host there was like."""
        workload = row["workload"]
        info = self.data.workload_info(workload) or {}
        batch = None if missing(row["batch_size"]) else int(row["batch_size"])
        flops, host = row.get("flops"), row.get("host_probe_us")
        if missing(host):
            probes = row.get("host_probe_us_v_base") or row.get("host_probe_us_v")
            host = median(probes) if isinstance(probes, tuple) and probes else None
        anchor = EVIDENCE_ANCHOR.get(anchor_key, "memory-and-device-activity")
        return Comparison(workload=workload, batch=batch, axis=info.get("axis") or "batch",
                          family=self.data.family(workload),
                          flops=None if missing(flops) else float(flops),
                          host_us=None if missing(host) else float(host),
                          evidence=self.shared((f"workloads/{workload}.md", anchor)))

    def sides(self, row: dict, test: Test, column: str, comparison: Comparison
              ) -> tuple[tuple, tuple] | None:
        """The mode's and the baseline's per-process values of `column` at `row`, or None
        (with the comparison's note saying why)."""
        mine, base = row.get(f"{column}_v"), row.get(f"{column}_v_base")
        mine = mine if isinstance(mine, tuple) else ()
        base = base if isinstance(base, tuple) else ()
        comparison.processes = self.shared((len(mine), len(base)))
        both = row["ok"] is True and row["ok_base"] is True
        if not both or not mine or not base:
            comparison.note = self.shared(self.why_missing(row, test, column))
            comparison.field_absent = both
            return None
        return mine, base

    def floor(self, here: pd.DataFrame, row: dict, column: str) -> float | None:
        """Eager's figure at the point of `row`: what the metric reads with nothing to warm."""
        same = here[(here["mode"] == analysis.BASELINE) & (here["workload"] == row["workload"])
                    & (here["batch_size"].isna() if missing(row["batch_size"])
                       else here["batch_size"] == row["batch_size"])]
        return median(tuple(v for found in same[f"{column}_v"] if isinstance(found, tuple)
                            for v in found))

    def host_region(self, row: dict, mode: str, agrees) -> HostRegion | None:
        """Where the host model of a speedup over eager at `row` (report.analysis.host: one
        only where the speedup follows the host) meets the claim's lower bound and, for a
        range or a point, passes its upper one; for an upper bound alone, where it surely
        passes it; None without a model or a stated bound."""
        if not isinstance(agrees, Rule) or (agrees.lo is None and agrees.hi is None):
            return None
        batch = None if missing(row["batch_size"]) else int(row["batch_size"])
        model = model_for(self.data, row["env_id"], row["workload"], batch, mode,
                          row[analysis.DTYPE])
        if model is None:
            return None

        def region(bound: float) -> tuple[str, float | None]:
            where, probe = model.region(bound)
            return where, None if probe is None else probe * 1e6

        lo, hi = model.probe_range_s
        above = region(agrees.hi) if agrees.hi is not None else ("nowhere", None)
        banded = agrees.banded and agrees.exceeds_side == 1
        return HostRegion(batch=batch, holds=None if agrees.lo is None else region(agrees.lo),
                          lo_us=lo * 1e6, hi_us=hi * 1e6, processes=model.processes,
                          exceeds=above if banded else ("nowhere", None),
                          fails=above if agrees.lo is None else ("nowhere", None))

    @staticmethod
    def why_missing(row: dict, test: Test, column: str) -> str:
        parts = []
        for side, mode in (("", test.mode), ("_base", test.baseline or analysis.BASELINE)):
            ok, values = row.get(f"ok{side}"), row.get(f"{column}_v{side}")
            if ok is not True and not missing(row.get(f"status{side}")):
                parts.append(f"{mode}: {row[f'status{side}']}")
            elif ok is not True:
                parts.append(f"no {mode} record")
            elif not isinstance(values, tuple) or not values:
                parts.append(f"no {column} for {mode}")
        return "; ".join(parts)

    # -- one claim in one environment -----------------------------------------------------
    def comparisons(self, claim: Claim, env_id: str) -> list[Comparison]:
        kind = KINDS[claim.test.kind]
        agrees = kind.agrees(claim.test) if kind.agrees else rule(claim.test)
        if kind.streams:
            here = self.stream_points(claim, env_id)
            return kind.compare(self, here, env_id, claim.test, agrees) if here else []
        here = self.points(claim, env_id) if kind.scoped else self.env_cases(env_id)
        if kind.scoped and here.empty:
            return []
        return kind.compare(self, here, env_id, claim.test, agrees)

    def judge(self, claim: Claim, env: analysis.Environment) -> Judgement:
        out = Judgement(env.env_id, env.label, env.backend, NOT_MEASURED,
                        unit=unit_of(claim.test))
        if KINDS[claim.test.kind].compare is not None:
            out.comparisons = self.comparisons(claim, env.env_id) or ()
        if not claim.testable and (claim.test.kind == "none" or not out.measured):
            out.verdict, out.reason = NOT_TESTABLE, claim.missing
            return out
        if not out.measured:
            self._unmeasured(claim, env, out)
            return out
        settle(claim.test, out)
        return out

    def _unmeasured(self, claim: Claim, env: analysis.Environment, out: Judgement) -> None:
        notes = sorted({c.note for c in out.comparisons if c.note})
        scope = " or ".join(filter(None, (
            f"a workload of family {', '.join(claim.families)}" if claim.families else "",
            ", ".join(claim.workloads))))
        out.reason = self.shared("; ".join(notes) or (
            f"no records of {scope} here" if not out.comparisons
            else "no comparison has both sides measured"))
        twins = dict(env.not_separately)
        left = [twins[m] for m in dict.fromkeys((claim.test.mode, claim.test.baseline))
                if m in twins]
        if left:  # the mode's kernels were measured, under its twin's name
            out.reason = "; ".join(left)
        if out.comparisons and all(c.field_absent for c in out.comparisons):
            quantity = claim.test.metric or claim.test.field or "latency"
            if quantity in LATER_MEMORY and env.backend == "cuda":
                # A CUDA field newer than these records: it can be measured, it was not.
                out.reason = f"no record of these cases carries {quantity} yet"
                return
            if quantity == "peak_device_bytes" and env.backend == "cuda":
                out.reason = ("these records are of schema version 1, whose device-memory "
                              "peak includes the workspaces of the first calls' libraries")
                return
            # The cases ran, but this backend's records never hold the quantity.
            out.verdict = NOT_TESTABLE
            out.reason = f"the {env.backend} records hold no {quantity}"
