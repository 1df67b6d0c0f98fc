"""The dtype axis (float32, bfloat16) and the lite mode.

bfloat16 is a field of the case key: the plan, resume, paired groups and compile caches
keep dtypes apart, and each record's correctness section holds its dtype's tolerance. The
end-to-end run at the bottom measures the tiny MLP in both dtypes, eager and lite, paired.
"""

from __future__ import annotations

import dataclasses
import json

import pytest
import torch
from bench_helpers import bench_env, fake_environment, fake_record, only_results_file, records, run_bench

from bench import case, cli
from bench.modes import MODES
from bench.records import CaseKey, record_from_dict
from bench.runner import Recorded, groups, jobs, plan, recorded, signature
from bench.spec import Spec
from bench.workloads import ORDER, lookup
from bench.workloads.registry import DTYPES


def test_torch_knows_every_compile_mode_the_bench_passes_it():
    known = torch._inductor.list_mode_options()
    assert "lite" in known and known["lite"]["fallback_by_default"]
    lite = MODES["lite"].traits
    assert lite.compiled and not (lite.cuda_graphs or lite.autotune or lite.dynamic)


def test_lite_is_planned_wherever_default_is_in_the_quick_sentinel_and_model_plans():
    for backend, profile, names in [("cpu", "quick", ORDER), ("cuda", "sentinel", ORDER),
                                    ("cuda", "full", [n for n in ORDER if lookup(n).family == "model"])]:
        cases = plan(backend, names, list(MODES), profile, set(), "seed", "main")
        with_default = {(k.workload, k.batch_size) for k in cases if k.mode == "default"}
        assert with_default and with_default == {(k.workload, k.batch_size)
                                                 for k in cases if k.mode == "lite"}


def test_bfloat16_plans_only_the_workloads_that_state_a_tolerance_for_it():
    cases = plan("cpu", ORDER, ["eager"], "full", set(), "seed", "main", ["float32", "bfloat16"])
    in_bf16 = {k.workload for k in cases if k.dtype == "bfloat16"}
    models = {n for n in ORDER if lookup(n).family == "model"}
    assert in_bf16 == {"mlp", "dynamic-mlp", "train-mlp", "vit16x6x384", "vit32x12x768",
                       "vit32x18x1024", "train-vit16x6x384"} | models
    assert {k.workload for k in cases if k.dtype == "float32"} >= in_bf16 | {"matmul-128"}
    for name in in_bf16:
        assert lookup(name).tolerance_for("bfloat16") > lookup(name).tolerance_for("float32")


def test_a_paired_process_never_mixes_dtypes():
    keys = [CaseKey("cpu", "mlp", mode, 8, dtype=dtype)
            for dtype in DTYPES for mode in ("eager", "default", "lite")]
    found = groups(keys)
    assert [{k.dtype for k in g} for g in found] == [{"float32"}, {"bfloat16"}]
    paired_jobs = [j for j in jobs(keys, 2, Recorded(), "paired") if j.group]
    assert len(paired_jobs) == 4 and all(len({k.dtype for k in j.group}) == 1 for j in paired_jobs)
    assert len({signature(j, cold=True) for j in paired_jobs}) == 2  # one per dtype


def test_resume_keeps_dtypes_apart(tmp_path):
    env = fake_environment()
    float32, bfloat16 = (CaseKey("cpu", "mlp", "eager", 8, dtype=d) for d in DTYPES)
    done = Recorded(isolated=frozenset({(float32, 0)}))
    assert [j.key for j in jobs([float32, bfloat16], 1, done)] == [bfloat16]
    from bench.records import append_records
    from bench.runner import results_path
    append_records(results_path(tmp_path, env), [fake_record(env, float32)])
    assert recorded(tmp_path, env).isolated == {(float32, 0)}


def test_a_version_3_record_loads_as_float32():
    record = fake_record(fake_environment(), CaseKey("cpu", "mlp", "eager", 8))
    data = json.loads(record.to_json())
    del data["key"]["dtype"]
    data["schema_version"] = 3
    upgraded = record_from_dict(data)
    assert upgraded.key.dtype == "float32" and upgraded.key == record.key


