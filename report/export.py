"""`python -m report export DIR`: the published-figures table (`analysis.published`), the
figures every page shows, as CSV and JSON (and Parquet, where pyarrow is installed and the
file comes out smaller than the CSV).

One row per environment, case and mode against eager: latency with its spread, speedup
with its spread, what bounds the case and whether the ratio depends on the host, cold and
warm compile times, the calls to pay each back ("never" where the mode is not faster),
memory, and where the figures come from (paired or isolated processes, how many, on how
many leases and hosts), and, for a host-dependent speedup, its host model (`host_*`:
report/analysis/host.py says what each column is). Beside them, one row per case against
`default` (speedup columns only), as the claims compare modes with it. `speedup` is
baseline time over mode time, so above 1 the mode is faster.
"""

from __future__ import annotations

import argparse
import importlib.util
import io
import json
import os
import sys
from pathlib import Path

import pandas as pd

from report import analysis, safe_output
from report.analysis import BASELINE, Data, ResultsError, host, load

OTHER_BASELINES = tuple(b for b in analysis.PAIRED_BASELINES if b != BASELINE)
COLUMNS = ("backend", "device", "torch", "workload", "size", "mode", "baseline", "speedup",
           "speedup_min", "speedup_max", "processes", "leases", "rounds", "bound",
           "host_probe_us", "dtype", "timing", "hosts", "latency_s", "latency_min_s",
           "latency_max_s", "eager_latency_s", "saving_s", "case_bound", "busy_fraction",
           "cold_compile_s", "warm_compile_s", "cold_calls", "warm_calls",
           "peak_device_bytes", "peak_rss_bytes", "compiling", "status", "environment",
           "machine", "env_id", "paired", *host.PUBLISHED_COLUMNS)
FILES = ("speedups.csv", "speedups.json")
PARQUET = "speedups.parquet"
# A spreadsheet runs a cell that starts with one of these as a formula, and a record's
# strings (a machine or device name) reach the CSV: such a text cell gets a leading single
# quote, as OWASP recommends against CSV injection. Numbers stay numbers; the JSON and
# Parquet files hold every string as recorded.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def inert(value: object) -> object:
    """`value`, with a single quote before it where it is text a spreadsheet would run."""
    return "'" + value if isinstance(value, str) and value.startswith(FORMULA_STARTS) else value


def csv_text(rows: pd.DataFrame) -> str:
    """`rows` as the CSV download: text cells made `inert`, numbers as they are."""
    text_columns = [c for c, kind in rows.dtypes.items()
                    if pd.api.types.is_object_dtype(kind) or isinstance(kind, pd.StringDtype)]
    safe = rows.assign(**{c: rows[c].map(inert) for c in text_columns})
    return safe.to_csv(index=False, float_format="%.6g")


def _calls(value) -> object:
    """Break-even calls as the pages word them: "never" where the mode never pays back."""
    if value is None or pd.isna(value):
        return None
    return "never" if value == analysis.NEVER else int(value)


def _env_columns(data: Data, env_ids: pd.Series) -> dict[str, pd.Series]:
    envs = data.environments
    def field(name):
        return env_ids.map(lambda e: envs[e].field(name) if e in envs else None)
    return {"device": field("device_name"), "torch": field("torch"), "machine": field("machine"),
            "environment": env_ids.map(lambda e: envs[e].label if e in envs else None)}


