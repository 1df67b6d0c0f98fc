"""Releases of PyTorch on one machine, as table operations (the history and changes pages).

A machine's *lineage* is an environment's identity (`Environment.IDENTITY_FIELDS`) less
the versions that come with a torch release (`vocabulary.VERSION_FIELDS`: torch, triton,
CUDA runtime): the same machine, backend, device, Python, driver and matmul precision.
Environments of one lineage differ only in their release, so their cases line up as a
history, in release order (`release_key`: numeric, 2.9 before 2.10; a local build label
such as +cpu or +cu130 is ignored for ordering and kept for display).

- `releases(records)`: one row per environment, with its lineage and its place in it.
- `history(records)`: every case with its lineage and release, and its speedup over eager
  in the same environment and profile.
- `changes(records)`: every case of each pair of consecutive releases of a lineage,
  judged by `compare.judge`, the same rule as `python -m report compare`, where both
  releases ran on the same host (`older_pairs` says which do).

These are the *older runs*: records under the process tags (`main`, `rerun-N`), each
release measured in a run of its own. Releases measured alternately in one run, A/B
groups, are `report/releases/ab.py`'s; pages set a release against another from those by default.
"""

from __future__ import annotations

import pandas as pd

from report import analysis
from report.releases.compare import case_table, pair, probe_us
from report.releases.vocabulary import LINEAGE_FIELDS, hosts_of, lineage_id, release_key


def releases(records: pd.DataFrame) -> pd.DataFrame:
    """One row per environment: env_id, lineage, lineage_label, backend, machine, release
    (the torch version as recorded), position (0, 1, ... in release order within the
    lineage), releases (how many the lineage has), profiles and record count."""
    if records.empty:
        return pd.DataFrame(columns=["env_id", "lineage", "lineage_label", "backend", "machine",
                                     "release", "position", "releases", "profiles", "records"])
    envs = records.groupby("env_id", sort=True).agg(
        **{f: (f, "first") for f in LINEAGE_FIELDS if f != "backend"},
        backend=("backend", "first"), release=("torch", "first"),
        profiles=("profile", lambda p: tuple(sorted(set(p)))), records=("env_id", "size"),
    ).reset_index()
    envs["lineage"] = envs.apply(lineage_id, axis=1)
    envs["lineage_label"] = _labels(envs)
    envs["_key"] = envs["release"].map(release_key)
    envs = envs.sort_values(["lineage", "_key", "release", "env_id"], kind="stable")
    envs["position"] = envs.groupby("lineage").cumcount()
    envs["releases"] = envs.groupby("lineage")["env_id"].transform("size")
    order = ["env_id", "lineage", "lineage_label", "backend", "machine", "release", "position",
             "releases", "profiles", "records"]
    return envs.drop(columns="_key")[order].reset_index(drop=True)


def _labels(envs: pd.DataFrame) -> pd.Series:
    """"atlas-cpu · cpu · AMD EPYC, 2 cores" (a GPU by its type); grows the Python version,
    then the lineage id, only where two lineages would otherwise share a label."""
    cores = envs["cpu_model"].astype(str) + ", " + envs["cpu_count"].astype(str) + " cores"
    device = cores.where((envs["backend"] == "cpu") & envs["cpu_count"].notna(), envs["device_name"])
    labels = envs["machine"].astype(str) + " · " + envs["backend"] + " · " + device
    for extra in (" · Python " + envs["python"].astype(str), " · " + envs["lineage"]):
        clash = labels.groupby(labels).transform(lambda s: envs.loc[s.index, "lineage"].nunique()) > 1
        labels = labels.where(~clash, labels + extra)
    return labels


def with_speedups(table: pd.DataFrame) -> pd.DataFrame:
    """`analysis.speedups` of a `case_table`, one profile at a time, so that a mode is only
    ever set against eager measured with the same profile."""
    found = [analysis.speedups(table[table["profile"] == p]).assign(profile=p)
             for p in sorted(table["profile"].dropna().unique())]
    if not found:
        return table.assign(speedup=pd.Series(dtype=float))
    return pd.concat(found, ignore_index=True)


