"""The real-models page: every registered model listed, measured or not; paired speedups with
their spread; compile, memory and Dynamo diagnostics with reasons; links from the guide and
the home page."""

from __future__ import annotations

import dataclasses
import re

import pytest
from fixtures import RESULTS
from fixtures import make_results as fx
from fixtures import model_records as mx

from bench.records import CaseKey, append_record
from report.analysis import MODEL_WORKLOADS, Data, load
from report.pages import guide, models, overview, workloads
from report.site import Site

PAGE = "analysis/models.md"


def render(results, docs, *pages) -> str:
    site = Site(Data(load(results)), docs)
    for page in pages or (models,):
        page.render(site)
    return (docs / PAGE).read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> str:
    results = tmp_path_factory.mktemp("results")
    for record in mx.records():
        append_record(results / "models.jsonl", record)
    return render(results, tmp_path_factory.mktemp("docs"))


def row(text: str, *cells: str) -> list[str]:
    """The cells of the one table row whose first cells are `cells`."""
    prefix = "| " + " | ".join(cells) + " |"
    found = [line.strip() for line in text.splitlines() if line.strip().startswith(prefix)]
    assert len(found) == 1, (prefix, found)
    return found[0].removeprefix("| ").removesuffix(" |").split(" | ")


def test_without_model_records_no_tab_opens_and_the_page_says_what_is_not_measured(tmp_path):
    text = render(RESULTS, tmp_path)
    assert not re.search(r'^=== "(cuda|cpu|mps)"', text, re.M)
    assert "Not measured: there are no model records from a cuda, cpu or mps machine yet." in text
    for name in MODEL_WORKLOADS:
        assert f"`{name}`" in text


def test_only_a_measured_backend_has_a_tab_and_the_others_are_named_once(page):
    assert re.findall(r'^=== "(cuda|cpu|mps)"', page, re.M) == ["cuda"]
    assert page.count("Not measured: there are no model records from a cpu or mps machine yet.") == 1


def test_a_model_without_records_in_a_measured_environment_reads_not_measured(page):
    assert row(page, "llama-small", "—")[2:] == ["not measured"] * 3
    assert "[llama-small](" not in page


def test_the_speedup_is_the_median_paired_ratio_with_the_range_of_its_processes(page):
    cells = row(page, "[resnet50](../workloads/resnet50.md)", "1")
    ratios = sorted(1 / (mx.FACTOR["default"] * s) for s in mx.PAIRED_SCALES)
    assert cells[3] == f"{ratios[1]:.2f}× ({ratios[0]:.2f}–{ratios[2]:.2f}, 3\u00a0paired\u00a0proc.)"


def test_a_failed_mode_shows_its_status_in_the_speedups_and_its_reason_below(page):
    assert row(page, "[bert-base](../workloads/bert-base.md)", "8")[3] == "error"
    assert "| bert-base | 8 | default | error: during first calls: InductorError: fixture failure |" in page


def test_costs_show_compile_times_break_even_and_peak_memory_with_graph_pools(page):
    cells = row(page, "resnet50", "1", "reduce-overhead")
    assert cells[3] == "30.0\u00a0s / 6.00\u00a0s"
    saving = mx.EAGER_S["resnet50"] * (1 - mx.FACTOR["reduce-overhead"])
    assert cells[4].startswith(f"{int(-(-30.0 // saving)):,} / ")
    assert cells[5] == "3.00\u00a0GiB reserved, 2.00\u00a0GiB allocated"


def test_break_even_pages_read_the_saving_of_the_processes_that_timed_the_speedup(tmp_path):
    """Beside a paired 2x speedup, the model page and the environment's break-even page read
    "never" from one isolated eager process that ran as slow as reduce-overhead."""
    from report.pages import break_even

    results = tmp_path / "results"
    for record in mx.eager_alone_as_slow_as_reduce_overhead():
        append_record(results / "models.jsonl", record)
    model_page = render(results, tmp_path / "docs", models, break_even)
    assert row(model_page, "resnet50", "1", "reduce-overhead")[4].startswith("15,000 / ")
    every = (tmp_path / "docs" / break_even.env_page(mx.ENV.env_id())).read_text(encoding="utf-8")
    cells = row(every, "resnet50", "1", "reduce-overhead")  # named once, linked on its first row
    assert cells[3] == "15,000" and cells[7:] == ["2.00\u00a0ms (paired)", "4.00\u00a0ms", "2.00\u00a0ms"]


