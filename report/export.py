"""`python -m report export DIR`: every speedup the site shows, as CSV and JSON.

One row per environment, workload, size, mode and baseline (eager, and default), from the
same `analysis.compare` the pages use: paired figures where paired processes measured the
pair, ratios of process medians otherwise. `speedup` is baseline time over mode time, so
above 1 the mode is faster.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pandas as pd

from report import analysis, safe_output
from report.analysis import Data, ResultsError, load

BASELINES = analysis.PAIRED_BASELINES
COLUMNS = ("backend", "device", "torch", "workload", "size", "mode", "baseline", "speedup",
           "speedup_min", "speedup_max", "processes", "leases", "rounds", "bound",
           "host_probe_us", "machine", "env_id", "paired")
FILES = ("speedups.csv", "speedups.json")


def table(data: Data) -> pd.DataFrame:
    """The export's rows, in page order, with COLUMNS."""
    modes = list(data.cases["mode"].unique())
    parts = [analysis.compare(data.cases, mode, baseline) for baseline in BASELINES
             for mode in modes if mode != baseline and baseline in modes]
    if not parts:
        return pd.DataFrame(columns=COLUMNS)
    found = pd.concat(parts, ignore_index=True)
    found = found[found["speedup"].notna()]
    envs = data.environments
    out = pd.DataFrame({
        "backend": found["backend"],
        "device": found["env_id"].map(lambda e: envs[e].field("device_name") if e in envs else None),
        "torch": found["env_id"].map(lambda e: envs[e].field("torch") if e in envs else None),
        "workload": found["workload"], "size": found["batch_size"], "mode": found["mode"],
        "baseline": found["baseline"], "speedup": found["speedup"],
        "speedup_min": found["speedup_lo"], "speedup_max": found["speedup_hi"],
        "processes": found["pairings"].where(found["paired"], found[["n_processes", "n_processes_base"]]
                                             .min(axis=1)),
        "leases": found["leases"], "rounds": found["rounds"], "bound": found["ratio_bound"],
        "host_probe_us": found["host_probe_us"],
        "machine": found["env_id"].map(lambda e: envs[e].field("machine") if e in envs else None),
        "env_id": found["env_id"], "paired": found["paired"].astype(bool)})
    return out.reset_index(drop=True)


def write(data: Data, folder: Path) -> list[Path]:
    """The two files under `folder`, each a fresh file renamed into place: a link planted
    at either name, or in place of the folder, is never written through."""
    safe_output.make_folders(folder, Path())
    rows = table(data)
    csv_path, json_path = (folder / name for name in FILES)
    safe_output.write_bytes(csv_path, rows.to_csv(index=False, float_format="%.6g").encode())
    records = [{k: analysis._plain(v) for k, v in row.items()} for row in rows.to_dict("records")]
    safe_output.write_bytes(json_path,
                            (json.dumps(records, indent=0, allow_nan=False) + "\n").encode())
    return [csv_path, json_path]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m report export", description=__doc__)
    parser.add_argument("folder", type=Path, help="where speedups.csv and speedups.json go")
    parser.add_argument("--results", type=Path, default=Path("results"),
                        help="folder searched recursively for *.jsonl (default: results)")
    args = parser.parse_args(argv)
    if args.folder.exists() and not args.folder.is_dir():
        print(f"python -m report export: error: {args.folder} is not a folder", file=sys.stderr)
        return 2
    try:
        paths = write(Data(load(args.results)), args.folder)
    except ResultsError as error:
        print(error, file=sys.stderr)
        return 1
    except OSError as error:  # a link, a file in the way, a read-only folder, a full disk
        where = f"{error.filename}: " if error.filename else ""
        print(f"python -m report export: error: cannot write {args.folder}: {where}"
              f"{error.strerror or error}", file=sys.stderr)
        return 1
    print(f"wrote {', '.join(str(p) for p in paths)}")
    return 0
