"""Which PyTorch release CI should measure next: the newest on PyPI that results/ lacks.

    python -m report.releases [--results results] [--backend cpu] [--pypi-json FILE]
    python -m report.releases --before 2.15.0

prints that release, or nothing when the results already cover the newest one, so the
scheduled workflow (.github/workflows/torch-release.yml) measures each release once.
With `--before X` it prints the final release that came before X instead: the one the
workflow measures A/B against X on the same runner.
--pypi-json (or ATLAS_PYPI_JSON) reads PyPI's answer from a file: the tests simulate
the workflow offline with tests/fixtures/pypi_torch.json. Standard library only: the
workflow runs this before it installs anything.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import urllib.request
from pathlib import Path
from typing import Any

from bench.records import read_records, results_files  # the one definition of a record; stdlib only

PYPI_TORCH = "https://pypi.org/pypi/torch/json"
# Final releases only: "2.13.0", never "2.14.0rc1", "2.14.0.dev20261101" or "0.4.1.post2".
# The workflow checks the release it is given against the same pattern.
RELEASE_PATTERN = r"[0-9]+\.[0-9]+\.[0-9]+"
_FINAL = re.compile(RELEASE_PATTERN)


def final_releases(pypi: dict[str, Any]) -> list[str]:
    """PyPI's final torch releases that still have an installable file, oldest first."""
    releases = [
        version for version, files in pypi.get("releases", {}).items()
        if _FINAL.fullmatch(version) and any(not f.get("yanked", False) for f in files)
    ]
    return sorted(releases, key=lambda v: tuple(int(part) for part in v.split(".")))


def measured_releases(results_dir: Path, backend: str) -> set[str]:
    """Torch releases with at least one record from `backend`, without local tags (+cpu).
    A malformed line raises MalformedRecord (a ValueError) naming `file:line`."""
    paths = results_files(results_dir, recursive=True)
    return {record.env.torch.split("+")[0] for path in paths for record in read_records(path)
            if record.env.backend == backend}


def next_release(pypi: dict[str, Any], measured: set[str]) -> str | None:
    releases = final_releases(pypi)
    newest = releases[-1] if releases else None
    return newest if newest not in measured else None


def previous_release(pypi: dict[str, Any], release: str) -> str | None:
    """The newest final, installable release older than `release`, or None."""
    key = tuple(int(part) for part in release.split("."))
    older = [v for v in final_releases(pypi) if tuple(int(p) for p in v.split(".")) < key]
    return older[-1] if older else None


def _fetch_pypi() -> dict[str, Any]:
    with urllib.request.urlopen(PYPI_TORCH, timeout=60) as response:
        return json.load(response)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m report.releases",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=Path("results"))
    parser.add_argument("--backend", default="cpu", help="whose records count (default: cpu)")
    parser.add_argument("--pypi-json", type=Path, default=os.environ.get("ATLAS_PYPI_JSON") or None,
                        help=f"read PyPI's answer from a file instead of {PYPI_TORCH} "
                             "(default: $ATLAS_PYPI_JSON when set)")
    parser.add_argument("--before", metavar="X.Y.Z",
                        help="print the final release before this one instead")
    args = parser.parse_args(argv)
    if args.before is not None and not _FINAL.fullmatch(args.before):
        print(f"report.releases: --before {args.before!r} is not a final release such as 2.15.0",
              file=sys.stderr)
        return 2
    try:
        pypi = json.loads(args.pypi_json.read_text()) if args.pypi_json else _fetch_pypi()
        release = (previous_release(pypi, args.before) if args.before is not None
                   else next_release(pypi, measured_releases(args.results, args.backend)))
    except (OSError, ValueError) as error:  # MalformedRecord is a ValueError naming file:line
        print(f"report.releases: {error}", file=sys.stderr)
        return 1
    if release:
        print(release)
    return 0


if __name__ == "__main__":
    sys.exit(main())
