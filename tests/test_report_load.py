"""Reading results files: valid records load, and every bad line names its file:line."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from fixtures import RESULTS, ROOT
from fixtures import make_results as fx

from report.load import ResultsError, load_results


def good_line(**changes) -> dict:
    data = json.loads(fx.ok_record(fx.ENV_A, "matmul-128", "eager", None).to_json())
    data.update(changes)
    return data


def write_lines(path, *lines: str):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def test_fixture_records_all_load_recursively():
    results = load_results(RESULTS)
    sources = {r.source.rsplit(":", 1)[0] for r in results}
    assert len(results) == sum(
        1 for p in RESULTS.rglob("*.jsonl") for line in p.read_text().splitlines() if line)
    assert any("older" in source for source in sources)  # found in a sub-folder


def test_missing_results_dir_is_empty(tmp_path):
    assert load_results(tmp_path / "no-such-dir") == []


def test_malformed_json_names_file_and_line(tmp_path):
    path = write_lines(tmp_path / "r" / "x.jsonl", json.dumps(good_line()), "", "{not json")
    with pytest.raises(ResultsError) as caught:
        load_results(tmp_path / "r")
    assert str(caught.value).startswith(f"{path}:3: not valid JSON")
    assert "\n" not in str(caught.value)


def error_of(results_dir) -> str:
    with pytest.raises(ResultsError) as caught:
        load_results(results_dir)
    return str(caught.value)


def test_missing_required_field_names_file_line_and_field(tmp_path):
    data = good_line()
    del data["timing"]["median_s"]
    path = write_lines(tmp_path / "x.jsonl", json.dumps(data))
    assert error_of(tmp_path) == f"{path}:1: missing required field 'timing.median_s'"


def test_wrong_type_is_rejected(tmp_path):
    data = good_line()
    data["key"]["batch_size"] = "one"
    path = write_lines(tmp_path / "x.jsonl", json.dumps(data))
    assert error_of(tmp_path).startswith(f"{path}:1: field 'key.batch_size' must be an integer")


def test_schema_version_mismatch_is_refused(tmp_path):
    path = write_lines(tmp_path / "x.jsonl", json.dumps(good_line(schema_version=2)))
    assert error_of(tmp_path) == (
        f"{path}:1: schema_version 2 is not supported (this reader knows 1)")


def test_unknown_status_is_refused(tmp_path):
    write_lines(tmp_path / "x.jsonl", json.dumps(good_line(status="crashed")))
    with pytest.raises(ResultsError, match="status 'crashed' is not one of"):
        load_results(tmp_path)


def test_env_backend_must_match_key_backend(tmp_path):
    data = good_line()
    data["env"]["backend"] = "cpu"
    write_lines(tmp_path / "x.jsonl", json.dumps(data))
    with pytest.raises(ResultsError, match="env.backend 'cpu' differs from key.backend 'cuda'"):
        load_results(tmp_path)


def test_probe_values_may_be_objects_but_summary_is_required(tmp_path):
    ok = good_line(extra={"probes": {"tf32-matmul": {"summary": "s", "value": {"a": 1.0}}}})
    bad = good_line(extra={"probes": {"tf32-matmul": {"value": 1}}})
    write_lines(tmp_path / "ok.jsonl", json.dumps(ok))
    assert load_results(tmp_path)[0].probes["tf32-matmul"]["value"] == {"a": 1.0}
    write_lines(tmp_path / "z.jsonl", json.dumps(bad))
    with pytest.raises(ResultsError, match=r"z\.jsonl:1: probe 'tf32-matmul' must be an object"):
        load_results(tmp_path)


def test_cli_prints_one_line_and_exits_nonzero_on_a_bad_line(tmp_path):
    results = tmp_path / "results"
    path = write_lines(results / "x.jsonl", json.dumps(good_line()), json.dumps([1, 2]))
    done = subprocess.run(
        [sys.executable, "-m", "report", "--results", str(results), "--docs", str(tmp_path / "d")],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode != 0
    assert done.stderr.strip().splitlines() == [f"{path}:2: expected a JSON object, got list"]
    assert "Traceback" not in done.stderr


def test_invalid_utf8_names_its_line(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_bytes(json.dumps(good_line()).encode() + b"\n\xff\xfe\n")
    assert error_of(tmp_path).startswith(f"{path}:2: 'utf-8' codec can't decode")
