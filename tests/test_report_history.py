"""Releases on one machine: version order, lineages, the history table, changes between
consecutive releases, and the two pages, built from `release_records` with known effects."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from test_report_compare import environment, release_records, write

from report import analysis
from report.analysis import Data
from report.pages import changes as changes_page
from report.pages import history as history_page
from report.releases import history, vocabulary
from report.site import Site

# ---- version order ------------------------------------------------------------------------

def test_releases_sort_numerically_not_as_text():
    assert vocabulary.sort_releases(["2.10.0", "2.9.1", "2.11.0", "2.9.0"]) == [
        "2.9.0", "2.9.1", "2.10.0", "2.11.0"]


def test_a_local_build_label_does_not_change_the_order_but_is_kept():
    assert vocabulary.sort_releases(["2.15.0", "2.13.0+cpu", "2.14.1+cu130", "2.9.0+cu130"]) == [
        "2.9.0+cu130", "2.13.0+cpu", "2.14.1+cu130", "2.15.0"]
    assert vocabulary.release_key("2.13.0+cpu")[:3] == vocabulary.release_key("2.13.0")[:3]


def test_trailing_zeros_do_not_matter_and_pre_releases_come_first():
    assert vocabulary.release_key("2.10") == vocabulary.release_key("2.10.0")
    assert vocabulary.sort_releases(["2.10.0", "2.10.0rc1", "2.10.0.dev20250101", "2.10.0a1",
                                  "2.10.0.post1"]) == [
        "2.10.0.dev20250101", "2.10.0a1", "2.10.0rc1", "2.10.0", "2.10.0.post1"]


def test_a_string_that_is_no_version_sorts_last():
    assert vocabulary.sort_releases(["main", "2.10.0", "2.9.0"]) == ["2.9.0", "2.10.0", "main"]


# ---- lineages -----------------------------------------------------------------------------

@pytest.fixture
def records(tmp_path: Path):
    folder = write(tmp_path / "results",
                   release_records() + release_records(releases=("2.13.0",), machine="other-cpu"))
    return analysis.load(folder)


def test_releases_of_one_machine_form_one_lineage_in_version_order(records):
    envs = history.releases(records)
    fixture = envs[envs["machine"] == "fixture-cpu"].sort_values("position")
    assert fixture["lineage"].nunique() == 1
    assert list(fixture["release"]) == ["2.9.0+cpu", "2.10.0", "2.11.0"]
    assert list(fixture["releases"]) == [3, 3, 3]


def test_another_machine_is_another_lineage_even_with_the_same_hardware(records):
    envs = history.releases(records).drop_duplicates("lineage").set_index("machine")
    assert envs.at["other-cpu", "lineage"] != envs.at["fixture-cpu", "lineage"]
    assert envs.at["other-cpu", "releases"] == 1


def test_a_triton_or_cuda_runtime_change_stays_in_the_lineage_but_python_does_not(tmp_path):
    import dataclasses

    base = environment("2.10.0")
    moved = [dataclasses.replace(base, torch="2.11.0", triton="3.6.0", cuda_runtime="13.0"),
             dataclasses.replace(base, torch="2.12.0", python="3.12.1")]
    recs = release_records(releases=("2.10.0",))
    for env in moved:
        recs += [dataclasses.replace(r, env=env, env_id=env.env_id())
                 for r in release_records(releases=("2.10.0",))]
    envs = history.releases(analysis.load(write(tmp_path / "r", recs))).set_index("release")
    assert envs.at["2.11.0", "lineage"] == envs.at["2.10.0", "lineage"]
    assert envs.at["2.12.0", "lineage"] != envs.at["2.10.0", "lineage"]
    assert "Python" in envs.at["2.12.0", "lineage_label"]  # labels grow only where they clash


# ---- the history table ---------------------------------------------------------------------

def test_history_has_each_case_per_release_with_its_speedup_over_eager(records):
    found = history.history(records)
    mlp = found[(found["workload"] == "mlp") & (found["mode"] == "default")
                & (found["machine"] == "fixture-cpu")].sort_values("position")
    assert list(mlp["release"]) == ["2.9.0+cpu", "2.10.0", "2.11.0"]
    assert mlp["speedup"].round(3).tolist() == [1.25, round(1 / (0.8 * 1.2), 3),
                                                round(1 / (0.8 * 1.44), 3)]
    assert (mlp["in_releases"] == 3).all() and (mlp["n_processes"] == 3).all()


def test_a_profile_is_never_set_against_another(tmp_path):
    from test_report_compare import case_records

    env = environment("2.10.0")
    recs = [*case_records(env, "mlp", "eager", 1e-3, 0.01),
            *case_records(env, "mlp", "default", 1e-3, 0.01),
            *case_records(env, "mlp", "eager", 4e-3, 0.01, profile="full")]
    found = history.history(analysis.load(write(tmp_path / "r", recs)))
    default = found[found["mode"] == "default"]
    assert len(default) == 1 and default["speedup"].iloc[0] == pytest.approx(1.0)


# ---- changes --------------------------------------------------------------------------------

def test_changes_compare_only_consecutive_releases_of_one_machine(records):
    found = history.changes(records)
    assert set(zip(found["old_release"], found["new_release"], strict=True)) == {
        ("2.9.0+cpu", "2.10.0"), ("2.10.0", "2.11.0")}


def test_changes_flag_the_known_effects_and_nothing_else(records):
    found = history.changes(records)
    flagged = {(r.old_release, r.workload, r.mode): r.direction
               for r in found[found["significant"]].itertuples()}
    assert flagged == {("2.9.0+cpu", "mlp", "default"): "slower",
                       ("2.9.0+cpu", "matmul-128", "eager"): "faster"}


def test_single_runs_are_listed_apart_and_never_flagged(tmp_path):
    effects = {("2.10.0", "mlp", "eager"): 2.0}
    found = history.changes(analysis.load(write(
        tmp_path / "r", release_records(releases=("2.9.0", "2.10.0"), effects=effects,
                                        spreads={}, repeats=1))))
    assert found["single_run"].all() and not found["significant"].any()


# ---- the pages ------------------------------------------------------------------------------

@pytest.fixture
def site(tmp_path: Path, records) -> Site:
    site = Site(Data(records), tmp_path / "docs")
    history_page.render(site)
    changes_page.render(site)
    return site


def page(site: Site, name: str) -> str:
    return (site.docs / "analysis" / name).read_text(encoding="utf-8")


def test_the_history_page_has_a_chart_per_workload_and_releases_in_order(site):
    text = page(site, "history.md")
    charts = re.findall(r"\]\((\.\./charts/history/[^)]+\.svg)\)", text)
    assert len(charts) == 2  # matmul-128 and mlp on the one machine with several releases
    for link in charts:
        assert (site.docs / "analysis" / link).resolve().is_file()
    header = next(line for line in text.splitlines() if line.startswith("| batch | mode |"))
    assert header.index("2.9.0+cpu") < header.index("2.10.0") < header.index("2.11.0")


def test_the_history_page_says_gpu_history_is_out_of_reach_and_links_the_recipe(site):
    text = page(site, "history.md")
    assert "GPU history is out of reach here" in text
    assert history_page.GPU_RECIPE in text


def test_the_history_page_lists_machines_with_one_release_apart(site):
    text = page(site, "history.md")
    assert "## Machines measured with one release" in text
    assert "other-cpu" in text.split("## Machines measured with one release")[1]


def test_the_changes_page_states_the_rule_and_cites_its_models(site):
    text = page(site, "changes.md")
    assert "A/A noise floor" in text and "process medians disjoint" in text and "5.0%" in text
    assert "https://asv.readthedocs.io/" in text and "https://pyperf.readthedocs.io/" in text


def test_the_changes_page_lists_the_known_changes_with_geometric_means(site):
    text = page(site, "changes.md")
    section = text.split("### 2.9.0+cpu → 2.10.0")[1].split("### 2.10.0 → 2.11.0")[0]
    assert re.search(r"\*\*Slower\*\* \(1\):.*\| \[mlp\]\([^)]*\) \| — \| default \|", section,
                     re.S)
    assert re.search(r"\*\*Faster\*\* \(1\):.*\| \[matmul-128\]\([^)]*\) \| — \| eager \|",
                     section, re.S)
    assert "| eager | 2 | 0.894 |" in section  # geomean of 0.8 and 1.0


# ---- A/B groups on the pages ---------------------------------------------------------------

@pytest.fixture
def ab_site(tmp_path: Path) -> Site:
    """Older runs of 2.14.1 and 2.15.0 on two hosts (2.15.0 3x slower there, a host effect),
    and an A/B group with an A/A run on a third, quiet one."""
    import dataclasses

    from ab_fixtures import group_records
    from test_report_ab import EFFECTS, LABELS, NOISE
    from test_report_compare import HOST, case_records

    slow = dataclasses.replace(HOST, hostname="busy", boot_id="boot-9", op_s=(8.8e-6,))
    older = [*case_records(environment("2.14.1", "ab-cpu"), "mlp", "eager", 1e-3, 0.01),
             *case_records(environment("2.15.0", "ab-cpu"), "mlp", "eager", 3e-3, 0.01,
                           host=slow)]
    records = analysis.load(write(tmp_path / "r", older + group_records("g1", LABELS, EFFECTS,
                                                                         NOISE)))
    site = Site(Data(records), tmp_path / "docs")
    history_page.render(site)
    changes_page.render(site)
    return site


def test_the_changes_page_judges_the_ab_group_with_its_floor_beside_it(ab_site):
    text = page(ab_site, "changes.md")
    assert "| g1 | 2.14.1 → 2.15.0 | quiet (boot boot-1) | 1.02× | 4 | 1 | 1 | 2 | 0 |" in text
    section = text.split("### 2.14.1 → 2.15.0 · A/B group g1")[1].split("## Older runs")[0]
    assert "A/A noise floor: 1.02× (median over 4 cases" in section
    assert re.search(r"\| \[mlp\]\([^)]*\) \| — \| default \|.* \| 1.300–1.313 \| 3 \| 1.02× \| "
                     r"slower \|", section)
    assert "$ python -m report compare group=g1,label=2.14.1 group=g1,label=2.15.0" in section


def test_older_runs_on_different_hosts_get_one_line_and_no_verdict(ab_site):
    older = page(ab_site, "changes.md").split("## Older runs")[1]
    line = next(x for x in older.splitlines() if x.startswith("- 2.14.1 → 2.15.0"))
    assert "the hosts differ" in line and "no faster/slower verdict" in line
    assert "2.50\u00a0µs vs 8.80\u00a0µs" in line
    assert "**Slower**" not in older and "**Faster**" not in older


def test_the_history_chart_draws_the_ab_group_as_a_line_and_older_runs_apart(ab_site):
    text = page(ab_site, "history.md")
    assert "| g1 | 2.14.1 (torch 2.14.1), 2.15.0 (torch 2.15.0), 2.15.0-aa (torch 2.15.0) |" in text
    link = re.search(r"\]\((\.\./charts/history/[^)]+-mlp\.svg)\)", text)[1]
    svg = (ab_site.docs / "analysis" / link).resolve().read_text(encoding="utf-8")
    assert "A/B group g1" in svg and "older runs, each apart" in svg


def test_the_release_answer_and_the_changes_page_say_the_same(ab_site):
    from report.releases import ab

    answer = ab.release_answer(ab_site.data)
    text = page(ab_site, "changes.md")
    assert answer["groups"]
    for group in answer["groups"]:
        row = f"| {group['group']} | {group['old']} → {answer['release']} | {group['host']} |"
        cells = next(x for x in text.splitlines() if x.startswith(row)).split("|")[4:-1]
        assert [c.strip() for c in cells] == [group["floor"]["median"], str(group["compared"]),
                                             str(group["slower"]), str(group["faster"]),
                                             str(group["same"]), str(group["undecided"])]


def test_the_gpu_recipe_link_names_a_heading_of_the_readme():
    anchor = history_page.GPU_RECIPE.split("#", 1)[1]
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    headings = {re.sub(r"[^a-z0-9 -]", "", line.lstrip("#").strip().lower()).replace(" ", "-")
                for line in readme.splitlines() if line.startswith("#")}
    assert anchor in headings


def test_a_figure_from_one_process_says_single_run_in_the_history_table(tmp_path):
    recs = [r for r in release_records() if r.env.torch != "2.11.0" or r.process.repeat == 0]
    site = Site(Data(analysis.load(write(tmp_path / "r", recs))), tmp_path / "docs")
    history_page.render(site)
    row = next(line for line in page(site, "history.md").splitlines()
               if line.startswith("| — | eager |"))
    assert row.split("|")[-2].strip().endswith("(single run)")  # 2.11.0: one process
    assert "3\u00a0proc." in row.split("|")[3]  # 2.9.0: three


def test_each_ab_cell_carries_the_step_from_the_release_before_as_the_changes_page_judges_it(ab_site):
    mlp = page(ab_site, "history.md").split("### mlp")[1].split("Older runs:")[0]
    row = next(x for x in mlp.splitlines() if x.startswith("| — | default |"))
    # test_report_ab's effects: mlp default 1.30x slower in 2.15.0, against a 2% A/A floor.
    assert re.search(r"<br>1\.30\d of 2\.14\.1: \*\*slower\*\* \(A/A 1\.02×\) \|$", row)
    changes = page(ab_site, "changes.md")
    assert re.search(r"\| \[mlp\]\([^)]*\) \| — \| default \|.* \| 1\.30\d \| [^|]* \| 3 \| 1\.02× \| "
                     r"slower \|", changes)


def test_one_disturbed_process_does_not_flatten_the_history_chart(tmp_path, monkeypatch):
    from report import charts

    drawn = {}
    monkeypatch.setattr(charts, "_save", lambda fig, *a: drawn.setdefault("fig", fig))
    steady = [charts.Point(x, 30.0, 29.0, 31.0) for x in range(3)]
    disturbed = [charts.Point(0, 31.0, 30.0, 15000.0), *steady[1:]]
    history_page.history_chart(tmp_path / "c.svg", title="t", ylabel="µs",
                               releases=["2.13.0", "2.14.1", "2.15.0"], older={},
                               groups={"g1": {"eager": disturbed, "default": steady}})
    (ax,) = drawn["fig"].axes
    assert ax.get_yscale() == "linear" and 31.0 < ax.get_ylim()[1] < 100.0
    # the cut bar ends in a marker at the edge, in its mode's colour
    marks = [line for line in ax.get_lines() if line.get_marker() == "^"]
    assert [list(m.get_xdata()) for m in marks] == [[0]]


def test_an_ab_group_measured_with_eager_only_renders(tmp_path):
    from ab_fixtures import group_records
    from test_report_ab import LABELS

    # `python -m bench.ab --mode eager`: isolated processes only, nothing to pair
    eager = [r for r in group_records("g1", LABELS) if r.key.mode == "eager" and not r.paired]
    site = Site(Data(analysis.load(write(tmp_path / "r", eager))), tmp_path / "docs")
    history_page.render(site)
    text = page(site, "history.md")
    assert "ab-cpu" in text and "2.15.0" in text
