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
    assert "at 9.00 us per eager op" in out and f"{host_model.BAND:.0%} band" in out


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


# ---- another GPU type, as JSON, without torch (issue 90), and any probe at all (issue 94 i1)

H100 = fx.ENV_A.device_name


@pytest.fixture
def gpu_results(tmp_path):
    """The fixture's H100 cases on four leases, and a second H100 environment whose two
    processes a point are too few for a model: its cases are host-dependent without one."""
    folder = tmp_path / "results"
    append_records(folder / "a.jsonl", host_records.records(fx.ENV_A))
    append_records(folder / "b.jsonl", host_records.records(fx.ENV_B, {"boot-9": (7.4e-6, 7.6e-6)}))
    return folder


def gpu_models(folder) -> dict[str, host_model.SpeedupModel]:
    from bench.records import read_records

    found = predict._models([r for path in sorted(folder.glob("*.jsonl")) for r in read_records(path)])[0]
    return {m.workload: m for m in found}


def test_device_predicts_for_a_gpu_type_this_host_does_not_have(gpu_results, capsys):
    # another GPU type's much faster host: neither listed nor compared with
    other = dataclasses.replace(fx.ENV_A, machine="h200-a", device_name="NVIDIA H200")
    append_records(gpu_results / "c.jsonl", host_records.records(other, {"boot-h200": (3e-6, 3e-6)}))
    code = predict.main(["--results", str(gpu_results), "--device", H100, "--op-us", "9"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert out.startswith(f"the host given ({H100}, cuda): an eager op costs 9.00 us")
    assert "3.00 us" not in out and "NVIDIA H200" not in out
    assert "about as fast as the hosts measured (9.00 us against 6.70-10.70 us)" in out
    expected = gpu_models(gpu_results)["vit16x6x384"].at(9e-6)
    assert f"vit16x6x384 batch 1, reduce-overhead: {expected.speedup:.2f}x ({expected.low:.2f}x-" in out
    # the reference host: the median of the five leases' own medians, each lease once
    assert (f"reference host for {H100}: 7.85 us per eager op, the median of 5 leases measured "
            "(6.70-10.70 us)") in out
    assert (f"host-dependent on {H100} without a host model (fewer than 6 paired processes a "
            "side), so not predicted: launch-chain-100 float32, reduce-overhead; "
            "vit16x6x384 batch 1 float32, reduce-overhead") in out


def test_an_unknown_device_is_refused_in_one_line_naming_those_measured(gpu_results, capsys):
    code = predict.main(["--results", str(gpu_results), "--device", "NVIDIA B200", "--op-us", "9"])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err == (f"python -m bench host: error: no record in {gpu_results} names the device "
                   f"'NVIDIA B200' (devices measured: {H100})\n")


def test_json_gives_every_host_dependent_case_with_its_status(gpu_results, capsys):
    import json

    code = predict.main(["--results", str(gpu_results), "--device", H100, "--op-us", "9", "--json"])
    found = json.loads(capsys.readouterr().out)
    assert code == 0
    assert found["device"] == H100 and found["backend"] == "cuda" and found["op_us"] == 9.0
    assert found["reference"] == pytest.approx({"probe_us": 7.85, "lo_us": 6.7, "hi_us": 10.7,
                                                "leases": 5})
    by = {(c["env_id"], c["workload"]): c for c in found["cases"]}
    assert len(by) == 4
    vit = by[(fx.ENV_A.env_id(), "vit16x6x384")]
    expected = gpu_models(gpu_results)["vit16x6x384"].at(9e-6)
    assert vit["status"] == "predicted" and vit["outside_us"] == 0
    assert (vit["speedup"], vit["low"], vit["high"]) == pytest.approx(
        (expected.speedup, expected.low, expected.high))
    assert (vit["batch_size"], vit["dtype"], vit["mode"]) == (1, "float32", "reduce-overhead")
    assert (vit["probe_lo_us"], vit["probe_hi_us"]) == pytest.approx((6.5, 11.0))
    assert (vit["processes"], vit["leases"]) == (8, 4)
    missing = by[(fx.ENV_B.env_id(), "vit16x6x384")]
    assert missing["status"] == "no host model" and missing["speedup"] is None
    code = predict.main(["--results", str(gpu_results), "--device", H100, "--op-us", "5", "--json"])
    outside = {c["workload"]: c for c in json.loads(capsys.readouterr().out)["cases"]
               if c["status"] != "no host model"}
    assert outside["vit16x6x384"]["status"] == "outside the measured range"
    assert outside["vit16x6x384"]["outside_us"] == pytest.approx(-1.5)
    assert outside["vit16x6x384"]["speedup"] is None


@pytest.mark.parametrize("op_us", ["20000", "1e300"])
def test_any_probe_gives_a_line_or_a_prediction_never_a_traceback(results, capsys, op_us):
    """Issue 94 i1: far outside the fitted probes the band's terms overflow a float, so the
    range is checked before anything is predicted (the CPU cases have both sides on lines:
    their band grows as exp of the distance)."""
    assert model(results, "vit16x6x384").ratio_sd is not None
    code, out, err = run(capsys, "--results", str(results), "--op-us", op_us)
    assert code == 0, err
    lines = [x for x in out.splitlines() if x.startswith("  vit16x6x384")]
    assert len(lines) == 1 and "not predicted, outside the measured range" in lines[0]
    code, out, err = run(capsys, "--results", str(results), "--op-us", op_us, "--json")
    assert code == 0, err
    assert "outside the measured range" in out


BLOCK_TORCH = """import sys
class _NoTorch:
    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            raise ImportError("torch is blocked in this test")
sys.meta_path.insert(0, _NoTorch())
"""


def test_with_op_us_and_device_nothing_imports_torch(gpu_results, tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(BLOCK_TORCH)
    env = {"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin"}
    blocked = subprocess.run([sys.executable, "-c", "import torch"], cwd=ROOT, env=env,
                             capture_output=True, text=True, timeout=60)
    assert blocked.returncode != 0 and "torch is blocked" in blocked.stderr
    done = subprocess.run(
        [sys.executable, "-c", "import sys; from bench.host import predict; "
         "sys.exit(predict.main(sys.argv[1:]))", "--results", str(gpu_results),
         "--device", H100, "--op-us", "9", "--json"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert '"status": "predicted"' in done.stdout
