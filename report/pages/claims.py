"""Claims, measured: each circulating claim tested against the records of every environment."""

from __future__ import annotations

from report import claims
from report.dataset import Environment
from report.pages.common import by_backend
from report.site import Site


def render(site: Site) -> None:
    data = site.data
    sections = []
    for claim in claims.CLAIMS:
        def build(env: Environment, claim=claim):
            rows = claims.compare(claim, data, env)
            if not rows:
                return None
            judged = [row for row in rows if row.agrees is not None]
            return {"rows": rows, "verdict": claims.verdict(rows), "judged": len(judged),
                    "agree": sum(row.agrees for row in judged)}

        sections.append({"claim": claim, "workloads": claims.claim_workloads(claim, data),
                         "backends": by_backend(data, build)})
    summary = [{"claim": s["claim"],
                "verdicts": {view["env"].label: view["verdict"]
                             for backend in s["backends"] for view in backend["envs"]}}
               for s in sections]
    labels = [env.label for backend in data.backends for env in data.envs(backend)]
    site.page("analysis/claims.md", "claims.md.j2", sections=sections, summary=summary,
              labels=labels)
