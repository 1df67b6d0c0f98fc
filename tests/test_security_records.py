"""Impossible values are refused where a record is read, with file:line; names whose pages
would be one file on a case-insensitive disk are refused in one line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from fixtures import ROOT
from fixtures import make_results as fx

from report import analysis
from report.analysis import ResultsError
from report.build import build


def record_dict(workload="matmul-128", mode="default", **changes) -> dict:
    """A record of the fixture's matmul-128, named `workload`."""
    data = json.loads(fx.ok_record(fx.ENV_A, "matmul-128", mode, None).to_json())
    data["key"]["workload"] = workload
    data.update(changes)
    return data


def write_records(path: Path, *records: dict) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


IMPOSSIBLE = {
    "cpu-ops-minus-3": (lambda d: d["activity"].update(cpu_ops_per_call=-3.0),
                        "activity.cpu_ops_per_call -3 is negative"),
    "parameters-minus-5": (lambda d: d["workload_info"].update(parameters=-5),
                           "workload_info.parameters -5 is negative"),
    "flops-minus-10": (lambda d: d["workload_info"].update(flops=-10),
                       "workload_info.flops -10 is negative"),
    "rel-error-minus-1": (lambda d: d["correctness"].update(rel_error=-1.0),
                          "correctness.rel_error -1 is negative"),
    "tolerance-minus-1": (lambda d: d["correctness"].update(tolerance=-1.0),
                          "correctness.tolerance -1 is negative"),
    "started-in-9999": (lambda d: d.update(started_at="9999-01-01T00:00:00+00:00"),
                        "started_at 9999-01-01T00:00:00+00:00 is outside 2000 to 2200"),
    "started-in-0001": (lambda d: d.update(started_at="0001-01-01T00:00:00+00:00"),
                        "is outside 2000 to 2200"),
    "duration-1.8e16": (lambda d: d.update(duration_s=1.8e16),
                        "duration_s 1.8e+16 is more than a year"),
}


@pytest.mark.parametrize("case", IMPOSSIBLE, ids=IMPOSSIBLE.keys())
def test_an_impossible_value_is_refused_with_file_and_line(tmp_path, case):
    refused_with_file_and_line(tmp_path / "r" / "impossible.jsonl", *IMPOSSIBLE[case])


def refused_with_file_and_line(path, spoil, phrase: str) -> None:
    """A results file whose second record `spoil` made impossible: the load stops on one
    line naming the file, the line and `phrase`."""
    data = record_dict()
    spoil(data)
    path = write_records(path, record_dict(mode="eager"), data)
    with pytest.raises(ResultsError) as caught:
        analysis.load(path.parent)
    message = str(caught.value)
    assert message.startswith(f"{path}:2: malformed record: ")
    assert phrase in message and "\n" not in message


@pytest.mark.slow
@pytest.mark.parametrize("case", ["cpu-ops-minus-3", "started-in-9999", "duration-1.8e16"])
def test_the_render_of_an_impossible_value_is_one_line_not_a_traceback(tmp_path, case):
    spoil, phrase = IMPOSSIBLE[case]
    data = record_dict()
    spoil(data)
    write_records(tmp_path / "r" / "impossible.jsonl", record_dict(mode="eager"), data)
    done = subprocess.run([sys.executable, "-m", "report", "--results", str(tmp_path / "r"),
                           "--docs", str(tmp_path / "docs")], cwd=ROOT, capture_output=True,
                          text=True, timeout=300, check=False,
                          env=os.environ | {"PYTHONWARNINGS": "ignore"})
    assert done.returncode == 1
    (line,) = done.stderr.splitlines()
    assert phrase in line


@pytest.mark.parametrize("names", [("Trivial-call", "trivial-call"),
                                   ("matmul-128", "MATMUL-128")])
