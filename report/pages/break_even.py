"""Calls after which compiling pays off, with cold and with warm compile times: a summary
per mode and environment, and one page per environment with every case (one page of
every case outgrew 300 KB of HTML as the GPU profiles filled in)."""

from __future__ import annotations

import math
from statistics import median
from typing import Any

from report.analysis import BASELINE, Environment, of_env, ordered, rows
from report.site import Site

PAGE = "analysis/break-even.md"


def env_page(env_id: str) -> str:
    return f"analysis/break-even/{env_id}.md"


def by_mode(found: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per mode, in page order: the cases measured, how many never pay off, and the calls
    to break even of those that do, cold and warm (median, fewest, most)."""
    modes: dict[str, dict[str, Any]] = {}
    for r in found:
        mode = modes.setdefault(r["mode"], {"mode": r["mode"], "cases": 0, "failed": 0,
                                            "never": 0, "cold": [], "warm": []})
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


def render(site: Site) -> None:
    table = site.data.published
    table = ordered(table[table["mode"] != BASELINE], batch_first=True)

    def build(env: Environment):
        found = rows(of_env(table, env.env_id))
        if not found:
            return None
        site.page(env_page(env.env_id), "break-even-env.md.j2", env=env, rows=found)
        return {"modes": by_mode(found), "cases": len(found),
                "page": env_page(env.env_id).removeprefix("analysis/")}

    site.page(PAGE, "break-even.md.j2", backends=site.by_backend(build))
