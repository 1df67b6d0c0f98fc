"""`python -m bench.ab`: two labelled environments (this interpreter under two labels, an
A/A run) measured alternately, ABBA per workload size, with tiny shapes; then resumed, and
compared by `report compare`, which reads that group alone."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from bench_helpers import ROOT, bench_env, records, results_files

from bench import ab
from bench.coldstart.records import read_folder
from report.releases import compare

GROUP = "t1"
BENCH = ("--shapes", "tiny", "--mode", "eager", "--mode", "default", "--machine", "ab-smoke",
         "--rounds", "3", "--budget", "0.02")


def run_ab(results, cache, tmp, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "bench.ab", "--env", f"a={sys.executable}", "--env",
         f"b@9.9.9={sys.executable}", "--group", GROUP, "--repeats", "2", "--workload", "matmul-128",
         "--backend", "cpu", "--results-dir", str(results), *extra, "--", *BENCH,
         "--cache-dir", str(cache)],
        cwd=ROOT, env=bench_env(tmp), capture_output=True, text=True, timeout=900,
        stdin=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    base = tmp_path_factory.mktemp("ab")
    results, tmp = base / "results", base / "tmp"
    tmp.mkdir()
    done = run_ab(results, base / "cache", tmp)
    assert done.returncode == 0, done.stderr[-3000:]
    found = [r for path in results_files(results) for r in records(path)]
    return {"base": base, "results": results, "tmp": tmp, "stdout": done.stdout, "records": found}


def test_the_turns_alternate_abba_per_workload_size(tmp_path):
    sides = [ab.Side("a", "pa"), ab.Side("b", "pb"), ab.Side("c", "pc")]
    sizes = [ab.Size("cpu", "mlp", 1, "seed"), ab.Size("cpu", "mlp", 8, "seed")]
    turns = list(ab.abba(sides, sizes, 3))
    assert [(t.size.batch_size, t.repeat, t.side.label) for t in turns[:9]] == [
        (1, 0, "a"), (1, 0, "b"), (1, 0, "c"), (1, 1, "c"), (1, 1, "b"), (1, 1, "a"),
        (1, 2, "a"), (1, 2, "b"), (1, 2, "c")]
    assert turns[9].size.batch_size == 8 and len(turns) == 18


def test_a_stream_turn_adds_an_isolated_process_per_repeat(tmp_path):
    """A shape stream has no paired process: its turns ask for isolated timing, so repeat r
    adds process r of every mode; a fixed-shape size keeps the runner's own timing."""
    side = ab.Side("a", "pa")
    stream = ab.Turn(ab.Size("cpu", "mlp-batches", None, "seed"), 2, side)
    fixed = ab.Turn(ab.Size("cpu", "mlp", 1, "seed"), 2, side)
    made = ab.command(stream, "g", tmp_path, [])
    assert made[made.index("--repeats"):made.index("--repeats") + 4] == [
        "--repeats", "3", "--timing", "isolated"]
    assert "--timing" not in ab.command(fixed, "g", tmp_path, [])
    assert "--timing" not in ab.command(stream, "g", tmp_path, [], "bench.coldstart")


@pytest.mark.slow
def test_the_sides_processes_alternate_abba_on_one_host(smoke):
    paired = sorted((r for r in smoke["records"] if r.process.timing == "paired"),
                    key=lambda r: r.started_at)
    turns = [(ab.parse_tag(r.key.tag)[1], r.process.repeat) for r in paired]
    assert list(dict.fromkeys(turns)) == [("a", 0), ("b", 0), ("b", 1), ("a", 1)]
    isolated = [r for r in smoke["records"] if r.process.timing == "isolated"]
    assert sorted((ab.parse_tag(r.key.tag)[1], r.key.mode) for r in isolated) == [
        ("a", "default"), ("a", "eager"), ("b", "default"), ("b", "eager")]


@pytest.mark.slow
def test_every_record_carries_the_group_and_its_host(smoke):
    assert len(smoke["records"]) == 4 + 2 * 2 * 2  # isolated, then 2 modes x 2 repeats x 2
    for record in smoke["records"]:
        assert ab.parse_tag(record.key.tag)[0] == GROUP
        assert record.host is not None and record.host.hostname and record.host.boot_id
    assert len({(r.host.hostname, r.host.boot_id) for r in smoke["records"]}) == 1


@pytest.mark.slow
def test_a_side_named_with_its_release_records_it_as_requested(smoke):
    requested = {(ab.parse_tag(r.key.tag)[1], r.env.torch_requested) for r in smoke["records"]}
    assert ("b", "9.9.9") in requested and all(label == "b" for label, value in requested
                                               if value == "9.9.9")


