"""MkDocs hook: put the generated workload pages into the nav.

The workload list comes from the records, so mkdocs.yml cannot name the pages. The
report writes docs/workloads/.nav.json (families in page order); this hook expands
the nav entry titled "Workloads" with it. Dot-files are not published by MkDocs.
"""

from __future__ import annotations

import json
from pathlib import Path

SECTION = "Workloads"


def on_config(config):
    listing = Path(config["docs_dir"]) / "workloads" / ".nav.json"
    families = json.loads(listing.read_text(encoding="utf-8")) if listing.exists() else []
    for entry in config["nav"] or []:
        if isinstance(entry, dict) and SECTION in entry:
            overview = entry[SECTION] if isinstance(entry[SECTION], list) else [entry[SECTION]]
            entry[SECTION] = overview + [
                {group["family"]: [{title: path} for title, path in group["pages"]]}
                for group in families
            ]
    return config
