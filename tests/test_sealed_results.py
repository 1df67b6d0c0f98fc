"""Sealed results files (`gzip -9n` of a finished .jsonl): the report, the pages' loader and a
resumed run read them as the open file they came from; a damaged or oversized one is one
line naming the file."""

from __future__ import annotations

import gzip
import subprocess
import sys

import pytest
from fixtures import ROOT
from fixtures import make_results as fx

from bench import records, runner
from bench.records import MalformedRecord, read_records, results_files
from report import analysis
from report.analysis import ResultsError


def seal(path):
    subprocess.run(["gzip", "-9n", str(path)], check=True)
    return path.with_name(path.name + ".gz")


def some_records():
    return fx.environment_records(fx.ENV_A)[:12]


def test_a_sealed_file_loads_the_rows_of_the_open_file(tmp_path):
    open_dir, sealed_dir = tmp_path / "open", tmp_path / "sealed"
    fx.write(open_dir / "a.jsonl", some_records())
    sealed = seal(fx.write(sealed_dir / "a.jsonl", some_records()))
    assert not (sealed_dir / "a.jsonl").exists() and sealed.stat().st_size > 0

    plain, packed = analysis.load(open_dir), analysis.load(sealed_dir)
    assert len(packed) == 12
    assert packed["source"].str.match(r".*a\.jsonl\.gz:\d+$").all()
    columns = [c for c in plain.columns if c != "source"]
    assert plain[columns].astype(str).equals(packed[columns].astype(str))


def test_both_kinds_are_found_and_an_open_file_beside_a_sealed_one_adds_to_it(tmp_path):
    first, second = some_records()[:6], some_records()[6:]
    seal(fx.write(tmp_path / "env.jsonl", first))
    fx.write(tmp_path / "env.jsonl", second)  # a later run appends to a new open file
    fx.write(tmp_path / "deeper" / "other.jsonl", first)
    assert [p.name for p in results_files(tmp_path)] == ["env.jsonl", "env.jsonl.gz"]
    assert len(results_files(tmp_path, recursive=True)) == 3
    assert len(analysis.load(tmp_path)) == 18


def test_a_resumed_run_counts_sealed_records_as_done(tmp_path):
    env = fx.ENV_A
    done = some_records()
    fx.write(runner.results_path(tmp_path / "open", env), done)
    seal(fx.write(runner.results_path(tmp_path / "sealed", env), done))
    assert len(list(runner._own_records(tmp_path / "sealed", env))) == len(done)
    from_sealed = runner.recorded(tmp_path / "sealed", env)
    assert from_sealed.isolated
    assert from_sealed == runner.recorded(tmp_path / "open", env)


def test_concatenated_members_read_as_one_file(tmp_path):
    lines = [r.to_json() + "\n" for r in some_records()]
    path = tmp_path / "two.jsonl.gz"
    path.write_bytes(gzip.compress("".join(lines[:5]).encode())
                     + gzip.compress("".join(lines[5:]).encode()))
    assert len(list(read_records(path))) == 12


@pytest.mark.parametrize("content, words", [
    (b"not gzip at all\n", "not a sealed results file"),
    (gzip.compress(b"x" * 4000, mtime=0)[:-30], "not a sealed results file"),  # cut short
], ids=["not-gzip", "cut-short"])
def test_a_damaged_sealed_file_is_one_line_naming_it(tmp_path, content, words):
    (tmp_path / "bad.jsonl.gz").write_bytes(content)
    with pytest.raises(ResultsError) as caught:
        analysis.load(tmp_path)
    message = str(caught.value)
    assert "\n" not in message and "bad.jsonl.gz" in message and words in message


def test_a_sealed_file_that_unpacks_too_far_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(records, "SEALED_MAX_BYTES", 1000)
    path = tmp_path / "bomb.jsonl.gz"
    path.write_bytes(gzip.compress(b"\n" * 5000))
    with pytest.raises(MalformedRecord, match=r"bomb\.jsonl\.gz: unpacks to over"):
        list(read_records(path))
    path.write_bytes(gzip.compress(b"\n" * 1000))  # at the limit is read
    assert list(read_records(path)) == []


def test_the_report_command_builds_from_sealed_files(tmp_path):
    results = tmp_path / "results"
    seal(fx.write(results / "cuda-a.jsonl", fx.environment_records(fx.ENV_A)))
    done = subprocess.run([sys.executable, "-m", "report", "export", str(tmp_path / "out"),
                           "--results", str(results)],
                          cwd=ROOT, capture_output=True, text=True, check=False, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "h100-a" in (tmp_path / "out" / "speedups.csv").read_text()
