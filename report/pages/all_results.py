"""Every record the site is built from, failures included, one table per environment."""

from __future__ import annotations

from report.dataset import Environment
from report.pages.common import by_backend
from report.site import Site


def render(site: Site) -> None:
    data = site.data

    def build(env: Environment):
        results = data.results(env_id=env.env_id, tag=None)
        return {"results": results} if results else None

    site.page("analysis/all-results.md", "all-results.md.j2", backends=by_backend(data, build))
