"""A/B groups judged against their A/A noise floor (report/releases/ab.py), from `ab_fixtures`."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pytest
from ab_fixtures import START, group_records, host
from test_report_compare import write

from report import analysis
from report.analysis import Data
from report.releases import ab
from report.site import template_environment

LABELS = {"2.14.1": "2.14.1", "2.15.0": "2.15.0", "2.15.0-aa": "2.15.0"}
EFFECTS = {("2.15.0", "mlp", "default"): 1.30,  # slower by far more than the floor
           ("2.15.0", "matmul-128", "eager"): 0.70,  # faster
           ("2.15.0", "matmul-128", "default"): 1.04}  # beyond the A/A floor, under 5%
# The A/A side drifts by up to 2% from repeat to repeat: that is the floor.
NOISE = {("2.15.0-aa", 0): 1.02, ("2.15.0-aa", 1): 0.995, ("2.15.0", 2): 1.01}


def load(tmp_path: Path, records) -> analysis.pd.DataFrame:
    return analysis.load(write(tmp_path / "results", records))


@pytest.fixture
def records(tmp_path: Path):
    return load(tmp_path, group_records("g1", LABELS, EFFECTS, NOISE))


def verdicts(step_rows) -> dict:
    return {(r.workload, r.mode): r.verdict for r in step_rows.itertuples()}


def test_labels_of_one_release_are_an_aa_pair_and_consecutive_releases_an_ab_pair(records):
    pairs = ab.comparisons(ab.sides(records))
    assert sorted(zip(pairs["kind"], pairs["old_label"], pairs["new_label"], strict=True)) == [
        ("aa", "2.15.0", "2.15.0-aa"), ("ab", "2.14.1", "2.15.0")]
    assert set(pairs["hosts"]) == {("quiet/boot-1",)}


def test_the_floor_is_how_far_the_release_strayed_from_itself(records):
    found = ab.floors(records)
    assert set(found["group"]) == {"g1"} and len(found) == 4
    assert found["floor"].round(4).tolist() == [1.02] * 4


def test_a_step_is_called_only_beyond_the_floor_and_the_minimum_effect(records):
    found = ab.steps(records)
    assert verdicts(found) == {("matmul-128", "eager"): "faster",
                               ("matmul-128", "default"): "same",
                               ("mlp", "eager"): "same", ("mlp", "default"): "slower"}
    slower = found[found["verdict"] == "slower"].iloc[0]
    assert slower["pairs"] == 3 and slower["lo"] == pytest.approx(1.30)
    assert slower["hi"] == pytest.approx(1.313)
    assert set(found["floor_group"]) == {"g1"}


def test_without_an_aa_run_nothing_is_called(tmp_path):
    records = load(tmp_path, group_records("g1", {"2.14.1": "2.14.1", "2.15.0": "2.15.0"},
                                           EFFECTS))
    assert set(verdicts(ab.steps(records)).values()) == {ab.NO_FLOOR}


def test_an_aa_run_of_another_group_applies_on_the_same_host_only(tmp_path):
    ab_only = group_records("g2", {"2.14.1": "2.14.1", "2.15.0": "2.15.0"}, EFFECTS)
    same_host = group_records("g1", {"2.15.0": "2.15.0", "2.15.0-aa": "2.15.0"}, noise=NOISE)
    found = ab.steps(load(tmp_path / "same", ab_only + same_host))
    assert verdicts(found)[("mlp", "default")] == "slower"
    assert set(found["floor_group"]) == {"g1"}
    elsewhere = group_records("g1", {"2.15.0": "2.15.0", "2.15.0-aa": "2.15.0"}, noise=NOISE,
                              the_host=host("noisy", "boot-9"))
    found = ab.steps(load(tmp_path / "other", ab_only + elsewhere))
    assert set(verdicts(found).values()) == {ab.NO_FLOOR}


def test_one_pair_of_processes_is_a_single_pair_never_a_step(tmp_path):
    records = load(tmp_path, group_records("g1", LABELS, EFFECTS, NOISE, repeats=1))
    assert set(verdicts(ab.steps(records)).values()) == {ab.SINGLE}


def test_older_runs_are_not_read_as_a_group(tmp_path):
    from test_report_compare import release_records

    records = load(tmp_path, release_records())
    assert ab.sides(records).empty and ab.steps(records).empty


def test_the_release_answer_reads_the_same_table_as_the_pages(records):
    answer = ab.release_answer(Data(records))
    assert answer == {
        "release": "2.15.0", "old": "2.14.1", "backends": ["cpu"], "host": "quiet (boot boot-1)",
        "groups": [{
            "group": "g1", "old": "2.14.1", "backend": "cpu", "host": "quiet (boot boot-1)",
            "compared": 4, "faster": 1, "slower": 1, "same": 2, "undecided": 0,
            "floor": {"median": "1.02×", "max": "1.02×", "cases": 4, "group": "g1",
                      "against": "torch 2.15.0 under labels 2.15.0 and 2.15.0-aa"},
            "floor_text": "a step counts beyond an A/A floor of 1.02× in the median case, "
                          "1.02× at most"}]}


def test_the_release_answer_names_every_group_that_measured_the_newest_release(tmp_path):
    quiet = group_records("g1", LABELS, EFFECTS, NOISE)
    later = group_records("g2", LABELS, EFFECTS, NOISE, start=START + timedelta(days=1))
    answer = ab.release_answer(Data(load(tmp_path, quiet + later)))
    assert [g["group"] for g in answer["groups"]] == ["g2", "g1"]  # the newest group first
    assert answer["backends"] == ["cpu"] and answer["old"] == "2.14.1"
    said = template_environment().get_template("_release.md.j2").module.sentence(answer)
    assert said.startswith("Measured A/B on CPU, ")
    assert said.count("; group g") == 2 and said.count("A/A floor") == 2
    assert "±" not in said  # one floor unit: a factor


def test_the_release_answer_is_none_without_an_ab_group(tmp_path):
    from test_report_compare import release_records

    assert ab.release_answer(Data(load(tmp_path, release_records()))) is None


def test_a_record_that_timed_nothing_does_not_hide_the_host(tmp_path):
    import dataclasses

    from ab_fixtures import environment
    from test_report_compare import failed_record

    records = group_records("g1", LABELS, EFFECTS, NOISE)
    unsupported = [dataclasses.replace(
        failed_record(environment(release), "mlp", "eager", "unsupported", repeats=1),
        key=dataclasses.replace(records[0].key, workload="mlp", tag=f"ab-g1-{label}"), host=None)
        for label, release in LABELS.items()]
    found = ab.steps(load(tmp_path, records + unsupported))
    assert set(found["hosts"]) == {("quiet/boot-1",)}
    assert verdicts(found)[("mlp", "default")] == "slower"


def test_an_ab_run_is_costed_once_as_a_whole_and_left_out_of_its_environments(tmp_path):
    import dataclasses

    from test_report_compare import case_records, environment

    made = group_records("g1", LABELS, EFFECTS, NOISE)
    # One `python -m bench` run per label, workload and repeat: a turn.
    turns = [dataclasses.replace(r, process=dataclasses.replace(
        r.process, run_id=f"{r.key.tag}-{r.key.workload}-{r.process.repeat}")) for r in made]
    older = case_records(environment("2.15.0", "ab-cpu"), "mlp", "eager", 1e-3, 0.01)
    records = load(tmp_path, turns + older)
    (cost,) = analysis.rows(ab.run_costs(records))
    # 3 labels x 2 workloads x 3 repeats; each label's first repeat holds the isolated
    # processes of both modes; a paired process per turn.
    assert (cost["group"], cost["labels"], cost["turns"]) == ("g1", 3, 18)
    assert (cost["isolated"], cost["paired"]) == (3 * 2 * 2, 18)
    assert cost["releases"] == ["2.14.1", "2.15.0"]
    # group_records starts a record every 5 s from START and each runs 2 s.
    starts = sorted(r.started_at for r in made)
    first, last = (datetime.fromisoformat(s) for s in (starts[0], starts[-1]))
    assert cost["wall_minutes"] == pytest.approx(((last - first).total_seconds() + 2) / 60)
    assert cost["turn_minutes"] < cost["wall_minutes"]
    # The environments' own rows count the older run only.
    per_env = analysis.rows(analysis.run_costs(records))
    assert sum(r["runs"] for r in per_env) == len({r.process.run_id for r in older})
    # The methodology page's cost table gives the run its own row.
    from report.pages import methodology
    from report.site import Site

    methodology.render(Site(Data(records), tmp_path / "docs"))
    text = (tmp_path / "docs" / "methodology.md").read_text("utf-8")
    assert (f"| g1 | ab-cpu · cpu | quick | 2.14.1, 2.15.0 | 3 | 18 | 12 | 18 | "
            f"{cost['wall_minutes']:.1f} | {cost['turn_minutes']:.1f} | 2026-12-01 10:00 |") in text


def test_a_floor_reads_as_a_factor_whatever_its_size():
    assert (ab.factor(1.034), ab.factor(1.999), ab.factor(15.13)) == ("1.03×", "2.00×", "15.1×")
    assert ab.factor(None) == ab.factor(float("nan")) == "—"


def test_without_an_ab_run_the_cost_table_has_no_ab_row(tmp_path):
    from test_report_compare import release_records

    from report.pages import methodology
    from report.site import Site

    records = load(tmp_path, release_records())
    assert ab.run_costs(records).empty
    methodology.render(Site(Data(records), tmp_path / "docs"))
    assert "### A/B runs" not in (tmp_path / "docs" / "methodology.md").read_text("utf-8")


def main_run(scale: dict[tuple[str, str], float]) -> list:
    """A run of the environment of torch 2.15.0 (tag main, on another boot of the host) with
    its paired processes' medians at the group's 2.15.0 figures times `scale`."""
    from ab_fixtures import WORKLOADS, environment, record

    env, the_host = environment("2.15.0"), host(boot="boot-0")
    out, clock = [], START - timedelta(days=1)
    for workload, base in WORKLOADS.items():
        for repeat in range(3):
            clock += timedelta(seconds=5)
            for mode in ("eager", "default"):
                median = (base * (0.8 if mode == "default" else 1.0)
                          * EFFECTS.get(("2.15.0", workload, mode), 1.0)
                          * scale.get((workload, mode), 1.0))
                if repeat == 0:
                    out.append(record(env, workload, mode, median, the_tag="main", repeat=0,
                                      paired=False, started=clock, the_host=the_host))
                out.append(record(env, workload, mode, median, the_tag="main", repeat=repeat,
                                  paired=True, started=clock, the_host=the_host,
                                  group=f"main-{workload}-{repeat}"))
    return out


def test_a_run_that_another_run_of_its_environment_contradicts_is_flagged_where_shown(tmp_path):
    from report.pages import stability, workloads
    from report.site import Site

    # mlp's eager 4x slower in the main run than in the group's run of the same release,
    # whose A/A floor is 2%; matmul-128 agrees.
    records = group_records("g1", LABELS, EFFECTS, NOISE) + main_run({("mlp", "eager"): 4.0})
    data = Data(load(tmp_path, records))
    compared = ab.site_other_runs(data)
    beyond = {(r["workload"], r["mode"]) for r in analysis.rows(compared[compared["beyond"]])}
    assert beyond == {("mlp", "eager")}
    assert set(compared["workload"]) == {"mlp", "matmul-128"}
    env_id = compared["env_id"].iloc[0]
    assert ab.noisy(data, env_id, "mlp", None, "default") == ["g1"]  # eager's latency is off
    assert ab.noisy(data, env_id, "matmul-128", None, "default") == []
    site = Site(data, tmp_path / "docs")
    workloads.render(site)
    stability.render(site)
    link = f"[noisy run](../analysis/stability/{env_id}.md#other-runs)"
    mlp, matmul = ((tmp_path / "docs" / "workloads" / f"{w}.md").read_text("utf-8")
                   for w in ("mlp", "matmul-128"))
    glance = mlp[mlp.index("## At a glance"):mlp.index("## The workload")]
    assert link in glance and link not in matmul
    page = (tmp_path / "docs" / "analysis" / "stability" / f"{env_id}.md").read_text("utf-8")
    section = page[page.index("## Another run of this environment { #other-runs }"):]
    assert "**1 differs beyond that A/A floor**" in " ".join(section.split())
    assert "| [mlp](../../workloads/mlp.md) | — | eager |" in section
    assert "| 4.00× |" in section
