"""Calls after which compiling pays off, with cold and with warm compile times: a summary
per mode and environment, and one page per environment with every case (one page of
every case outgrew 300 KB of HTML as the GPU profiles filled in)."""

from __future__ import annotations

import math
from statistics import median
from typing import Any

from report.analysis import BASELINE, DEFAULT_DTYPE, DTYPE, POINT, Environment, env_rows, ordered
from report.site import Site

PAGE = "analysis/break-even.md"
# The mode meant for the least compile time, and the mode it is set against.
LITE, DEFAULT = "lite", "default"


def env_page(env_id: str) -> str:
    return f"analysis/break-even/{env_id}.md"


def by_mode(found: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per mode and dtype, in page order (the default dtype first): the cases measured, how
    many never pay off, and the calls to break even of those that do, cold and warm
    (median, fewest, most). A dtype's cases are summed apart from another's."""
    modes: dict[tuple[str, str], dict[str, Any]] = {}
    for r in sorted(found, key=lambda r: r[DTYPE] != DEFAULT_DTYPE):
        mode = modes.setdefault((r["mode"], r[DTYPE]), {
            "mode": r["mode"], "dtype": r[DTYPE], "cases": 0, "failed": 0, "never": 0,
            "cold": [], "warm": []})
        if not r["ok"] or not r["ok_base"]:
            mode["failed"] += 1
            continue
        mode["cases"] += 1
        mode["never"] += r["cold_calls"] is not None and math.isinf(r["cold_calls"])
        for side in ("cold", "warm"):
            calls = r[f"{side}_calls"]
            if calls is not None and not math.isnan(calls) and not math.isinf(calls):
                mode[side].append((calls, r["workload"], r["batch_size"]))
    for mode in modes.values():
        for side in ("cold", "warm"):
            found = sorted(mode.pop(side), key=lambda one: one[0])
            mode[f"{side}_median"] = median(calls for calls, *_ in found) if found else None
            mode[f"{side}_fewest"] = found[0] if found else None
            mode[f"{side}_most"] = found[-1] if found else None
    return list(modes.values())


def lite_against_default(found: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per point of one environment's published rows (`found`, in page order) where both
    `lite` and `default` have a row: both rows (`lite`, `default`) and lite's cold compile
    time over default's (`ratio`, None unless both compiled). A failed lite keeps its row,
    status and reason."""
    by_case = {tuple(r[c] for c in (*POINT, "mode")): r for r in found
               if r["mode"] in (LITE, DEFAULT)}
    out = []
    for point in found:
        key = tuple(point[c] for c in POINT)
        if point["mode"] != LITE or (*key, DEFAULT) not in by_case:
            continue
        mine, theirs = by_case[(*key, LITE)], by_case[(*key, DEFAULT)]
        both = mine["ok"] and theirs["ok"] and mine["cold_compile_s"] and theirs["cold_compile_s"]
        out.append({"workload": point["workload"], "batch_size": point["batch_size"],
                    "dtype": point[DTYPE], "lite": mine, "default": theirs,
                    "ratio": mine["cold_compile_s"] / theirs["cold_compile_s"] if both else None})
    return sorted(out, key=lambda r: r["dtype"] != DEFAULT_DTYPE)


def render(site: Site) -> None:
    table = site.data.published
    table = ordered(table[table["mode"] != BASELINE], batch_first=True)

    def build(env: Environment):
        found = env_rows(table, env.env_id)
        if not found:
            return None
        site.page(env_page(env.env_id), "break-even-env.md.j2", env=env, rows=found)
        return {"modes": by_mode(found), "cases": len(found), "lite": lite_against_default(found),
                "page": env_page(env.env_id).removeprefix("analysis/")}

    site.page(PAGE, "break-even.md.j2", backends=site.by_backend(build),
              lite_description=site.data.traits.get(LITE, {}).get("mode_description"))
