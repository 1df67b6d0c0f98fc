"""The workload and model pages give the answers the rest of the site gives: the workload
page's first table is the chooser's answer at the calls the guide answers for, and both pages
show the host model's predictions, linked to the fits on the stability page."""

from __future__ import annotations

import dataclasses
import math

import pytest
from fixtures import dtype_records as dx
from fixtures import host_records
from fixtures import make_results as fx

from report import analysis, formatting
from report.analysis import Data, host, load
from report.pages import guide, models, stability, workloads
from report.site import Site

GLANCE = ("## At a glance", "## The workload")
HOST = ("## Predicted for your host", "## Compile time")


def section(page: str, bounds: tuple[str, str]) -> str:
    return page[page.index(bounds[0]):page.index(bounds[1])]


def env_blocks(text: str) -> dict[str, str]:
    """A section's text per environment tab, keyed by env_id."""
    parts = text.split("(environment `")[1:]
    return {part.split("`", 1)[0]: part for part in parts}


def table_rows(text: str) -> list[list[str]]:
    return [[c.strip() for c in line.strip().strip("|").split(" | ")] for line in text.splitlines()
            if line.strip().startswith("| ") and not line.strip().startswith("|---")]


@pytest.fixture(scope="module")
def glance_site(tmp_path_factory):
    """The fixture results and two dtypes of one model, with the workload pages rendered."""
    data = Data(load(dx.beside_the_fixture_results(tmp_path_factory.mktemp("results"))))
    docs = tmp_path_factory.mktemp("docs")
    workloads.render(Site(data, docs))
    return data, docs


def test_the_workload_pages_first_table_is_the_chooser_answer_at_the_guides_calls(glance_site):
    data, docs = glance_site
    chooser = guide.chooser_data(data)
    step = chooser["calls"].index(analysis.CALLS_ANSWERED)
    answer = {(e, w, b, d): dict(zip(chooser["fields"], by_calls[step], strict=True))
              for e, w, b, d, by_calls in guide.chooser_points(chooser)}
    checked = set()
    for workload in data.workloads:
        page = (docs / "workloads" / f"{workload}.md").read_text(encoding="utf-8")
        glance = section(page, GLANCE)
        calls = f"fastest within {formatting.number(analysis.CALLS_ANSWERED)} calls"
        for env_id, block in env_blocks(glance).items():
            found = table_rows(block)
            if not found:
                continue
            header, *body = found
            assert calls in header, (workload, header)
            batched = header[0] in ("batch size", "matrix size n")
            for cells in body:
                point = cells[0] if batched else cells[1]
                dtype = "bfloat16" if point.endswith(" (bfloat16)") else analysis.DEFAULT_DTYPE
                mode = cells[2 if batched else 1].removesuffix(" (bfloat16)")
                batch = point.removesuffix(" (bfloat16)") if batched else "—"
                batch = None if batch == "—" else int(batch)
                chosen = answer[(env_id, workload, batch, dtype)]
                assert mode == chosen["mode"], (workload, env_id, batch, dtype)
                row = analysis.row_of(data.published, env_id, workload, batch, mode, dtype)
                assert cells[3 if batched else 2] == formatting.speedup(row, "speedup", False)
                assert math.isclose(row["speedup"], chosen["speedup"], rel_tol=1e-3)
                checked.add((env_id, workload, batch, dtype))
    assert len(checked) >= 10
    assert {d for *_, d in checked} == {"float32", "bfloat16"}


def test_a_faster_mode_not_paid_back_within_the_calls_is_named_below_the_first_table(glance_site):
    data, docs = glance_site
    late = analysis.choose(data.published, analysis.CALLS_ANSWERED)
    late = [r for r in analysis.rows(late) if r["not_paid"]]
    assert late, "the fixture has a faster mode that needs more calls"
    r = late[0]
    page = (docs / "workloads" / f"{r['workload']}.md").read_text(encoding="utf-8")
    text = " ".join(env_blocks(section(page, GLANCE))[r["env_id"]].split())
    mode, speedup, cold = r["not_paid"][0]
    assert f"{mode}" in text.split("Faster, but not paid back within")[1]
    assert f"({formatting.times(speedup)}, {formatting.calls(cold)} calls)" in text


def test_a_tie_on_the_workload_page_gives_the_runner_ups_cost_beside_its_speedup(glance_site):
    data, docs = glance_site
    chosen = analysis.rows(analysis.choose(data.published, analysis.CALLS_ANSWERED))
    tied = [r for r in chosen if r["tie"] and r["mode_runner_up"] != "eager"]
    assert tied, "the fixture has a tie between two compiled modes"
    for r in tied:
        page = (docs / "workloads" / f"{r['workload']}.md").read_text(encoding="utf-8")
        text = " ".join(env_blocks(section(page, GLANCE))[r["env_id"]].split())
        cost = (f"{r['mode_runner_up']} ({formatting.times(r['speedup_runner_up'])}; "
                f"{formatting.seconds(r['cold_compile_s_runner_up'])} compile, "
                f"{formatting.calls(r['cold_calls_runner_up'])} calls)")
        assert " ".join(cost.split()) in text
    lead = next(r for r in chosen if not r["tie"] and isinstance(r["mode_runner_up"], str))
    page = (docs / "workloads" / f"{lead['workload']}.md").read_text(encoding="utf-8")
    text = " ".join(env_blocks(section(page, GLANCE))[lead["env_id"]].split())
    assert f"{lead['mode_runner_up']} ({formatting.times(lead['speedup_runner_up'])})" in text


