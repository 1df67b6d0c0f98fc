"""The host model (bench/host/model.py, report/analysis/host.py): a host-bound side's time as a line
of the host probe, the speedups it predicts with their bands, and the checks on a held-out
lease and on a slowed host, as the stability page shows them."""

from __future__ import annotations

import dataclasses
import math
import statistics
import tempfile
from pathlib import Path

import pytest
from fixtures import RESULTS, host_records
from fixtures import make_results as fx

from bench.host import model as host_model
from report import analysis
from report.analysis import Data, host, load, load_file
from report.pages import stability
from report.site import Site, template_environment

ENV = fx.ENV_A


def data_of(records) -> Data:
    with tempfile.TemporaryDirectory() as folder:
        return Data(load_file(fx.write(Path(folder) / "host.jsonl", records)))


def models_of(records) -> list[host_model.SpeedupModel]:
    rows = [host_model.row_of(r) for r in records]
    return host_model.models(host_model.processes(rows), host_model.sides(rows))


def the_model(records, workload="vit16x6x384") -> host_model.SpeedupModel:
    found = [m for m in models_of(records) if m.workload == workload]
    assert len(found) == 1
    return found[0]


def test_a_line_through_exact_points_is_found_exactly_with_no_band():
    points = [(p * 1e-6, 2e-4 + 300 * p * 1e-6, f"lease-{p % 2}") for p in (6, 7, 8, 9, 10, 11)]
    line = host_model.fit_line(points)
    assert math.isclose(line.intercept_s, 2e-4, abs_tol=1e-12) and math.isclose(line.slope, 300)
    assert line.residual_sd_s < 1e-15 and line.leases == 2
    low, fitted, high = line.at(8.5e-6)
    assert math.isclose(fitted, 2e-4 + 300 * 8.5e-6) and math.isclose(low, high, rel_tol=1e-9)


@pytest.mark.parametrize(("probability", "freedom", "table"),
                         [(0.95, 4, 2.132), (0.95, 10, 1.812), (0.975, 6, 2.447), (0.95, 30, 1.697)])
def test_t_quantiles_match_the_printed_tables(probability, freedom, table):
    assert host_model.t_quantile(probability, freedom) == pytest.approx(table, rel=2e-3)


def test_the_band_widens_away_from_the_centre_of_the_probes():
    line = host_model.fit_line([(p * 1e-6, p * 1e-4 * (1 + n), "l") for p, n in zip(
        (6, 7, 8, 9, 10, 11), (0.02, -0.01, 0.0, 0.01, -0.02, 0.01), strict=True)])
    width = [line.at(p)[2] - line.at(p)[0] for p in (line.probe_mean_s, line.probe_hi_s)]
    assert 0 < width[0] < width[1]


def test_a_host_dependent_speedup_is_eager_on_its_line_over_the_graph_figure():
    model = the_model(host_records.records(ENV))
    assert model.ratio == "host-dependent" and model.processes == 8
    assert isinstance(model.base, host_model.Line) and isinstance(model.side, host_model.Figure)
    assert model.side.median_s == pytest.approx(host_records.GRAPH_S["vit16x6x384"])
    # The fixture's eager line, recovered through its noise.
    assert model.base.slope == pytest.approx(230.0, rel=0.1)
    assert model.probe_range_s == pytest.approx((6.5e-6, 11.0e-6))
    low, mid = model.at(7e-6), model.at(10e-6)
    assert low.speedup < mid.speedup  # a slower host gains more from graph replay
    expected = host_records.eager_s("vit16x6x384", 10e-6) / host_records.GRAPH_S["vit16x6x384"]
    assert mid.low < expected < mid.high and mid.outside_s == 0


def test_a_probe_outside_the_fitted_ones_says_how_far_outside():
    model = the_model(host_records.records(ENV))
    assert model.at(12.5e-6).outside_s == pytest.approx(1.5e-6)
    assert model.at(6.0e-6).outside_s == pytest.approx(-0.5e-6)


