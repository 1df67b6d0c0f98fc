"""`python -m report compare` and the one rule that decides whether a case changed.

`release_records` builds v2 records for several torch releases on one machine with
effects chosen here, so each test knows the answer it must get; test_report_history.py
builds on it too.
"""

from __future__ import annotations

import dataclasses
import math
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd
import pytest

from bench.modes import MODES
from bench.records import (
    CaseKey,
    Environment,
    Host,
    Process,
    Record,
    Timing,
    WorkloadInfo,
    append_record,
)
from bench.stats import summarize
from report.releases import compare
from report.releases.compare import judge

# ---- fixtures -----------------------------------------------------------------------------

RELEASES = ("2.9.0+cpu", "2.10.0", "2.11.0")  # numeric order: a string sort would put 2.10 first
EAGER_S = {"matmul-128": 2.0e-5, "mlp": 1.0e-3}
MODE_FACTOR = {"eager": 1.0, "default": 0.8}
# The median of (release, workload, mode) relative to the first release (1.0 if absent);
# the process medians of each case are median * (1 - spread, 1, 1 + spread), spread 2%
# unless SPREADS says otherwise.
EFFECTS = {
    ("2.10.0", "mlp", "default"): 1.20,  # +20%, spread 2%: a regression
    ("2.10.0", "matmul-128", "eager"): 0.80,  # -20%, spread 2%: an improvement
    ("2.10.0", "matmul-128", "default"): 1.03,  # +3% outside the 0.1% spread: too small
    ("2.11.0", "mlp", "default"): 1.20 * 1.20,  # +20% again, but inside a 15% spread
    ("2.11.0", "matmul-128", "eager"): 0.80,  # the rest stays where 2.10.0 put it
    ("2.11.0", "matmul-128", "default"): 1.03,
}
SPREADS = {("2.9.0", "matmul-128", "default"): 0.001, ("2.10.0", "matmul-128", "default"): 0.001,
           ("2.11.0", "mlp", "default"): 0.15}


# Every fixture record ran on this host, unless a test says otherwise: older runs are
# compared only when both sides share a host.
HOST = Host(hostname="fixture-host", boot_id="boot-0", cpu_model="Fixture CPU", cpu_mhz=None,
            cpus_available=2, load_before=(0.1,), load_after=(0.1,), gpu_sm_clock_mhz=None,
            gpu_memory_clock_mhz=None, op_s=(2.5e-6,))


def environment(torch: str, machine: str = "fixture-cpu") -> Environment:
    return Environment(
        machine=machine, backend="cpu", os="Linux-6.8", python="3.11.7", torch=torch,
        torch_requested=torch.split("+")[0], triton=None, cuda_runtime=None, cudnn=None,
        driver=None, device_name="Fixture CPU", gpu_sm_count=None, gpu_memory_bytes=None,
        cpu_model="Fixture CPU", cpu_count=2, torch_threads=2, float32_matmul_precision="highest",
        cuda_matmul_allow_tf32=None, cudnn_allow_tf32=None, git_commit=None, git_dirty=None)


def record(env: Environment, workload: str, mode: str, median: float, repeat: int = 0,
           repeats: int = 3, batch: int | None = None, profile: str = "quick",
           host: Host | None = HOST) -> Record:
    samples = (median * 0.99, median, median, median * 1.01, median)
    return Record(
        key=CaseKey("cpu", workload, mode, batch), status="ok", reason=None, profile=profile,
        env=env, env_id=env.env_id(), started_at=f"2026-12-01T10:00:0{repeat}+00:00",
        duration_s=2.0,
        process=Process(repeat=repeat, repeats=repeats, run_id="r", gpu=None, workers=1,
                        parent_import_s=None, cache="cold"),
        mode_traits=MODES[mode].traits,
        workload_info=WorkloadInfo("fixture", workload, ((8, 8),), "float32", None, None, 0),
        timing=Timing(samples=samples, calls_per_sample=1, warmup_calls=1,
                      wall_per_call_s=median, timer="perf-counter", **summarize(samples)),
        host=host)


def failed_record(env: Environment, workload: str, mode: str, status: str = "error",
                  repeat: int = 0, repeats: int = 3) -> Record:
    return Record(
        key=CaseKey("cpu", workload, mode, None), status=status, reason="it broke",
        profile="quick", env=env, env_id=env.env_id(),
        started_at=f"2026-12-01T10:00:0{repeat}+00:00", duration_s=1.0,
        process=Process(repeat=repeat, repeats=repeats, run_id="r", gpu=None, workers=1,
                        parent_import_s=None, cache="cold"),
        mode_traits=MODES[mode].traits, host=HOST)


