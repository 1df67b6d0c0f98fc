"""Claims, measured: each circulating claim tested against the records of every environment."""

from __future__ import annotations

from report import claims
from report.dataset import Dataset, Environment
from report.pages.common import by_backend
from report.site import Site


def sections(data: Dataset) -> list[dict]:
    """One section per claim: the workloads it covers and its verdict per environment."""
    found = []
    for claim in claims.CLAIMS:
        def build(env: Environment, claim=claim):
            rows = claims.compare(claim, data, env)
            if not rows:
                return None
            judged = [row for row in rows if row.agrees is not None]
            return {"rows": rows, "verdict": claims.verdict(rows), "judged": len(judged),
                    "agree": sum(row.agrees for row in judged),
                    "flips": sum(row.flips_on_rerun for row in judged)}

        found.append({"claim": claim, "workloads": claims.claim_workloads(claim, data),
                      "backends": by_backend(data, build)})
    return found


def verdict_table(data: Dataset, found: list[dict]) -> dict:
    """Claims by environment label: what the summary tables on the site show."""
    rows = [{"claim": s["claim"],
             "verdicts": {view["env"].label: view["verdict"]
                          for backend in s["backends"] for view in backend["envs"]}}
            for s in found]
    labels = [env.label for backend in data.backends for env in data.envs(backend)]
    return {"rows": rows, "labels": labels}


def render(site: Site) -> None:
    found = sections(site.data)
    site.page("analysis/claims.md", "claims.md.j2", sections=found,
              verdicts=verdict_table(site.data, found))
