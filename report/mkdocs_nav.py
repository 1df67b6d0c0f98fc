"""MkDocs hook: put the generated pages whose list comes from the data into the nav.

The workload list comes from the records and the claims pages from report/claims.yaml
(one page per seed), so mkdocs.yml cannot name them. The report writes the lists as
dot-files, which MkDocs does not publish:

- docs/workloads/.nav.json (families in page order) expands the entry titled
  "Workloads";
- docs/analysis/claims/.nav.json ([title, path] pairs) turns the page entry titled
  "Claims, measured", wherever it sits in the nav, into a section of those pages.
"""

from __future__ import annotations

import json
from pathlib import Path

SECTION = "Workloads"
CLAIMS = "Claims, measured"
CLAIMS_NAV = Path("analysis") / "claims" / ".nav.json"


def _listing(config, relative: Path) -> list | None:
    path = Path(config["docs_dir"]) / relative
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


def _expand_claims(entries: list, pages: list) -> None:
    for entry in entries:
        if not isinstance(entry, dict):
            continue
        for title, value in entry.items():
            if title == CLAIMS and isinstance(value, str):
                entry[title] = [{name: path} for name, path in pages]
            elif isinstance(value, list):
                _expand_claims(value, pages)


def on_config(config):
    families = _listing(config, Path("workloads") / ".nav.json") or []
    for entry in config["nav"] or []:
        if isinstance(entry, dict) and SECTION in entry:
            overview = entry[SECTION] if isinstance(entry[SECTION], list) else [entry[SECTION]]
            entry[SECTION] = overview + [
                {group["family"]: [{title: path} for title, path in group["pages"]]}
                for group in families
            ]
    claims = _listing(config, CLAIMS_NAV)
    if claims:
        _expand_claims(config["nav"] or [], claims)
    return config