def test_graph_breaks_and_cudagraph_skips_are_counted_and_their_reasons_listed(page):
    cells = row(page, "resnet50", "1", "reduce-overhead")
    assert (cells[6], cells[7]) == ("2 / 0", "1")
    reasons = [line.strip() for line in page.splitlines()
               if line.strip().startswith("- resnet50, batch 1, reduce-overhead:")]
    assert len(reasons) == 1
    assert "2x: Unsupported: call\\_function BuiltinVariable(print)" in reasons[0]
    assert "skipping cudagraphs due to mutated inputs" in reasons[0]


def test_a_model_without_a_float64_reference_says_why(page):
    cells = row(page, "gpt2-small", "1", "eager")
    assert "the float64 reference failed: RuntimeError: no fp64 kernel" in cells[8]


def test_the_settings_and_package_versions_are_listed_per_model(page):
    cells = row(page, "resnet50", "110,000,000")
    assert "attn\\_implementation: sdpa" in cells[2] and "use\\_cache: False" in cells[2]
    assert cells[3] == "transformers 5.23.0"


def test_the_guide_and_home_page_link_the_model_page_and_the_logs_to_turn_on(tmp_path):
    render(RESULTS, tmp_path, models, guide, overview)
    guide_text = (tmp_path / "analysis" / "guide.md").read_text(encoding="utf-8")
    assert "(models.md)" in guide_text
    assert 'TORCH_LOGS="graph_breaks,recompiles,cudagraphs"' in guide_text
    assert re.search(r"\]\(analysis/models\.md\)", (tmp_path / "index.md").read_text())


def test_one_isolated_process_reads_single_run_where_paired_processes_repeat_others(tmp_path):
    # Paired timing runs each case once alone: the environment is repeated by its paired
    # processes, so a ratio from lone isolated processes must not read like a settled one.
    modes = ("eager", "default", "reduce-overhead")
    results = tmp_path / "results"
    for record in [*(mx.isolated("resnet50", m, 1, 0) for m in modes),
                   *(p for r in range(3) for p in mx.paired("resnet50", modes, 1, r)),
                   mx.isolated("gpt2-small", "eager", 1, 0), mx.isolated("gpt2-small", "default", 1, 0)]:
        append_record(results / "models.jsonl", record)
    text = render(results, tmp_path / "docs")
    assert row(text, "[gpt2-small](../workloads/gpt2-small.md)", "1")[3].endswith("× (single run)")
    assert "single runs: every figure rests on one process" not in text


def test_eager_reads_its_paired_processes_where_the_speedups_come_from_them(page):
    # resnet50 at batch 1: three paired processes time eager at 4 ms each, while the three
    # isolated ones spread over the fixture's repeat scales.
    assert row(page, "[resnet50](../workloads/resnet50.md)", "1")[2].endswith(", 3\u00a0paired\u00a0proc.)")
    assert row(page, "[resnet50](../workloads/resnet50.md)", "1")[2].startswith("4.00\u00a0ms (")
    # bert-base at batch 8 has isolated processes only.
    assert row(page, "[bert-base](../workloads/bert-base.md)", "8")[2].endswith(", 3\u00a0proc.)")


def test_the_workload_page_names_each_library_version_with_the_environments_it_built(tmp_path):
    results = tmp_path / "results"
    other = fx.environment("cpu-box", "cpu", "Intel Xeon Platinum 8480+", None)
    for record in mx.records():
        append_record(results / "models.jsonl", record)
    newer = dataclasses.replace(mx.isolated("resnet50", "eager", 1, 0), env=other,
                                env_id=other.env_id(), key=CaseKey("cpu", "resnet50", "eager", 1))
    newer = dataclasses.replace(newer, workload_info=dataclasses.replace(
        newer.workload_info, libraries={"transformers": "9.0.0"}))
    append_record(results / "cpu.jsonl", newer)
    site = Site(Data(load(results)), tmp_path / "docs")
    workloads.render(site)
    pinned = next(line for line in (tmp_path / "docs" / "workloads" / "resnet50.md").read_text(
        encoding="utf-8").splitlines() if line.startswith("Pinned"))
    labels = {e.backend: e.label for e in site.data.environments.values()}
    assert f"transformers 5.23.0 (on {labels['cuda']})" in pinned
    assert f"transformers 9.0.0 (on {labels['cpu']})" in pinned
    bert = (tmp_path / "docs" / "workloads" / "bert-base.md").read_text(encoding="utf-8")
    assert "built by transformers 5.23.0. " in bert


