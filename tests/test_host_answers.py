"""Issue 51 and 90: a host-dependent quick answer is a prediction of its host model
(`host.model_for`) at its GPU type's reference host (the median lease's probe), with the
host it was measured on and the probes it was fitted on; it refuses to predict outside
them, and without a model it names the measured host and the GPU type's range of hosts."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from fixtures import host_records
from fixtures import make_results as fx

from report import analysis, answers
from report.analysis import host
from report.site import template_environment

ENV = fx.ENV_A


@pytest.fixture(scope="module")
def data():
    with tempfile.TemporaryDirectory() as folder:
        return analysis.Data(analysis.load_file(
            fx.write(Path(folder) / "host.jsonl", host_records.records(ENV))))


def host_text(found, measured_us=None, reference=None) -> str:
    macro = template_environment().get_template("_host_answer.md.j2").module.host_part
    return str(macro(found, measured_us, reference))


# The fixture's four leases' own median probes: 6.7, 7.85, 9.2 and 10.7 µs.
REFERENCE_US = (7.85 + 9.2) / 2


def test_the_reference_host_is_the_median_lease_each_lease_once(data):
    found = host.reference_of(data, ENV.device_name)
    assert found.probe_s * 1e6 == pytest.approx(REFERENCE_US)
    assert (found.lo_s * 1e6, found.hi_s * 1e6, found.leases) == pytest.approx((6.7, 10.7, 4))
    row = analysis.row_of(data.published, ENV.env_id(), "vit16x6x384", 1, "reduce-overhead")
    assert row["host_reference_us"] == pytest.approx(REFERENCE_US)
    # not the median of the processes (8.55 µs): a lease with more processes would weigh more
    assert row["host_probe_median_us"] == pytest.approx(8.55)


def test_the_answer_leads_with_the_prediction_at_the_reference_host(data):
    (part,) = answers.fastest_at(data, "vit16x6x384", 1, "cuda")
    assert part["host_dependent"] and part["mode"] == "reduce-overhead"
    model = host.model_for(data, ENV.env_id(), "vit16x6x384", 1, "reduce-overhead")
    expected = model.at(REFERENCE_US * 1e-6)
    found = part["host"]
    assert found["probe_us"] == pytest.approx(REFERENCE_US) and found["reference"]
    assert part["at_reference"]
    assert (found["low"], found["speedup"], found["high"]) == pytest.approx(
        (expected.low, expected.speedup, expected.high))
    assert found["outside_us"] == 0 and found["low"] < found["speedup"] < found["high"]
    row = analysis.row_of(data.published, ENV.env_id(), "vit16x6x384", 1, "reduce-overhead")
    assert (row["host_speedup_at_reference"], row["host_low_at_reference"]) == pytest.approx(
        (expected.speedup, expected.low))
    lo, hi = (p * 1e6 for p in model.probe_range_s)
    assert (found["lo_us"], found["hi_us"]) == pytest.approx((lo, hi))
    assert part["host_us"] == pytest.approx(row["host_probe_us"])
    text = host_text(found, part["host_us"], part["reference"])
    assert text.startswith(f"host-dependent: reference host {REFERENCE_US:.1f} µs per "
                           f"eager op (median of 4 leases), measured at {part['host_us']:.1f} µs")
    assert text.endswith(f"measured at {part['host_us']:.1f} µs")  # the fit: one click away


def test_outside_the_fitted_probes_the_answer_refuses_to_predict(data):
    row = analysis.row_of(data.published, ENV.env_id(), "vit16x6x384", 1, "reduce-overhead")
    found = answers.host_prediction(data, ENV.env_id(), "vit16x6x384", 1, "reduce-overhead", row,
                                    probe_us=row["host_probe_hi_us"] + 5.0)
    assert found["outside_us"] == pytest.approx(5.0) and found["speedup"] is None
    text = host_text(found, 9.0)
    assert "not predicted: 5.0 µs above" in text and "×" not in text
    # far outside, where the band's terms would overflow a float: still one clause
    found = answers.host_prediction(data, ENV.env_id(), "vit16x6x384", 1, "reduce-overhead", row,
                                    probe_us=1e300)
    assert found["speedup"] is None and "not predicted" in host_text(found, 9.0)


def test_a_host_dependent_answer_without_a_model_names_its_host_and_the_range(data):
    reference = answers.reference_host(data, data.environments[ENV.env_id()])
    text = host_text(None, 10.84, reference)
    assert text == ("host-dependent (no host model), measured at 10.8 µs per eager op, "
                    "its GPU type's 4 leases at 6.7–10.7 µs")
    assert host_text(None, None, None) == (
        "host-dependent (no host model), measured on a host whose eager-op cost was not "
        "recorded; no lease of this GPU type timed the probe")


def grid_of(chooser: dict, workload: str, mode: str) -> dict:
    """One host model of the chooser's data, its series decoded as chooser.js decodes them:
    hundredths, each after the first the change from the one before."""
    (point,) = [p for p in chooser["points"] if p[1] == workload]
    found = dict(zip(chooser["host_fields"], point[5][mode], strict=True))
    for name in ("speedup", "low", "high"):
        last, values = 0, []
        for change in found[name]:
            last += 0 if change is None else change
            values.append(None if change is None else last)
        found[name] = values
    return found


def test_the_chooser_predicts_what_python_m_bench_host_prints_at_every_host_cost(data, tmp_path,
                                                                              capsys):
    """Issue 92: the chooser's host-dependent answer at a host cost is the line `python -m
    bench host --op-us` prints for the same case and cost, digit for digit, at every cost
    the chooser takes (a tenth of a µs apart) inside the fitted probes; outside, neither
    predicts."""
    from bench.host import predict
    from report.pages import guide

    grid = grid_of(guide.chooser_data(data), "vit16x6x384", "reduce-overhead")
    results = fx.write(tmp_path / "host.jsonl", host_records.records(ENV)).parent
    lo, hi = grid["probe_lo_us"], grid["probe_hi_us"]
    assert grid["probe_median_us"] == pytest.approx(8.55)
    costs = [round(grid["first_us"] + i / 10, 1) for i in range(len(grid["speedup"]))]
    assert costs[0] - 0.1 < lo <= costs[0] and costs[-1] <= hi < costs[-1] + 0.1
    assert len(costs) == len(grid["low"]) == len(grid["high"]) > 20
    for i, cost in enumerate(costs):
        assert predict.main(["--results", str(results), "--device", ENV.device_name,
                             "--op-us", str(cost), "--workload", "vit16x6x384"]) == 0
        (line,) = [line for line in capsys.readouterr().out.splitlines()
                   if line.startswith("  vit16x6x384 batch 1, reduce-overhead: ")]
        shown = "unbounded" if grid["high"][i] is None else f"{grid['high'][i] / 100:.2f}x"
        assert (f"reduce-overhead: {grid['speedup'][i] / 100:.2f}x "
                f"({grid['low'][i] / 100:.2f}x-{shown};") in line, (cost, line)
    for cost in (costs[0] - 0.1, costs[-1] + 0.1):
        predict.main(["--results", str(results), "--device", ENV.device_name,
                      "--op-us", f"{cost:.1f}", "--workload", "vit16x6x384"])
        assert "reduce-overhead: not predicted, outside" in capsys.readouterr().out, cost


def test_the_chooser_carries_its_host_models_median_host_and_processes(data):
    from report.pages import guide

    grid = grid_of(guide.chooser_data(data), "vit16x6x384", "reduce-overhead")
    model = host.model_for(data, ENV.env_id(), "vit16x6x384", 1, "reduce-overhead")
    row = analysis.row_of(data.published, ENV.env_id(), "vit16x6x384", 1, "reduce-overhead")
    assert grid["probe_median_us"] == pytest.approx(row["host_probe_median_us"])
    assert (grid["probe_lo_us"], grid["probe_hi_us"]) == pytest.approx(
        tuple(p * 1e6 for p in model.probe_range_s))
    assert grid["processes"] == model.processes


def test_the_home_page_leads_with_the_reference_host_figure_and_names_both_hosts(tmp_path):
    """The fixture's vit16x6x384 cases renamed gpt2-small, the home page's language-model
    question: its answer leads with the prediction at the reference host, then the figure
    as measured, and names both host costs in the same sentence."""
    import dataclasses

    from report.pages import overview
    from report.site import Site

    records = [dataclasses.replace(r, key=dataclasses.replace(r.key, workload=answers.LANGUAGE_MODEL))
               for r in host_records.records(ENV) if r.key.workload == "vit16x6x384"]
    data = analysis.Data(analysis.load_file(fx.write(tmp_path / "host.jsonl", records)))
    (part,) = answers.fastest_at(data, answers.LANGUAGE_MODEL, 1, "cuda")
    found = part["host"]
    overview.render(Site(data, tmp_path / "docs"))
    page = (tmp_path / "docs" / overview.PAGE).read_text(encoding="utf-8").replace("\xa0", " ")
    line = next(x for x in page.splitlines() if x.startswith(f"**{ENV.device_name}**: **reduce-overhead**")
                and "reference host" in x)
    assert line.startswith(f"**{ENV.device_name}**: **reduce-overhead**, {found['speedup']:.2f}× over "
                           f"eager at the reference host ({found['low']:.2f}×–{found['high']:.2f}×), "
                           f"as measured {part['speedup']:.2f}×")
    assert (f"reference host {REFERENCE_US:.1f} µs per eager op (median of 4 leases), "
            f"measured at {part['host_us']:.1f} µs") in line


def test_a_leases_eager_op_cost_is_the_statistic_its_reference_host_takes(data):
    """Issue 92: one probe statistic. The stability page's eager-op cost of a lease is the
    median of its processes' probes (each the median of its blocks), the figure the
    reference host takes of each lease (6.7, 7.85, 9.2 and 10.7 µs here), not the median
    of every block pooled."""
    found = sorted(analysis.leases(data.records)["probe_us"])
    assert found == pytest.approx([6.7, 7.85, 9.2, 10.7])
    reference = host.reference_of(data, ENV.device_name)
    assert (reference.lo_s * 1e6, reference.hi_s * 1e6) == pytest.approx((found[0], found[-1]))
