"""The GPU-types page: environments that differ only in the GPU are paired, every case
measured on both gets a verdict by the range-overlap rule, the speedup answers of the two
GPUs are set side by side, and without a second GPU type the page says how to add one."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pandas as pd
import pytest
from fixtures import RESULTS, model_records
from fixtures import make_results as fx

from report import analysis, build
from report.analysis import Data, load
from report.pages import gpu_types
from report.site import Site

ALPHA = fx.environment("gpu-a", "cuda", "GPU Alpha", "570.86")
BETA = fx.environment("gpu-b", "cuda", "GPU Beta", "580.10")
MATMUL = "[matmul-128](../../workloads/matmul-128.md)"  # as a pair's page links it
ROOT = Path(__file__).resolve().parents[1]


def processes(env, mode: str, scales: tuple[float, ...]) -> list:
    """matmul-128 in `mode`, one process per scale of the fixture's latency (12 µs in eager)."""
    return [fx.ok_record(env, "matmul-128", mode, None, scale=scale, repeat=i,
                         repeats=len(scales)) for i, scale in enumerate(scales)]


def render(results: Path, docs: Path) -> str:
    """The page, then each pair's page of every case."""
    gpu_types.render(Site(Data(load(results)), docs))
    pairs = sorted((docs / gpu_types.PAGE).with_suffix("").glob("*-vs-*.md"))
    return "\n".join(path.read_text(encoding="utf-8")
                     for path in [docs / gpu_types.PAGE, *pairs])


def row(text: str, *cells: str) -> list[str]:
    """The cells of the one table row whose first cells are `cells`. A workload is linked on
    its first row of a table only, so a linked first cell also matches its plain name."""
    plain = re.sub(r"^\[([^\]]+)\]\([^)]*\)$", r"\1", cells[0])
    prefixes = {"| " + " | ".join((first, *cells[1:])) + " |" for first in (cells[0], plain)}
    found = [line for line in text.splitlines() if line.startswith(tuple(prefixes))]
    assert len(found) == 1, (prefixes, found)
    return [cell.strip() for cell in found[0].strip("|").split(" | ")]


def section(text: str, heading: str) -> str:
    start = text.index(f"### {heading}")
    end = text.find("\n### ", start + 1)
    return text[start:end if end >= 0 else None]


@pytest.fixture(scope="module")
def two_gpus(tmp_path_factory) -> Path:
    """matmul-128 on two GPU types under one software stack:
    eager: ranges of process medians overlap (agree);
    reduce-overhead: Beta's three processes all about 30% faster (Beta faster);
    default: one process on Alpha, inside Beta's range (agree, Alpha a single run);
    cuda-graph: faster than eager on Alpha, 4x slower on Beta, so slower than eager there."""
    root = tmp_path_factory.mktemp("gpu-types")
    records = [*processes(ALPHA, "eager", (1.0, 1.04, 0.98)),
               *processes(BETA, "eager", (1.01, 0.99, 1.03)),
               *processes(ALPHA, "reduce-overhead", (1.0, 1.04, 0.98)),
               *processes(BETA, "reduce-overhead", (0.7, 0.72, 0.71)),
               *processes(ALPHA, "default", (1.0,)),
               *processes(BETA, "default", (1.0, 1.04, 0.98)),
               *processes(ALPHA, "cuda-graph", (1.0, 1.04, 0.98)),
               *processes(BETA, "cuda-graph", (4.0, 4.1, 4.2))]
    fx.write(root / "results" / "r.jsonl", records)
    return root


@pytest.fixture(scope="module")
def page(two_gpus) -> str:
    return render(two_gpus / "results", two_gpus / "docs")


def test_the_page_is_built_and_in_the_nav():
    assert gpu_types in build.PAGES
    assert "GPU types side by side: analysis/gpu-types.md" in (ROOT / "mkdocs.yml").read_text()


def test_environments_that_differ_only_in_the_gpu_are_paired_and_their_differences_listed(page):
    assert "## GPU Alpha (gpu-a) vs GPU Beta (gpu-b)" in page
    assert row(page, "machine") == ["machine", "gpu-a", "gpu-b"]
    assert row(page, "driver") == ["driver", "570.86", "580.10"]
    assert "| torch |" not in page  # the same on both sides: no difference to list
    alpha = row(page, f"GPU Alpha · torch 2.11.0 · gpu-a · 2026-11-20 <small>`{ALPHA.env_id()}`</small>")
    # GPU, machine, CPU, CPU count, workers, profile, isolated and paired processes.
    assert alpha[1:] == ["GPU Alpha", "gpu-a", "Intel Xeon Platinum 8480+", "16", "1",
                         "full (4 cases)", "1–3", "none"]


