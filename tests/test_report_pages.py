"""Rendered pages: gaps read "not measured", failures keep their reasons, numbers
match the records, and the same results always give the same bytes."""

from __future__ import annotations

import dataclasses
import json
import re

import pytest
from fixtures import RESULTS, model_records
from fixtures import make_results as fx
from fixtures.site import generated

from report.build import build
from report.pages import launch_overhead, stability
from report.site import GENERATED_DIRS, GENERATED_FILES

ENV_A, ENV_B, ENV_CPU = fx.ENV_A.env_id(), fx.ENV_B.env_id(), fx.ENV_CPU.env_id()


@pytest.fixture(scope="module")
def docs(fixture_root):
    """The fixture results rendered once per test run (conftest.py), not again per module."""
    return fixture_root / "docs"


def read(docs, page: str) -> str:
    return (docs / page).read_text(encoding="utf-8")


def env_block(text: str, env_id: str) -> str:
    """The part of a tab that belongs to one environment, up to the next block or tab."""
    start = text.index(f"(environment `{env_id}`")
    end = re.search(r"\n    \*\*|\n=== |\n## ", text[start:])
    return text[start:start + end.start()] if end else text[start:]


def row(text: str, *cells: str) -> str:
    """The one table row whose first cells are `cells`. A workload is linked on its first
    row of a table only, so a linked first cell also matches its plain name."""
    plain = re.sub(r"^\[([^\]]+)\]\([^)]*\)$", r"\1", cells[0])
    prefixes = tuple({"| " + " | ".join((first, *cells[1:])) + " |" for first in (cells[0], plain)})
    found = [line.strip() for line in text.splitlines() if line.strip().startswith(prefixes)]
    assert len(found) == 1, (prefixes, found)
    return found[0]


def stability_env(docs, env_id: str, section: str) -> str:
    """One section of an environment's stability page, from its anchor to the next."""
    page = read(docs, f"analysis/stability/{env_id}.md")
    start = page.index(f"{{ #{section} }}")
    end = page.find("\n## ", start)
    return page[start:end if end != -1 else None]
def table(text: str, header: str) -> list[list[str]]:
    """The rows of the one table in `text` whose header starts with `header`, as cells."""
    assert text.count(header) == 1, header
    lines = text[text.index(header):].splitlines()[2:]
    found = [line.strip() for line in lines[:next((i for i, line in enumerate(lines)
                                                   if not line.strip().startswith("|")),
                                                  len(lines))]]
    return [[cell.strip() for cell in line.strip("|").split(" | ")] for line in found]


def under_heading(text: str, heading: str) -> str:
    """A `## ` section of a page, from its heading to the next."""
    start = text.index(f"\n## {heading}")
    end = text.find("\n## ", start + 1)
    return text[start:end if end != -1 else None]


def link_target(docs, page: str, text: str, label: str) -> str:
    """The page a link labelled `label` in `text` (on `page`) leads to, read after checking
    that the heading its anchor names is on it."""
    target, anchor = re.search(re.escape(f"[{label}](") + r"([^)#]+)#([^)]+)\)", text).groups()
    linked = (docs / page).parent / target
    headings = re.findall(r"^#+ (.+)$", linked.read_text("utf-8"), re.MULTILINE)
    slugs = {re.sub(r"[\s]+", "-", re.sub(r"[^\w\s-]", "", h).strip().lower()) for h in headings}
    assert anchor in slugs, (target, anchor, slugs)
    return linked.read_text("utf-8")


def test_backend_without_environment_has_no_tab_and_reads_not_measured(docs):
    index = read(docs, "index.md")
    assert '=== "mps"' not in index and '=== "cuda"' in index
    assert "Not measured: there are no results from a mps machine yet." in index


