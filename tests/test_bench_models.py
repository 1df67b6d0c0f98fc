"""The real models (timm, transformers): planned where the profiles say, built offline in
tiny shapes, correct against float64, measured end to end; and, without their packages,
listed with a note and refused in one line."""

from __future__ import annotations

import importlib.metadata

import pytest
import torch
from bench_helpers import bench_env, only_results_file, records, run_bench, without_models_env

from bench import cli
from bench.modes import MODES
from bench.observe import CompilerLog, dynamo_counters, output_error
from bench.runner import plan
from bench.workloads import WORKLOADS, optional
from bench.workloads.registry import MODELS

CPU = torch.device("cpu")
PACKAGES = ("timm", "transformers")
INSTALL = "pip install '.[models]'"
needs_packages = pytest.mark.skipif(bool(optional.missing(PACKAGES)),
                                    reason="timm and transformers are not installed")
AUTOTUNING = {name for name, mode in MODES.items() if mode.traits.autotune}
INFERENCE = [name for name in MODELS if not WORKLOADS[name].training]
TRAINING = [name for name in MODELS if WORKLOADS[name].training]


# ---- planning -----------------------------------------------------------------------------

def test_the_registry_holds_the_five_models_and_two_training_steps():
    assert INFERENCE == ["resnet50", "vit-base16", "bert-base", "gpt2-small", "llama-small"]
    assert TRAINING == ["train-resnet50", "train-bert-base"]
    assert {WORKLOADS[name].family for name in MODELS} == {"model"}


def test_models_autotune_at_batch_1_only_and_training_steps_not_at_all():
    cases = plan("cuda", MODELS, list(MODES), "full", set(), "seed", "main")
    autotuned = {(c.workload, c.batch_size) for c in cases if c.mode in AUTOTUNING}
    assert autotuned == {(name, 1) for name in INFERENCE}
    plain = {(c.workload, c.batch_size) for c in cases if c.mode == "default"}
    assert plain == {(n, b) for n in INFERENCE for b in (1, 8, 32)} | {(n, 32) for n in TRAINING}


def test_models_stay_out_of_the_quick_profile_and_run_at_batch_1_on_cpu():
    assert not plan("cpu", MODELS, list(MODES), "quick", set(), "seed", "main")
    cpu = plan("cpu", MODELS, list(MODES), "full", set(), "seed", "main")
    assert {c.batch_size for c in cpu} == {1}
    assert {c.workload for c in cpu} == set(MODELS)


@needs_packages  # without them, that the model needs transformers is said first
def test_asking_for_an_autotuning_mode_where_a_model_does_not_autotune_says_why(capsys, tmp_path):
    argv = ["--backend", "cpu", "--profile", "full", "--workload", "train-bert-base", "--mode",
            "max-autotune", "--results-dir", str(tmp_path / "results")]
    assert cli.main(argv) == 2
    assert capsys.readouterr().err.splitlines() == [
        "python -m bench: error: this selection plans no case: train-bert-base is measured in "
        "the autotuning modes at no batch (python -m bench --list shows what there is)"]


def test_a_default_plan_without_the_packages_leaves_the_models_out_and_says_so(monkeypatch, capsys):
    monkeypatch.setattr(optional, "_findable", lambda name: name not in PACKAGES)
    args = cli.parser().parse_args(["--backend", "cpu", "--profile", "full", "--mode", "eager"])
    planned = cli._plans(args, ["cpu"])["cpu"]
    assert planned and not {c.workload for c in planned} & set(MODELS)
    note = capsys.readouterr().err.strip()
    assert note.startswith("note: cpu: leaving out resnet50, vit-base16, bert-base")
    assert INSTALL in note


# ---- without the packages -----------------------------------------------------------------

def test_list_shows_the_models_and_one_note_when_their_packages_are_missing(tmp_path):
    result = run_bench("--list", env=without_models_env(tmp_path))
    assert result.returncode == 0, result.stderr
    listed = result.stdout.split()
    assert all(name in listed for name in MODELS)
    notes = [line for line in result.stdout.splitlines() if INSTALL in line]
    assert len(notes) == 1 and "timm and transformers" in notes[0], notes