def test_overlapping_ranges_of_process_medians_agree(page):
    cells = row(section(page, "Latency"), MATMUL, "—", "eager")
    # 12 µs × (1.0, 1.04, 0.98) against 12 µs × (1.01, 0.99, 1.03).
    assert cells[3:] == ["12.0\u00a0µs (11.8–12.5, 3\u00a0proc.)", "12.1\u00a0µs (11.9–12.4, 3\u00a0proc.)",
                         f"{1.0 / 1.01:.2f}×", "agree"]


def test_ranges_that_do_not_overlap_name_the_faster_gpu(page):
    cells = row(section(page, "Latency"), MATMUL, "—", "reduce-overhead")
    assert cells[5:] == [f"{1.0 / 0.71:.2f}×", "**GPU Beta faster**"]
    cells = row(section(page, "Latency"), MATMUL, "—", "cuda-graph")
    assert cells[5:] == [f"{1.0 / 4.1:.2f}×", "**GPU Alpha faster**"]


def test_each_table_links_a_workload_on_its_first_row_only(page):
    latency = section(page, "Latency").splitlines()
    rows_of_matmul = [line for line in latency if line.startswith(("| matmul-128 |", f"| {MATMUL} |"))]
    assert len(rows_of_matmul) == 4
    assert rows_of_matmul[0].startswith(f"| {MATMUL} |")
    assert all(line.startswith("| matmul-128 |") for line in rows_of_matmul[1:])


def test_a_side_resting_on_one_process_is_marked_a_single_run(page):
    cells = row(section(page, "Latency"), MATMUL, "—", "default")
    # 0.8 × 12 µs on one Alpha process, inside Beta's range: they agree, marked single run.
    assert cells[3:] == ["9.60\u00a0µs (single run)", "9.60\u00a0µs (9.41–9.98, 3\u00a0proc.)",
                         "1.00×", "agree"]


def test_the_page_opens_with_each_pairs_counts(page):
    opening = page[:page.index("## Environments")]
    assert ("- **GPU Alpha (gpu-a) vs GPU Beta (gpu-b)**: whether a mode beats eager differs "
            "in 1 of 3 speedups; latency: 2 of 4 cases agree, GPU Alpha is faster in 1, GPU "
            "Beta in 1") in opening


def test_the_summary_counts_verdicts_per_mode_and_by_eager_boundedness(page):
    summary = section(page, "Summary")
    text = " ".join(summary.split())
    assert ("Of the 4 cases measured on both GPUs, 2 agree; GPU Alpha is faster in 1, "
            "GPU Beta in 1.") in text
    assert "1 of the 4 rest on a single process on at least one side." in text
    assert ('Of the 3 speedups over eager compared, the answer to "is the mode faster than '
            'eager?" differs between the GPUs in 1 (1 of them settled') in text
    assert row(summary, "reduce-overhead") == ["reduce-overhead", "1", "0", "0", "1",
                                               f"{1.0 / 0.71:.2f}×", "0", "0 of 1"]
    assert row(summary, "eager") == ["eager", "1", "1", "0", "0", f"{1.0 / 1.01:.2f}×", "0", "—"]
    # Every fixture eager process is 25% busy: launch-bound on both GPUs.
    assert row(summary, "launch-bound")[:5] == ["launch-bound", "4", "2", "1", "1"]


def test_speedups_over_eager_mark_where_the_faster_mode_answer_differs(page):
    speedups = section(page, "Speedup over eager")
    graph = row(speedups, MATMUL, "—", "cuda-graph")
    assert graph[3].startswith(f"{1 / 0.3:.2f}×")  # eager / cuda-graph on Alpha
    assert graph[4].startswith(f"{1.01 / (4.1 * 0.3):.2f}×")  # Beta: eager 1.01, graph 4.1 × 0.3
    assert graph[5] == "**only on GPU Alpha**"  # every pairing agrees: settled
    assert row(speedups, MATMUL, "—", "reduce-overhead")[5] == "on both"
    # One default process against three eager ones on Alpha: three pairings, a range.
    assert row(speedups, MATMUL, "—", "default")[3] == (
        f"{1 / 0.8:.2f}× ({0.98 / 0.8:.2f}–{1.04 / 0.8:.2f})")


def test_the_fastest_mode_can_differ_between_the_gpus(page):
    cells = row(section(page, "Fastest mode"), MATMUL, "—")
    assert cells[2] == f"cuda-graph (runner-up {0.35 / 0.3:.2f}× slower)"
    assert cells[3].startswith("reduce-overhead (")
    assert cells[4] == "**no**"


