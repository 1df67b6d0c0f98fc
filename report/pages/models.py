"""Real models (timm and transformers, random weights): per environment, a row per model and
batch with each mode's paired speedup over eager, then what each mode cost and what torch
reported while compiling it."""

from __future__ import annotations

import pandas as pd

from report import analysis
from report.analysis import (
    BASELINE,
    DEFAULT_DTYPE,
    DTYPE,
    MODEL_FAMILY,
    MODEL_WORKLOADS,
    Environment,
    host,
    of_env,
    ordered,
    rows,
)
from report.site import Site

PAGE = "analysis/models.md"
NO_REFERENCE = "float64-reference"  # the probe a case records when its model cannot run in float64


def model_names(data: analysis.Data) -> list[str]:
    """The registry's real models, then any other workload whose records say family "model"."""
    seen = [w for w in data.workloads if data.family(w) == MODEL_FAMILY]
    return list(dict.fromkeys([*MODEL_WORKLOADS, *seen]))


def _no_reference(data: analysis.Data) -> dict[tuple, str]:
    """Why a case has no correctness check, by (env, workload, batch, dtype, mode)."""
    found = analysis.probes(data.shown)
    found = found[found["probe"] == NO_REFERENCE]
    return {(r["env_id"], r["workload"], r["batch_size"], r[DTYPE], r["mode"]): r["summary"]
            for r in rows(found)}


def _points(mine: pd.DataFrame, names: list[str], modes: list[str]) -> list[dict]:
    """One row per model and batch measured here, one per model not measured at all."""
    points = []
    for workload in names:
        here = mine[mine["workload"] == workload]
        if here.empty:
            points.append({"workload": workload, "batch_size": None, "measured": False})
            continue
        # float32 first at each batch: the other dtypes are the variants
        order = here.assign(_other=here[analysis.DTYPE] != analysis.DEFAULT_DTYPE)
        for (batch, _, dtype), group in order.groupby(["batch_size", "_other", analysis.DTYPE],
                                                      sort=True, dropna=False):
            cells = {r["mode"]: r for r in rows(group)}
            points.append({"workload": workload, "batch_size": None if pd.isna(batch) else int(batch),
                           "dtype": dtype,
                           "measured": True, "eager": cells.get(BASELINE),
                           "cells": {m: cells.get(m) for m in modes}})
    return points


def _choices(mine: pd.DataFrame) -> list[dict]:
    """Per model and batch: `analysis.choose` at each of analysis.CALLS_STEPS, the answer
    the guide's chooser gives for the same inputs."""
    found: dict[tuple, dict] = {}
    for calls in analysis.CALLS_STEPS:
        for r in rows(analysis.choose(mine, calls)):
            point = found.setdefault((r["workload"], r["batch_size"], r[analysis.DTYPE]), {
                "workload": r["workload"], "batch_size": r["batch_size"],
                "dtype": r[analysis.DTYPE], "by_calls": []})
            point["by_calls"].append(r)
    return list(found.values())


def render(site: Site) -> None:
    data = site.data
    names = model_names(data)
    table = ordered(data.published[data.published["workload"].isin(names)], batch_first=True)
    missing_reference = _no_reference(data)

    def one_dtype(mine: pd.DataFrame, dtype: str, predicted: list[dict]) -> dict:
        """Every table of one dtype: a reader picks the dtype, and no row holds another's."""
        mine = mine[mine[DTYPE] == dtype]
        modes = [m for m in data.modes if m != BASELINE and m in set(mine["mode"])]
        details = rows(mine)
        for r in details:
            r["no_reference"] = missing_reference.get(
                (r["env_id"], r["workload"], r["batch_size"], r[DTYPE], r["mode"]))
        # The settings of the newest record of each model in this dtype: a precision line
        # ("weights and inputs in bfloat16") belongs under its own dtype's tab only.
        newest = mine.sort_values("started_at", kind="stable").groupby("workload").tail(1)
        return {"dtype": dtype, "modes": modes, "points": _points(mine, names, modes),
                "settings": rows(ordered(newest)),
                "details": details, "choices": _choices(mine),
                "reasons": [r for r in details if r["graph_break_reasons"] or r["skip_reasons"]],
                "host_model": [r for r in predicted if r[DTYPE] == dtype]}

    def build(env: Environment):
        mine = of_env(table, env.env_id)
        if mine.empty:
            return None
        predicted = [r for r in host.page_rows(data, env.env_id) if r["workload"] in names]
        return {"dtypes": [one_dtype(mine, dtype, predicted)
                           for dtype in sorted(set(mine[DTYPE]), key=lambda d: (d != DEFAULT_DTYPE, d))],
                "stability_page": f"stability/{env.env_id}.md"}

    site.page(PAGE, "models.md.j2", backends=site.by_backend(build), models=names,
              calls_steps=analysis.CALLS_STEPS)