def test_mode_missing_in_one_environment_reads_not_measured(docs):
    page = read(docs, "workloads/matmul-128.md")
    latency = page[page.index("## Latency"):page.index("## Compile time")]
    # Named once under the table, not as a row of "not measured" per batch.
    missing = env_block(latency, ENV_B)
    assert "| max-autotune |" not in missing
    not_run = next(line for line in missing.splitlines() if "Not measured in this" in line)
    assert "max-autotune" in not_run.split(":", 1)[1].replace("max-autotune-no-cudagraphs", "")
    assert "| max-autotune | — | ok |" in env_block(latency, ENV_A)


def test_failed_and_unsupported_cases_show_status_and_reason(docs):
    matmul = read(docs, "workloads/matmul-128.md")
    failed = matmul[matmul.index("## Failed and unsupported"):]
    assert "| max-autotune-no-cudagraphs | — | **error** | InductorError: RuntimeError: \\| pipes" \
        in failed
    assert "cuda-graph needs backend cuda, not cpu" in env_block(failed, ENV_CPU)
    vit = read(docs, "workloads/vit16x6x384.md")
    assert "| max-autotune | 4 | **oom** | CUDA out of memory." in vit
    overview = env_block(read(docs, "index.md"), ENV_A)
    assert "timeout" in row(overview, "[launch-chain-100](workloads/launch-chain-100.md)")


def test_overview_speedup_is_eager_median_over_mode_median(docs):
    expected = (fx.latency(fx.ENV_A, "trivial-call", "eager", None)
                / fx.latency(fx.ENV_A, "trivial-call", "default", None))
    cells = row(env_block(read(docs, "index.md"), ENV_A),
                "[trivial-call](workloads/trivial-call.md)").split(" | ")
    # Three processes a side: the range spans every pairing, 0.98/1.04 to 1.04/0.98.
    low, high = expected * 0.98 / 1.04, expected * 1.04 / 0.98
    assert cells[4] == f"{expected:.2f}× ({low:.2f}–{high:.2f})"
    single = row(env_block(read(docs, "index.md"), ENV_B),
                 "[trivial-call](workloads/trivial-call.md)").split(" | ")
    assert single[4] == f"{expected:.2f}×"  # h100-b is single runs, marked once above


def test_break_even_reads_never_where_the_mode_is_slower(docs):
    page = read(docs, f"analysis/break-even/{ENV_A}.md")
    # The answer (calls to break even, cold then warm) comes right after the case.
    # The workload links once, on its first row, which keeps the page under 300 KB.
    assert page.count("[vit16x6x384](../../workloads/vit16x6x384.md)") == 1
    slower = row(page, "vit16x6x384", "4", "reduce-overhead")
    assert slower.split(" | ")[3:5] == ["never", "never"]
    faster = row(page, "vit16x6x384", "1", "reduce-overhead")
    calls = faster.split(" | ")[3]
    assert calls.replace(",", "").isdigit()


def test_break_even_sums_each_mode_up_and_links_every_case(docs):
    every = read(docs, f"analysis/break-even/{ENV_A}.md")
    cases = [line.split(" | ") for line in every.splitlines() if line.startswith("| ")
             and " | reduce-overhead | " in line]
    never = sum(cells[3] == "never" for cells in cases)
    paying = sorted(int(cells[3].replace(",", "")) for cells in cases
                    if cells[3].replace(",", "").isdigit())
    assert never and paying  # the fixture has both kinds
    page = env_block(read(docs, "analysis/break-even.md"), ENV_A)
    assert f"[All {every.count(chr(10) + '| ') - 1} cases of this environment]" \
           f"(break-even/{ENV_A}.md)" in page
    summary = row(page, "reduce-overhead").split(" | ")
    assert summary[1:3] == [str(len(cases)), str(never)]
    assert summary[4].startswith(f"{paying[0]:,} (")
    assert summary[5].startswith(f"{paying[-1]:,} (")


