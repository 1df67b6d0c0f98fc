"""One answer per point (issue 93): the guide's table of each environment, its flow's own
picks, the chooser's data and the workload pages give the same mode, runner-up, tie and
lead, printed with the same digits, since each comes from analysis.choose."""

from __future__ import annotations

import json
import re

import pytest
from fixtures import dtype_records as dx

from report import analysis, formatting, guide_rules
from report.analysis import Data, load
from report.pages import guide, workloads
from report.site import Site

LINK = re.compile(r"^\[([^\]]+)\]\([^)]*\)$")


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    data = Data(load(dx.beside_the_fixture_results(tmp_path_factory.mktemp("results"))))
    docs = tmp_path_factory.mktemp("docs")
    site = Site(data, docs)
    guide.render(site)
    workloads.render(site)
    chooser = json.loads((docs / "analysis" / "guide-data.json").read_text("utf-8"))
    step = chooser["calls"].index(analysis.CALLS_ANSWERED)
    answers = {(e, w, b, d): dict(zip(chooser["fields"], by_calls[step], strict=True))
               for e, w, b, d, by_calls, *_ in guide.chooser_points(chooser)}
    return data, docs, answers


def cells_of(text: str, header: str) -> list[list[str]]:
    lines = text[text.index(header):].splitlines()
    out = []
    for line in lines[2:]:
        if not line.strip().startswith("|"):
            break
        out.append([c.strip() for c in line.strip().strip("|").split(" | ")])
    return out


def guide_rows(docs, env_id: str) -> dict[tuple, list[str]]:
    """The guide's answer at each point of one environment, by (workload, batch, dtype)."""
    page = (docs / "analysis" / "guide" / f"{env_id}.md").read_text("utf-8")
    section = page[page.index("## The answer at each point"):]
    if "| workload | batch | dtype |" not in section:
        return {}
    found, workload = {}, None
    for cells in cells_of(section, "| workload | batch | dtype |"):
        workload = LINK.sub(r"\1", cells[0]) or workload
        batch = None if cells[1] == "—" else int(cells[1])
        found[(workload, batch, cells[2])] = cells
    return found


def glance_rows(docs, env_id: str, workload: str) -> dict[tuple, list[str]]:
    """The workload page's first table in one environment's tab, by (batch, dtype), as
    [mode, speedup, runner-up, margin] cells."""
    page = (docs / "workloads" / f"{workload}.md").read_text("utf-8")
    glance = page[page.index("## At a glance"):page.index("## The workload")]
    if f"(environment `{env_id}`" not in glance:
        return {}
    block = glance.split(f"(environment `{env_id}`", 1)[1].split("(environment `", 1)[0]
    header = next(line.strip() for line in block.splitlines() if line.strip().startswith("| ")
                  and "fastest within" in line)
    batched = header.startswith(("| batch size", "| matrix size n"))
    found = {}
    for cells in cells_of(block, header):
        point = cells[0] if batched else cells[1]
        dtype = "bfloat16" if point.endswith(" (bfloat16)") else analysis.DEFAULT_DTYPE
        batch = point.removesuffix(" (bfloat16)") if batched else "—"
        rest = cells[2:6] if batched else [cells[1].removesuffix(" (bfloat16)"), *cells[2:5]]
        found[(None if batch == "—" else int(batch), dtype)] = rest
    return found


def test_the_guide_the_chooser_and_the_workload_pages_agree_at_every_point(rendered):
    data, docs, answers = rendered
    checked, ties, dtypes = 0, 0, set()
    for env_id in data.environments:
        for (workload, batch, dtype), cells in guide_rows(docs, env_id).items():
            answer = answers[(env_id, workload, batch, dtype)]
            mode = cells[4].strip("*").removesuffix(" (tie)")
            assert mode == answer["mode"], (env_id, workload, batch, dtype)
            assert cells[4].endswith("(tie)") == answer["tie"]
            row = analysis.row_of(data.published, env_id, workload, batch, mode, dtype)
            assert cells[5] == formatting.speedup(row, "speedup", False)
            assert cells[5].startswith(f"{answer['speedup']:.2f}×")  # the chooser's digits
            if answer["mode_runner_up"]:
                assert cells[6] == (f"{answer['mode_runner_up']} "
                                    f"({answer['speedup_runner_up']:.2f}×)")
                assert cells[7] == f"{100 * answer['margin']:.1f}%"
            glance = glance_rows(docs, env_id, workload).get((batch, dtype))
            if glance is not None:  # the workload page lists points with two modes timed
                g_mode, g_speedup, g_runner_up, g_margin = glance
                assert (g_mode, g_speedup) == (mode, cells[5]), (env_id, workload, batch)
                if answer["mode_runner_up"]:
                    # in a tie the workload page adds the runner-up's cost inside the brackets
                    assert g_runner_up.startswith(cells[6].removesuffix(")"))
                    assert answer["tie"] or g_runner_up == cells[6]
                    assert g_margin == cells[7] + (" (tie)" if answer["tie"] else "")
                checked += 1
            ties += answer["tie"]
            dtypes.add(dtype)
    assert checked >= 10 and dtypes == {"float32", "bfloat16"}, (checked, dtypes)


def test_the_flow_picks_each_point_by_the_chooser_rule_in_its_own_dtype(rendered):
    data, _, answers = rendered
    flows = guide.flows(data)
    assert {d for _, d in flows} == {"float32", "bfloat16"}
    recs = guide_rules.recommendations(data.cases, flows, data.published)
    for r in analysis.rows(recs):
        key = (r["env_id"], r["workload"], r["batch_size"], r[analysis.DTYPE])
        if key in answers:
            assert r["recommended"] == answers[key]["mode"], key
            # The path was judged against its own dtype's thresholds.
            assert flows[(key[0], key[3])].dtype == key[3]
