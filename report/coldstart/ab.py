"""Cold start across releases on one host: the A/B groups of `python -m bench.ab --coldstart`.

Each side of a group is a release under a label (tag `ab-<group>-<label>`). The sides took
turns per workload size in ABBA order, one `python -m bench.coldstart` run each, so repeat r
of two sides ran next to each other on one host: their first calls are paired, and a case's
ratio (new over old) is the median of its per-repeat ratios, its spread the smallest and
largest. The verdict is the steady A/B's (report/releases/ab.py `judge`): called only when every
ratio lies beyond the A/A floor, the farthest a release strayed from itself under a second
label in the same group. Sides that did not run on one host are not compared.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from bench.ab import parse_tag
from bench.coldstart.records import RUNGS, ColdRecord
from report.coldstart.data import Spread, dtype_text, joined, spread
from report.releases.ab import judge
from report.releases.vocabulary import public_release, release_key


@dataclass(frozen=True)
class Side:
    label: str
    torch: str
    processes: int


@dataclass(frozen=True)
class Step:
    workload: str
    batch_size: int | None
    mode: str
    rung: str
    old: Spread | None  # first call, seconds, over the old side's processes
    new: Spread | None
    ratio: Spread | None  # new over old, per pair of processes that ran next to each other
    floor: float | None
    verdict: str
    dtype: str  # what both sides' processes built the model in (report.coldstart.data.joined)


@dataclass(frozen=True)
class Comparison:
    group: str
    old: Side
    new: Side
    host: str  # in words; "" where the sides ran on different hosts
    aa: str  # the A/A runs the floors come from, in words; "" where none ran
    steps: list[Step]
    command: str  # the run again, on the reader's host, as nox runs it


def _host(r: ColdRecord) -> tuple:
    e = r.env
    return (e.machine, e.device_name, e.cpu_model, e.cpu_count, e.os)


def _host_text(r: ColdRecord) -> str:
    e = r.env
    return f"{e.machine} ({e.device_name}, {e.cpu_count} cores, torch using {e.torch_threads})"


def _paired(old: list[ColdRecord], new: list[ColdRecord]) -> dict[tuple, list[tuple]]:
    """Per case: (old, new) first calls of the ok processes of the same repeat."""
    def by_case(records):
        found: dict = defaultdict(dict)
        for r in records:
            if r.status == "ok":
                k = r.key
                found[(k.workload, k.batch_size, k.mode, k.rung)][r.repeat] = r.first_call_s
        return found
    olds, news = by_case(old), by_case(new)
    return {case: [(olds[case][rep], news[case][rep]) for rep in sorted(olds[case])
                   if rep in news.get(case, {})] for case in olds}


def _dtypes(records: list[ColdRecord]) -> dict[tuple, str]:
    """Per case: the dtypes its processes built the model in."""
    found: dict = defaultdict(list)
    for r in records:
        found[(r.key.workload, r.key.batch_size, r.key.mode, r.key.rung)].append(r)
    return {case: joined([dtype_text(mine)]) for case, mine in found.items()}


def _floors(first: list[ColdRecord], other: list[ColdRecord]) -> dict[tuple, float]:
    return {case: max(max(n / o, o / n) for o, n in pairs)
            for case, pairs in _paired(first, other).items() if pairs}


def comparisons(records: list[ColdRecord]) -> list[Comparison]:
    """Per group: each release against the next (version order), first labels."""
    sides: dict[str, dict[str, list[ColdRecord]]] = defaultdict(lambda: defaultdict(list))
    for r in records:
        if found := parse_tag(r.key.tag):
            group, label = found
            sides[group][label].append(r)
    out = []
    for group, labels in sorted(sides.items()):
        by_release: dict[str, list[str]] = defaultdict(list)
        for label, found in sorted(labels.items(), key=lambda i: min(r.started_at for r in i[1])):
            by_release[found[0].env.torch].append(label)
        releases = sorted(by_release, key=lambda t: (release_key(t), t))
        for old_release, new_release in zip(releases, releases[1:], strict=False):
            old_label, new_label = by_release[old_release][0], by_release[new_release][0]
            out.append(_comparison(group, labels, by_release, old_label, new_label))
    return out


def _side(label: str, records: list[ColdRecord]) -> Side:
    return Side(label, records[0].env.torch, len(records))


def _comparison(group, labels, by_release, old_label, new_label) -> Comparison:
    old, new = _side(old_label, labels[old_label]), _side(new_label, labels[new_label])
    hosts = {_host(r) for label in labels for r in labels[label]}
    same_host = len(hosts) == 1
    # the A/A floor: a release measured again under a second label, the farthest any strayed
    floors: dict[tuple, float] = {}
    aa = []
    for release, release_labels in by_release.items():
        first, *others = release_labels
        for other in others:
            aa.append(f"torch {release} under labels {first} and {other}")
            for case, floor in _floors(labels[first], labels[other]).items():
                floors[case] = max(floor, floors.get(case, 1.0))
    dtypes = _dtypes(labels[old_label] + labels[new_label])
    steps = []
    for case, pairs in sorted(_paired(labels[old_label], labels[new_label]).items(),
                              key=lambda i: (i[0][0], i[0][1] or 0, _rung_order(i[0][3]), i[0][2])):
        olds, news = [o for o, _ in pairs], [n for _, n in pairs]
        ratios = [n / o for o, n in pairs]
        ratio = spread(ratios) if same_host else None
        floor = floors.get(case)
        verdict = (judge(ratio.low, ratio.high, ratio.n, floor) if ratio
                   else "not comparable: different hosts")
        steps.append(Step(*case, spread(olds), spread(news), ratio, floor, verdict, dtypes[case]))
    host = _host_text(labels[old_label][0]) if same_host else ""
    return Comparison(group, old, new, host, "; ".join(aa), steps, _command(labels))


def _command(labels: dict[str, list[ColdRecord]]) -> str:
    """`nox -s ab` with the group's releases (one per label, in the order they ran), sizes,
    modes and rungs: a new group, since one on another host is not comparable with this."""
    records = [r for found in labels.values() for r in found]
    ordered = sorted(labels.values(), key=lambda found: min(r.started_at for r in found))
    releases = [x for found in ordered for x in ("--torch", public_release(found[0].env.torch))]
    workloads = [x for w in sorted({r.key.workload for r in records}) for x in ("--workload", w)]
    batches = [x for b in sorted({r.key.batch_size or 1 for r in records})
               for x in ("--batch-size", str(b))]
    modes = [x for m in sorted({r.key.mode for r in records} - {"eager"}) for x in ("--mode", m)]
    rungs = [x for rung in sorted({r.key.rung for r in records}, key=_rung_order)
             for x in ("--rung", rung)]
    repeats = max(r.repeats for r in records)
    return " ".join(["nox -s ab --", *releases, "--coldstart", *workloads,
                     *batches, "--repeats", str(repeats), "--", *modes, *rungs])


def _rung_order(rung: str) -> int:
    return RUNGS.index(rung) if rung in RUNGS else len(RUNGS)