def test_a_case_is_modelled_from_six_paired_processes_and_not_from_five():
    six = {"boot-1": (6.5e-6, 7e-6), "boot-2": (8e-6, 9e-6), "boot-3": (10e-6, 11e-6)}
    five = {"boot-1": (6.5e-6, 7e-6), "boot-2": (8e-6, 9e-6), "boot-3": (10e-6,)}
    assert {m.workload for m in models_of(host_records.records(ENV, six))} == {
        "vit16x6x384", "launch-chain-100"}
    assert models_of(host_records.records(ENV, five)) == []


def test_a_speedup_whose_sides_both_wait_on_the_device_is_not_modelled():
    records = host_records.records(ENV)
    device_bound = [dataclasses.replace(r, activity=dataclasses.replace(r.activity, busy_fraction=0.95))
                    if r.activity and r.key.mode == "eager" else r for r in records]
    assert models_of(device_bound) == []


def test_slowed_host_records_are_never_fitted_on():
    plain = the_model(host_records.records(ENV))
    with_slowed = host_records.records(ENV) + host_records.slowed(ENV, "vit16x6x384", 13e-6,
                                                                  eager=1.0e-3)
    assert the_model(with_slowed) == plain


def test_an_ab_runs_processes_are_cases_of_their_own_and_never_fitted_on():
    """The tag is part of a case's key: processes of an A/B comparison (ab-GROUP-LABEL) on
    the same environment are not the case's processes, even where they timed the probe."""
    plain = the_model(host_records.records(ENV))
    ab = [r for repeat in range(6) for r in host_records.paired(
        ENV, "vit16x6x384", "boot-1", 9e-6, repeat, tag="ab-series1-2.11", eager=2e-3)]
    assert the_model(host_records.records(ENV) + ab) == plain
    rows = [host_model.row_of(r) for r in host_records.records(ENV) + ab]
    assert {p.group.split("-")[0] for p in host_model.processes(rows)} == {"main"}


def test_a_cpu_environments_slowed_host_shows_inside_and_beyond_the_probes_fitted(tmp_path):
    """On a CPU both sides are lines; one slowed lease inside the probes fitted, one beyond."""
    cpu = dataclasses.replace(fx.ENV_CPU, device_name="a CPU")
    faster = dataclasses.replace(host_records.host("boot-slowed", 9e-6), hostname="cpu-box")
    records = (host_records.records(cpu) + host_records.slowed(cpu, "vit16x6x384", 12.0e-6)
               + [dataclasses.replace(r, host=faster)
                  for r in host_records.slowed(cpu, "launch-chain-100", 9.0e-6,
                                               eager=host_records.eager_s("launch-chain-100", 6e-6))])
    data = data_of(records)
    stability.render(Site(data, tmp_path))
    table = host.slowed(data).set_index("workload")
    assert list(table["ratio"]) == ["cpu", "cpu"]
    assert table.loc["launch-chain-100", "outside_us"] == 0 and not table.loc["launch-chain-100", "inside"]
    assert table.loc["vit16x6x384", "outside_us"] == pytest.approx(1.0)
    page = (tmp_path / "analysis/stability.md").read_text()
    section = page[page.index("## Predicted from the host probe"):]
    cpu_tab = section[section.index('=== "cpu"'):]  # the last tab: mps, unmeasured, has none
    assert '=== "mps"' not in section
    assert ("On slowed hosts: 1 of 2 cases inside the band (50.0%; 2 of 4 processes), 1 of them at "
            "a probe beyond the probes fitted (extrapolated, 1 inside); not predictable: "
            "launch-chain-100 reduce-overhead.") in cpu_tab
    env_page = (tmp_path / f"analysis/stability/{cpu.env_id()}.md").read_text()
    rows = [line for line in env_page[env_page.index("### On a slowed host"):].splitlines()
            if line.startswith("| ")][1:]  # below the header
    assert [row.split(" | ")[3:5] for row in rows] == [["cpu-box boot boot-slo", "9.00\u00a0µs"],
                                                      ["gpu-box boot boot-slo", "12.00\u00a0µs"]]
    assert rows[0].endswith("| 0 of 2 | **outside: not predictable** |")
    assert rows[1].endswith("| 2 of 2 | inside; extrapolated, 1.00\u00a0µs above the probes fitted |")