def case_records(env: Environment, workload: str, mode: str, median: float, spread: float,
                 repeats: int = 3, **kwargs) -> list[Record]:
    """One record per process; their medians are median * (1 - spread, 1, 1 + spread)."""
    factors = (1.0,) if repeats == 1 else (1 - spread, 1.0, 1 + spread)
    return [record(env, workload, mode, median * f, repeat=i, repeats=repeats, **kwargs)
            for i, f in enumerate(factors)]


def release_records(releases=RELEASES, effects=None, spreads=None, repeats: int = 3,
                    machine: str = "fixture-cpu") -> list[Record]:
    effects = EFFECTS if effects is None else effects
    spreads = SPREADS if spreads is None else spreads
    out = []
    for torch in releases:
        env = environment(torch, machine)
        for workload, eager in EAGER_S.items():
            for mode, factor in MODE_FACTOR.items():
                effect = effects.get((torch.split("+")[0], workload, mode), 1.0)
                spread = spreads.get((torch.split("+")[0], workload, mode), 0.02)
                out += case_records(env, workload, mode, eager * factor * effect, spread, repeats)
    return out


def write(folder: Path, records: list[Record]) -> Path:
    for r in records:
        append_record(folder / f"{r.env.machine}-{r.env.torch}.jsonl", r)
    return folder


@pytest.fixture
def results(tmp_path: Path) -> Path:
    return write(tmp_path / "results", release_records())


def sides(old: float, old_lo: float, old_hi: float, new: float, new_lo: float, new_hi: float,
          n_old: int = 3, n_new: int = 3) -> pd.Series:
    row = pd.DataFrame([{"old_median_s": old, "old_lo_s": old_lo, "old_hi_s": old_hi,
                         "old_n_processes": n_old, "new_median_s": new, "new_lo_s": new_lo,
                         "new_hi_s": new_hi, "new_n_processes": n_new}])
    return judge(row).iloc[0]


# ---- the rule -----------------------------------------------------------------------------

def test_a_20_percent_slowdown_with_separate_spreads_is_a_significant_regression():
    verdict = sides(1.0, 0.98, 1.02, 1.2, 1.18, 1.22)
    assert verdict["significant"] and verdict["direction"] == "slower"
    assert verdict["ratio"] == pytest.approx(1.2)


def test_a_20_percent_speedup_with_separate_spreads_is_a_significant_improvement():
    verdict = sides(1.0, 0.98, 1.02, 0.8, 0.79, 0.81)
    assert verdict["significant"] and verdict["direction"] == "faster"


def test_a_20_percent_change_inside_the_spread_is_not_significant():
    verdict = sides(1.0, 0.85, 1.25, 1.2, 1.02, 1.4)
    assert not verdict["significant"] and verdict["direction"] == "same"
    assert not verdict["separated"]


def test_a_3_percent_change_outside_the_spread_is_not_significant():
    verdict = sides(1.0, 0.999, 1.001, 1.03, 1.029, 1.031)
    assert verdict["separated"] and not verdict["significant"]
    assert verdict["direction"] == "same"


def test_the_minimum_effect_is_5_percent_either_way():
    assert sides(1.0, 0.999, 1.001, 1.05, 1.049, 1.051)["significant"]
    assert not sides(1.0, 0.999, 1.001, 1.049, 1.048, 1.0495)["significant"]
    assert sides(1.0, 0.999, 1.001, 1 / 1.05, 0.95, 0.9524)["direction"] == "faster"
    assert not sides(1.0, 0.999, 1.001, 0.96, 0.959, 0.961)["significant"]


def test_ranges_that_touch_overlap():
    verdict = sides(1.0, 0.9, 1.1, 1.3, 1.1, 1.4)
    assert not verdict["separated"] and not verdict["significant"]


def test_a_single_run_is_never_significant_however_large_the_change():
    verdict = sides(1.0, 1.0, 1.0, 2.0, 2.0, 2.0, n_old=1, n_new=1)
    assert verdict["single_run"] and not verdict["significant"]
    assert sides(1.0, 0.98, 1.02, 2.0, 2.0, 2.0, n_new=1)["single_run"]


