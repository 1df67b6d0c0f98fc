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


def rebuilt(terms: dict):
    """A host model (bench/host/model.py) from the chooser's terms alone, as chooser.js reads them."""
    from bench.host import model as host_model

    def side(values):
        if values[0] == "figure":
            return host_model.Figure(values[1], values[2], values[3], 3)
        _, intercept, slope, half, processes, mean, sxx = values
        t = host_model.t_quantile((1 + host_model.BAND) / 2, int(processes) - 2)
        return host_model.Line(intercept_s=intercept, slope=slope, processes=int(processes), leases=1,
                               probe_lo_s=terms["probe_lo_us"] * 1e-6,
                               probe_hi_s=terms["probe_hi_us"] * 1e-6, probe_mean_s=mean * 1e-6,
                               probe_sxx=sxx * 1e-12, residual_sd_s=half / t, residual_max=0.0)

    return side(terms["base"]), side(terms["mode"])


def test_the_chooser_carries_the_host_model_of_its_host_dependent_answers(data):
    from report.pages import guide

    chooser = guide.chooser_data(data)
    (point,) = [p for p in chooser["points"] if p[1] == "vit16x6x384"]
    terms = dict(zip(chooser["host_fields"], point[5]["reduce-overhead"], strict=True))
    model = host.model_for(data, ENV.env_id(), "vit16x6x384", 1, "reduce-overhead")
    row = analysis.row_of(data.published, ENV.env_id(), "vit16x6x384", 1, "reduce-overhead")
    assert terms["probe_median_us"] == pytest.approx(row["host_probe_median_us"])
    base, mode = rebuilt(terms)
    lo, hi = terms["probe_lo_us"], terms["probe_hi_us"]
    for probe_us in (lo, (lo + hi) / 2, hi):
        expected = model.at(probe_us * 1e-6)
        (b_lo, b, b_hi), (m_lo, m, m_hi) = base.at(probe_us * 1e-6), mode.at(probe_us * 1e-6)
        assert b / m == pytest.approx(expected.speedup, rel=1e-6)
        assert max(b_lo, 0) / m_hi == pytest.approx(expected.low, rel=1e-5)
        assert b_hi / m_lo == pytest.approx(expected.high, rel=1e-5)


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