def test_each_lease_is_held_out_in_turn_and_predicted_from_the_others():
    records = host_records.records(ENV)
    rows = [host_model.row_of(r) for r in records]
    found, sides = host_model.processes(rows), host_model.sides(rows)
    checks = [c for c in host_model.held_out(found, sides, host_model.models(found, sides))
              if c.model.workload == "vit16x6x384"]
    assert sorted(c.lease for c in checks) == [f"gpu-box/boot-{i}" for i in (1, 2, 3, 4)]
    for check in checks:
        held = host_records.LEASES[check.lease.split("/")[1]]
        assert check.model.processes == 6 and check.processes == len(held)
        assert check.probe_s == pytest.approx(statistics.median(held))
        # Fitted without the held-out lease: its probes are outside the range at either end.
        lo, hi = check.model.probe_range_s
        assert check.extrapolated == (not lo <= check.probe_s <= hi)
    assert [c.extrapolated for c in sorted(checks, key=lambda c: c.lease)] == [True, False, False, True]


@pytest.fixture(scope="module")
def slowed_site(tmp_path_factory):
    """The stability pages of the fixture, with a slowed host on which vit16x6x384 follows its
    line and launch-chain-100's eager does not grow at all."""
    records = (host_records.records(ENV)
               + host_records.slowed(ENV, "vit16x6x384", 12.0e-6)
               + host_records.slowed(ENV, "launch-chain-100", 12.0e-6,
                                     eager=host_records.eager_s("launch-chain-100", 7e-6)))
    out = tmp_path_factory.mktemp("docs")
    data = data_of(records)
    stability.render(Site(data, out))
    return data, out


def test_slowed_host_checks_judge_each_case_against_its_band(slowed_site):
    data, _ = slowed_site
    table = host.slowed(data).set_index("workload")
    assert bool(table.loc["vit16x6x384", "inside"]) and not bool(table.loc["launch-chain-100", "inside"])
    assert list(table["outside_us"]) == pytest.approx([1.0, 1.0])  # 12 µs against fits up to 11
    summary = host.summary(host.slowed(data))
    assert (summary["checks"], summary["inside"], summary["share"]) == (2, 1, 0.5)
    assert list(host.not_predictable(host.slowed(data))["workload"]) == ["launch-chain-100"]


def test_the_stability_pages_show_fits_checks_and_what_is_not_predictable(slowed_site):
    data, out = slowed_site
    page = (out / "analysis/stability.md").read_text()
    section = page[page.index("## Predicted from the host probe"):]
    assert f"(environment `{ENV.env_id()}`" in section
    assert ("On slowed hosts: 1 of 2 cases inside the band (50.0%; 2 of 4 processes), 2 of them "
            "at a probe beyond the probes fitted (extrapolated, 1 inside); not predictable: "
            "launch-chain-100 reduce-overhead.") in section
    assert ("On the hosts slowed on purpose, 1 of 2 did (50.0%, against the "
            f"{host_model.BAND:.1%} a band is meant to hold); of the 1 outside, 1 at a probe "
            "beyond the probes fitted, on a host that was not time-sliced.") in page
    # Its miss is explained from the checks: extrapolated past the fits, measured below.
    assert ("On gpu-box boot boot-slo the probe (12.00\u00a0µs) lay beyond the probes the lines "
            "were fitted on (6.50\u00a0µs–11.00\u00a0µs): launch-chain-100 reduce-overhead "
            "measured 6.17×, below its band (10.73×–11.84×). Extrapolated that far, the lines "
            "over-predict: not predictable there.") in section
    env_page = (out / f"analysis/stability/{ENV.env_id()}.md").read_text()
    host_section = env_page[env_page.index("{ #host-model }"):]
    fit = host.fits(data).set_index("workload").loc["vit16x6x384"]
    assert "× probe | " in host_section and f"{fit['processes']} · {fit['leases']} |" in host_section
    slowed_rows = [line for line in host_section[host_section.index("### On a slowed host"):].splitlines()
                   if line.startswith("| ")][1:]  # below the header
    assert len(slowed_rows) == 2
    assert sum("**outside: not predictable**" in line for line in slowed_rows) == 1
    assert all("extrapolated, 1.00\u00a0µs above the probes fitted" in line for line in slowed_rows)
    # The cross-lease table breaks each cell into lines, as markup, not as text.
    assert "<br>2: " in env_page and "&lt;br&gt;" not in env_page[:env_page.index("{ #host-model }")]


