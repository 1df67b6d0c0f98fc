"""The cold-start page renders from records written here (no torch): the residual over
eager per rung with its spread, the cache layers, a foreign bundle's outcome, regional
compilation with break-even, and "not measured" wherever there is no record."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from bench.coldstart.records import (
    BundleInfo,
    ColdKey,
    ColdRecord,
    read_folder,
    record_from_dict,
    results_path,
)
from bench.records import Environment, Timing, append_records
from report.analysis import Data
from report.analysis import load as load_cases
from report.coldstart.data import Rung, Spread, break_even, common_day_break_even, load, summarize
from report.formatting import seconds
from report.pages import cold_start
from report.site import Site


def environment(device: str) -> Environment:
    return Environment(
        machine="lent-gpu", backend="cuda", os="Linux", python="3.11.7", torch="2.11.0+cu130",
        torch_requested=None, triton="3.5.0", cuda_runtime="13.0", cudnn="91000", driver="580",
        device_name=device, gpu_sm_count=132, gpu_memory_bytes=80 * 2**30, cpu_model="Xeon",
        cpu_count=16, torch_threads=16, float32_matmul_precision="highest",
        cuda_matmul_allow_tf32=False, cudnn_allow_tf32=True, git_commit=None, git_dirty=None)


H100, H200 = environment("NVIDIA H100 80GB HBM3"), environment("NVIDIA H200")


def timing(median: float) -> Timing:
    return Timing(samples=(median,) * 5, calls_per_sample=1, warmup_calls=1, median_s=median,
                  q1_s=median, q3_s=median, iqr_s=0.0, min_s=median, count=5,
                  wall_per_call_s=median, timer="cuda-event")


def record(env: Environment, rung: str, first: float | None, steady: float | None, repeat: int = 0,
           mode: str = "default", batch: int = 1, workload: str = "gpt2-small", **more) -> ColdRecord:
    key = ColdKey("cuda", workload, "eager" if rung == "eager" else mode, batch, rung,
                  more.pop("shapes", "seed"), more.pop("tag", "main"))
    return ColdRecord(key=key, repeat=repeat, repeats=3, status=more.pop("status", "ok"),
                      reason=more.pop("reason", None), env=env, env_id=env.env_id(),
                      started_at="2026-11-26T10:00:00+00:00", duration_s=(first or 0.0) + 30.0,
                      run_id="r", dtype=more.pop("dtype", "float32"), first_call_s=first,
                      steady=timing(steady) if steady else None, **more)


def bundle(env: Environment, outcome: str | None = None) -> BundleInfo:
    return BundleInfo(path=None, size_bytes=2048, sha256="0" * 64, source_env_id=env.env_id(),
                      source_device=env.device_name, source_torch=env.torch,
                      artifacts={"inductor": 3}, outcome=outcome)


def fixture_records() -> list[ColdRecord]:
    hits = {"inductor.fxgraph_cache_hit": 3, "aot_autograd.autograd_cache_hit": 3}
    misses = {"inductor.fxgraph_cache_miss": 3, "aot_autograd.autograd_cache_miss": 3}
    found = []
    for r, jitter in enumerate((0.0, 0.2, -0.2)):
        found += [
            record(H100, "eager", 0.5 + jitter / 10, 0.010, r),
            record(H100, "cold", 30.0 + jitter, 0.005, r, counters=misses, saved=bundle(H100)),
            record(H100, "warm", 8.0 + jitter, 0.005, r, counters=hits),
            record(H100, "bundle", 9.0 + jitter, 0.005, r, counters=hits,
                   loaded=bundle(H100, "hit"), load_s=0.5),
            record(H100, "per-block", 6.0 + jitter, 0.006, r, blocks=12, block_class="GPT2Block"),
        ]
    found.append(record(H100, "aot", None, None, 0, status="unsupported",
                        reason="graph breaks are not supported with aot compile"))
    found.append(record(H200, "eager", 0.4, 0.008))
    found.append(record(H200, "foreign-bundle", 12.0, 0.004, tag=f"from-{H100.env_id()}",
                        counters={"inductor.fxgraph_cache_miss": 3},
                        loaded=bundle(H100, "recompile")))
    found.append(record(H200, "eager", 0.1, 0.001, workload="mlp", shapes="tiny"))
    return found


def write(folder: Path, records: list[ColdRecord]) -> None:
    for env in {r.env for r in records}:
        append_records(results_path(folder, env), [r for r in records if r.env == env])


def rendered(tmp_path: Path, records: list[ColdRecord]) -> str:
    """The text of the page and of every machine's page after it, rendered from `records`
    alone."""
    write(tmp_path / "results" / cold_start.COLDSTART, records)
    cold_start.render(site_over(tmp_path / "results", tmp_path / "docs"))
    return joined(tmp_path / "docs")


def machine_pages(docs: Path) -> dict[str, str]:
    """Each machine's page, by environment id."""
    folder = (docs / cold_start.env_page("x")).parent
    return {p.stem: p.read_text() for p in sorted(folder.glob("*.md"))}


