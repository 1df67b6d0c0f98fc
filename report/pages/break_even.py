"""Calls after which compiling pays off, with cold and with warm compile times."""

from __future__ import annotations

from report.analysis import BASELINE, Environment, of_env, ordered, rows, with_break_even
from report.site import Site


def render(site: Site) -> None:
    table = site.data.speedups
    table = with_break_even(ordered(table[table["mode"] != BASELINE], batch_first=True))

    def build(env: Environment):
        found = rows(of_env(table, env.env_id))
        return {"rows": found} if found else None

    site.page("analysis/break-even.md", "break-even.md.j2", backends=site.by_backend(build))