def test_repeats_and_rerun_tags_are_processes_on_the_spread_page(docs):
    spread = stability_env(docs, ENV_A, "spread-across-processes")
    # Three repeats plus rerun-1 and rerun-2: five processes of one case.
    assert "5\u00a0proc.)" in row(spread, "[matmul-128](../../workloads/matmul-128.md)", "—", "eager")
    unstable = stability_env(docs, ENV_A, "unstable-processes")
    assert row(unstable, "[trivial-call](../../workloads/trivial-call.md)", "—", "eager", "main",
               "1 of 3")
    page = read(docs, "analysis/stability.md")
    spread = page[:page.index("## Unstable processes")]
    assert f"(environment `{ENV_B}`" not in spread  # single runs have no spread to show
    assert "No case of this environment was measured in more than one process." in read(
        docs, f"analysis/stability/{ENV_B}.md")


def test_stability_page_sums_each_environment_up_and_links_its_cases(docs):
    """The page grows with environments, not cases: every case is on the environment's
    own page, linked from each section's summary."""
    page = read(docs, "analysis/stability.md")
    link = f"stability/{ENV_A}.md"
    for heading, anchor in (("## Spread across processes", "spread-across-processes"),
                            ("## Unstable processes", "unstable-processes")):
        assert f"]({link}#{anchor})" in env_block(page[page.index(heading):], ENV_A), anchor
    assert "[matmul-128](" not in page  # no per-case row on the summary page
    spread = stability_env(docs, ENV_A, "spread-across-processes")
    listed = [line for line in spread.splitlines() if line.startswith("| ")][1:]  # no header
    assert f"[These {len(listed)} cases, process by process]({link}#spread-across-processes)" \
        in page


def test_probes_render_generically_by_name(tmp_path):
    record = fx.ok_record(fx.ENV_A, "matmul-128", "eager", None, probes={
        "brand-new-probe": {"summary": "something new was found", "value": 3}})
    fx.write(tmp_path / "results" / "r.jsonl", [record])
    build(tmp_path / "results", tmp_path / "docs")
    page = read(tmp_path / "docs", "methodology.md")
    assert "| `brand-new-probe` | 1 | eager |" in page
    assert f"[Every probe result of this environment](analysis/probes/{ENV_A}.md)" in page
    every = read(tmp_path / "docs", f"analysis/probes/{ENV_A}.md")
    assert row(every, "[matmul-128](../../workloads/matmul-128.md)", "—", "eager") == (
        "| [matmul-128](../../workloads/matmul-128.md) | — | eager | `brand-new-probe` | "
        "something new was found | 3 |")


def test_recompiles_and_skipped_graphs_are_counted_per_workload_and_mode(tmp_path):
    def compiled(env, workload: str, batch, recompiles: int, skips: int, reasons=()):
        record = fx.ok_record(env, workload, "reduce-overhead", batch)
        return dataclasses.replace(record, dynamo=dataclasses.replace(
            record.dynamo, recompiles=recompiles, cudagraph_skips=skips,
            skip_reasons=reasons))

    fx.write(tmp_path / "results" / "r.jsonl", [
        compiled(fx.ENV_A, "vit16x6x384", 1, 1, 0), compiled(fx.ENV_A, "vit16x6x384", 2, 2, 0),
        compiled(fx.ENV_B, "vit16x6x384", 1, 1, 1, ("mutated inputs",)),
        compiled(fx.ENV_A, "matmul-128", None, 0, 1, ("mutated inputs",))])
    build(tmp_path / "results", tmp_path / "docs")
    page = read(tmp_path / "docs", "methodology.md")
    assert "3 of 4\nsuccessful compiled cases recorded a recompile" in page
    assert row(page, "[vit16x6x384](workloads/vit16x6x384.md)", "reduce-overhead") == (
        "| [vit16x6x384](workloads/vit16x6x384.md) | reduce-overhead | 3 | 2 | 2 | 0 |")
    assert "2 of them ran without CUDA graphs" in page
    assert row(page, "cuda", "reduce-overhead", "mutated inputs") == (
        "| cuda | reduce-overhead | mutated inputs | 2 | 2 | 2 |")