def joined(docs: Path) -> str:
    return "\n".join([(docs / cold_start.PAGE).read_text(), *machine_pages(docs).values()])


def site_over(results: Path, docs: Path) -> Site:
    """A site built from `results`, which holds cold-start records only: the page reads
    them from the site's results folder (`python -m report --results`), none of the case
    records."""
    return Site(Data(load_cases(results)), docs, results=results)


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("cold-start-page")
    write(tmp / "results" / cold_start.COLDSTART, fixture_records())
    site = site_over(tmp / "results", tmp / "docs")
    cold_start.render(site)
    return {"text": joined(tmp / "docs"), "main": (tmp / "docs" / cold_start.PAGE).read_text(),
            "machines": machine_pages(tmp / "docs"), "docs": tmp / "docs",
            "written": site.written, "results": tmp / "results" / cold_start.COLDSTART}


def test_records_round_trip_through_their_files(page):
    assert sorted(r.to_json() for r in read_folder(page["results"])) == sorted(
        r.to_json() for r in fixture_records())


def test_the_residual_over_eager_is_shown_with_its_spread(page):
    # cold: 30 s medians less eager's median 0.5 s, over three processes
    assert f"{seconds(29.5)} ({seconds(29.3)}–{seconds(29.7)}, 3\u00a0proc.)" in page["text"]
    assert "| gpt2-small | 1 | default, float32 |" in page["text"]


