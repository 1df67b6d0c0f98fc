"""What each release changed: first from the A/B groups (releases measured alternately on
one host in one run, judged against the A/A noise floor by `report.releases.ab`), then the older
runs, compared by `compare.judge` only where both releases ran on the same host."""

from __future__ import annotations

import pandas as pd

from report.analysis import rows
from report.formatting import microseconds
from report.releases import ab, compare, history, vocabulary
from report.site import Site

PAGE = "analysis/changes.md"


def ab_sections(site: Site) -> list[dict]:
    """One section per A/B comparison, newest group first, with its cases and the command
    that prints the same table."""
    found = ab.site_steps(site.data)
    side_rows = ab.site_sides(site.data)
    sections = []
    for summary in reversed(rows(ab.summary(found))):
        of = found[(found["group"] == summary["group"]) & (found["old_label"] == summary["old_label"])
                   & (found["new_label"] == summary["new_label"])]
        old_spec = f"group={summary['group']},label={summary['old_label']}"
        new_spec = f"group={summary['group']},label={summary['new_label']}"
        output, _ = compare.ab_text(ab.site_records(site.data), summary["group"],
                                    summary["old_label"], summary["new_label"])
        sections.append({
            "summary": summary, "host": vocabulary.host_text(summary["hosts"]),
            "floor": (f"{ab.factor(summary['floor_median'])} (median over "
                      f"{summary['floor_cases']} cases, largest "
                      f"{ab.factor(summary['floor_max'])}; A/A run of group "
                      f"{summary['floor_group']}: "
                      f"{ab.aa_runs(side_rows, summary['floor_group'])})")
            if summary["floor_cases"] else ab.NO_FLOOR,
            "floor_short": ab.factor(summary["floor_median"]) if summary["floor_cases"]
            else ab.NO_FLOOR,
            "cases": [{**r, "floor_text": ab.factor(r["floor"])} for r in rows(of)],
            "show_profile": of["profile"].nunique() > 1,
            "command": f"python -m report compare {old_spec} {new_spec}", "output": output})
    return sections


def older_sections(site: Site) -> tuple[list[dict], list[dict]]:
    """The older runs' consecutive releases: judged sections where both ran on one host,
    and one line for each pair whose hosts differ or are not recorded."""
    records = history.site_older(site.data)
    judged = history.site_changes(site.data)
    sections, apart = [], []
    for p in history.older_pairs(records).itertuples():
        if not p.same_host:
            known = p.old_hosts is not None and p.new_hosts is not None
            apart.append({"pair": p._asdict(), "old_host": vocabulary.host_text(p.old_hosts),
                          "differ": "the hosts differ" if known
                          else "the hosts are not known to be the same",
                          "new_host": vocabulary.host_text(p.new_hosts),
                          "old_probe": microseconds(p.old_probe_us),
                          "new_probe": microseconds(p.new_probe_us),
                          "probed": pd.notna(p.old_probe_us) or pd.notna(p.new_probe_us)})
            continue
        of = judged[(judged["old_env_id"] == p.old_env_id) & (judged["new_env_id"] == p.new_env_id)]
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
    return sections, apart


def render(site: Site) -> None:
    envs = history.releases(history.site_older(site.data))
    sections, apart = older_sections(site)
    site.page(PAGE, "changes.md.j2", ab_sections=ab_sections(site),
              newest=ab.release_answer(site.data), sections=sections,
              apart=apart, min_effect=vocabulary.MIN_EFFECT, one_release=_one_release(envs),
              no_floor=ab.NO_FLOOR)


def _one_release(envs: pd.DataFrame) -> list[str]:
    """Labels of machines measured with one release only: nothing to compare there yet."""
    alone = envs[envs["releases"] == 1]
    return [f"{r['lineage_label']} (torch {r['release']})" for _, r in alone.iterrows()]
