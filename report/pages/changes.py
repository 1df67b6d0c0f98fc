"""Regressions and improvements between consecutive releases on one machine, judged by
`compare.judge`, with the output of `python -m report compare` for each machine's newest
pair of releases."""

from __future__ import annotations

import pandas as pd

from report import compare, history
from report.analysis import rows
from report.site import Site

PAGE = "analysis/changes.md"


def render(site: Site) -> None:
    records = site.data.records
    judged = history.site_changes(site.data)
    envs = history.releases(records)
    sections, newest = [], {}
    for p in history.pairs(envs).itertuples():
        of = judged[(judged["lineage"] == p.lineage) & (judged["old_env_id"] == p.old_env_id)
                    & (judged["new_env_id"] == p.new_env_id)]
        changed = of[of["significant"]].sort_values("ratio", ascending=False, kind="stable")
        sections.append({
            "pair": p._asdict(), "means": rows(compare.geomean(of)),
            "slower": compare.table_rows(changed[changed["direction"] == "slower"]),
            "faster": compare.table_rows(changed[changed["direction"] == "faster"].iloc[::-1]),
            "single": compare.table_rows(of[of["single_run"]]),
            "status": compare.table_rows(compare.status_changed(of)),
            "compared": int((of["timed"] & ~of["single_run"]).sum()),
            "same": int((of["timed"] & ~of["single_run"] & ~of["significant"]).sum()),
            "untimed": int((~of["timed"]).sum()),
            "show_profile": of["profile"].nunique() > 1})
        newest[p.lineage] = p  # pairs come in release order: the last one stays
    outputs = []
    for p in newest.values():
        old_spec = compare.selector_for(records, p.old_env_id)
        new_spec = compare.selector_for(records, p.new_env_id)
        old, new = compare.choose(records, old_spec), compare.choose(records, new_spec)
        outputs.append({"pair": p._asdict(), "command": f"python -m report compare {old_spec} "
                        f"{new_spec}", "output": compare.text(old, new, compare.compare_sides(old, new))})
    summary = [{"pair": s["pair"], "compared": s["compared"], "slower": len(s["slower"]),
                "faster": len(s["faster"]), "single": len(s["single"])} for s in sections]
    site.page(PAGE, "changes.md.j2", sections=sections, outputs=outputs, summary=summary,
              min_effect=compare.MIN_EFFECT, lineages=envs["lineage"].nunique() if not envs.empty
              else 0, one_release=_one_release(envs))


def _one_release(envs: pd.DataFrame) -> list[str]:
    """Labels of machines measured with one release only: nothing to compare there yet."""
    alone = envs[envs["releases"] == 1]
    return [f"{r['lineage_label']} (torch {r['release']})" for _, r in alone.iterrows()]