def test_a_case_missing_on_one_side_is_not_timed_nor_judged():
    verdict = sides(1.0, 0.98, 1.02, math.nan, math.nan, math.nan, n_new=0)
    assert not verdict["timed"] and not verdict["significant"] and pd.isna(verdict["ratio"])


# ---- the geometric mean -------------------------------------------------------------------

def test_the_geometric_mean_per_mode_is_over_repeated_cases_only():
    judged = judge(pd.DataFrame({
        "mode": ["eager", "eager", "eager", "default"],
        "old_median_s": [1.0, 1.0, 1.0, 1.0], "new_median_s": [2.0, 0.5, 8.0, 1.1],
        "old_lo_s": [0.99, 0.99, 1.0, 0.99], "old_hi_s": [1.01, 1.01, 1.0, 1.01],
        "new_lo_s": [1.98, 0.49, 8.0, 1.09], "new_hi_s": [2.02, 0.51, 8.0, 1.11],
        "old_n_processes": [3, 3, 1, 3], "new_n_processes": [3, 3, 1, 3]}))
    means = compare.geomean(judged).set_index("mode")
    assert list(means.index) == ["eager", "default"]  # bench/modes.py order
    assert means.at["eager", "geomean"] == pytest.approx(1.0)  # 2 x 0.5; the 8x single run left out
    assert means.at["eager", "cases"] == 2 and means.at["eager", "single_runs"] == 1
    assert (means.at["eager", "slower"], means.at["eager", "faster"]) == (1, 1)
    assert means.at["default", "geomean"] == pytest.approx(1.1)


# ---- selection ----------------------------------------------------------------------------

def test_a_torch_selector_matches_a_local_build_label(results: Path):
    side = compare.resolve("torch=2.9.0", results)
    assert side.env_id == environment("2.9.0+cpu").env_id()
    assert compare.resolve("torch=2.9.0+cpu", results).env_id == side.env_id


def test_an_env_id_prefix_selects_its_environment(results: Path):
    env_id = environment("2.11.0").env_id()
    assert compare.resolve(env_id[:6], results).env_id == env_id
    assert compare.resolve(f"machine=fixture-cpu,env_id={env_id[:4]}", results).env_id == env_id


def test_a_results_file_is_one_side(results: Path):
    path = results / "fixture-cpu-2.10.0.jsonl"
    assert compare.resolve(str(path), results).env_id == environment("2.10.0").env_id()


@pytest.mark.parametrize("spec, message", [
    ("torch=9.9.9", "no environment matches"),
    ("machine=fixture-cpu", "ambiguous: 3 environments"),
    ("flavour=vanilla", "unknown field 'flavour'"),
])
def test_selectors_that_are_not_one_environment_raise(results: Path, spec, message):
    with pytest.raises(compare.SelectionError, match=message):
        compare.resolve(spec, results)


# ---- the command --------------------------------------------------------------------------

def run(results: Path, *args: str) -> int:
    return compare.main([*args, "--results", str(results)])


def test_the_table_lists_each_case_with_ratio_significance_and_direction(results, capsys):
    assert run(results, "torch=2.9.0", "torch=2.10.0") == 0
    out = capsys.readouterr().out
    lines = {tuple(line.split()[:2]): line for line in out.splitlines() if line.startswith(
        ("mlp", "matmul-128"))}
    assert lines[("mlp", "default")].split()[-3:] == ["1.200", "yes", "slower"]
    assert lines[("matmul-128", "eager")].split()[-3:] == ["0.800", "yes", "faster"]
    assert lines[("matmul-128", "default")].split()[-3:] == ["1.030", "no", "same"]
    assert lines[("mlp", "eager")].split()[-3:] == ["1.000", "no", "same"]
    assert "geometric mean" in out
    assert "4 cases: 1 significantly slower, 1 significantly faster" in out


def test_fail_above_exits_1_on_a_significant_regression_beyond_the_threshold(results, capsys):
    assert run(results, "torch=2.9.0", "torch=2.10.0", "--fail-above", "10%") == 1
    assert "FAIL: 1 significant regression" in capsys.readouterr().err


def test_fail_above_exits_0_when_the_regression_is_within_the_threshold(results):
    assert run(results, "torch=2.9.0", "torch=2.10.0", "--fail-above", "25%") == 0


def test_fail_above_ignores_a_large_change_inside_the_spread(results):
    assert run(results, "torch=2.10.0", "torch=2.11.0", "--fail-above", "5%") == 0