def test_a_side_is_label_release_and_interpreter():
    python = str(Path(sys.executable).absolute())
    assert ab._side(f"2.15.0-aa@2.15.0={python}") == ab.Side("2.15.0-aa", python, "2.15.0")
    assert ab._side(f"a={python}").requested is None


@pytest.mark.slow
def test_running_it_again_resumes_and_measures_nothing(smoke):
    again = run_ab(smoke["results"], smoke["base"] / "cache", smoke["tmp"])
    assert again.returncode == 0, again.stderr[-3000:]
    assert "4 turns, 4 already on record" in again.stdout and "== turn" not in again.stdout
    assert sum(len(records(p)) for p in results_files(smoke["results"])) == len(smoke["records"])


@pytest.mark.slow
def test_compare_reads_the_group_alone(smoke, capsys):
    folder = smoke["results"]
    assert compare.main([f"group={GROUP},label=a", f"group={GROUP},label=b",
                         "--results", str(folder)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"A/B group {GROUP}: old ") and "label a" in out and "label b" in out
    # a floor of 2 or more reads as a factor (report.releases.ab.percent): a busy host gets there
    assert "one host, one run" in out
    assert re.search(r"A/A noise floor: (±[\d.]+%|[\d.]+×) \(median over", out), out
    rows = [line.split() for line in out.splitlines() if line.startswith("matmul-128")]
    assert [row[1] for row in rows] == ["eager", "default"] and all(row[-3] == "2" for row in rows)
    assert compare.main(["group=other,label=a", f"group={GROUP},label=b",
                         "--results", str(folder)]) == 2


def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys):
    assert ab.main(["--env", f"a={sys.executable}"]) == 2
    assert "two or more --env" in capsys.readouterr().err
    assert ab.main(["--env", f"a={sys.executable}", "--env", f"a={sys.executable}"]) == 2
    assert "labels must differ" in capsys.readouterr().err
    assert ab.main(["--env", f"a={sys.executable}", "--env", f"b={sys.executable}", "--",
                    "--tag", "x"]) == 2
    assert "--tag is set by python -m bench.ab" in capsys.readouterr().err
    assert ab.main(["--env", "a=/nonexistent/python", "--env", f"b={sys.executable}"]) == 2
    assert "not an executable interpreter" in capsys.readouterr().err.strip()
    assert ab.main(["--env", f"a={sys.executable}", "--env", f"b={sys.executable}",
                    "--coldstart", "--workload", "nope"]) == 2
    assert "unknown workload 'nope' (valid: " in capsys.readouterr().err
    assert ab.main(["--env", f"a={sys.executable}", "--env", f"b={sys.executable}",
                    "--coldstart", "--backend", "tpu"]) == 2
    assert "unknown backend 'tpu' for --coldstart (valid: cpu, cuda, mps)" in capsys.readouterr().err


@pytest.mark.slow
def test_the_cold_start_ladder_alternates_abba_under_each_sides_tag(tmp_path):
    results = tmp_path / "coldstart"
    done = subprocess.run(
        [sys.executable, "-m", "bench.ab", "--env", f"a={sys.executable}", "--env",
         f"b={sys.executable}", "--group", "c1", "--repeats", "2", "--coldstart", "--workload",
         "matmul-128", "--results-dir", str(results), "--", "--shapes", "tiny", "--mode", "default",
         "--rung", "cold", "--cache-dir", str(tmp_path / "cache")],
        cwd=ROOT, env=bench_env(tmp_path), capture_output=True, text=True, timeout=900,
        stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr[-3000:]
    found = sorted(read_folder(results), key=lambda r: r.started_at)
    colds = [(ab.parse_tag(r.key.tag), r.repeat) for r in found if r.key.rung == "cold"]
    assert colds == [(("c1", "a"), 0), (("c1", "b"), 0), (("c1", "b"), 1), (("c1", "a"), 1)]
    assert [r.status for r in found] == ["ok"] * 4
    # Each side's process compiled into caches of its own, where its warm rung would look
    # (that a warm process hits them: tests/test_coldstart_bench.py); B's cold process
    # after A's found nothing of A's.
    assert all(r.counters.get("inductor.fxgraph_cache_hit", 0) == 0 for r in found)
    filled = {p.parent.name for p in (tmp_path / "cache").glob("*/*/cold") if any(p.iterdir())}
    assert len(filled) == 4 and {name.rsplit("-r", 1)[1] for name in filled} == {"0", "1"}
    assert all(any(r.key.tag in name for name in filled) for r in found)
    assert not (results / "bundles").exists()  # a side's bundle is not the one to publish
