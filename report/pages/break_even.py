"""Calls after which compiling pays off, with cold and with warm compile times."""

from __future__ import annotations

from report.analysis import BASELINE, Environment, break_even, ordered, rows
from report.site import Site


def render(site: Site) -> None:
    table = site.data.speedups
    table = ordered(table[table["mode"] != BASELINE], batch_first=True)
    saving = table["median_s_base"] - table["median_s"]
    table = table.assign(saving=saving,
                         cold_calls=break_even(table["cold_first_call_s"], saving),
                         warm_calls=break_even(table["warm_first_call_s"], saving))

    def build(env: Environment):
        found = rows(table[table["env_id"] == env.env_id])
        return {"rows": found} if found else None

    site.page("analysis/break-even.md", "break-even.md.j2", backends=site.by_backend(build))