@pytest.mark.parametrize("argv, says", [
    (["--dtype", "float16"], "unknown dtype 'float16' (valid: float32, bfloat16)"),
    (["--workload", "matmul-128", "--dtype", "bfloat16"], "'matmul-128' runs in float32 only"),
])
def test_a_dtype_that_cannot_run_is_one_line(argv, says, capsys, tmp_path):
    assert cli.main([*argv, "--results-dir", str(tmp_path / "r")]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and says in lines[0]
    assert not (tmp_path / "r").exists()


def test_dtype_is_in_help():
    assert "--dtype" in cli.parser().format_help()


def run_case(workload: str, mode: str, dtype: str) -> dict:
    spec = {"backend": "cpu", "workload": workload, "mode": mode, "batch_size": 8,
            "shapes": "tiny", "tag": "main", "dtype": dtype, "budget_s": 0.02}
    result = {"status": "ok", "reason": None}
    case.run(Spec.from_dict(spec), result)
    return result


def test_bfloat16_inference_casts_the_model_and_training_autocasts():
    inference = lookup("mlp").build_in("bfloat16", torch.device("cpu"), 8, True)
    assert all(x.dtype == torch.bfloat16 for x in inference.inputs)
    assert "model.to(torch.bfloat16)" in inference.settings["precision"]
    result = run_case("train-mlp", "eager", "bfloat16")
    assert result["workload_info"]["dtype"] == "torch.bfloat16"
    assert "torch.autocast" in result["workload_info"]["settings"]["precision"]
    built = lookup("train-mlp").build_in("bfloat16", torch.device("cpu"), 8, True)
    assert built.inputs[0].dtype == torch.float32  # mixed precision: float32 data and weights
    check = result["correctness"]
    assert check["passed"] and check["tolerance"] == lookup("train-mlp").bfloat16_tolerance


def test_bfloat16_is_further_from_float64_than_float32_and_within_its_tolerance():
    float32, bfloat16 = (run_case("mlp", "eager", d)["correctness"] for d in DTYPES)
    assert float32["passed"] and bfloat16["passed"]
    assert bfloat16["rel_error"] > 10 * float32["rel_error"]  # the bfloat16 cast really happened
    assert bfloat16["tolerance"] == lookup("mlp").bfloat16_tolerance


# ---- through python -m bench -----------------------------------------------------------

@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    base = tmp_path_factory.mktemp("dtype")
    tmp = base / "tmp"
    tmp.mkdir()
    done = run_bench("--backend", "cpu", "--shapes", "tiny", "--machine", "dtype-smoke",
                     "--profile", "full",
                     "--workload", "mlp", "--batch-size", "32", "--mode", "eager", "--mode", "lite",
                     "--dtype", "float32", "--dtype", "bfloat16", "--repeats", "1", "--rounds", "5",
                     "--budget", "0.02", "--results-dir", str(base / "results"),
                     "--cache-dir", str(base / "cache"), env=bench_env(tmp))
    assert done.returncode == 0, done.stderr[-3000:]
    return records(only_results_file(base / "results"))


@pytest.mark.slow
def test_lite_and_bfloat16_are_measured_on_cpu_and_pass_their_tolerance(smoke):
    seen = sorted((r.key.dtype, r.key.mode, r.process.timing) for r in smoke)
    assert seen == sorted((d, m, t) for d in DTYPES for m in ("eager", "lite")
                          for t in ("isolated", "paired"))
    assert all(r.status == "ok" and r.correctness.passed for r in smoke)
    for record in smoke:
        expected = lookup("mlp").tolerance_for(record.key.dtype)
        assert record.correctness.tolerance == expected
        assert record.workload_info.dtype == f"torch.{record.key.dtype}"
    lite = [r for r in smoke if r.key.mode == "lite" and not r.paired]
    assert all(r.mode_traits == dataclasses.replace(MODES["lite"].traits) for r in lite)
    assert all(r.compile.cold_first_call_s > 0 for r in lite)


@pytest.mark.slow
def test_each_paired_process_holds_one_dtype(smoke):
    by_group: dict[str, set[str]] = {}
    for record in smoke:
        if record.paired:
            by_group.setdefault(record.paired.group, set()).add(record.key.dtype)
    assert len(by_group) == 2 and all(len(d) == 1 for d in by_group.values())
