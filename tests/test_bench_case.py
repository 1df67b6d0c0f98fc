"""One case process, through `bench.case.main` on a spec file: its result loads as a record,
every mode is checked against a float64 reference, and a wrong output is caught.

Each case runs in a process of its own with an empty Inductor cache, as the runner runs it:
Dynamo's caches and counters live for a whole process and would leak between cases.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path

import pytest

from bench.modes import MODES
from bench.records import (
    MEASURED_SECTIONS,
    SCHEMA_VERSION,
    CaseKey,
    Environment,
    Process,
    Record,
    record_from_dict,
)

ROOT = Path(__file__).resolve().parents[1]
TESTS = Path(__file__).resolve().parent
BUDGET_S = 0.02
CHILD = "import sys; import bench.case as case; {patch}; sys.exit(case.main(sys.argv[1:]))"
# Modes that give a deliberately wrong answer, patched into the child's MODES as eager.
OFF_BY_ONE_PERCENT = ("from dataclasses import replace; import bench.modes as m; "
                      "m.MODES['eager'] = replace(m.MODES['eager'], "
                      "prepare=lambda fn, inputs: (lambda *a: fn(*a) * 1.01))")
NAN_OUTPUT = ("from dataclasses import replace; import bench.modes as m; "
              "m.MODES['eager'] = replace(m.MODES['eager'], "
              "prepare=lambda fn, inputs: (lambda *a: fn(*a) * float('nan')))")


def run_case(tmp_path: Path, workload: str, mode: str = "eager", batch_size: int | None = None,
             shapes: str = "tiny", patch: str = "pass") -> dict:
    """The result dict a case process writes for this spec."""
    spec = {"backend": "cpu", "workload": workload, "mode": mode, "batch_size": batch_size,
            "shapes": shapes, "tag": "main", "budget_s": BUDGET_S}
    folder = tmp_path / f"{workload.replace(':', '-')}-{mode}-{batch_size}"
    folder.mkdir(parents=True)
    spec_path, result_path = folder / "spec.json", folder / "result.json"
    spec_path.write_text(json.dumps(spec))
    env = os.environ | {"TORCHINDUCTOR_CACHE_DIR": str(folder / "inductor"),
                        "PYTHONPATH": os.pathsep.join([str(ROOT), str(TESTS)])}
    done = subprocess.run([sys.executable, "-c", CHILD.format(patch=patch), str(spec_path),
                           str(result_path)], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(result_path.read_text())
    result["spec"] = spec
    return result


ENV = Environment(
    machine="test-box", backend="cpu", os="Linux", python="3.11.7", torch="2.13.0+cpu",
    torch_requested=None, triton=None, cuda_runtime=None, cudnn=None, driver=None,
    device_name="Test CPU", gpu_sm_count=None, gpu_memory_bytes=None, cpu_model="Test CPU",
    cpu_count=2, torch_threads=2, float32_matmul_precision="highest",
    cuda_matmul_allow_tf32=None, cudnn_allow_tf32=None, git_commit=None, git_dirty=None,
)


def as_record(result: dict) -> Record:
    """The record the runner makes of a result: its sections copied as they are."""
    spec = {k: v for k, v in result["spec"].items() if k != "budget_s"}
    data = {
        "schema_version": SCHEMA_VERSION, "key": asdict(CaseKey(**spec)),
        "status": result["status"], "reason": result["reason"], "profile": "quick",
        "env": asdict(ENV), "env_id": ENV.env_id(), "started_at": "2026-01-01T00:00:00+00:00",
        "duration_s": result["duration_s"],
        "process": asdict(Process(repeat=0, repeats=1, run_id=None, gpu=None, workers=1,
                                  parent_import_s=None, cache="cold")),
        "mode_traits": asdict(MODES[spec["mode"]].traits),
    }
    unknown = set(result) - set(MEASURED_SECTIONS) - {"status", "reason", "duration_s", "spec"}
    assert not unknown, f"the case wrote sections no record has: {unknown}"
    data |= {name: result[name] for name in MEASURED_SECTIONS if result.get(name) is not None}
    return record_from_dict(data)


@pytest.fixture(scope="module")
def eager(tmp_path_factory):
    return run_case(tmp_path_factory.mktemp("case"), "matmul-softmax")


def test_an_eager_result_loads_as_a_record(eager):
    record = as_record(eager)
    assert record.status == "ok", record.reason
    assert record.timing.median_s > 0
    assert record.workload_info.family == "matmul-softmax"


def test_eager_is_checked_against_float64_not_against_itself(eager):
    correctness = eager["correctness"]
    assert correctness["reference"] == "float64"
    assert correctness["passed"]
    # float32 rounding shows against float64; comparing eager with eager gave exactly 0.
    assert 0 < correctness["rel_error"] < 1e-5


def test_the_case_leaves_the_import_stage_to_the_runner(eager):
    assert "import" not in eager["stages_s"]
    assert {"build", "first calls", "correctness", "timing", "profiler"} <= set(eager["stages_s"])


def test_a_wrong_output_fails_the_check_without_failing_the_case(tmp_path):
    result = run_case(tmp_path, "matmul-softmax", patch=OFF_BY_ONE_PERCENT)
    record = as_record(result)
    assert record.status == "ok"
    assert not record.correctness.passed
    assert record.correctness.rel_error == pytest.approx(0.01, rel=1e-3)


def test_a_non_finite_output_fails_the_check_with_a_finite_error(tmp_path):
    record = as_record(run_case(tmp_path, "trivial-call", patch=NAN_OUTPUT))
    assert record.status == "ok"
    assert not record.correctness.passed
    assert record.correctness.rel_error >= 1e30
    assert [p.outcome for p in record.probes] == ["non-finite"]


def test_probes_are_typed_results(tmp_path):
    record = as_record(run_case(tmp_path, "trivial-call", "default"))
    (probe,) = [p for p in record.probes if p.name == "recompile-on-new-shape"]
    assert probe.figures["recompiles"] >= 1
    assert "recompile" in probe.summary


def test_an_unknown_workload_is_an_error_with_a_one_line_reason(tmp_path):
    result = run_case(tmp_path, "no-such-workload")
    assert result["status"] == "error"
    assert "unknown workload 'no-such-workload'" in result["reason"]
    assert "\n" not in result["reason"]
    as_record(result)


def test_manual_cuda_graphs_refuse_varying_shapes(tmp_path):
    result = run_case(tmp_path, "dynamic-mlp", "cuda-graph")
    assert result["status"] == "unsupported"
    assert "changes its batch" in result["reason"]


def test_importing_the_case_starts_no_cuda_and_compiles_nothing():
    """The runner's parent imports bench.case before it forks each case."""
    code = ("import torch, bench.case; from torch._dynamo.utils import counters; "
            "assert not torch.cuda.is_initialized(); assert not counters['stats']['unique_graphs']")
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True,
                   env=os.environ | {"PYTHONPATH": str(ROOT)})