def test_workload_nav_lists_every_workload_by_family(docs):
    nav = json.loads(read(docs, "workloads/.nav.json"))
    assert [group["family"] for group in nav] == ["launch-overhead", "matmul", "vit"]
    pages = [path for group in nav for _, path in group["pages"]]
    assert pages == [f"workloads/{w}.md" for w in  # the registry's order
                     ("trivial-call", "launch-chain-10", "launch-chain-100", "matmul-128",
                      "vit16x6x384")]
    assert all((docs / p).is_file() for p in pages)


def test_every_chart_has_alt_text_and_exists(docs):
    for page in docs.rglob("*.md"):
        for alt, link in re.findall(r"!\[([^\]]*)\]\(([^)]+)\)", page.read_text("utf-8")):
            assert len(alt) > 40, (page, link)
            assert (page.parent / link).resolve().is_file(), (page, link)


def test_rendering_twice_gives_identical_bytes(docs, tmp_path):
    again = tmp_path / "again"
    build(RESULTS, again)
    first, second = generated(docs), generated(again)
    assert sorted(first) == sorted(second)
    assert any(f.suffix == ".svg" for f in first)
    for name, content in first.items():
        assert content == second[name], name


def test_empty_results_render_every_page_as_not_measured(tmp_path):
    build(tmp_path / "missing", tmp_path / "docs")
    out = tmp_path / "docs"
    for name in GENERATED_FILES:
        assert (out / name).is_file()
    pages = sorted(p.relative_to(out).as_posix() for p in out.rglob("*.md"))
    assert "workloads/index.md" in pages and "analysis/launch-overhead.md" in pages
    assert len([p for p in pages if p.startswith("concepts/")]) == 6
    assert not list(out.rglob("*.svg"))
    assert "No workload has been measured yet" in read(out, "workloads/index.md")
    claims = read(out, "analysis/claims.md")
    # The claims page quotes the figures each seed states; without records it judges none.
    assert not re.search(r"\| \*\*(holds|fails|depends|unsettled)\*\*", claims)
    for page in out.rglob("*.md"):
        # No measured quantity can appear without records; the claims pages quote the
        # figures each seed states.
        if page.name != "claims.md" and page.parent.name != "claims":
            text = page.read_text("utf-8")
            assert not re.search(r"\d (ns|µs|ms|s|MiB|GiB)\b|\d\.\d\d×", text), page
    index = read(out, "index.md")
    assert '=== "' not in index
    assert index.count("Not measured: there are no results from a cuda, cpu or mps machine yet.") == 1


def test_stale_generated_pages_are_removed_and_static_files_kept(tmp_path):
    out = tmp_path / "docs"
    fx.write(tmp_path / "two" / "r.jsonl", [
        fx.ok_record(fx.ENV_A, "matmul-128", "eager", None),
        fx.ok_record(fx.ENV_B, "trivial-call", "eager", None)])
    build(tmp_path / "two", out)
    assert (out / "workloads" / "trivial-call.md").is_file()
    (out / "javascripts").mkdir()
    (out / "javascripts" / "keep.js").write_text("// hand-written\n")
    fx.write(tmp_path / "one" / "r.jsonl", [fx.ok_record(fx.ENV_A, "matmul-128", "eager", None)])
    build(tmp_path / "one", out)
    assert (out / "workloads" / "matmul-128.md").is_file()
    assert not (out / "workloads" / "trivial-call.md").exists()
    assert not list((out / "charts").rglob(f"*{ENV_B}*"))
    assert (out / "javascripts" / "keep.js").is_file()
    assert {p.name for p in out.iterdir() if p.is_dir()} <= set(GENERATED_DIRS) | {"javascripts"}


def test_stability_summary_counts_cases_that_moved_between_processes(docs):
    # The fixture's processes differ by 1.06 / 0.97 - 1 = 9.3% at most, under the 10% line.
    repeated = " ".join(env_block(read(docs, "analysis/stability.md"), ENV_A).split())
    assert "0 of the 39 cases measured in more than one process moved by more than 10.0%" \
        in repeated
    # Every fixture record's IQR is 5% of its median; a 6.1% move is not twice that.
    assert "the same cases' IQR was a median 5.0% of their median." in repeated


