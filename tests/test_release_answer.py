"""Issue 50: the home page's release answer, the changes page and the history page say the
same thing about the newest release, from every A/B group that measured it
(`report.releases.ab.release_answer`), and say "not measured A/B" where no group holds two
releases. On the committed results the same agreement is a data check
(tests/data_checks/test_ab_group.py)."""

from __future__ import annotations

import re
from pathlib import Path

from ab_fixtures import group_records
from test_report_ab import EFFECTS, LABELS, NOISE
from test_report_compare import write

from report import analysis, answers
from report.analysis import Data
from report.pages import changes, history, overview
from report.site import Site, template_environment

ROOT = Path(__file__).resolve().parents[1]
NOT_AB = "Not measured A/B"


def newest_sentences(text: str) -> list[str]:
    """Every sentence that states the newest release's change, the A/B one or its refusal."""
    found = re.findall(r"(?:Measured A/B on |Not measured A/B:)[^\n]*", text)
    return [re.sub(r" \[[^]]*\]\([^)]*changes\.md\)\.$", "", line) for line in found]  # home's link


def rendered(data: Data, docs: Path, pages) -> dict[str, str]:
    site = Site(data, docs)
    for page in pages:
        page.render(site)
    return {name: (docs / path).read_text("utf-8") for name, path in
            (("home", "index.md"), ("changes", "analysis/changes.md"),
             ("history", "analysis/history.md")) if (docs / path).exists()}


def test_with_an_ab_group_the_three_pages_give_the_groups_counts(tmp_path):
    data = Data(analysis.load(write(tmp_path / "results", group_records("g1", LABELS, EFFECTS, NOISE))))
    found = answers.release_changes(data)
    assert found is not None and (found["old"], found["release"], found["backends"]) == (
        "2.14.1", "2.15.0", ["cpu"])
    (group,) = found["groups"]
    # test_report_ab judges these effects: mlp default slower, matmul-128 eager faster.
    assert (group["group"], group["faster"], group["slower"], group["compared"]) == ("g1", 1, 1, 4)
    pages = rendered(data, tmp_path / "docs", (overview, changes, history))
    said = {name: newest_sentences(text) for name, text in pages.items()}
    assert all(len(s) == 1 for s in said.values()), said
    assert said["home"] == said["changes"] == said["history"]
    sentence = said["home"][0]
    assert sentence.startswith("Measured A/B on CPU, ") and "quiet (boot boot-1)" in sentence
    assert ("torch 2.15.0 against 2.14.1; group g1: faster in 1 of 4 cases, slower in 1"
            in sentence)
    assert group["floor_text"] in sentence and NOT_AB not in pages["home"]
    # The changes page's own table of the group carries the same counts.
    assert re.search(r"\| g1 \| 2\.14\.1 → 2\.15\.0 \|[^\n]*\| 4 \| 1 \| 1 \|", pages["changes"])


def test_without_an_ab_group_all_three_say_not_measured_ab(tmp_path):
    from test_report_compare import release_records

    # Older runs only: each release in a run of its own.
    data = Data(analysis.load(write(tmp_path / "results", release_records())))
    assert answers.release_changes(data) is None
    home = [a for a in answers.answers(data, []) if a["kind"] == "changes"]
    assert home == [{"kind": "changes", "question": home[0]["question"], "found": None}]
    # The home page words that answer with the macro the other two pages use.
    index = (ROOT / "report" / "templates" / "index.md.j2").read_text("utf-8")
    assert "{{ release.sentence(a.found) }}" in index
    said = template_environment().get_template("_release.md.j2").module.sentence(None)
    pages = rendered(data, tmp_path / "docs", (changes, history))
    for name in ("changes", "history"):
        (sentence,) = newest_sentences(pages[name])
        assert sentence == said and sentence.startswith(NOT_AB)
        assert "different hosts are not compared" in sentence
    # No faster/slower count of single runs is given as the answer.
    assert not re.search(r"faster in \d+ of", pages["changes"] + pages["history"])
