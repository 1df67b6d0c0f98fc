"""The quick profile's plan on a CPU, where `nox -s bench docs` spends most of its time:
each kernel build timed once, and autotuning only where it has a matmul to search."""

from __future__ import annotations

from bench import cli
from bench.modes import MODES, twins_among
from bench.runner import Recorded, jobs, plan, twins_left_out
from bench.workloads import ORDER, WORKLOADS

ALL = list(MODES)
# The strategies of bench/shapes, which apply to shape streams alone (none in the quick profile).
STREAMS_ONLY = {name for name, mode in MODES.items() if mode.streams_only}
# The CPU quick plan, case by case (cuda-graph costs no process: one unsupported record).
CPU_QUICK = {
    ("trivial-call", None): ["eager", "default", "lite", "cuda-graph"],
    ("launch-chain-10", None): ["eager", "default", "lite", "cuda-graph"],
    ("matmul-128", None): ["eager", "default", "lite", "max-autotune-no-cudagraphs",
                           "cuda-graph"],
    ("elementwise-chain", None): ["eager", "default", "lite", "cuda-graph"],
    ("dynamic-mlp", None): ["eager", "default", "lite", "cuda-graph", "default-dynamic"],
    ("train-mlp", 32): ["eager", "default", "lite", "cuda-graph"],
    ("vit16x6x384", 1): ["eager", "default", "lite", "cuda-graph"],
}


def quick(backend: str):
    return plan(backend, ORDER, ALL, "quick", set(), "seed", "main")


def test_the_cpu_quick_plan_is_these_cases():
    found: dict[tuple, list[str]] = {}
    for key in quick("cpu"):
        found.setdefault((key.workload, key.batch_size), []).append(key.mode)
    assert found == CPU_QUICK


def test_the_cpu_quick_plan_starts_23_isolated_and_21_paired_processes():
    todo = jobs(quick("cpu"), 3, Recorded(), "paired")
    runs = [j for j in todo if j.group or MODES[j.key.mode].unsupported_reason("cpu") is None]
    assert sum(1 for j in runs if not j.group) == 23
    assert sum(1 for j in runs if j.group) == 21  # 3 per workload size, every size kept


def test_on_cpu_the_quick_profile_leaves_each_twin_to_the_mode_it_builds_like():
    fixed = [m for m in ALL if m not in STREAMS_ONLY]
    assert twins_left_out(fixed, "cpu", "quick") == {
        "reduce-overhead": MODES["reduce-overhead"].twin_on("cpu"),
        "max-autotune": MODES["max-autotune"].twin_on("cpu")}
    assert {t.mode for t in twins_left_out(fixed, "cpu", "quick").values()} == {
        "default", "max-autotune-no-cudagraphs"}
    # The full profile, and a GPU, measure both of every pair.
    assert twins_left_out(ALL, "cpu", "full") == {}
    assert twins_left_out(ALL, "cuda", "quick") == {}
    assert {k.mode for k in plan("cpu", ["matmul-128"], ALL, "full", set(), "seed", "main")
            } == set(MODES) - {"default-dynamic"} - STREAMS_ONLY


def test_a_twin_asked_for_without_its_twin_is_measured():
    cases = plan("cpu", ["matmul-128"], ["eager", "reduce-overhead"], "quick", set(), "seed",
                 "main")
    assert [k.mode for k in cases] == ["eager", "reduce-overhead"]
    assert twins_among(["eager", "reduce-overhead"], "cpu") == {}


def test_the_gpu_quick_plan_keeps_every_mode_and_matmul_sweep():
    cases = quick("cuda")
    assert {k.mode for k in cases} == set(MODES) - STREAMS_ONLY
    assert ("matmul-sweep", 1024) in {(k.workload, k.batch_size) for k in cases}
    assert {k.mode for k in cases if k.workload == "trivial-call"} >= {
        "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs"}


def test_autotuning_is_left_out_on_cpu_only_where_a_workload_has_no_matmul():
    on_cpu_only = {n for n in ORDER if WORKLOADS[n].quick_without_autotune == ("cpu",)}
    assert {"trivial-call", "launch-chain-10", "elementwise-chain"} <= on_cpu_only
    assert not on_cpu_only & {"matmul-128", "matmul-sweep", "mlp", "conv2d-block"}


def test_a_quick_cpu_run_says_which_modes_it_leaves_to_their_twins(capsys, tmp_path):
    parser = cli.parser()
    args = parser.parse_args(["--backend", "cpu", "--workload", "matmul-128", "--mode", "eager",
                              "--mode", "default", "--mode", "reduce-overhead",
                              "--results-dir", str(tmp_path)])
    plans = cli._plans(args, ["cpu"])
    assert [k.mode for k in plans["cpu"]] == ["eager", "default"]
    assert capsys.readouterr().err.splitlines() == [
        "note: reduce-overhead is not measured separately on cpu: it builds the same kernels "
        "as default there (CUDA graphs apply to CUDA tensors only); the quick profile "
        "measures default alone (--profile full measures both)"]
