"""The small vocabulary of releases that A/B groups, comparisons and the history share:
which release a torch version is, how releases sort, which machine's history an
environment belongs to, on which hosts a side ran, and the smallest change called one.
Below report/releases/ab.py, compare.py and history.py, so none of them imports another for it.
"""

from __future__ import annotations

import hashlib
import json
import re

import pandas as pd

from bench.records import Environment as RecordEnvironment
from report import analysis

MIN_EFFECT = 0.05  # the smallest change called a change: a ratio of 1.05 either way
# A machine's releases form one history: an environment's identity less the versions that
# come with a torch release.
VERSION_FIELDS = ("torch", "triton", "cuda_runtime")
LINEAGE_FIELDS = tuple(f for f in RecordEnvironment.IDENTITY_FIELDS if f not in VERSION_FIELDS)


def public_release(torch: str) -> str:
    """"2.15.0+cpu" -> "2.15.0": the release without PEP 440's local build label."""
    return str(torch).split("+", 1)[0]


_VERSION = re.compile(r"^v?(\d+(?:\.\d+)*)(?:(a|b|rc)(\d+))?(?:\.post(\d+))?(?:\.dev(\d+))?$")
_PRE = {"a": 0, "b": 1, "rc": 2}


def release_key(torch: str) -> tuple:
    """A sort key for a torch version: "2.9.1" < "2.10.0"; "2.10" == "2.10.0"; a
    pre-release or dev build before its release, a post-release after it; "+cu130" and
    other local labels ignored. Strings that are no version sort after all versions."""
    found = _VERSION.match(public_release(torch))
    if not found:
        return (1, (), (), str(torch))
    numbers, pre, pre_n, post, dev = found.groups()
    parts = [int(p) for p in numbers.split(".")]
    while len(parts) > 1 and parts[-1] == 0:
        parts.pop()
    if dev is not None and pre is None and post is None:
        stage = (-1, int(dev))  # 2.10.0.dev20250101 comes before 2.10.0a1
    else:
        stage = (_PRE[pre], int(pre_n)) if pre else (3, int(post or -1) + 1)
    return (0, tuple(parts), stage + ((int(dev),) if dev is not None else (10**12,)), "")


def sort_releases(values) -> list[str]:
    return sorted(values, key=lambda v: (release_key(v), str(v)))


def lineage_id(row: pd.Series) -> str:
    canonical = json.dumps({f: None if pd.isna(row[f]) else str(row[f]) for f in LINEAGE_FIELDS},
                           sort_keys=True)
    return hashlib.sha256(canonical.encode()).hexdigest()[:8]


def hosts_of(records: pd.DataFrame) -> tuple[str, ...] | None:
    """The hosts (`hostname/boot id`) that timed `records` (their ok records: an
    unsupported mode or a crashed process records no host), or None when one of those ran
    before hosts were recorded: then the host is not known to be the same."""
    timed = records[records["ok"].astype(bool)]
    if timed.empty or timed["hostname"].isna().any():
        return None
    return tuple(sorted(set(analysis.lease_of(timed))))


def host_text(hosts) -> str:
    """"vm (boot 3e183693)" for the hosts of a side; "host not recorded" for None."""
    if hosts is None:
        return "host not recorded"
    return ", ".join(f"{name} (boot {boot[:8]})" for name, _, boot in
                     (h.partition("/") for h in hosts))
