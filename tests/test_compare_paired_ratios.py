"""`python -m report compare --ratios`: each case's paired speedup over eager on two sides,
as the one-node Ray check (examples/lent-machine/ray-check.sh) sets the local runner's
against a Ray cluster's on one host.

The fixture records are made here with speedups chosen per paired process, so each test
knows its answer: a paired process whose eager median is E and whose mode median is E / s
has round ratios of exactly s. Every side also has one isolated process per case, whose
figures must never enter a ratio.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from ab_fixtures import environment, group_records, host, record
from test_report_compare import write

from report.releases import compare

EAGER_S = {"mlp": 1.0e-3, "matmul-128": 2.0e-5}
HOST = host("gpu-box", "boot-7")
START = datetime(2026, 12, 5, 10, 0, tzinfo=timezone.utc)
SAME = {"mlp": (1.24, 1.25, 1.26), "matmul-128": (0.89, 0.90, 0.91)}


def side(
    machine: str,
    speedups: dict[str, tuple[float, ...]],
    *,
    the_host=HOST,
    isolated_factor: float = 1.0,
    paired: bool = True,
) -> list:
    """One environment's records: per workload, one isolated process of eager and default
    (default's at eager / speedup x `isolated_factor`), then one paired process per speedup
    in `speedups[workload]` (none without `paired`)."""
    env = environment("2.15.0", machine)
    clock = iter(START + timedelta(seconds=5 * i) for i in range(1000))
    out = []
    for workload, found in speedups.items():
        eager = EAGER_S[workload]
        middle = sorted(found)[len(found) // 2]
        medians = {"eager": eager, "default": eager / middle * isolated_factor}
        out += [
            record(
                env,
                workload,
                mode,
                median,
                the_tag="main",
                repeat=0,
                paired=False,
                started=next(clock),
                the_host=the_host,
            )
            for mode, median in medians.items()
        ]
        for repeat, speedup in enumerate(found if paired else ()):
            started = next(clock)
            out += [
                record(
                    env,
                    workload,
                    mode,
                    median,
                    the_tag="main",
                    repeat=repeat,
                    paired=True,
                    started=started,
                    the_host=the_host,
                    group=f"{machine}-{workload}-{repeat}",
                )
                for mode, median in (("eager", eager), ("default", eager / speedup))
            ]
    return out


def run(folder: Path, *args: str, capsys) -> tuple[int, str, str]:
    code = compare.main(["--results", str(folder), *args])
    out, err = capsys.readouterr()
    return code, out, err


def table_row(out: str, workload: str) -> str:
    return next(line for line in out.splitlines() if line.startswith(f"{workload} "))


@pytest.fixture
def results(tmp_path: Path):
    def make(local: dict, ray: dict, **ray_options) -> Path:
        return write(tmp_path / "results", side("local-h100", local) + side("ray-h100", ray, **ray_options))

    return make


def test_the_same_ratios_are_within_the_noise(results, capsys) -> None:
    # The Ray side's isolated processes put default 3x slower: were they mixed into its
    # ratio, mlp would differ. They are not.
    folder = results(
        SAME, {"mlp": (1.25, 1.255, 1.26), "matmul-128": (0.90, 0.90, 0.91)}, isolated_factor=3.0
    )
    code, out, err = run(folder, "--ratios", "machine=local-h100", "machine=ray-h100", capsys=capsys)
    assert (code, err) == (0, "")
    assert "timing: paired, on both sides" in out
    assert "no isolated process enters it" in out
    mlp = table_row(out, "mlp")
    assert "1.250 (1.240–1.260, 3 paired processes)" in mlp
    assert "1.255 (1.250–1.260, 3 paired processes)" in mlp
    assert mlp.endswith("within the noise")
    assert table_row(out, "matmul-128").endswith("within the noise")
    assert "2 cases: 2 within the noise, 0 differ" in out
    assert "no A/A run yet on the sides' host" in out


def test_a_clearly_different_ratio_differs(results, capsys) -> None:
    folder = results(SAME, {"mlp": (1.50, 1.52, 1.55), "matmul-128": SAME["matmul-128"]})
    code, out, _ = run(folder, "--ratios", "machine=local-h100", "machine=ray-h100", capsys=capsys)
    assert code == 0
    mlp = table_row(out, "mlp")
    assert " 1.216 " in mlp  # 1.52 / 1.25
    assert mlp.endswith("differs: 1.22x higher")
    assert table_row(out, "matmul-128").endswith("within the noise")
    assert "2 cases: 1 within the noise, 1 differ" in out
    code, _, err = run(
        folder,
        "--ratios",
        "--fail-above",
        "10%",
        "--only-changed",
        "machine=local-h100",
        "machine=ray-h100",
        capsys=capsys,
    )
    assert code == 1 and "1 case(s) whose paired ratios differ by more than 10%" in err
    assert (
        run(
            folder, "--ratios", "--fail-above", "30%", "machine=local-h100", "machine=ray-h100", capsys=capsys
        )[0]
        == 0
    )


def test_separated_ranges_within_the_floor_and_the_minimum_effect(tmp_path: Path, capsys) -> None:
    # mlp: 1.03 apart, ranges apart: under the 1.05 minimum effect. matmul: 1.08 apart.
    ray = {"mlp": (1.285, 1.2875, 1.29), "matmul-128": (0.97, 0.972, 0.975)}
    folder = write(tmp_path / "results", side("local-h100", SAME) + side("ray-h100", ray))
    code, out, _ = run(folder, "--ratios", "machine=local-h100", "machine=ray-h100", capsys=capsys)
    assert code == 0
    assert table_row(out, "mlp").endswith("within the noise")
    assert table_row(out, "matmul-128").endswith("differs: 1.08x higher")
    # An A/A run on the same host that strayed 1.10x from itself: 1.08 is within it.
    write(
        folder,
        group_records(
            "aa", {"a": "2.15.0", "b": "2.15.0"}, noise={("b", 1): 1.10}, the_host=HOST, machine="aa-cpu"
        ),
    )
    code, out, _ = run(folder, "--ratios", "machine=local-h100", "machine=ray-h100", capsys=capsys)
    matmul = table_row(out, "matmul-128")
    assert " 1.10× " in matmul and matmul.endswith("within the noise")
    assert "A/A noise floor: 1.10× (median over 2 cases" in out and "group aa" in out


def test_one_process_a_side_is_not_judged(results, capsys) -> None:
    folder = results({"mlp": (1.25,)}, {"mlp": (1.50,)})
    _, out, _ = run(folder, "--ratios", "machine=local-h100", "machine=ray-h100", capsys=capsys)
    assert table_row(out, "mlp").endswith("single process")


def test_a_side_with_isolated_processes_only_is_refused(results, capsys) -> None:
    folder = results(SAME, SAME, paired=False)
    code, out, err = run(folder, "--ratios", "machine=local-h100", "machine=ray-h100", capsys=capsys)
    assert (code, out) == (2, "")
    assert err.count("\n") == 1
    assert "'machine=ray-h100' has no paired process" in err
    assert "never an isolated ratio against a paired one" in err


def test_a_case_paired_on_one_side_only_gets_no_verdict(tmp_path: Path, capsys) -> None:
    ray = side("ray-h100", {"mlp": SAME["mlp"]}) + side(
        "ray-h100", {"matmul-128": SAME["matmul-128"]}, paired=False
    )
    folder = write(tmp_path / "results", side("local-h100", SAME) + ray)
    code, out, _ = run(folder, "--ratios", "machine=local-h100", "machine=ray-h100", capsys=capsys)
    assert code == 0
    matmul = table_row(out, "matmul-128")
    assert "not paired" in matmul and matmul.endswith("old only")
    assert table_row(out, "mlp").endswith("within the noise")
    assert "1 paired on one side only" in out


@pytest.mark.parametrize(
    "selector, message",
    [
        ("colour=red", "unknown field 'colour'"),
        ("machine=nowhere", "no environment matches 'machine=nowhere'"),
    ],
)
def test_a_bad_selector_is_one_line_and_exit_2(results, capsys, selector, message) -> None:
    folder = results(SAME, SAME)
    code, out, err = run(folder, "--ratios", "machine=local-h100", selector, capsys=capsys)
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and err.startswith("report compare: error: ") and message in err


def test_sides_on_different_hosts_get_no_verdict(tmp_path: Path, capsys) -> None:
    other = host("gpu-box", "boot-8")
    folder = write(tmp_path / "results", side("local-h100", SAME) + side("ray-h100", SAME, the_host=other))
    code, out, _ = run(folder, "--ratios", "machine=local-h100", "machine=ray-h100", capsys=capsys)
    assert code == 0 and out.count("\n") == 1 and out.startswith("the hosts differ")
    code, out, _ = run(
        folder, "--ratios", "--across-hosts", "machine=local-h100", "machine=ray-h100", capsys=capsys
    )
    assert "compared anyway (--across-hosts)" in out and "within the noise" in out


def test_the_latency_comparison_points_to_ratios(results, capsys) -> None:
    folder = results(SAME, SAME)
    code, out, _ = run(folder, "machine=local-h100", "machine=ray-h100", capsys=capsys)
    assert code == 0
    assert "both sides have paired processes; --ratios compares" in out