def floor_measured_twice() -> list:
    """trivial-call measured twice: eager moves 2%, default 50%."""
    records = [fx.ok_record(fx.ENV_A, "trivial-call", mode, None) for mode in ("eager", "default")]
    return records + [fx.ok_record(fx.ENV_A, "trivial-call", mode, None, tag="rerun-1",
                                   scale=scale, started="2026-11-21T09:00:00+00:00")
                      for mode, scale in (("eager", 1.02), ("default", 1.5))]


@pytest.fixture(scope="module")
def repeated_floor(tmp_path_factory):
    root = tmp_path_factory.mktemp("repeated-floor")
    records = floor_measured_twice()
    fx.write(root / "results" / "r.jsonl", records)
    build(root / "results", root / "docs")
    return root / "docs"


def test_stability_summary_bolds_and_names_the_largest_move(repeated_floor):
    page = env_block(read(repeated_floor, "analysis/stability.md"), ENV_A)
    assert "1 of the 2 cases measured in more than one process moved by more than" in page
    assert "the largest 50.0%\n    (trivial-call, default)." in page
    # Median move (2% and 50%) 26%, against a 5% IQR inside each process.
    assert ("IQR was a median 5.0% of their median, so the spread inside one process "
            "understates how far a median moves between processes.") in " ".join(page.split())
    cases = stability_env(repeated_floor, ENV_A, "spread-across-processes")
    assert "the largest 50.0%\n(trivial-call, default)." in cases
    assert row(cases, "[trivial-call](../../workloads/trivial-call.md)", "—", "default").endswith(
        "| **50.0%** |")
    assert row(cases, "[trivial-call](../../workloads/trivial-call.md)", "—", "eager").endswith(
        "| 2.0% |")


def test_stability_lists_the_widest_spreads_when_there_are_too_many_and_counts_the_rest(
        tmp_path, monkeypatch):

    monkeypatch.setattr(stability, "SPREAD_SHOWN", 1)
    records = floor_measured_twice()
    fx.write(tmp_path / "results" / "r.jsonl", records)
    build(tmp_path / "results", tmp_path / "docs")
    page = env_block(read(tmp_path / "docs", "analysis/stability.md"), ENV_A)
    assert f"[The 1 of these 2 cases whose process medians spread furthest](stability/{ENV_A}.md" \
           f"#spread-across-processes)" in page
    cases = stability_env(tmp_path / "docs", ENV_A, "spread-across-processes")
    assert "The 1 of these 2 cases whose process medians\nspread furthest are listed" in cases
    assert row(cases, "[trivial-call](../../workloads/trivial-call.md)", "—", "default").endswith(
        "| **50.0%** |")
    assert "| — | eager |" not in cases


def test_stability_page_summarises_the_moves_of_each_mode(repeated_floor):
    page = env_block(read(repeated_floor, "analysis/stability.md"), ENV_A)
    by_mode = page[page.index("| mode | cases | median move | largest move |"):]
    assert row(by_mode, "eager") == "| eager | 1 | 2.0% | 2.0% |"
    assert row(by_mode, "default") == "| default | 1 | 50.0% | 50.0% |"
    assert "| reduce-overhead |" not in by_mode.split("\n\n")[0]  # never repeated


def test_floor_table_shows_the_spread_of_each_mode_across_processes(repeated_floor):
    page = read(repeated_floor, "analysis/launch-overhead.md")
    floor = env_block(page[page.index("## The per-call floor"):], ENV_A)
    main = fx.latency(fx.ENV_A, "trivial-call", "default", None)
    cells = row(floor, "default").split(" | ")
    # The median of two processes is their mean; both are shown, to three figures.
    assert cells[2] == (f"{main * 1.25 * 1e6:.2f}\u00a0µs ({main * 1e6:.2f}–{main * 1.5 * 1e6:.2f}, "
                        f"2\u00a0proc.)")