@pytest.mark.parametrize("old, new, message", [
    ("torch=3.0.0", "torch=2.10.0", "no environment matches 'torch=3.0.0'"),
    ("machine=fixture-cpu", "torch=2.10.0", "is ambiguous"),
])
def test_a_side_that_is_not_one_environment_exits_2_with_one_line(results, capsys, old, new,
                                                                  message):
    assert run(results, old, new) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    assert environment("2.10.0").env_id() in err  # the environments that exist are listed


def test_an_empty_results_folder_exits_2(results, tmp_path, capsys):
    empty = tmp_path / "empty"
    empty.mkdir()
    assert run(results, str(empty), "torch=2.10.0") == 2
    assert "holds no records" in capsys.readouterr().err


def test_sides_with_no_case_in_common_exit_2(tmp_path, capsys):
    folder = write(tmp_path / "r", [
        *case_records(environment("2.9.0"), "mlp", "eager", 1e-3, 0.01),
        *case_records(environment("2.10.0"), "matmul-128", "eager", 1e-3, 0.01)])
    assert run(folder, "torch=2.9.0", "torch=2.10.0") == 2
    assert "no timed case in common" in capsys.readouterr().err


def test_profiles_are_never_paired_with_each_other(tmp_path, capsys):
    old, new = environment("2.9.0"), environment("2.10.0")
    folder = write(tmp_path / "r", [
        *case_records(old, "mlp", "eager", 1e-3, 0.01),
        *case_records(new, "mlp", "eager", 1e-3, 0.01),
        *case_records(new, "mlp", "eager", 5e-3, 0.01, profile="full")])
    assert run(folder, "torch=2.9.0", "torch=2.10.0", "--fail-above", "10%") == 0
    out = capsys.readouterr().out
    assert "2 cases: 0 significantly slower" in out  # quick vs quick; full stands alone