def test_a_modelled_speedup_the_slowed_host_did_not_measure_is_named(tmp_path):
    data = data_of(host_records.records(ENV) + host_records.slowed(ENV, "vit16x6x384", 12.0e-6))
    stability.render(Site(data, tmp_path))
    overall = (tmp_path / "analysis/stability.md").read_text()
    assert "On the hosts slowed on purpose, 1 of 1 did (100.0%" in overall
    assert "time-sliced host." not in overall and "no guide" not in overall
    missing = host.unchecked(host.models(data), host.slowed(data))
    assert list(missing["workload"]) == ["launch-chain-100"]
    said = "Not yet measured on a slowed host: launch-chain-100 reduce-overhead."
    assert said in (tmp_path / "analysis/stability.md").read_text()
    assert said in (tmp_path / f"analysis/stability/{ENV.env_id()}.md").read_text()


def test_the_probe_is_the_median_of_its_blocks_and_their_mean_is_kept_beside_it():
    """A preempted block is left out of the probe (the median) and kept in the blocks' mean;
    more than NEAR between the two marks the process time-sliced."""
    rows = [host_model.row_of(r) for r in host_records.slowed(ENV, "vit16x6x384", 9e-6, cut_s=9e-6)]
    found = host_model.processes(rows, host_model.SLOWED_TAG)
    assert [p.probe_s for p in found] == pytest.approx([9e-6, 9e-6])
    assert [p.probe_mean_s for p in found] == pytest.approx([12e-6, 12e-6])
    edge = 10e-6 * (1 + host_model.NEAR)
    assert not host_model.time_sliced(10e-6, edge) and host_model.time_sliced(10e-6, edge * 1.01)


def test_a_time_sliced_host_is_named_where_the_model_missed_and_only_there(tmp_path):
    """Both cases on a host whose probe blocks were cut by preemptions (median 9 µs, mean
    12 µs): vit16x6x384's eager still on its line at the median, inside the band, and not
    named; launch-chain-100's eager as slow as the line at the mean, above its band: the
    page says the host was time-sliced and the probe under-reported."""
    records = (host_records.records(ENV)
               + host_records.slowed(ENV, "vit16x6x384", 9e-6, cut_s=9e-6)
               + host_records.slowed(ENV, "launch-chain-100", 9e-6, cut_s=9e-6,
                                     eager=host_records.eager_s("launch-chain-100", 12e-6)))
    data = data_of(records)
    stability.render(Site(data, tmp_path))
    table = host.slowed(data).set_index("workload")
    assert list(table["probe_us"]) == pytest.approx([9.0, 9.0])
    assert list(table["probe_mean_us"]) == pytest.approx([12.0, 12.0])
    assert table["time_sliced"].all() and list(table["inside"]) == [False, True]
    missed = table.loc["launch-chain-100"]
    assert missed["measured"] > missed["high"]
    page = (tmp_path / "analysis/stability.md").read_text()
    assert (f"On gpu-box boot boot-slo the host was time-sliced and the probe under-reported: "
            f"launch-chain-100 reduce-overhead measured {missed['measured']:.2f}×, above its band "
            f"({missed['low']:.2f}×–{missed['high']:.2f}×) at a probe of 9.00\u00a0µs whose blocks "
            f"averaged 12.00\u00a0µs. Not predictable there.") in page
    assert "vit16x6x384 batch 1 reduce-overhead measured" not in page
    assert (f"On the hosts slowed on purpose, 1 of 2 did (50.0%, against the {host_model.BAND:.1%} a band is "
            "meant to hold); of the 1 outside, 1 were on a time-sliced host.") in page
    assert "there the probe is no guide" in page
    env_page = (tmp_path / f"analysis/stability/{ENV.env_id()}.md").read_text()
    rows = [line for line in env_page[env_page.index("### On a slowed host"):].splitlines()
            if line.startswith("| ")][1:]  # below the header
    assert [row.split(" | ")[4:6] for row in rows] == [["9.00\u00a0µs", "12.00\u00a0µs"]] * 2
    assert rows[0].endswith("| 0 of 2 | **outside: not predictable**; time-sliced host, the "
                            "probe under-reports |")
    assert rows[1].endswith("| 2 of 2 | inside |")