def table(data: Data) -> pd.DataFrame:
    """The export's rows, in page order, with COLUMNS."""
    found = data.published[data.published["ok"].eq(True)]
    over_eager = pd.DataFrame({
        "backend": found["backend"], "workload": found["workload"], "size": found["batch_size"],
        "mode": found["mode"], "baseline": BASELINE, "speedup": found["speedup"],
        "speedup_min": found["speedup_lo"], "speedup_max": found["speedup_hi"],
        "processes": found["processes"], "leases": found["leases"], "rounds": found["rounds"],
        "bound": found["ratio_bound"], "host_probe_us": found["host_probe_us"],
        "dtype": found[analysis.DTYPE], "timing": found["timing"], "hosts": found["hosts"],
        "latency_s": found["latency_s"], "latency_min_s": found["latency_lo_s"],
        "latency_max_s": found["latency_hi_s"], "eager_latency_s": found["latency_base_s"],
        "saving_s": found["saving_s"], "case_bound": found["bound"],
        "busy_fraction": found["busy_fraction"], "cold_compile_s": found["cold_compile_s"],
        "warm_compile_s": found["warm_compile_s"],
        "cold_calls": found["cold_calls"].map(_calls).astype(object),
        "warm_calls": found["warm_calls"].map(_calls).astype(object),
        "peak_device_bytes": found["peak_device_bytes"], "peak_rss_bytes": found["peak_rss_bytes"],
        "compiling": found["compiling"], "status": found["status"], "env_id": found["env_id"],
        "paired": found["paired"].astype(bool), **_env_columns(data, found["env_id"]),
        **{column: found[column] for column in host.PUBLISHED_COLUMNS}})
    modes = list(data.cases["mode"].unique())
    others = [analysis.compare(data.cases, mode, baseline) for baseline in OTHER_BASELINES
              if baseline in modes for mode in modes if mode != baseline]
    others = pd.concat(others, ignore_index=True) if others else pd.DataFrame()
    if not others.empty:
        others = others[others["speedup"].notna()]
        others = pd.DataFrame({
            "backend": others["backend"], "workload": others["workload"],
            "size": others["batch_size"], "mode": others["mode"], "baseline": others["baseline"],
            "speedup": others["speedup"], "speedup_min": others["speedup_lo"],
            "speedup_max": others["speedup_hi"],
            # what the ratio rests on, and how it was timed: compare's own words for it
            "processes": others["compared_processes"], "timing": others["timing"],
            "leases": others["leases"], "rounds": others["rounds"], "bound": others["ratio_bound"],
            "host_probe_us": others["host_probe_us"], "dtype": others[analysis.DTYPE],
            "env_id": others["env_id"], "paired": others["paired"].astype(bool),
            **_env_columns(data, others["env_id"])})
    out = pd.concat([over_eager, others], ignore_index=True) if not others.empty else over_eager
    return out.reindex(columns=COLUMNS).reset_index(drop=True)


def write(data: Data, folder: Path) -> list[Path]:
    """The two files under `folder`, each a fresh file renamed into place: a link planted
    at either name, or in place of the folder, is never written through."""
    safe_output.make_folders(folder, Path())
    rows = table(data)
    csv_path, json_path = (folder / name for name in FILES)
    safe_output.write_bytes(csv_path, csv_text(rows).encode())
    records = [{k: analysis._plain(v) for k, v in row.items()} for row in rows.to_dict("records")]
    safe_output.write_bytes(json_path,
                            (json.dumps(records, indent=0, allow_nan=False) + "\n").encode())
    written = [csv_path, json_path]
    parquet = folder / PARQUET
    # Parquet only where it pays for itself, and never as a new dependency: pyarrow is
    # optional, and a download is only offered where it is smaller than the CSV.
    if importlib.util.find_spec("pyarrow") is not None:
        buffer = io.BytesIO()
        rows.astype({"cold_calls": str, "warm_calls": str}).to_parquet(buffer, index=False)
        if buffer.tell() < csv_path.stat().st_size:
            safe_output.write_bytes(parquet, buffer.getvalue())
            written.append(parquet)
        elif os.path.lexists(parquet):
            parquet.unlink()  # an older one, or a link: removed, never followed
    return written


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m report export", description=__doc__)
    parser.add_argument("folder", type=Path, help="where speedups.csv and speedups.json go")
    parser.add_argument("--results", type=Path, default=Path("results"),
                        help="folder searched recursively for *.jsonl and sealed *.jsonl.gz "
                             "(default: results)")
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