def history(records: pd.DataFrame, table: pd.DataFrame | None = None) -> pd.DataFrame:
    """Every case (per profile) with its environment's lineage columns (`releases`) and its
    speedup over eager; `in_releases` counts the releases of its lineage that measured the
    same case (workload, mode, batch, shapes, profile) and timed it. `table` is
    `case_table(records)` where the caller has it already."""
    envs = releases(records)
    table = with_speedups(case_table(records) if table is None else table)
    if table.empty:
        return table.assign(**{c: pd.Series(dtype=object) for c in envs.columns if c != "env_id"},
                            in_releases=pd.Series(dtype=int))
    out = table.merge(envs.drop(columns=["backend", "machine"]), on="env_id", how="left")
    point = ["lineage", "workload", "mode", "batch_size", "shapes", "profile"]
    out["in_releases"] = (out["ok"].astype(bool).groupby([out[c] for c in point], dropna=False)
                          .transform("sum").astype(int))
    return analysis.ordered(out, "profile", "lineage", "position").reset_index(drop=True)


def older(records: pd.DataFrame) -> pd.DataFrame:
    """The records of older runs: those under the process tags, not of an A/B group."""
    return records[records["tag"].str.match(analysis.PROCESS_TAGS)]


def site_older(data: analysis.Data) -> pd.DataFrame:
    return data.memo("older_records", lambda: older(data.records))


def site_changes(data: analysis.Data) -> pd.DataFrame:
    """`changes` of a site's older runs, once per build, of the release pairs that ran on
    one host only: across hosts no verdict is given (`older_pairs`)."""
    def same_host() -> pd.DataFrame:
        found = changes(site_older(data), site_case_table(data))
        if found.empty:
            return found
        pairs = older_pairs(site_older(data))
        kept = pairs[pairs["same_host"]]
        return found.merge(kept[["old_env_id", "new_env_id"]], on=["old_env_id", "new_env_id"])
    return data.memo("changes", same_host)


def site_case_table(data: analysis.Data) -> pd.DataFrame:
    """`case_table` of a site's older runs, once per build (history and changes)."""
    return data.memo("case_table", lambda: case_table(site_older(data)))


def older_pairs(records: pd.DataFrame) -> pd.DataFrame:
    """`pairs` of the older runs, with each side's hosts (`old_hosts`, `new_hosts`: None
    where a record ran before hosts were recorded), its median host probe in µs, and
    `same_host`: both known and equal, the one case where a verdict is given."""
    records = older(records)
    found = pairs(releases(records))
    by_env = analysis.by_env(records)
    for side in ("old", "new"):
        found[f"{side}_hosts"] = [hosts_of(by_env[e]) for e in found[f"{side}_env_id"]]
        found[f"{side}_probe_us"] = [probe_us(by_env[e]) for e in found[f"{side}_env_id"]]
    found["same_host"] = [a is not None and a == b
                          for a, b in zip(found["old_hosts"], found["new_hosts"], strict=True)]
    return found


def pairs(envs: pd.DataFrame) -> pd.DataFrame:
    """Consecutive releases of each lineage: lineage, lineage_label, old/new env_id and
    release, in lineage then release order."""
    envs = envs.sort_values(["lineage", "position"])
    nxt = envs.groupby("lineage").shift(-1)
    found = pd.DataFrame({"lineage": envs["lineage"], "lineage_label": envs["lineage_label"],
                          "backend": envs["backend"], "machine": envs["machine"],
                          "old_env_id": envs["env_id"], "old_release": envs["release"],
                          "new_env_id": nxt["env_id"], "new_release": nxt["release"]})
    return found[found["new_env_id"].notna()].reset_index(drop=True)


def changes(records: pd.DataFrame, table: pd.DataFrame | None = None) -> pd.DataFrame:
    """Every case of every pair of consecutive releases (`pairs`), judged by
    `compare.judge` through `compare.pair`; the pair's columns come first. `table` is
    `case_table(records)` where the caller has it already."""
    envs = releases(records)
    table = case_table(records) if table is None else table
    found = [pair(analysis.of_env(table, p.old_env_id), analysis.of_env(table, p.new_env_id))
             .assign(**{c: getattr(p, c) for c in p._fields if c != "Index"})
             for p in pairs(envs).itertuples()]
    if not found:
        return pd.DataFrame(columns=["lineage", "old_release", "new_release", "ratio",
                                     "significant", "direction", "single_run", "timed"])
    return pd.concat(found, ignore_index=True)
