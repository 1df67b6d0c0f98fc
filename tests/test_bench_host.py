"""`python -m bench host` predicts each host-dependent speedup at the reader's probe with its
band, from fixture records, and refuses to predict outside the probes it was fitted on."""

from __future__ import annotations

import dataclasses
import re
import subprocess
import sys

import pytest
from fixtures import ROOT, host_records
from fixtures import make_results as fx

from bench.environment import cpu_model
from bench.host import model as host_model
from bench.host import predict
from bench.records import append_records

# The CLI predicts for the GPU type it runs on; on this CPU-only machine that is the CPU,
# whose cases have both sides on the host ("cpu" ratios), each fitted as a line.
HERE = dataclasses.replace(fx.ENV_CPU, device_name=cpu_model(), cpu_model=cpu_model())


@pytest.fixture
def results(tmp_path):
    folder = tmp_path / "results"
    append_records(folder / "host.jsonl", host_records.records(HERE))
    return folder


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = predict.main(["--backend", "cpu", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def model(results, workload: str) -> host_model.SpeedupModel:
    from bench.records import read_records

    found = [m for m in predict._models(list(read_records(results / "host.jsonl")))[0]
             if m.workload == workload]
    assert len(found) == 1
    return found[0]


def test_inside_the_fitted_probes_it_prints_the_prediction_and_its_band(results, capsys):
    code, out, _ = run(capsys, "--results", str(results), "--op-us", "9")
    assert code == 0
    expected = model(results, "vit16x6x384").at(9e-6)
    assert expected.outside_s == 0 and expected.low < expected.speedup < expected.high
    assert (f"vit16x6x384 batch 1, reduce-overhead: {expected.speedup:.2f}x "
            f"({expected.low:.2f}x-{expected.high:.2f}x; measured range 6.50-11.00 us, "
            f"8 processes, 4 leases)") in out
    assert "launch-chain-100, reduce-overhead: " in out
    assert "at 9.00 us per eager op" in out and "90% band" in out


def test_outside_the_fitted_probes_it_says_how_far_and_predicts_nothing(results, capsys):
    code, out, _ = run(capsys, "--results", str(results), "--op-us", "12.5")
    assert code == 0
    line = next(x for x in out.splitlines() if x.strip().startswith("vit16x6x384"))
    assert "not predicted, outside the measured range: 1.50 us (14%) above it" in line
    assert not re.search(r"\d\.\d\dx", line)  # no figure is given for it
    code, out, _ = run(capsys, "--results", str(results), "--op-us", "5.2")
    assert "1.30 us (20%) below it" in out


def test_one_workload_is_predicted_alone_and_an_unknown_one_is_refused(results, capsys):
    code, out, _ = run(capsys, "--results", str(results), "--op-us", "9",
                       "--workload", "launch-chain-100")
    assert code == 0 and "launch-chain-100, reduce-overhead" in out and "vit16x6x384" not in out
    code, out, err = run(capsys, "--results", str(results), "--op-us", "9", "--workload", "mlp")
    assert code == 2 and out == ""
    assert err.strip() == ("python -m bench host: error: workload 'mlp' has no host model in "
                           f"{results} on cpu (workloads with one: launch-chain-100, vit16x6x384)")


def test_a_probe_of_zero_is_refused(results, capsys):
    code, _, err = run(capsys, "--results", str(results), "--op-us", "0")
    assert code == 2 and "--op-us" in err and len(err.strip().splitlines()) == 1


def test_a_gpu_prediction_reads_as_the_cpu_one_does():
    cuda = host_model.models(*_fitted(host_records.records(fx.ENV_A)))
    lines = predict.prediction_lines(cuda, 8e-6)
    vit = next(x for x in lines if "vit16x6x384" in x)
    assert re.fullmatch(r"  vit16x6x384 batch 1, reduce-overhead: \d\.\d\dx \(\d\.\d\dx-\d\.\d\dx; "
                        r"measured range 6\.50-11\.00 us, 8 processes, 4 leases\)", vit)
    assert "outside the measured range" in predict.prediction_lines(cuda, 20e-6)[1]


def _fitted(records):
    rows = [host_model.row_of(r) for r in records]
    return host_model.processes(rows), host_model.sides(rows)


@pytest.mark.slow
def test_timing_the_probe_and_predicting_takes_under_a_minute(results):
    done = subprocess.run([sys.executable, "-m", "bench", "host", "--backend", "cpu",
                           "--results", str(results)], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert "an eager op costs" in done.stdout and "speedups over eager predicted at" in done.stdout
    predicted = [x for x in done.stdout.splitlines() if x.startswith("  vit16x6x384 batch 1")]
    assert len(predicted) == 1
    assert "outside the measured range" in predicted[0] or re.search(r"\d\.\d\dx \(", predicted[0])
    assert float(done.stdout.rsplit("(took ", 1)[1].split(" s)")[0]) <= 60


def test_a_case_a_slowed_host_contradicted_is_marked_not_predictable(results, capsys):
    flat = host_records.eager_s("launch-chain-100", 7e-6)  # eager did not grow on that host
    append_records(results / "host.jsonl", host_records.slowed(HERE, "launch-chain-100", 10e-6,
                                                               eager=flat)
                   + host_records.slowed(HERE, "vit16x6x384", 10e-6))
    code, out, _ = run(capsys, "--results", str(results), "--op-us", "9")
    lines = {x.split(",")[0].strip(): x for x in out.splitlines() if x.startswith("  ")
             and "x (" in x}
    assert lines["launch-chain-100"].endswith(
        "; not predictable: a slowed host measured it outside its band")
    assert "not predictable" not in lines["vit16x6x384 batch 1"]


def test_probe_blocks_cut_by_preemption_are_named_and_said_to_under_report(results, capsys,
                                                                           monkeypatch):
    """The reader's own blocks: one in three cut (mean 12 µs against a median of 9 µs) gets
    the warning; blocks that agree do not."""
    cut = [8.8e-6, 9.0e-6, 18.2e-6] * 20
    monkeypatch.setattr(predict, "_probe", lambda backend: (cut, []))
    _, out, _ = run(capsys, "--results", str(results))
    assert ("but its blocks averaged 12.00 us (1.3x the median): preemptions cut some of them, "
            "the host time-slices this process.") in out
    assert "predictions below are too low" in out
    monkeypatch.setattr(predict, "_probe", lambda backend: ([8.8e-6, 9.0e-6, 9.2e-6] * 20, []))
    _, out, _ = run(capsys, "--results", str(results))
    assert "an eager op costs 9.00 us" in out and "preemptions" not in out