def test_the_page_sums_each_pair_up_and_links_its_page_of_every_case(two_gpus, page):
    main = (two_gpus / "docs" / gpu_types.PAGE).read_text(encoding="utf-8")
    link = f"gpu-types/{ALPHA.env_id()}-vs-{BETA.env_id()}.md"
    assert f"[Every case of this pair]({link})" in main
    assert (two_gpus / "docs" / "analysis" / link).exists()
    # The tables that grow with the profiles live on the pair's page only.
    assert "### Latency, case by case" not in main and "### Fastest mode" not in main
    # matmul-128's one point: the fastest mode differs (cuda-graph against reduce-overhead).
    assert "The fastest mode is the same on both GPUs at 0 of the 1" in " ".join(main.split())


def test_one_gpu_type_reads_not_measured_with_the_command_that_adds_another(tmp_path):
    # The fixture's two CUDA environments share the GPU (and differ in machine): no pair.
    page = render(RESULTS, tmp_path / "docs")
    assert ("Not measured: no two cuda environments run the same software on different GPUs "
            "yet (measured so far: NVIDIA H100 80GB HBM3).") in " ".join(page.split())
    assert "python -m bench --backend cuda --profile full --machine NAME\n" in page
    assert "## Environments" not in page


def test_gpus_under_different_torch_releases_are_not_paired(tmp_path):
    other = dataclasses.replace(BETA, torch="2.12.0")
    records = [*processes(ALPHA, "eager", (1.0,)), *processes(other, "eager", (1.0,))]
    fx.write(tmp_path / "results" / "r.jsonl", records)
    page = " ".join(render(tmp_path / "results", tmp_path / "docs").split())
    assert "Not measured" in page and "(measured so far: GPU Alpha, GPU Beta)" in page


def test_lease_speedups_give_each_gpu_types_median_and_range_over_its_leases():
    def lease(env: str, lease_id: str, speedup: float) -> dict:
        return {"env_id": env, "lease": lease_id, "workload": "vit16x6x384", "batch_size": 1,
                "shapes": "seed", analysis.DTYPE: "float32", "mode": "reduce-overhead",
                "speedup": speedup, "ratio_bound": "host-dependent"}

    across = pd.DataFrame([lease("h100", "x", 3.0), lease("h100", "y", 2.1),
                           lease("h100", "z", 3.7), lease("h200", "p", 2.4)])
    (found,) = gpu_types.lease_speedups(across, "h100", "h200").to_dict("records")
    assert (found["speedup_a"], found["lo_a"], found["hi_a"], found["leases_a"]) == (3.0, 2.1, 3.7, 3)
    assert (found["speedup_b"], found["leases_b"]) == (2.4, 1)
    assert found["ratio_bound"] == "host-dependent"


def test_the_environment_table_counts_paired_processes_and_the_cases_still_without(tmp_path):
    # resnet50's three modes have 3 paired processes; bert-base and gpt2-small eager have
    # isolated ones only. The table said "1" for an environment timed paired throughout.
    fx.write(tmp_path / "r.jsonl", model_records.records())
    data = Data(load(tmp_path))
    view = gpu_types.environment_view(data, data.environments[model_records.ENV.env_id()])
    assert (view["processes"], view["paired"], view["unpaired"]) == ([3], [3], 2)


# ---- host-dependent speedups at one host cost (issue 90) ----------------------------------

SLOW_LEASES = {"boot-5": (20e-6, 21e-6), "boot-6": (23e-6, 24e-6), "boot-7": (26e-6, 27e-6),
               "boot-8": (29e-6, 30e-6)}


def host_data(tmp_path, beta_leases) -> Data:
    from fixtures import host_records

    folder = tmp_path / "results"
    fx.write(folder / "alpha.jsonl", host_records.records(ALPHA))
    fx.write(folder / "beta.jsonl", host_records.records(BETA, beta_leases))
    return Data(load(folder))


def test_both_gpus_are_predicted_at_one_host_cost_where_both_have_models(tmp_path):
    from fixtures import host_records

    data = host_data(tmp_path, host_records.LEASES)
    a, b = (data.environments[env.env_id()] for env in (ALPHA, BETA))
    found = {r["workload"]: r for r in gpu_types.at_one_host(data, a, b)}
    assert set(found) == {"vit16x6x384", "launch-chain-100"}
    vit = found["vit16x6x384"]
    reference = analysis.host.reference_of(data, "GPU Alpha").probe_s
    assert vit["at"] == "a" and vit["at_us"] == pytest.approx(reference * 1e6)
    for env, side in ((ALPHA, "a"), (BETA, "b")):
        model = analysis.host.model_for(data, env.env_id(), "vit16x6x384", 1, "reduce-overhead")
        assert vit[f"predicted_{side}"]["speedup"] == pytest.approx(model.at(reference).speedup)


