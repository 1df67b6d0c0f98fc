"""Every record the site is built from, failures and every process included: an index of
environments, and one page per environment with its records (one page of every record
was 700 KB of HTML)."""

from __future__ import annotations

from report.analysis import of_env, ordered, rows
from report.site import Site

PAGE = "analysis/all-results.md"


def env_page(env_id: str) -> str:
    return f"analysis/results/{env_id}.md"


def render(site: Site) -> None:
    data = site.data
    shown = data.shown
    envs = []
    for backend in data.backends:
        for env in data.envs(backend):
            here = ordered(of_env(shown, env.env_id), "tag", "repeat")
            if here.empty:
                continue
            files = sorted({s.rsplit(":", 1)[0] for s in here["source"]})
            found = [{**r, "line": r["source"].rsplit(":", 1)[1],
                      "file": r["source"].rsplit(":", 1)[0]} for r in rows(here)]
            site.page(env_page(env.env_id), "all-results-env.md.j2", env=env, results=found,
                      files=files)
            envs.append({"env": env, "records": len(found), "ok": int(here["ok"].sum()),
                         "page": env_page(env.env_id).removeprefix("analysis/")})
    site.page(PAGE, "all-results.md.j2", envs=envs)