def test_unmeasured_rungs_and_workloads_say_not_measured(page):
    row = next(line for line in page["text"].splitlines()
               if line.startswith("| gpt2-small | 1 | default, float32 | 500\u00a0ms"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[-2] == "not measured"  # precompile
    assert cells[-3] == "unsupported"  # aot: its reason is stated once, under the table
    [reason] = [line for line in page["text"].splitlines() if line.startswith("- **aot**")]
    assert reason == ("- **aot**, unsupported (every case): graph breaks are not supported with "
                      "aot compile")
    assert cells[-1] == "warm"  # the lowest residual
    assert "Not measured on this machine: resnet50, vit-base16" in page["text"]


def test_cache_layers_show_hits_and_misses(page):
    assert "| gpt2-small | 1 | default, float32 | warm |" in page["text"]
    warm = next(line for line in page["text"].splitlines()
                if line.startswith("| gpt2-small | 1 | default, float32 | warm |"))
    assert "3 hit / 0 miss" in warm
    bundle_row = next(line for line in page["text"].splitlines()
                      if line.startswith("| gpt2-small | 1 | default, float32 | bundle |"))
    assert bundle_row.rstrip().endswith("| hit |")


def test_a_foreign_bundle_shows_its_source_and_outcome(page):
    row = next(line for line in page["machines"][H200.env_id()].splitlines()
               if "NVIDIA H100 80GB HBM3 · torch" in line and "recompile" in line)
    assert seconds(12.0 - 0.4) in row
    assert "Not measured: no bundle saved elsewhere was loaded on this machine." in page["text"]


def test_a_foreign_bundle_is_set_beside_this_machines_empty_caches(tmp_path):
    """Whether loading another machine's bundle beats compiling from nothing here: the row
    carries the cold rung's first call of the machine that loaded it."""
    here = [record(H200, "cold", 20.0 + r, 0.004, r) for r in range(3)]
    lines = rendered(tmp_path, fixture_records() + here).splitlines()
    header = next(line for line in lines if line.startswith("| workload | batch | mode, dtype | saved on |"))
    row = next(line for line in lines if "recompile" in line and line.startswith("| gpt2-small |"))
    cells = dict(zip(header.strip("|").split("|"), row.strip("|").split("|"), strict=True))
    assert cells[" this machine, empty caches "].strip().startswith(seconds(21.0))
    assert cells[" first call "].strip().startswith(seconds(12.0))


def test_the_page_sums_up_bundles_across_machines_with_a_same_gpu_control(tmp_path):
    """A bundle from another H200 host is the control for one from an H100: the summary
    names each source's environment and counts the outcomes over the cases it covers."""
    other_h200 = dataclasses.replace(H200, machine="lent-h200-x2")
    here = [record(H200, "cold", 20.0, 0.004), record(H200, "bundle", 7.0, 0.004),
            record(H200, "foreign-bundle", 6.5, 0.004, tag=f"from-{other_h200.env_id()}",
                   loaded=bundle(other_h200, "hit")),
            record(H200, "eager", 0.3, 0.008, workload="bert-base"),
            record(H200, "foreign-bundle", 8.5, 0.004, workload="bert-base",
                   tag=f"from-{other_h200.env_id()}", loaded=bundle(other_h200, "hit"))]
    lines = rendered(tmp_path, fixture_records() + here).splitlines()
    start = lines.index("## A bundle saved on another machine { #across-machines }")
    table = [line for line in lines[start:] if line.startswith("| [")]
    from_h100 = next(line for line in table if f"environment {H100.env_id()}" in line)
    control = next(line for line in table if f"environment {other_h200.env_id()}" in line)
    assert "| recompile in 1 of 1 |" in from_h100 and "| hit in 2 of 2 |" in control
    # The outcome comes right after the machines: on a phone the table's first screen.
    assert control.split(" | ")[1] == "hit in 2 of 2"
    assert (f"| hit in 2 of 2 | {seconds(6.5)}–{seconds(8.5)} | {seconds(7.0)} | {seconds(20.0)} "
            f"| default, batch 1, float32 |") in control


def test_without_bundles_from_elsewhere_the_summary_says_not_measured(tmp_path):
    text = rendered(tmp_path, [r for r in fixture_records() if r.key.rung != "foreign-bundle"])
    assert "Not measured: no bundle saved on one machine was loaded on another." in text


def test_regional_compilation_has_break_even(page):
    row = next(line for line in page["text"].splitlines()
               if line.startswith("| gpt2-small | 1 | default, float32 | per-block |"))
    # 24 s less first call, 1 ms more per call: ahead for 24,000 calls
    assert "ahead for the first 24,000 calls, behind after" in row and "| 12 |" in row
    nested = next(line for line in page["text"].splitlines()
                  if line.startswith("| gpt2-small | 1 | default, float32 | nested-region |"))
    assert nested.count("not measured") >= 2


def test_the_page_a_reader_lands_on_shows_regional_compilation_beside_the_whole_model(page):
    """Issue 53 asks for regional compilation on the cold-start page itself, with break-even:
    a row per model and batch, from the machine's medians, that page links for the spreads."""
    main = page["main"]
    start = main.index("## Compiling each block instead { #regional }")
    rows = [line for line in main[start:main.index("\n## ", start + 1)].splitlines()
            if line.startswith("| [")]
    assert rows == [f"| [NVIDIA H100 80GB HBM3 · torch 2.11.0+cu130](cold-start/{H100.env_id()}.md) "
                    "| gpt2-small | 1 | default, float32 | 30.0\u00a0s (2.00×) | 6.00\u00a0s (1.67×); ahead "
                    "for the first 24,000 calls, behind after | not measured |"]


def test_without_regional_compilation_the_page_says_not_measured(tmp_path):
    text = rendered(tmp_path, [r for r in fixture_records() if r.key.rung != "per-block"])
    assert "Not measured: no machine has compiled a repeated block on its own yet" in text


def test_tiny_records_are_left_out_and_counted(page):
    assert "1 records of tiny shapes" in page["text"]
    assert "| mlp |" not in page["text"]


def test_one_ladder_chart_per_machine_mode_and_batch_shows_the_rungs_measured(page):
    """The H100's ladder is one chart; the H200 loaded a bundle only, which is no ladder; the
    aot rung, unsupported in every case, is left out of the chart and explained under the
    table."""
    charts = [p for p in page["written"] if p.suffix == ".svg"]
    assert [c.name for c in charts] == [f"cold-start-{H100.env_id()}-default-bs1-seed.svg"]
    text = charts[0].read_text()
    assert all(f">{rung}<" in text for rung in ("cold", "warm", "bundle")), text
    assert ">aot<" not in text and "residual over eager per rung" in text
    link = f"cold-start-{H100.env_id()}-default-bs1-seed.svg"
    assert f"](../charts/{link})" in page["main"]
    h100 = page["machines"][H100.env_id()]
    assert h100.index(f"](../../charts/{link})") < h100.index(
        "| gpt2-small | 1 | default, float32 | 500\u00a0ms")


def test_the_page_sums_up_and_each_machine_has_its_own_page_with_every_case(page):
    """The page a reader lands on holds what is measured where and each machine's charts, a
    screen per machine; the case tables, which outgrew 300 KB of HTML on one page, are on
    the machine's page it links, which a site search leaves to the page that sums it up."""
    assert set(page["machines"]) == {H100.env_id(), H200.env_id()}
    for env, links in ((H100, 5), (H200, 3)):
        # what is measured where and the machine's section; the H100's rows of the answer at
        # a glance and per model and of regional compilation, the H200's row of the bundles
        # loaded across machines
        assert page["main"].count(f"(cold-start/{env.env_id()}.md)") == links
        mine = page["machines"][env.env_id()]
        assert mine.startswith("---\n") and "search:\n  exclude: true\n---\n# Cold start: " in mine
        assert "[cold-start page](../cold-start.md)" in mine
    assert "\n| gpt2-small |" not in page["main"] and "- **aot**" not in page["main"]
    assert "| gpt2-small | 1 | default, float32 | 500\u00a0ms" in page["machines"][H100.env_id()]


def test_a_case_with_one_compiled_rung_has_no_lowest_residual(tmp_path):
    """Only the cold rung measured (regional compilation's large batch): nothing to choose
    between, so the page names no rung as the lowest."""
    text = rendered(tmp_path, [record(H100, "eager", 0.5, 0.01, r, batch=32) for r in range(3)]
                    + [record(H100, "cold", 20.0, 0.005, r, batch=32) for r in range(3)])
    row = next(line for line in text.splitlines()
               if line.startswith("| gpt2-small | 32 | default, float32 | 500\u00a0ms"))
    assert row.rstrip().endswith("| only cold measured |"), row


def test_a_failed_rungs_reason_is_stated_once_under_the_table(tmp_path):
    """A traceback's first line in every cell would push the figures off the screen: the
    cell says the status, the list under the table says why, naming the cases."""
    reason = "RuntimeError: " + "x" * 300
    text = rendered(tmp_path, [record(H100, "eager", 0.5, 0.01, r) for r in range(3)]
                    + [record(H100, "cold", 20.0, 0.005, r) for r in range(3)]
                    + [record(H100, "aot", None, None, r, status="error", reason=reason)
                       for r in range(3)]
                    + [record(H100, "precompile", None, None, 0, status="unsupported",
                              reason="no API")])
    row = next(line for line in text.splitlines()
               if line.startswith("| gpt2-small | 1 | default, float32 | 500\u00a0ms"))
    assert "| error |" in row and "RuntimeError" not in row
    assert text.count("RuntimeError") == 1
    items = [line for line in text.splitlines() if line.startswith("- **")]
    assert [i[:38] for i in items] == ["- **aot**, error (every case): Runtime",
                                       "- **precompile**, unsupported (every c"], items


def test_what_is_measured_where_heads_the_page(tmp_path):
    """Per machine, mode and batch: whole ladders (3 processes on every rung the release
    supports; precompile unsupported without a process), partial ones, and not measured."""
    whole = [record(H100, rung, 10.0, 0.005, r) for r in range(3)
             for rung in ("eager", "cold", "warm", "bundle", "aot")]
    whole.append(record(H100, "precompile", None, None, 0, status="unsupported", reason="no API"))
    part = [record(H100, rung, 10.0, 0.005, r, workload="resnet50") for r in range(3)
            for rung in ("eager", "cold")] + [record(H100, "warm", 3.0, 0.005, 0, workload="resnet50")]
    large = [record(H100, rung, 10.0, 0.005, r, batch=32, mode="reduce-overhead")
             for r in range(2) for rung in ("eager", "cold")]
    text = rendered(tmp_path, whole + part + large)
    lines = text.splitlines()
    head = lines.index("## What is measured where")
    assert head < lines.index("## " + next(line[3:] for line in lines if line.startswith("## NVIDIA")))
    header = next(line for line in lines[head:] if line.startswith("| machine |"))
    columns = [c.strip() for c in header.strip().strip("|").split("|")][1:]
    row = next(line for line in lines[head:] if line.startswith("| [NVIDIA H100"))
    cells = dict(zip(columns, (c.strip() for c in row.strip().strip("|").split("|")[1:]), strict=True))
    expected = len(cold_start.EXPECTED_WORKLOADS)
    assert cells == {
        "default, batch 1": f"1 of {expected} whole, 1 in part",
        "default, batch 32": "not measured",
        "reduce-overhead, batch 1": "not measured",
        "reduce-overhead, batch 32": f"0 of {expected} whole, 1 in part",
        "max-autotune-no-cudagraphs, batch 1": "not measured",
        "max-autotune-no-cudagraphs, batch 32": "not measured",
    }


@pytest.mark.parametrize("results", ["none", None])
def test_no_records_renders_not_measured(tmp_path, results):
    """An empty results folder, and a site built without one, read no cold-start records
    (not the repository's results/coldstart, wherever the command runs from)."""
    site = Site(Data(load_cases(tmp_path / "none")), tmp_path,
                results=None if results is None else tmp_path / results)
    cold_start.render(site)
    assert "Not measured: there are no cold-start records yet." in (tmp_path / cold_start.PAGE).read_text()


def spread_of(value: float) -> Spread:
    return Spread(value, value, value, 3)


def rung(first: float, steady: float) -> Rung:
    return Rung("x", 3, 3, None, None, spread_of(first), None, spread_of(steady), None, {})


@pytest.mark.parametrize(("first", "steady", "expected"), [
    (5.0, 0.001, "ahead from the first call on"),
    (20.0, 0.003, "never ahead"),
    (5.0, 0.003, "ahead for the first 5,000 calls, behind after"),
    (20.0, 0.0015, "behind for the first 20,000 calls, ahead after"),
    (10.0 - 0.69832, 0.00201, "ahead for the first 70,000 calls, behind after"),
    (10.0 - 1e-6, 0.003, "ahead for the first call, behind after"),
])
def test_break_even_against_the_whole_model(first, steady, expected):
    assert break_even(rung(10.0, 0.002), rung(first, steady)) == expected


def test_no_break_even_where_the_processes_cannot_tell_the_steady_latencies_apart():
    whole = Rung("x", 3, 3, None, None, spread_of(10.0), None, Spread(0.0020, 0.0018, 0.0023, 3),
                 None, {})
    close = Rung("x", 3, 3, None, None, spread_of(6.0), None, Spread(0.0021, 0.0019, 0.0024, 3),
                 None, {})
    assert break_even(whole, close) == ("ahead by 4.0\u00a0s on the first call, then level: the "
                                        "steady latencies' process ranges overlap")
    one = Rung("x", 1, 1, None, None, Spread(12.5, 12.5, 12.5, 1), None,
               Spread(0.003, 0.003, 0.003, 1), None, {})
    assert break_even(whole, one) == ("behind by 2.5\u00a0s on the first call; steady latency from "
                                      "one process: no break-even")


def test_break_even_without_a_side_is_not_measured():
    assert break_even(None, rung(1.0, 1.0)) == "not measured"


def test_a_record_that_cannot_be_is_refused():
    good = record(H100, "cold", 3.0, 0.1)
    with pytest.raises(ValueError, match="longer than the process"):
        dataclasses.replace(good, duration_s=1.0)
    with pytest.raises(ValueError, match="rung 'hot'"):
        dataclasses.replace(good, key=dataclasses.replace(good.key, rung="hot"))
    assert load(Path("/nonexistent")) == ([], 0)


def test_an_environment_measured_on_several_gpus_at_once_says_so(tmp_path):
    """--gpus: a compile's time is that of its share of the cores, and the page says what
    share; an environment measured one process at a time says nothing of the kind."""
    four = dataclasses.replace(H200, cpu_count=64)
    records = [record(four, "eager", 0.4, 0.008, gpu=0, workers=4),
               record(four, "cold", 20.0, 0.004, gpu=1, workers=4),
               record(H100, "eager", 0.5, 0.010), record(H100, "cold", 30.0, 0.005)]
    rendered(tmp_path, records)
    said = "up to 4 processes at once, one per GPU, each pinned to 16 of the host's 64 cores"
    main = (tmp_path / "docs" / cold_start.PAGE).read_text()
    machines = machine_pages(tmp_path / "docs")
    assert main.count(said) == 1 and machines[four.env_id()].count(said) == 1
    h100 = main[main.index(f"## {H100.device_name}"):]
    assert "processes at once" not in h100.split("\n## ")[0]
    assert "processes at once" not in machines[H100.env_id()]


def test_two_hosts_of_one_gpu_type_stay_apart_and_each_says_its_share(tmp_path):
    """A 4-GPU lease whose run used two of its GPUs on half its cores: each process had 16 of
    the 64 (torch's threads, as the slot set them), not 64 / 2; and a one-GPU lease of the same
    GPU type and machine name is named apart from it, in the table and in the headings, by its
    environment id as on the other pages."""
    four = dataclasses.replace(H200, cpu_count=64, torch_threads=16)
    records = [record(four, "eager", 0.4, 0.008, gpu=0, workers=2),
               record(four, "cold", 20.0, 0.004, gpu=1, workers=2),
               record(H200, "eager", 0.5, 0.010), record(H200, "cold", 30.0, 0.005)]
    text = rendered(tmp_path, records)
    assert "up to 2 processes at once, one per GPU, each pinned to 16 of the host's 64 cores" in text
    label = f"{H200.device_name} · torch {H200.torch} · {H200.machine}"
    for env in (four, H200):
        assert text.count(f"| [{label} · {env.env_id()}](cold-start/{env.env_id()}.md) |") == 1
        assert text.count(f"## {label} · {env.env_id()}\n") == 1
        assert text.count(f"# Cold start: {label} · {env.env_id()}\n") == 1


def ab_records(old_first=(20.0, 21.0, 19.0), new_first=(10.0, 10.5, 9.5),
               again_first=(10.2, 10.4, 9.7), other_host: bool = False) -> list[ColdRecord]:
    """An A/B group of the cold rung: 2.12.1 against 2.13.0, and 2.13.0 again (A/A), in
    ABBA order per repeat; each side's eager first call 0.1 s."""
    sides = [("2.12.1", "2.12.1+cu130", old_first), ("2.13.0", "2.13.0+cu130", new_first),
             ("2.13.0-aa", "2.13.0+cu130", again_first)]
    found, minute = [], 0
    for repeat in range(3):
        for label, torch, firsts in sides if repeat % 2 == 0 else sides[::-1]:
            env = dataclasses.replace(H100, torch=torch, machine="atlas-cpu")
            if other_host and label == "2.13.0":
                env = dataclasses.replace(env, cpu_count=64)
            for rung, first in (("eager", 0.1), ("cold", firsts[repeat])):
                minute += 1
                found.append(dataclasses.replace(
                    record(env, rung, first, 0.005, repeat, tag=f"ab-g1-{label}"),
                    started_at=f"2026-11-29T10:{minute:02d}:00+00:00"))
    return found


def test_releases_ab_on_one_host_are_paired_and_called_beyond_the_aa_floor(tmp_path):
    from report.coldstart import ab as coldstart_ab

    [comparison] = coldstart_ab.comparisons(ab_records())
    assert (comparison.old.label, comparison.new.label) == ("2.12.1", "2.13.0")
    assert comparison.aa == "torch 2.13.0+cu130 under labels 2.13.0 and 2.13.0-aa"
    assert comparison.command == (
        "nox -s ab -- --torch 2.12.1 --torch 2.13.0 --torch 2.13.0 --coldstart "
        "--workload gpt2-small --batch-size 1 --repeats 3 -- --mode default --rung eager "
        "--rung cold")
    cold = next(s for s in comparison.steps if s.rung == "cold")
    assert cold.ratio.median == pytest.approx(0.5) and cold.ratio.n == 3
    assert (cold.ratio.low, cold.ratio.high) == pytest.approx((9.5 / 19.0, 10.5 / 21.0))
    assert cold.floor == pytest.approx(9.7 / 9.5)  # 2.13.0 against itself, farthest pair
    assert cold.verdict == "faster"
    text = rendered(tmp_path, [*fixture_records(), *ab_records()])
    main = (tmp_path / "docs" / cold_start.PAGE).read_text()
    assert "### torch 2.12.1+cu130 → 2.13.0+cu130 · group g1" in main
    row = next(line for line in main.splitlines()
               if line.startswith("| gpt2-small | 1 | default, float32 | cold |"))
    assert "| 0.50 | 0.50–0.50 | 3 | 1.02× | faster |" in row
    # the A/B sides stay out of every machine's ladder: no page for their environments
    assert set(machine_pages(tmp_path / "docs")) == {H100.env_id(), H200.env_id()}
    # ...and out of the head but for the one line that says what upgrading did
    head = text.split("## Across releases")[0].splitlines()
    assert [line for line in head if "2.12.1" in line] == [
        line for line in head if line.startswith("- torch 2.12.1+cu130 → 2.13.0+cu130 on ")]


def test_a_release_within_its_aa_floor_is_the_same_and_without_aa_nothing_is_called():
    from report.coldstart import ab as coldstart_ab

    [close] = coldstart_ab.comparisons(ab_records(new_first=(19.5, 21.5, 19.2),
                                                  again_first=(18.0, 23.0, 19.0)))
    assert next(s for s in close.steps if s.rung == "cold").verdict == "same"
    no_aa = [r for r in ab_records() if not r.key.tag.endswith("-aa")]
    [alone] = coldstart_ab.comparisons(no_aa)
    assert alone.aa == ""
    assert next(s for s in alone.steps if s.rung == "cold").verdict == "no A/A run yet"


def test_releases_measured_on_different_hosts_are_not_compared(tmp_path):
    from report.coldstart import ab as coldstart_ab

    [comparison] = coldstart_ab.comparisons(ab_records(other_host=True))
    assert comparison.host == ""
    assert all(s.ratio is None and s.verdict == "not comparable: different hosts"
               for s in comparison.steps)
    rendered(tmp_path, ab_records(other_host=True))
    main = (tmp_path / "docs" / cold_start.PAGE).read_text()
    assert "The sides ran on different hosts: not comparable" in main


def test_without_an_ab_group_the_section_says_not_measured(page):
    section = page["main"].split("## Across releases, on one host")[1].split("\n## ")[0]
    assert "Not measured yet" in section and "--coldstart" in section


def test_regional_strategies_measured_on_other_days_than_the_whole_model_are_not_compared():
    whole = dataclasses.replace(rung(10.0, 0.002), days=("2026-11-27",))
    later = dataclasses.replace(rung(5.0, 0.001), days=("2026-11-29",))
    assert break_even(whole, later) == ("not comparable: the whole model ran on 2026-11-27, "
                                        "this on 2026-11-29")
    overlapping = dataclasses.replace(later, days=("2026-11-27", "2026-11-29"))
    assert break_even(whole, overlapping) == "ahead from the first call on"


def test_a_rung_keeps_the_utc_days_its_processes_started_on():
    late = dataclasses.replace(record(H100, "cold", 3.0, 0.1),
                               started_at="2026-11-28T23:30:00-02:00")
    assert summarize([late, record(H100, "cold", 3.0, 0.1)], []).days == ("2026-11-26",
                                                                          "2026-11-29")


def test_break_even_uses_only_the_processes_of_the_days_both_sides_ran_on():
    def on(day, rung, first, steady, repeat):
        return dataclasses.replace(record(H100, rung, first, steady, repeat % 3),
                                   started_at=f"{day}T10:00:00+00:00")
    whole = [on("2026-11-27", "cold", 30.0, 0.002, 0), on("2026-11-27", "cold", 30.0, 0.002, 1),
             on("2026-11-29", "cold", 10.0, 0.002, 2), on("2026-11-29", "cold", 10.0, 0.002, 3)]
    regional = [on("2026-11-29", "per-block", 12.0, 0.001, r) for r in range(2)]
    # over every day the whole model's slow first calls of 11-27 would put per-block ahead
    assert common_day_break_even(whole, regional) == (
        "behind for the first 2,000 calls, ahead after", ("2026-11-29",))
    assert common_day_break_even(whole[2:], regional) == (
        "behind for the first 2,000 calls, ahead after", ())
    assert common_day_break_even(whole[:2], regional)[0].startswith("not comparable")


def test_a_rung_is_set_against_eager_of_its_own_days_alone():
    def on(day, rung, steady, repeat=0):
        return dataclasses.replace(record(H100, rung, 1.0, steady, repeat),
                                   started_at=f"{day}T10:00:00+00:00")
    eager = [on("2026-11-27", "eager", 0.008), on("2026-11-29", "eager", 0.004, 1)]
    later = summarize([on("2026-11-29", "cold", 0.002)], eager)
    assert later.speedup == pytest.approx(2.0) and later.speedup_apart is None
    apart = summarize([on("2026-11-28", "cold", 0.002)], eager)
    assert apart.speedup is None
    assert apart.speedup_apart == ("not comparable: eager ran on 2026-11-27, 2026-11-29, "
                                   "this on 2026-11-28")


def compiler_section(tmp_path: Path, bundle_runs: int) -> str:
    """The compiler section of the page rendered from an H100 ladder whose processes counted
    the compiler (cold 20 runs, warm none, the bundle `bundle_runs` + 0, 1, 2) beside an
    H200 ladder whose processes did not."""
    hits = {"inductor.fxgraph_cache_hit": 1, "aot_autograd.autograd_cache_hit": 1}
    found = []
    for r in range(3):
        found += [record(H100, "eager", 0.5, 0.010, r),
                  record(H100, "cold", 30.0, 0.005, r, compiler_runs=20, compiler_s=12.0 + r),
                  record(H100, "warm", 8.0, 0.005, r, counters=hits, compiler_runs=0,
                         compiler_s=0.0),
                  record(H100, "bundle", 18.0, 0.005, r, counters=hits,
                         compiler_runs=bundle_runs + r, compiler_s=10.0),
                  record(H200, "eager", 0.5, 0.010, r),
                  record(H200, "cold", 30.0, 0.005, r),
                  record(H200, "warm", 8.0, 0.005, r)]
    rendered(tmp_path, found)
    main = (tmp_path / "docs" / cold_start.PAGE).read_text()
    start = main.index("## What the caches leave to the compiler { #compiler }")
    return main[start:main.index("\n## ", start + 1)]


def test_what_the_caches_leave_to_the_host_compiler_is_shown_where_it_was_counted(tmp_path):
    """A bundle that hits every counted cache can still leave the compiler to run: the page
    shows its seconds and runs per rung beside warm caches', and names the machines whose
    processes did not count them instead of printing zero for them."""
    part = compiler_section(tmp_path, bundle_runs=18)
    [row] = [line for line in part.splitlines() if line.startswith("| [")]
    cells = [c.strip() for c in row.strip("|").split("|")][1:]
    assert cells == ["default, float32", f"{seconds(13.0)} (20 runs)", "none", f"{seconds(10.0)} (19 runs)"]
    assert "Not recorded for NVIDIA H200 · torch 2.11.0+cu130 (default at batch 1)." in part
    assert "ran the compiler as many times as empty caches" not in part  # 19 runs < 20
    machine = machine_pages(tmp_path / "docs")
    bundle_row = next(line for line in machine[H100.env_id()].splitlines()
                      if line.startswith("| gpt2-small | 1 | default, float32 | bundle |"))
    assert f"| 19 runs, {seconds(10.0)} (" in bundle_row
    warm_row = next(line for line in machine[H200.env_id()].splitlines()
                    if line.startswith("| gpt2-small | 1 | default, float32 | warm |"))
    assert "| not recorded |" in warm_row


def test_a_bundle_that_rebuilds_what_empty_caches_build_points_at_the_local_cache_folder(tmp_path):
    part = compiler_section(tmp_path, bundle_runs=20)
    assert ("On NVIDIA H100 80GB HBM3 · torch 2.11.0+cu130, default: bundle ran the compiler as "
            "many times as empty caches did, for every model counted; warm local caches ran it "
            "fewer times.") in part


def test_a_records_dtype_round_trips_and_a_version_1_record_loads_without_one():
    """Version 2 records the dtype the model was built in; a version 1 record does not say
    it, so it loads with None (not recorded), never a guess, and its file is not rewritten."""
    made = record(H100, "cold", 30.0, 0.005, dtype="bfloat16")
    assert record_from_dict(json.loads(made.to_json())) == made
    old = {k: v for k, v in json.loads(made.to_json()).items() if k != "dtype"} | {"schema_version": 1}
    assert record_from_dict(old) == dataclasses.replace(made, dtype=None)
    unnamed = {k: v for k, v in json.loads(made.to_json()).items() if k != "dtype"}
    with pytest.raises(ValueError, match="missing field.*dtype"):
        record_from_dict(unnamed)  # version 2 always names it, None where no model was built
    with pytest.raises(ValueError, match="dtype"):
        dataclasses.replace(made, dtype="float32 | injected")


def test_every_cold_start_row_names_its_dtype_and_an_old_record_says_not_recorded(tmp_path):
    """The H100's records are of version 1 (no dtype), the H200's of version 2 in bfloat16:
    each row of either page names its own, and none takes the other's."""
    h200 = [record(H200, rung, first, 0.004, r, dtype="bfloat16")
            for r in range(3) for rung, first in (("eager", 0.4), ("cold", 20.0), ("warm", 6.0))]
    folder = tmp_path / "results" / cold_start.COLDSTART
    write(folder, h200)
    old = [{k: v for k, v in json.loads(r.to_json()).items() if k != "dtype"} | {"schema_version": 1}
           for r in fixture_records() if r.env == H100]
    results_path(folder, H100).write_text("".join(json.dumps(line) + "\n" for line in old))
    assert {r.dtype for r in read_folder(folder)} == {None, "bfloat16"}
    cold_start.render(site_over(tmp_path / "results", tmp_path / "docs"))
    pages = machine_pages(tmp_path / "docs")
    for env, dtype in ((H100, "dtype not recorded"), (H200, "bfloat16")):
        rows = [line for line in pages[env.env_id()].splitlines() if line.startswith("| gpt2-small |")]
        assert rows and all(f"| default, {dtype} |" in line for line in rows), (dtype, rows)
    main = (tmp_path / "docs" / cold_start.PAGE).read_text()
    glance = [line for line in main.splitlines() if line.startswith("| [NVIDIA H")]
    assert any("| default, bfloat16 |" in line for line in glance), glance
    assert any("| default, dtype not recorded |" in line for line in glance), glance