def test_the_workload_page_shows_the_paired_processes_behind_a_case_timed_once_alone(tmp_path):
    # Paired timing runs each case once alone (here at 1.04x its paired median) and three
    # times beside the other modes: latency, its range and the speedup must rest on the same
    # three processes, or a slower-looking median sits beside a speedup above 1.
    modes = ("eager", "default", "reduce-overhead")
    results = tmp_path / "results"
    for record in [*(mx.isolated("resnet50", m, 1, 1) for m in modes),
                   *(p for r in range(3) for p in mx.paired("resnet50", modes, 1, r)),
                   *(mx.isolated("bert-base", "eager", 8, r) for r in range(3))]:
        append_record(results / "models.jsonl", record)
    site = Site(Data(load(results)), tmp_path / "docs")
    workloads.render(site)
    # The tables sit in backend tabs, indented by four spaces.
    resnet, bert = ((tmp_path / "docs" / "workloads" / f"{name}.md").read_text(
        encoding="utf-8").replace("    |", "|") for name in ("resnet50", "bert-base"))
    assert row(resnet, "default", "1", "ok")[3] == "3.20\u00a0ms (3.04–3.36, 3\u00a0paired\u00a0proc.)"
    assert row(resnet, "eager", "1", "ok")[3] == "4.00\u00a0ms (4.00–4.00, 3\u00a0paired\u00a0proc.)"
    assert row(bert, "eager", "8", "ok")[3].endswith(", 3\u00a0proc.)")


def test_a_workload_page_opens_with_the_fastest_mode_its_spread_and_its_cost(tmp_path):
    # Eager's one isolated process ran as slow as reduce-overhead; the answer must come from
    # the three paired processes, as the speedup and break-even on the rest of the site do.
    results = tmp_path / "results"
    for record in [*mx.eager_alone_as_slow_as_reduce_overhead(),
                   *(mx.isolated("bert-base", "eager", 8, r) for r in range(3))]:
        append_record(results / "models.jsonl", record)
    workloads.render(Site(Data(load(results)), tmp_path / "docs"))
    resnet, bert = ((tmp_path / "docs" / "workloads" / f"{name}.md").read_text(
        encoding="utf-8") for name in ("resnet50", "bert-base"))
    glance = resnet[resnet.index("## At a glance"):resnet.index("## The workload")]
    assert resnet.index("## At a glance") < resnet.index("## Latency")
    assert row(glance.replace("    |", "|"), "1")[2:] == [
        "reduce-overhead", "2.00× (1.90–2.11, 3\u00a0paired\u00a0proc.)", "default (1.25×)", "60.0%",
        "30.0\u00a0s", "15,000"]
    assert "No point here has two modes timed." in bert


def test_each_dtype_tab_lists_the_settings_of_its_own_dtype(tmp_path):
    """The H100's float32 tab said "weights and inputs in bfloat16": the settings table
    sat outside the dtype tabs, from each model's newest record of any dtype."""
    from fixtures import dtype_records as dx

    said = "weights and inputs in bfloat16"
    records = [dataclasses.replace(r, workload_info=dataclasses.replace(
        r.workload_info, settings={"mode": "eval", **({"precision": said}
                                                      if r.key.dtype == "bfloat16" else {})}))
        for r in dx.records()]
    fx.write(tmp_path / "results" / "r.jsonl", records)
    text = render(tmp_path / "results", tmp_path / "docs")
    float32, bfloat16 = text.split('=== "float32"')[1].split('=== "bfloat16"')
    settings = "| model | parameters | settings | packages |"
    assert settings in float32 and settings in bfloat16
    assert said not in float32 and "mode: eval" in float32.split(settings)[1]
    assert said in bfloat16.split(settings)[1]