def test_floor_table_has_no_other_runs_column_without_repeats(docs):
    page = read(docs, "analysis/launch-overhead.md")
    floor = page[page.index("## The per-call floor"):page.index("## Overhead anatomy")]
    assert "other runs" not in floor


def test_crossover_that_never_stopped_names_the_only_batches_measured(tmp_path):
    records = [fx.ok_record(fx.ENV_A, "vit16x6x384", "eager", batch) for batch in (1, 2)]
    records.append(fx.ok_record(fx.ENV_A, "vit16x6x384", "reduce-overhead", 1))
    fx.write(tmp_path / "results" / "r.jsonl", records)
    build(tmp_path / "results", tmp_path / "docs")
    page = read(tmp_path / "docs", f"analysis/launch-overhead/{ENV_A}.md")
    assert ("`reduce-overhead` is at least 5% faster than `eager` at every measured batch size "
            "(measured at 1 only)") in page
    summary = read(tmp_path / "docs", "analysis/launch-overhead.md")
    block = env_block(under_heading(summary, "Where CUDA graphs stop helping"), ENV_A)
    assert row(block, "[vit16x6x384](../workloads/vit16x6x384.md)") == (
        "| [vit16x6x384](../workloads/vit16x6x384.md) | not by batch 1 (measured at 1 only) |")
    # The pairs come from the modes' traits in the records: default was never measured.
    assert "`reduce-overhead` over `default`" not in summary


@pytest.mark.parametrize("env_id", [ENV_A, ENV_CPU])
def test_launch_overhead_sums_up_where_graphs_stop_helping_from_the_environment_page(
        docs, env_id):
    page = read(docs, "analysis/launch-overhead.md")
    block = env_block(under_heading(page, "Where CUDA graphs stop helping"), env_id)
    summary = table(block, "| workload |")
    pairs = block[block.index("| workload |"):].splitlines()[0].strip("| ").split(" | ")[1:]
    every = under_heading(link_target(docs, "analysis/launch-overhead.md", block,
                                      "Every batch, charted"), "Where CUDA graphs stop helping")
    batches = table(every, "| batch |")
    assert len(summary) == 1 and len(pairs) == 3 and len(batches) == 3
    for pair, cell in zip(pairs, summary[0][1:], strict=True):
        ratios = [(int(cells[0]), cells[1 + pairs.index(pair)]) for cells in batches]
        measured = [(b, float(r.split("×")[0])) for b, r in ratios if r != "not measured"]
        stop = next((b for b, speedup in measured if speedup < 1.05), None)
        assert cell == (f"batch {stop}" if stop else f"not by batch {measured[-1][0]}"
                        + ("" if len(measured) == len(ratios) else
                           f" (measured at {', '.join(str(b) for b, _ in measured)} only)"))
    # ViT, reduce-overhead over eager: 2.86×, 1.43×, then less on the GPU; less at 2 on CPU.
    assert summary[0][1] == {ENV_A: "batch 4", ENV_CPU: "batch 2"}[env_id]
    assert "| batch |" not in page


def test_launch_overhead_counts_the_classes_whose_least_busy_cases_its_environment_page_lists(
        docs):
    page = read(docs, "analysis/launch-overhead.md")
    block = env_block(under_heading(page, "Overhead anatomy"), ENV_A)
    counts = re.search(r"Launch-bound: (\d+) cases; mixed: (\d+);\s+device-bound: (\d+)\.",
                       block).groups()
    listed = table(link_target(docs, "analysis/launch-overhead.md", block,
                               "The least busy cases of each class"), "| workload | batch | mode |")
    for name, count in zip(("launch-bound", "mixed", "device-bound"), counts, strict=True):
        shown = sum(cells[6] == name for cells in listed)
        assert shown == min(int(count), launch_overhead.ANATOMY_SHOWN_PER_CLASS), name
    assert sum(map(int, counts)) > len(listed)  # the fixture has more than the page lists
    assert "| workload | batch | mode |" not in page


