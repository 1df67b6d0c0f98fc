"""Issue 94, fault f, the parts of the render's time and memory that tests/test_render_scale.py
does not count: the GPU-type pairs without testing every two environments of one GPU, and the
garbage collector's state after a build (full collections run between pages only), and
pages joined without a list of every piece, the judged ledger kept small, and freed
memory given back after each page."""

from __future__ import annotations

import gc
import itertools
import random
import sys
import tracemalloc

import pandas as pd
import pytest
from fixtures import RESULTS, many_environments

from report import build as report_build
from report import ledger, site
from report.analysis import Data, Environment, load
from report.analysis import rows as analysis_rows
from report.pages import gpu_types
from report.pages import ledger as ledger_page


def environment(device: str, label: str, torch: str = "2.11.0") -> Environment:
    fields = {name: ("same",) for name in gpu_types.SOFTWARE}
    fields.update(backend=(gpu_types.BACKEND,), torch=(torch,), device_name=(device,))
    return Environment(f"{device}-{label}-{torch}", gpu_types.BACKEND, label, tuple(fields.items()),
                       record_count=2, repeated=False)


def every_two(envs: list[Environment]) -> list[tuple[Environment, Environment]]:
    """gpu_types.pairs as it was: every two environments of one software, GPUs different."""
    groups: dict[tuple, list[Environment]] = {}
    for env in envs:
        groups.setdefault(tuple(gpu_types.field(env, n) for n in gpu_types.SOFTWARE), []).append(env)
    found = []
    for group in groups.values():
        group = sorted(group, key=lambda e: (gpu_types.field(e, "device_name"), e.label))
        found += [(a, b) for a, b in itertools.combinations(group, 2)
                  if gpu_types.field(a, "device_name") != gpu_types.field(b, "device_name")]
    return sorted(found, key=lambda p: (p[0].label, p[1].label))


def test_gpu_type_pairs_are_every_two_environments_of_different_gpus_in_the_same_order():
    rng = random.Random(94)
    for _ in range(200):
        envs = [environment(rng.choice("ABC"), rng.choice("pqrs"), rng.choice(("2.11.0", "2.12.1")))
                for _ in range(rng.randint(0, 14))]
        assert [(id(a), id(b)) for a, b in gpu_types.pairs(envs)] == [
            (id(a), id(b)) for a, b in every_two(envs)]


def test_gpu_type_pairs_of_many_environments_of_one_gpu_are_none_and_quick():
    # Before, 3,000 environments of one GPU were 4.5 million comparisons of their fields.
    envs = [environment("H100", f"many-{i:05d}") for i in range(3000)]
    assert gpu_types.pairs(envs) == []
    two = [*envs[:2], environment("H200", "other")]
    assert [(a.label, b.label) for a, b in gpu_types.pairs(two)] == [
        ("many-00000", "other"), ("many-00001", "other")]


def test_a_build_leaves_the_garbage_collector_as_it_found_it(tmp_path):
    before = gc.get_threshold(), gc.get_freeze_count(), gc.isenabled()
    report_build.build(RESULTS, tmp_path / "docs", workers=1)
    assert (gc.get_threshold(), gc.get_freeze_count(), gc.isenabled()) == before


def test_a_page_is_joined_without_a_list_of_every_piece():
    # The home page of ten thousand environments is eight million pieces: Jinja's render
    # listed them all before joining, several times the page's own size.
    count = 400_000

    def pieces():
        for i in range(count):
            yield f"{i:09d}\n"  # a new string each, as a template's values are
            if i % 50_000 == 0:
                yield from [""] * (2 * site.PIECES_AT_ONCE)  # empty runs end nothing early

    tracemalloc.start()
    try:
        text = site.joined(pieces())
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert text == "".join(pieces())
    assert peak < 3 * len(text)