def test_without_slowed_records_the_page_says_not_measured(tmp_path):
    stability.render(Site(data_of(host_records.records(ENV)), tmp_path))
    page = (tmp_path / f"analysis/stability/{ENV.env_id()}.md").read_text()
    assert "Not measured: no record of this environment is tagged `slowed-host`." in page
    assert "Not yet measured on a slowed host" not in page


def test_fits_are_keyed_like_cases_and_join_them_one_to_one():
    data = data_of(host_records.records(ENV))
    fits = host.fits(data)
    assert set(fits["workload"]) == {"vit16x6x384", "launch-chain-100"}
    assert set(fits["mode"]) == {"eager"}
    joined = data.cases.merge(fits, on=analysis.CASE, how="inner")
    assert len(joined) == len(fits) == 2
    assert {"intercept_s", "slope", "residual_sd_s", "band", "probe_lo_us", "probe_hi_us"} <= set(fits)
    assert list(fits["probe_lo_us"]) == pytest.approx([6.5, 6.5])
    assert list(fits["probe_hi_us"]) == pytest.approx([11.0, 11.0])


def test_the_sides_the_model_fits_are_the_bounds_the_site_shows():
    """bench/host/model.py classifies cases without pandas, for `python -m bench host`; it must agree
    with report/analysis/shown.py's `cases` on every case, or the command and the site would
    model different cases."""
    for records in (load(RESULTS), data_of(host_records.records(ENV)).records):
        data = Data(records)
        sides = host_model.sides(host.host_rows(data.records))
        shown = {tuple(row[c] for c in host.KEY): row["bound"]
                 for row in analysis.rows(data.cases[[*host.KEY, "bound"]])}
        assert sides == shown


def test_the_published_table_and_the_export_carry_each_modelled_speedups_fit():
    from report import export

    data = data_of(host_records.records(ENV))
    fits = host.fits(data).set_index("workload")
    published = data.published[data.published["host_fitted"].notna()]
    assert sorted(zip(published["workload"], published["mode"], strict=True)) == [
        ("launch-chain-100", "reduce-overhead"), ("vit16x6x384", "reduce-overhead")]
    rows = export.table(data)
    modelled = rows[rows["host_fitted"].notna()]
    assert len(modelled) == 2 and set(modelled["baseline"]) == {"eager"}
    assert set(host.PUBLISHED_COLUMNS) <= set(rows.columns)
    for row in modelled.to_dict("records"):
        assert row["host_fitted"] == "eager" and row["bound"] == "host-dependent"
        assert row["host_base_slope"] == fits.loc[row["workload"], "slope"]
        assert row["host_mode_slope"] is None or math.isnan(row["host_mode_slope"])
    # Every other row, including eager's own and every speedup over default, has none.
    assert rows["host_fitted"].notna().sum() == 2


def test_the_exported_terms_alone_reproduce_every_prediction():
    """What a page's script would do with the export's columns, against the model itself."""
    data = data_of(host_records.records(ENV))
    row = host.for_export(data).set_index("workload").loc["vit16x6x384"]
    model = the_model(host_records.records(ENV))
    for probe_us in (6.5, 8.0, 11.0):
        fitted = row["host_base_intercept_s"] + row["host_base_slope"] * probe_us * 1e-6
        half = row["host_base_half_width_s"] * math.sqrt(
            1 + 1 / row["host_base_processes"]
            + (probe_us - row["host_base_probe_mean_us"]) ** 2 / row["host_base_probe_sxx_us2"])
        expected = model.at(probe_us * 1e-6)
        assert (fitted - half) / row["host_mode_hi_s"] == pytest.approx(expected.low)
        assert fitted / row["host_mode_median_s"] == pytest.approx(expected.speedup)
        assert (fitted + half) / row["host_mode_lo_s"] == pytest.approx(expected.high)