def test_the_command_is_reachable_as_python_m_report_compare(results):
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[1]
    done = subprocess.run([sys.executable, "-m", "report", "compare", "torch=2.9.0", "torch=2.10.0",
                           "--results", str(results), "--fail-above", "10%"],
                          cwd=root, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    assert "slower" in done.stdout and "FAIL" in done.stderr


def test_a_folder_of_several_environments_is_ambiguous_and_says_how_to_narrow_it(results):
    with pytest.raises(compare.SelectionError, match=f"env_id=.* with --results {results}"):
        compare.resolve(str(results), results)


def test_a_case_that_fails_in_the_new_release_is_a_status_change_not_a_ratio(tmp_path, capsys):
    old, new = environment("2.9.0"), environment("2.10.0")
    folder = write(tmp_path / "r", [
        *case_records(old, "mlp", "eager", 1e-3, 0.01), *case_records(new, "mlp", "eager", 1e-3, 0.01),
        *case_records(old, "mlp", "default", 1e-3, 0.01),
        *(failed_record(new, "mlp", "default", repeat=i) for i in range(3))])
    judged = compare.compare_sides(compare.resolve("torch=2.9.0", folder),
                                   compare.resolve("torch=2.10.0", folder))
    changed = compare.status_changed(judged)
    assert list(changed["mode"]) == ["default"] and not changed["significant"].any()
    assert compare.table_rows(changed)[0]["change"] == "ok -> error"
    assert run(folder, "torch=2.9.0", "torch=2.10.0", "--fail-above", "1%") == 0


# ---- hosts and A/B groups -----------------------------------------------------------------

def two_hosts(tmp_path: Path) -> Path:
    """2.9.0 on the fixture host, 2.10.0 (20% slower in mlp default) on another, with a
    host probe three times as slow."""
    other = dataclasses.replace(HOST, hostname="busy-host", boot_id="boot-7", op_s=(7.5e-6,))
    return write(tmp_path / "r", [
        *case_records(environment("2.9.0"), "mlp", "default", 1e-3, 0.01),
        *case_records(environment("2.10.0"), "mlp", "default", 1.2e-3, 0.01, host=other)])


def test_across_two_hosts_compare_prints_one_line_and_no_verdict(tmp_path, capsys):
    folder = two_hosts(tmp_path)
    assert run(folder, "torch=2.9.0", "torch=2.10.0", "--fail-above", "5%") == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and out.startswith("the hosts differ:")
    assert "fixture-host (boot boot-0)" in out and "busy-host (boot boot-7)" in out
    assert "2.50 µs vs 7.50 µs" in out  # the probe, as a hint
    assert "slower" not in out.replace("faster/slower", "") and "faster" not in out.replace(
        "faster/slower", "")


def test_across_hosts_compares_when_asked_and_says_the_hosts_differ(tmp_path, capsys):
    assert run(two_hosts(tmp_path), "torch=2.9.0", "torch=2.10.0", "--across-hosts") == 0
    out = capsys.readouterr().out
    assert out.startswith("note: the hosts differ") and "slower" in out.splitlines()[-5]


def test_records_without_a_host_are_not_known_to_share_one(tmp_path, capsys):
    folder = write(tmp_path / "r", [
        *case_records(environment("2.9.0"), "mlp", "default", 1e-3, 0.01, host=None),
        *case_records(environment("2.10.0"), "mlp", "default", 1.2e-3, 0.01)])
    assert run(folder, "torch=2.9.0", "torch=2.10.0") == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and "ran on host not recorded" in out
    assert out.startswith("the hosts are not known to be the same:")


def test_compare_reads_the_ab_group_that_holds_both_releases_and_only_it(tmp_path, capsys):
    from ab_fixtures import group_records
    from test_report_ab import EFFECTS, LABELS, NOISE

    older = release_records(releases=("2.14.1", "2.15.0"), machine="ab-cpu",
                            effects={("2.15.0", "mlp", "default"): 3.0})
    other_group = group_records("g0", {"2.14.1": "2.14.1", "2.15.0": "2.15.0"},
                                {("2.15.0", "mlp", "eager"): 2.0})
    folder = write(tmp_path / "r", older + other_group + group_records(
        "g1", LABELS, EFFECTS, NOISE, start=datetime(2026, 12, 2, tzinfo=timezone.utc)))
    assert run(folder, "torch=2.14.1", "torch=2.15.0", "--fail-above", "20%") == 1
    out = capsys.readouterr().out
    assert out.startswith("A/B group g1: old 2.14.1 (label 2.14.1")
    assert "one host, one run: quiet (boot boot-1)" in out
    assert ("A/A noise floor: 1.02× (median over 4 cases, largest 1.02×; A/A run of group g1: "
            "torch 2.15.0 under labels 2.15.0 and 2.15.0-aa)") in out
    rows = {tuple(line.split()[:2]): line.split() for line in out.splitlines()
            if line.startswith(("mlp", "matmul-128"))}
    assert rows[("mlp", "default")][-1] == "slower" and rows[("mlp", "default")][-5] == "1.300"
    assert rows[("mlp", "eager")][-1] == "same"  # g0's 2x and the older runs' 3x are not read
    assert rows[("matmul-128", "eager")][-1] == "faster"
    assert "4 cases: 1 slower, 1 faster, 2 same, 0 not judged" in out
    assert run(folder, "torch=2.14.1", "torch=2.15.0", "--group", "g0") == 0
    out = capsys.readouterr().out  # g0 has no A/A run: g1's, on the same host, is its floor
    assert out.startswith("A/B group g0") and "A/A run of group g1" in out
    assert "4 cases: 1 slower, 0 faster, 3 same" in out


def test_a_case_pairs_with_its_own_dtype_only(tmp_path: Path):
    """A workload measured in float32 and bfloat16 on both sides is two cases, not four
    cross-paired rows: float32 on one side is never set against bfloat16 on the other."""
    records = []
    for torch, effect in (("2.9.0", 1.0), ("2.10.0", 1.0)):
        env = environment(torch)
        for dtype, median in (("float32", 0.004), ("bfloat16", 0.001)):
            records += [dataclasses.replace(r, key=dataclasses.replace(r.key, dtype=dtype))
                        for r in case_records(env, "mlp", "eager", median * effect, 0.02)]
    results = write(tmp_path / "results", records)
    table = compare.compare_sides(compare.resolve("torch=2.9.0", results),
                                  compare.resolve("torch=2.10.0", results))
    assert len(table) == 2
    assert sorted(table["new_median_s"] / table["old_median_s"]) == pytest.approx([1.0, 1.0])


def test_an_ab_comparison_says_which_hosts_its_sides_ran_on():
    from report.releases.compare import _where

    one, other = ("vm/3e183693-aaaa",), ("vm/7a597f8c-bbbb",)
    assert _where(one, one) == "one host, one run: vm (boot 3e183693)"
    assert _where(one, other) == ("the sides ran on different hosts: old vm (boot 3e183693); "
                                  "new vm (boot 7a597f8c)")
    assert "not recorded" in _where(None, one) and "not recorded" in _where(one, None)
