"""python -m report --results results --docs docs
python -m report compare OLD NEW [--results results] [--fail-above 10%]  (report/releases/compare.py)
python -m report export DIR [--results results]  (report/export.py)"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from report import export, safe_output
from report.analysis import ResultsError
from report.build import build
from report.releases import compare
from report.site import OutsideDocs

SUBCOMMANDS = {"compare": compare.main, "export": export.main}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in SUBCOMMANDS:
        return SUBCOMMANDS[argv[0]](argv[1:])
    parser = argparse.ArgumentParser(
        prog="python -m report",
        description="Render results/**/*.jsonl into Markdown pages and SVG charts under docs/. "
                    "`python -m report compare OLD NEW` compares two result sets instead "
                    "(python -m report compare --help).")
    parser.add_argument("--results", type=Path, default=Path("results"),
                        help="folder searched recursively for *.jsonl and sealed *.jsonl.gz "
                             "(default: results)")
    parser.add_argument("--docs", type=Path, default=Path("docs"),
                        help="MkDocs docs_dir to write into (default: docs)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, metavar="N",
                        help="render the pages in two processes when N >= 2 (default: the "
                             "number of cores); the output is the same either way")
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error(f"--jobs {args.jobs}: give 1 or more")
    try:
        site = build(args.results, args.docs, workers=args.jobs)
    except (ResultsError, OutsideDocs) as error:
        # One line naming file:line is the whole message; a traceback would bury it.
        print(error, file=sys.stderr)
        return 1
    except safe_output.UnsafeOutput as error:
        print(f"python -m report: error: {error.strerror}", file=sys.stderr)
        return 1
    except OSError as error:
        print(f"python -m report: error: cannot write under {args.docs}: "
              f"{error.filename or ''}: {error.strerror or error}", file=sys.stderr)
        return 1
    print(f"report: {len(site.written)} files under {args.docs} from "
          f"{site.data.record_count} records")
    return 0


if __name__ == "__main__":
    sys.exit(main())