def test_a_sweep_over_n_an_external_model_and_a_new_mode_render(tmp_path):
    """New families need no change to the report: the axis comes from the record, an
    external model sorts after the registry, and a mode without graphs has no crossover."""
    import dataclasses

    from bench.records import CaseKey
    records = []
    for mode in ("eager", "default-dynamic"):
        for n in (64, 128):
            r = fx.ok_record(fx.ENV_A, "matmul-128", "eager", None)
            records.append(dataclasses.replace(
                r, key=CaseKey("cuda", "matmul-sweep", mode, n), mode_traits=fx.traits(mode),
                workload_info=dataclasses.replace(r.workload_info, axis="n",
                                                  family="matmul-sweep")))
    external = fx.ok_record(fx.ENV_A, "matmul-128", "eager", None)
    records.append(dataclasses.replace(
        external, key=CaseKey("cuda", "my-model", "eager", 1),
        workload_info=dataclasses.replace(external.workload_info, family="external")))
    fx.write(tmp_path / "results" / "r.jsonl", records)
    build(tmp_path / "results", tmp_path / "docs")
    page = read(tmp_path / "docs", "workloads/matmul-sweep.md")
    assert "Matrix sizes n measured: 64, 128." in page
    assert "| default-dynamic | 64 | ok |" in page
    nav = json.loads(read(tmp_path / "docs", "workloads/.nav.json"))
    assert [group["family"] for group in nav] == ["matmul-sweep", "external"]
    # The external model's own page gives the guide's recommendation; a built-in one does not.
    own = read(tmp_path / "docs", "workloads/my-model.md")
    assert "| 1 | **eager** |" in own[own.index("## Recommendation"):own.index("## Latency")]
    assert "## Recommendation" not in page


# ---- the concurrency check on the methodology page ---------------------------------------

def concurrency_section(docs) -> str:
    page = read(docs, "methodology.md")
    return page[page.index("## Concurrency"):page.index("## Compile time")]


def processes_of(mode: str, tag: str, workers: int, scales: tuple[float, ...]) -> list:
    import dataclasses

    made = [fx.ok_record(fx.ENV_A, "matmul-128", mode, None, tag=tag, scale=scale, repeat=i,
                         repeats=len(scales)) for i, scale in enumerate(scales)]
    return [dataclasses.replace(r, process=dataclasses.replace(
        r.process, workers=workers, gpu=0 if workers == 1 else i)) for i, r in enumerate(made)]


@pytest.fixture(scope="module")
def concurrency_checked(tmp_path_factory):
    """matmul-128 alone (one worker), beside busy GPUs (tag busy) and in the main run (4
    workers). eager: every range of process medians overlaps. reduce-overhead: the busy
    side and the main run are 30% slower than every alone process. default: the main run
    had one worker and no busy side was measured, so nothing is set against alone."""
    root = tmp_path_factory.mktemp("concurrency")
    records = [*processes_of("eager", "main", 4, (1.0, 1.04, 0.98)),
               *processes_of("eager", "alone", 1, (1.01, 0.99, 1.03)),
               *processes_of("eager", "busy", 1, (1.02, 1.0, 0.97)),
               *processes_of("reduce-overhead", "main", 4, (1.0, 1.04, 0.98)),
               *processes_of("reduce-overhead", "alone", 1, (0.7, 0.72, 0.71)),
               *processes_of("reduce-overhead", "busy", 1, (1.0, 0.99, 1.01)),
               *processes_of("default", "main", 1, (1.0, 1.04, 0.98)),
               *processes_of("default", "alone", 1, (1.0, 1.02, 0.99))]
    fx.write(root / "results" / "r.jsonl", records)
    build(root / "results", root / "docs")
    return root / "docs"


LABEL = "NVIDIA H100 80GB HBM3 · torch 2.11.0 · h100-a · 2026-11-20"
MATMUL = "[matmul-128](workloads/matmul-128.md)"


def busy_table(section: str) -> str:
    return section[section.index("### Alone, then beside"):section.index("### Alone, against")]


def main_table(section: str) -> str:
    return section[section.index("### Alone, against"):]