def host_data(tmp_path, *, as_model: str | None = None) -> Data:
    records = host_records.records(fx.ENV_A)
    if as_model:
        records = [dataclasses.replace(r, workload_info=dataclasses.replace(
            r.workload_info, family="model")) if r.key.workload == as_model else r
            for r in records]
    fx.write(tmp_path / "results" / "host.jsonl", records)
    return Data(load(tmp_path / "results"))


def test_the_workload_page_shows_the_host_models_predictions_and_links_their_fits(tmp_path):
    data = host_data(tmp_path)
    site = Site(data, tmp_path / "docs")
    workloads.render(site)
    stability.render(site)
    env_id = fx.ENV_A.env_id()
    (predicted,) = host.page_rows(data, env_id, "vit16x6x384")
    page = (tmp_path / "docs" / "workloads" / "vit16x6x384.md").read_text(encoding="utf-8")
    block = env_blocks(section(page, HOST))[env_id]
    (cells,) = [c for c in table_rows(block) if c[:2] == ["1", "reduce-overhead"]]
    assert cells[3].startswith(formatting.microseconds(predicted["probe_lo_us"]) + ": "
                               + formatting.times(predicted["speedup_lo_probe"]))
    assert cells[4].startswith(formatting.microseconds(predicted["probe_hi_us"]) + ": "
                               + formatting.times(predicted["speedup_hi_probe"]))
    link = f"../analysis/stability/{env_id}.md#host-model"
    assert f"]({link})" in block
    target = (tmp_path / "docs" / "workloads" / link.split("#")[0]).resolve()
    assert "{ #host-model }" in target.read_text(encoding="utf-8")
    other = (tmp_path / "docs" / "workloads" / "launch-chain-100.md").read_text(encoding="utf-8")
    assert [c[:2] for c in table_rows(section(other, HOST))[1:]] == [["—", "reduce-overhead"]]


def test_a_negative_intercept_is_said_not_to_be_a_time_under_the_lines_that_have_one(tmp_path):
    data = host_data(tmp_path)
    site = Site(data, tmp_path / "docs")
    stability.render(site)
    env_id = fx.ENV_A.env_id()
    fits = analysis.rows(host.of_env(host.fits(data), env_id))
    page = (tmp_path / "docs" / "analysis" / "stability" / f"{env_id}.md").read_text(encoding="utf-8")
    negative = sum(f["intercept_s"] < 0 for f in fits)
    assert ("negative intercept" in page) == bool(negative)
    predictions = site.templates.from_string(
        '{% import "_host_model.md.j2" as hm %}{{ hm.predictions(models) }}')
    modelled = host.page_rows(data, env_id)
    below = [{**r, "lines": [{**line, "intercept_s": -abs(line["intercept_s"]) - 1e-6}
                             for line in r["lines"]]} for r in modelled]
    lines = sum(len(r["lines"]) for r in modelled)
    assert lines and "negative intercept" not in predictions.render(
        models=[{**r, "lines": [{**line, "intercept_s": abs(line["intercept_s"])}
                                for line in r["lines"]]} for r in modelled])
    text = " ".join(predictions.render(models=below).split())
    assert (f"{lines} of these lines {'has' if lines == 1 else 'have'} a negative intercept: "
            "the line's value at a probe of 0 µs") in text


def test_a_workload_page_without_a_host_model_says_so(glance_site):
    data, docs = glance_site
    page = (docs / "workloads" / "trivial-call.md").read_text(encoding="utf-8")
    assert not host.page_rows(data, fx.ENV_A.env_id(), "trivial-call")
    block = env_blocks(section(page, HOST))[fx.ENV_A.env_id()]
    assert "No host model here" in block and not table_rows(block)


def test_the_models_page_shows_the_host_models_predictions_of_the_models(tmp_path):
    data = host_data(tmp_path, as_model="vit16x6x384")
    site = Site(data, tmp_path / "docs")
    models.render(site)
    env_id = fx.ENV_A.env_id()
    (predicted,) = host.page_rows(data, env_id, "vit16x6x384")
    page = (tmp_path / "docs" / "analysis" / "models.md").read_text(encoding="utf-8")
    block = env_blocks(page)[env_id]
    (cells,) = [c for c in table_rows(block)
                if c[:3] == ["[vit16x6x384](../workloads/vit16x6x384.md)", "1", "reduce-overhead"]]
    assert cells[4].startswith(formatting.microseconds(predicted["probe_lo_us"]) + ": "
                               + formatting.times(predicted["speedup_lo_probe"]))
    assert f"](stability/{env_id}.md#host-model)" in block
    # launch-chain-100 is not a model: its host model stays off the models page.
    assert "launch-chain-100" not in page


def test_spreads_reads_the_published_cases_alone(glance_site):
    data, _ = glance_site
    found = analysis.spreads(data.cases)
    assert len(found) == int((data.cases["n_processes"] >= 2).sum())
    assert found["moved"].equals(found["spread"] > analysis.MOVED)
    with pytest.raises(TypeError):
        analysis.spreads(data.cases, data.paired)
