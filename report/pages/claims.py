"""Claims, measured: each circulating claim tested against the records of every environment."""

from __future__ import annotations

from report import claims
from report.site import Site


def render(site: Site) -> None:
    found = claims.sections(site.data, site.by_backend)
    site.page("analysis/claims.md", "claims.md.j2", sections=found,
              verdicts=claims.verdict_table(site.data, found))