def test_workloads_that_differ_only_in_case_are_refused_in_one_line(tmp_path, names):
    first, second = (record_dict(workload=name) for name in names)
    write_records(tmp_path / "r" / "a.jsonl", first)
    path = write_records(tmp_path / "r" / "b.jsonl", second)
    with pytest.raises(ResultsError) as caught:
        build(tmp_path / "r", tmp_path / "docs")
    message = str(caught.value)
    assert message.startswith(f"{path}:1: workload {names[1]!r} differs from {names[0]!r}")
    assert "case-insensitive" in message and "\n" not in message
    assert not (tmp_path / "docs").exists()


def test_profiles_that_differ_only_in_case_are_refused(tmp_path):
    write_records(tmp_path / "r" / "a.jsonl", record_dict(profile="Full"),
                  record_dict(mode="eager", profile="full"))
    with pytest.raises(ResultsError, match="profile 'full' differs from 'Full'"):
        build(tmp_path / "r", tmp_path / "docs")


def test_names_that_differ_in_more_than_case_still_render(tmp_path):
    write_records(tmp_path / "r" / "a.jsonl", record_dict(workload="matmul-128"),
                  record_dict(workload="matmul-256"))
    site = build(tmp_path / "r", tmp_path / "docs")
    assert (tmp_path / "docs" / "workloads" / "matmul-256.md") in site.written


HUGE = {  # D4y: integers past a signed 64-bit column, where the report's DataFrame broke
    "parameters-2^63": (lambda d: d["workload_info"].update(parameters=2**63),
                        "workload_info.parameters: 9223372036854775808 is outside"),
    "peak-rss-2^64": (lambda d: d["memory"].update(peak_rss_bytes=2**64),
                      "memory.peak_rss_bytes: 18446744073709551616 is outside"),
    "batch-size-2^63": (lambda d: d["key"].update(batch_size=2**63),
                        "key.batch_size: 9223372036854775808 is outside"),
    "shape-2^63": (lambda d: d["workload_info"].update(input_shapes=[[2**63, 8]]),
                   "workload_info.input_shapes[0][0]: 9223372036854775808 is outside"),
    "figure-10^400": (lambda d: d["probes"].append({"name": "p", "summary": "s", "outcome": None,
                                                    "figures": {"v": 10**400}}),
                      "probes[0].figures.v: an integer of 401 digits is outside"),
}


@pytest.mark.parametrize("case", HUGE, ids=HUGE.keys())
def test_an_integer_past_64_bits_is_refused_with_file_and_line(tmp_path, case):
    refused_with_file_and_line(tmp_path / "r" / "huge.jsonl", *HUGE[case])


def test_the_largest_64_bit_integer_is_still_read(tmp_path):
    data = record_dict()
    data["workload_info"]["parameters"] = 2**63 - 1
    write_records(tmp_path / "r" / "edge.jsonl", data)
    assert analysis.load(tmp_path / "r")["parameters"].iloc[0] == 2**63 - 1


@pytest.mark.slow
@pytest.mark.parametrize("command", [["report"], ["report", "compare", "{r}", "{r}"],
                                     ["report", "export", "{out}"]],
                         ids=["render", "compare", "export"])
def test_every_report_command_refuses_a_huge_integer_in_one_line(tmp_path, command):
    data = record_dict()
    data["workload_info"]["parameters"] = 2**63
    results = tmp_path / "r"
    path = write_records(results / "huge.jsonl", record_dict(mode="eager"), data)
    words = [w.format(r=results, out=tmp_path / "out") for w in command]
    done = subprocess.run([sys.executable, "-m", *words, "--results", str(results),
                           *(["--docs", str(tmp_path / "docs")] if command == ["report"] else [])],
                          cwd=ROOT, capture_output=True, text=True, timeout=300, check=False,
                          env=os.environ | {"PYTHONWARNINGS": "ignore"})
    assert done.returncode != 0
    (line,) = done.stderr.splitlines()
    assert f"{path}:2: malformed record: workload_info.parameters: 9223372036854775808" in line