def test_concurrency_within_the_spread_where_alone_and_busy_ranges_overlap(
        concurrency_checked):
    section = concurrency_section(concurrency_checked)
    cells = row(busy_table(section), LABEL, MATMUL, "—", "eager").split(" | ")
    # 12 µs × (1.01, 0.99, 1.03) alone against 12 µs × (1.02, 1.0, 0.97) beside busy GPUs.
    assert cells[4:6] == ["12.1\u00a0µs (11.9–12.4, 3\u00a0proc.)", "12.0\u00a0µs (11.6–12.2, 3\u00a0proc.)"]
    assert cells[6] == f"{1.0 / 1.01:.2f}×"
    assert cells[7] == "within the across-process spread |"
    cells = row(main_table(section), LABEL, MATMUL, "—", "eager").split(" | ")
    assert cells[5:8] == ["12.0\u00a0µs (11.8–12.5, 3\u00a0proc.)", "4 · 16", f"{1.0 / 1.01:.2f}×"]
    assert cells[8] == "within the across-process spread |"


def test_concurrency_flags_a_case_whose_ranges_do_not_overlap(concurrency_checked):
    section = concurrency_section(concurrency_checked)
    for table in (busy_table(section), main_table(section)):
        cells = row(table, LABEL, MATMUL, "—", "reduce-overhead").split(" | ")
        assert f"{1.0 / 0.71:.2f}×" in cells
        assert cells[-1] == "**outside the across-process spread: slower than alone** |"
    assert "1 of the 2 cases compared is within the across-process spread; **1 is not**." \
        in busy_table(section)


def test_concurrency_needs_a_concurrent_side_and_keeps_alone_apart_from_the_case(
        concurrency_checked):
    section = concurrency_section(concurrency_checked)
    assert row(busy_table(section), LABEL, MATMUL, "—", "default").endswith(
        "| not measured | not measured | not measured |")
    assert row(main_table(section), LABEL, MATMUL, "—", "default").endswith(
        "| not measured | not measured · not measured | not measured | not measured |")
    assert "--gpus 0, --tag busy --workload matmul-512" in section
    # Alone and busy records are not processes of the case: it rests on the main run's three.
    page = read(concurrency_checked, "workloads/matmul-128.md")
    assert "3\u00a0proc.)" in row(page, "eager", "—", "ok")


def test_concurrency_without_alone_records_gives_the_commands_that_measure_it(docs):
    section = concurrency_section(docs)
    assert "Not measured: no record carries the tag `alone` yet." in section
    subset = ("--workload matmul-512 --workload launch-chain-100 --workload conv2d-block "
              "--mode eager --mode reduce-overhead --mode cuda-graph\n")
    assert ("python -m bench --backend cuda --profile full --repeats 3 --gpus 0, --tag alone "
            + subset) in section
    assert ("python -m bench --backend cuda --profile full --repeats 3 --gpus 0, --tag busy "
            + subset) in section
    assert "CUDA_VISIBLE_DEVICES=1,2,3 python -m bench" in section
    assert "| busy / alone |" not in section


def test_every_page_showing_paired_speedups_says_how_their_range_is_formed(tmp_path):
    # Pages with "paired proc." cells said their range spans "every pairing of their
    # processes", which is what an isolated comparison's range spans, not a paired one's.
    # A page that shows a few speedups may link the methodology's explanation instead.
    fx.write(tmp_path / "results" / "r.jsonl", model_records.records())
    build(tmp_path / "results", tmp_path / "docs")
    shown = [page for page in sorted((tmp_path / "docs").rglob("*.md"))
             if re.search(r"\d× \([^)]*paired\sproc\.", page.read_text(encoding="utf-8"))]
    assert shown
    for page in shown:
        text = " ".join(page.read_text(encoding="utf-8").split())
        explained = "from the lowest process to the highest" in text
        linked = ("methodology.md#paired-timing-how-every-speedup-is-measured)" in text
                  or "](../rules.md) gives the rules" in text)  # claims pages: the rules say it
        assert explained or linked, page.name