def test_hosts_of_different_speed_are_named_not_compared(tmp_path):
    data = host_data(tmp_path, SLOW_LEASES)
    a, b = (data.environments[env.env_id()] for env in (ALPHA, BETA))
    found = {r["workload"]: r for r in gpu_types.at_one_host(data, a, b)}
    vit = found["vit16x6x384"]
    assert vit["at_us"] is None and vit["predicted_a"] is None and vit["predicted_b"] is None
    assert vit["host_a_us"] < 12 < 19 < vit["host_b_us"]
    text = render_page(data, tmp_path / "docs")
    line = next(x for x in section(text, "Host-dependent speedups at one host cost").splitlines()
                if x.startswith("| vit16x6x384 |"))
    assert (f"none: hosts of different speed ({vit['host_a_us']:.2f} µs against "
            f"{vit['host_b_us']:.2f} µs; no host cost inside both fits)") in line.replace("\xa0", " ")
    assert "0 of 2 compared at one host cost" in text


def render_page(data: Data, docs: Path) -> str:
    gpu_types.render(Site(data, docs))
    return (docs / gpu_types.PAGE).read_text(encoding="utf-8")


# ---- one timing method per ratio (issue 91) -------------------------------------------------

def mixed_timing_records() -> list:
    """resnet50 on two GPU types under one software stack. GPU Alpha timed eager and default
    in 3 isolated processes, 1.5x slower than in its 3 paired processes, and reduce-overhead
    in the paired processes alone; GPU Beta timed every mode in 3 isolated processes alone.
    So Alpha publishes paired figures and Beta isolated ones: a ratio of the published
    latencies would divide a paired median by an isolated one."""
    modes = ("eager", "default", "reduce-overhead")

    def on(env, record):
        return dataclasses.replace(record, env=env, env_id=env.env_id())

    out = []
    for repeat in range(3):
        for mode in ("eager", "default"):
            record = model_records.isolated("resnet50", mode, 1, repeat)
            median = model_records.EAGER_S["resnet50"] * model_records.FACTOR[mode] * 1.5
            out.append(on(ALPHA, dataclasses.replace(record, timing=fx.timing(median, 0.02, False))))
        out += [on(ALPHA, r) for r in model_records.paired("resnet50", modes, 1, repeat)]
        out += [on(BETA, model_records.isolated("resnet50", mode, 1, repeat)) for mode in modes]
    return out


@pytest.fixture(scope="module")
def mixed(tmp_path_factory) -> tuple[Data, str]:
    root = tmp_path_factory.mktemp("mixed-timing")
    fx.write(root / "results" / "r.jsonl", mixed_timing_records())
    return Data(load(root / "results")), render(root / "results", root / "docs")


def test_a_latency_ratio_never_divides_a_paired_median_by_an_isolated_one(mixed):
    data, page = mixed
    alpha = analysis.row_of(data.cases, ALPHA.env_id(), "resnet50", 1, "eager")
    assert alpha["timing"] == "paired"  # what Alpha publishes: a mixed ratio would read 1.00x
    found = gpu_types.latencies(data.cases, ALPHA.env_id(), BETA.env_id()).set_index("mode")
    # Both sides' isolated medians: Alpha's ran 1.5x slower than Beta's.
    assert found.loc["eager", "ratio"] == pytest.approx(1.5, rel=0.02)
    assert found.loc["default", "ratio"] == pytest.approx(1.5, rel=0.02)
    assert found.loc["eager", "timing"] == "isolated"
    cells = row(section(page, "Latency"), "[resnet50](../../workloads/resnet50.md)", "1", "eager")
    assert cells[3].startswith("6.0") and cells[5] == f"{found.loc['eager', 'ratio']:.2f}×"


def test_sides_timed_by_no_one_method_are_not_measured_and_not_counted(mixed):
    """A side with paired figures alone (no isolated process) against one with isolated
    figures alone has no ratio of one timing method: its ratio and verdict are None, and
    the summary counts only the cases compared."""
    data, _ = mixed
    left, right = gpu_types.aligned(data.cases, ALPHA.env_id(), BETA.env_id())
    eager = left["mode"] == "eager"
    left.loc[eager, ["median_s_isolated", "lo_s_isolated", "hi_s_isolated"]] = float("nan")
    left.loc[eager, "n_processes_isolated"] = 0
    right.loc[eager, "timing"] = "isolated"
    one, other = analysis.one_timing(left, right)
    assert list(one.loc[eager, "timing"]) == [None] and one.loc[eager, "median_s"].isna().all()
    assert other.loc[eager, "median_s"].isna().all()
    assert set(one.loc[~eager, "timing"]) == {"isolated"}
    assert one.loc[~eager, "median_s"].tolist() == left.loc[~eager, "median_s_isolated"].tolist()