def test_a_claim_holds_from_the_probe_where_the_band_clears_it():
    model = the_model(host_records.records(ENV))
    lo, hi = model.probe_range_s
    middle = (lo + hi) / 2
    kind, probe = model.region(model.at(middle).low)
    assert kind == "above" and probe == pytest.approx(middle, abs=(hi - lo) / 100)
    assert model.at(probe).low >= model.at(middle).low * (1 - 1e-9)
    assert model.region(model.at(lo).low * 0.99) == ("everywhere", None)
    assert model.region(model.at(hi).high * 2) == ("nowhere", None)


def test_where_both_sides_are_lines_the_band_is_the_spread_of_the_paired_speedups():
    """On a CPU both sides follow the host within one process, so the band comes from how
    far each process's own speedup sat from the prediction, not from the two lines' bands."""
    cpu = dataclasses.replace(fx.ENV_CPU, device_name="a CPU")
    records = host_records.records(cpu)
    model = the_model(records)
    assert model.ratio == "cpu" and isinstance(model.side, host_model.Line)
    found = host_model.processes([host_model.row_of(r) for r in records])
    logs = [math.log(p.speedup(model.mode) / model.at(p.probe_s).speedup) for p in found
            if p.point[0] == "vit16x6x384"]
    assert model.ratio_sd == pytest.approx(math.sqrt(sum(x * x for x in logs) / (len(logs) - 2)))
    row = host.for_export(data_of(records)).set_index("workload").loc["vit16x6x384"]
    for probe_us in (6.5, 9.0):
        at = model.at(probe_us * 1e-6)
        quantile = host_model.t_quantile((1 + row["host_band_probability"]) / 2,
                                         row["host_processes"] - 2)
        half = quantile * row["host_ratio_sd"] * math.sqrt(
            1 + 1 / row["host_processes"]
            + (probe_us - row["host_base_probe_mean_us"]) ** 2 / row["host_base_probe_sxx_us2"])
        assert (at.low, at.high) == pytest.approx((at.speedup * math.exp(-half),
                                                   at.speedup * math.exp(half)))


@pytest.mark.slow
def test_a_site_with_host_models_builds_strictly(tmp_path):
    """Every link and anchor the host model's sections add resolves (mkdocs --strict)."""
    import shutil

    from fixtures.site import build_site

    results = tmp_path / "results"
    shutil.copytree(RESULTS, results)
    fx.write(results / "host.jsonl", host_records.records(ENV)
             + host_records.slowed(ENV, "vit16x6x384", 12.0e-6))
    done = build_site(tmp_path / "root", results)
    assert done.returncode == 0, done.stderr[-3000:]
    page = (tmp_path / "root/docs/analysis/stability.md").read_text()
    assert f"](stability/{ENV.env_id()}.md#host-model)" in page


def test_a_speedups_model_is_found_by_its_case_and_starts_from_a_measured_host():
    data = data_of(host_records.records(ENV))
    model = host.model_for(data, ENV.env_id(), "vit16x6x384", 1, "reduce-overhead")
    probes = [p for lease in host_records.LEASES.values() for p in lease]
    assert model.probe_median_s == pytest.approx(statistics.median(probes))
    assert host.model_for(data, ENV.env_id(), "vit16x6x384", 2, "reduce-overhead") is None
    row = data.published.set_index(["workload", "mode"]).loc[("vit16x6x384", "reduce-overhead")]
    assert row["host_probe_median_us"] == pytest.approx(model.probe_median_s * 1e6)


def test_a_modelled_case_is_named_with_its_dtype_and_a_baseline_other_than_eager():
    """Two dtypes, or two baselines, of one case are two cases: their names must differ."""
    name = template_environment().get_template("_macros.md.j2").module.modelled_case
    case = {"workload": "bert-base", "batch_size": 1, "case_dtype": "float32",
            "mode": "reduce-overhead", "baseline": "eager"}
    assert str(name(case)) == "bert-base batch 1 reduce-overhead"
    assert str(name(case | {"case_dtype": "bfloat16"})) == "bert-base batch 1 (bfloat16) reduce-overhead"
    assert str(name(case | {"baseline": "default"})) == "bert-base batch 1 reduce-overhead over default"