def test_a_page_reads_as_its_template_renders_it(tmp_path):
    built = site.Site(Data(load(RESULTS)), tmp_path)
    template = built.templates.from_string(
        "{% for i in range(3 * n) %}{{ i }} {{ '<&>' }}{{ '' }}\n{% endfor %}")
    expected = template.render(data=built.data, n=site.PIECES_AT_ONCE)
    assert site.joined(template.generate(data=built.data, n=site.PIECES_AT_ONCE)) == expected


def test_the_judged_ledger_keeps_no_table_and_one_copy_of_each_recurring_text(tmp_path):
    data = Data(load(many_environments.write(tmp_path, 6).parent))
    results = ledger.results_for(data)
    judge = ledger.Judge.of(data)
    # Judging is done: the tables it read (the cases by environment) are not kept.
    assert not {"with_values", "_by_env", "_none", "_measured"} & set(vars(judge))
    assert judge.workloads(results[0].claim) == ledger.Judge(data).workloads(results[0].claim)
    judgements = [j for r in results for j in r.judgements]
    unmeasured = [j for j in judgements if j.verdict == ledger.NOT_MEASURED and j.env_id]
    assert len(unmeasured) > 6 * 10
    by_text: dict[str, set[int]] = {}
    for j in unmeasured:
        by_text.setdefault(j.reason, set()).add(id(j.reason))
        assert j.comparisons == () or j.comparisons  # no empty list of its own
        assert j.regions == () and j.evidence == ()
    assert all(len(ids) == 1 for ids in by_text.values())
    evidence = {c.evidence: id(c.evidence) for j in judgements for c in j.comparisons}
    assert all(id(c.evidence) == evidence[c.evidence] for j in judgements for c in j.comparisons)


def test_verdict_counts_are_the_pivot_of_every_judgement():
    data = Data(load(RESULTS))
    results = ledger.results_for(data)
    rows = pd.DataFrame([{"env": j.label, "verdict": j.verdict}
                         for r in results for j in r.judgements])
    pivot = rows.pivot_table(index="env", columns="verdict", aggfunc="size", fill_value=0)
    pivot = pivot.reindex(columns=list(ledger.VERDICTS), fill_value=0).reset_index()
    counted = ledger.counts(results, data)
    assert len(counted) > 1 and analysis_rows(counted) == analysis_rows(pivot)


def test_contradictions_view_only_what_their_page_reads(tmp_path):
    # Every judgement of every contested claim, viewed whole, was most of the render's
    # memory with ten thousand environments.
    data = Data(load(many_environments.write(tmp_path, 6).parent))
    found = ledger_page.context(data, brief=True)
    assert found["contradictions"] and all("judgements" not in v for v in found["views"])
    for item in found["contradictions"]:
        for row in item["rows"]:
            viewed = [j for js in row["judged"].values() for j in js] + row["open"]
            assert len(row["open"]) <= 1 and all("comparisons" not in j for j in viewed)


def _rss_kb() -> int:
    with open("/proc/self/status", encoding="ascii") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))


@pytest.mark.skipif(sys.platform != "linux", reason="glibc's malloc_trim")
def test_memory_a_page_freed_goes_back_to_the_system():
    # Blocks over 512 bytes come from malloc's heap, which keeps what is freed; below the
    # mmap threshold, so that free() alone would return nothing.
    kept = [bytearray(2000) for _ in range(50_000)]
    for block in kept:
        block[0] = 1
    marker = bytearray(2000)  # after them on the heap: the freed ones are not at its top
    before = _rss_kb()
    del kept
    freed = _rss_kb()
    report_build._give_back_freed_memory()
    assert before - _rss_kb() > 50_000 and before - freed < 50_000
    del marker


def test_a_build_gives_back_what_each_page_freed(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(report_build, "_give_back_freed_memory", lambda: calls.append(1))
    report_build.build(RESULTS, tmp_path / "docs", workers=1)
    assert len(calls) >= len(report_build.PAGES)
