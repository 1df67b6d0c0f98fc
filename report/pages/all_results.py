"""Every record the site is built from, failures and every process included, one table
per environment."""

from __future__ import annotations

from report.analysis import Environment, ordered, rows
from report.site import Site


def render(site: Site) -> None:
    shown = site.data.shown

    def build(env: Environment):
        found = rows(ordered(shown[shown["env_id"] == env.env_id], "tag", "repeat"))
        return {"results": found} if found else None

    site.page("analysis/all-results.md", "all-results.md.j2", backends=site.by_backend(build))
