"""One answer per question: the chooser, the guide's points, the quick answers, the
workload and model pages and the export give the same mode and the same figures for the
same environment, case and calls, since each selects from the one published table."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from fixtures import RESULTS, model_records
from fixtures import make_results as fx

from report import analysis, answers, formatting, guide_rules
from report.analysis import Data, load
from report.pages import guide, models, workloads
from report.site import Site

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    """The fixture results with a hand-captured CUDA graph that pays back at once, rendered
    into the pages this test reads, with the export beside them."""
    results = tmp_path_factory.mktemp("results")
    for path in RESULTS.rglob("*.jsonl"):
        (results / path.name).write_bytes(path.read_bytes())
    docs = tmp_path_factory.mktemp("docs")
    data = Data(load(results))
    site = Site(data, docs)
    for page in (guide, workloads, models):
        page.render(site)
    from report import export
    export.write(data, docs / "data")
    return {"data": data, "docs": docs,
            "chooser": json.loads((docs / "analysis" / "guide-data.json").read_text()),
            "export": json.loads((docs / "data" / "speedups.json").read_text())}


def chooser_answers(chooser: dict):
    """(env_id, workload, batch, dtype, calls, answer) for every input on the measured grid."""
    for env_id, workload, batch, dtype, by_calls in guide.chooser_points(chooser):
        for calls, values in zip(chooser["calls"], by_calls, strict=True):
            yield env_id, workload, batch, dtype, calls, dict(zip(chooser["fields"], values,
                                                                  strict=True))


def export_row(rendered, env_id: str, workload: str, batch, mode: str) -> dict:
    found = [r for r in rendered["export"] if r["env_id"] == env_id and r["workload"] == workload
             and r["size"] == batch and r["mode"] == mode and r["baseline"] == "eager"]
    assert len(found) == 1, (env_id, workload, batch, mode, found)
    return found[0]


def same(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-3)


def test_every_chooser_answer_is_its_row_on_the_workload_page_and_in_the_export(rendered):
    data, docs = rendered["data"], rendered["docs"]
    checked = 0
    for env_id, workload, batch, dtype, _, answer in chooser_answers(rendered["chooser"]):
        row = analysis.row_of(data.published, env_id, workload, batch, answer["mode"], dtype)
        assert row is not None
        exported = export_row(rendered, env_id, workload, batch, answer["mode"])
        assert same(answer["speedup"], row["speedup"]) and same(exported["speedup"], row["speedup"])
        assert same(exported["latency_s"], row["latency_s"])
        assert exported["processes"] == row["processes"] == answer["processes"]
        page = (docs / "workloads" / f"{workload}.md").read_text(encoding="utf-8")
        note = "" if dtype == analysis.DEFAULT_DTYPE else f" ({dtype})"
        line = (f"| {answer['mode']} | {formatting.batch(batch)}{note} | ok | "
                f"{formatting.latency(row)} |")
        found = [text.strip() for text in page.splitlines() if text.strip().startswith(line)]
        assert found and any(formatting.speedup(row) in text for text in found), (line, workload)
        checked += 1
    assert checked >= 20


def test_the_guide_points_give_the_chooser_answer_at_the_calls_they_are_for(rendered):
    data = rendered["data"]
    step = rendered["chooser"]["calls"].index(analysis.CALLS_ANSWERED)
    by_point = {(e, w, b): by_calls[step][0]
                for e, w, b, _, by_calls in guide.chooser_points(rendered["chooser"])}
    flows = guide.flows(data)
    recs = guide_rules.recommendations(data.cases, flows, data.published)
    assert len(recs)
    for r in analysis.rows(recs):
        assert r["recommended"] == by_point[(r["env_id"], r["workload"], r["batch_size"])], r


def test_every_quick_answer_gives_the_chooser_mode_and_the_exported_figure(rendered):
    data = rendered["data"]
    step = rendered["chooser"]["calls"].index(answers.CALLS_ANSWERED)
    by_point = {(e, w, b): dict(zip(rendered["chooser"]["fields"], by_calls[step], strict=True))
                for e, w, b, _, by_calls in guide.chooser_points(rendered["chooser"])}
    # Every quick answer of the fixture's points: the home page's questions name workloads
    # the fixture does not hold, and take their answers from the same function.
    points = {(w, b) for _, w, b, _, _ in rendered["chooser"]["points"]}
    parts = [({"workload": w, "batch": b, "question": f"{w} {b}"}, p)
             for w, b in sorted(points, key=str) for backend in ("cuda", "cpu")
             for p in answers.fastest_at(data, w, b, backend)]
    assert len(parts) >= 10
    paid = 0
    for question, part in parts:
        env_id = part["env"].env_id
        chosen = by_point[(env_id, question["workload"], question["batch"])]
        assert part["mode"] == chosen["mode"], question["question"]
        assert part["processes"] == chosen["processes"]
        exported = export_row(rendered, env_id, question["workload"], question["batch"],
                              part["mode"])
        assert same(part["speedup"], exported["speedup"])
        assert part["env"].label and part["processes"] >= 1
        # The break-even at the home page's precision ("about 50,000"), not the exact quotient.
        if part["mode"] != analysis.BASELINE:
            assert chosen["pays_back"] == formatting.about(part["break_even"]), question
            paid += 1
    assert paid >= 3


def test_the_models_page_shows_the_chooser_answer_for_each_model_and_calls(tmp_path):
    fx.write(tmp_path / "results" / "r.jsonl", model_records.records())
    data = Data(load(tmp_path / "results"))
    models.render(Site(data, tmp_path / "docs"))
    page = (tmp_path / "docs" / "analysis" / "models.md").read_text(encoding="utf-8")
    chooser = guide.chooser_data(data)
    by_point = {(w, b): by_calls for _, w, b, d, by_calls in guide.chooser_points(chooser)
                if d == analysis.DEFAULT_DTYPE}
    rows = [line.strip() for line in page.splitlines()
            if line.strip().startswith("| ") and ", batch " in line.strip().split(" | ")[0]]
    assert len(rows) >= 2
    for line in rows:
        cells = line.strip("| ").split(" | ")
        workload, batch = cells[0].split(", batch ")
        modes = [c.split(" (tie")[0] for c in cells[1:]]
        assert modes == [values[0] for values in by_point[(workload, int(batch))]], line


def test_the_hand_captured_graph_never_counts_as_compiling(tmp_path):
    # Within 10,000 calls the manual graph pays back its 0.05 s capture; default's 4 s
    # compile needs millions of calls.
    records = [fx.ok_record(fx.ENV_A, "launch-chain-10", mode, None)
               for mode in ("eager", "default", "cuda-graph")]
    fx.write(tmp_path / "r.jsonl", records)
    data = Data(load(tmp_path))
    calls = 10_000
    (part,) = answers.pays_within(data, calls)
    chosen = analysis.choose(data.published, calls)
    assert list(chosen["mode"]) == ["cuda-graph"]
    assert (part["compiled"], part["graph"], part["points"]) == (0, 1, 1)
    (fastest,) = answers.fastest_at(data, "launch-chain-10", None, "cuda", calls)
    assert fastest["mode"] == "cuda-graph" and fastest["graph"] and not fastest["compiling"]