def test_asking_for_a_model_without_its_packages_is_one_line_naming_the_install(tmp_path):
    results = tmp_path / "results"
    result = run_bench("--backend", "cpu", "--profile", "full", "--workload", "bert-base",
                       "--results-dir", str(results), env=without_models_env(tmp_path))
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "python -m bench: error: workload 'bert-base' needs transformers, which is not "
        f"installed here (install the models group: {INSTALL})"]
    assert not results.exists()


# ---- with the packages --------------------------------------------------------------------

@needs_packages
@pytest.mark.parametrize("name", MODELS)
def test_each_tiny_model_matches_its_float64_build(name):
    """What the case's float64 check compares, in process: one call (a training step)."""
    workload = WORKLOADS[name]
    ours, double = (workload.build(CPU, 1, True, dtype) for dtype in (torch.float32, torch.float64))
    with torch.set_grad_enabled(workload.training):
        error = output_error(ours.fn(*ours.inputs), double.fn(*double.inputs))
    assert error <= workload.tolerance / 10, error


@needs_packages
@pytest.mark.parametrize("name", ["bert-base", "gpt2-small", "llama-small"])
def test_text_models_record_sdpa_attention_eval_mode_and_no_kv_cache(name):
    built = WORKLOADS[name].build(CPU, 1, True, torch.float32)
    assert built.settings["attn_implementation"] == "sdpa"
    assert built.settings["use_cache"] == "False"
    assert (built.settings["mode"], built.settings["grad"]) == ("eval", "torch.no_grad()")
    assert not built.fn.training
    assert built.libraries == {"transformers": importlib.metadata.version("transformers")}


@needs_packages
@pytest.mark.parametrize("name", ["resnet50", "vit-base16"])
def test_vision_models_record_eval_mode_and_the_timm_version(name):
    built = WORKLOADS[name].build(CPU, 1, True, torch.float32)
    assert (built.settings["mode"], built.settings["grad"]) == ("eval", "torch.no_grad()")
    assert not built.fn.training
    assert built.libraries == {"timm": importlib.metadata.version("timm")}


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """The lead's command in tiny shapes, for one model at batch 1, eager only: compiling
    it on two CPU cores would take a minute, and with one mode there is nothing to pair, so
    the case is one isolated process."""
    base = tmp_path_factory.mktemp("models")
    results = base / "results"
    result = run_bench("--backend", "cpu", "--profile", "full", "--shapes", "tiny",
                       "--workload", "bert-base", "--mode", "eager", "--batch-size", "1",
                       "--repeats", "1", "--budget", "0.05", "--machine", "models-smoke",
                       "--results-dir", str(results), "--cache-dir", str(base / "cache"),
                       env=bench_env(base))
    assert result.returncode == 0, result.stderr[-3000:]
    (record,) = records(only_results_file(results))
    return record


@needs_packages
def test_a_tiny_model_run_records_an_ok_process_that_passes_its_float64_check(run):
    assert run.status == "ok", run.reason
    assert run.correctness.reference == "float64" and run.correctness.passed, run.correctness


@needs_packages
def test_a_tiny_model_run_records_the_settings_and_package_version(run):
    assert run.workload_info.family == "model"
    assert run.workload_info.settings["attn_implementation"] == "sdpa"
    assert run.workload_info.libraries == {
        "transformers": importlib.metadata.version("transformers")}


# ---- diagnostics --------------------------------------------------------------------------

def test_graph_breaks_are_recorded_with_their_reasons_most_frequent_first():
    def broken(x):
        x = x + 1
        torch._dynamo.graph_break()
        return x * 2

    torch._dynamo.reset()
    torch._dynamo.utils.counters.clear()
    log = CompilerLog.install()
    compiled = torch.compile(broken, backend="eager")
    compiled(torch.ones(4))
    counters = dynamo_counters(log)
    assert counters.graph_breaks >= 1
    counts = [int(reason.split("x: ", 1)[0]) for reason in counters.graph_break_reasons]
    assert counters.graph_break_reasons and sum(counts) == counters.graph_breaks
    assert counts == sorted(counts, reverse=True)
