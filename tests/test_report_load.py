"""Reading results: the report reads records only through bench.records, so a bad line is
one `file:line:` message and exit 1, a torn last line is skipped with a warning, and the
committed v1 files load through the upgrade path. Nothing here imports torch."""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
import time

import pandas as pd
import pytest
from fixtures import RESULTS, ROOT
from fixtures import make_results as fx

from bench.records import SCHEMA_VERSION
from report import analysis
from report.analysis import ResultsError, loading

V1_FILES = {"cpu-reference-cpu-torch2.13.0-cpu-8af095daf5ca.jsonl": 270,
            "cuda-lent-gpu-torch2.11.0-cu130-508cb9f520b5.jsonl": 251}


def good_line(**changes) -> dict:
    data = json.loads(fx.ok_record(fx.ENV_A, "matmul-128", "eager", None).to_json())
    data.update(changes)
    return data


def write_lines(path, *lines: str, end: str = "\n"):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(line + end for line in lines), encoding="utf-8")
    return path


def error_of(results_dir) -> str:
    with pytest.raises(ResultsError) as caught:
        analysis.load(results_dir)
    assert "\n" not in str(caught.value)
    return str(caught.value)


def cli(results, docs) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "report", "--results", str(results), "--docs", str(docs)],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)


def test_fixture_records_all_load_recursively_one_row_each():
    records = analysis.load(RESULTS)
    assert len(records) == sum(
        1 for p in RESULTS.rglob("*.jsonl") for line in p.read_text().splitlines() if line)
    assert records["source"].str.contains("older").any()  # found in a sub-folder
    assert records["source"].str.match(r".*\.jsonl:\d+$").all()


def test_missing_results_dir_is_empty(tmp_path):
    assert analysis.load(tmp_path / "no-such-dir").empty


def test_a_line_number_survives_blank_lines(tmp_path):
    path = write_lines(tmp_path / "x.jsonl", json.dumps(good_line()), "",
                       json.dumps(good_line(duration_s=3.0)))
    assert list(analysis.load(tmp_path)["source"]) == [f"{path}:1", f"{path}:3"]


def test_every_record_field_is_a_column():
    """A field added to a record appears as a column without any change to report/."""
    import dataclasses
    import typing

    from bench.records import Record
    columns = set(analysis.load(RESULTS).columns)
    hints = typing.get_type_hints(Record)
    for f in dataclasses.fields(Record):
        section = analysis._is_section(hints[f.name])
        names = [g.name for g in dataclasses.fields(section)] if section else [f.name]
        for name in names:
            assert analysis.RENAMED.get((f.name, name), name) in columns, (f.name, name)


def mutate(change) -> dict:
    data = good_line()
    change(data)
    return data


@pytest.mark.parametrize("name,change,message", [
    ("unknown field", lambda d: d.update(surprise=1), "unknown field(s) surprise"),
    ("median of zero", lambda d: d["timing"].update(median_s=0.0), "0 or below"),
    ("median outside the quartiles",
     lambda d: d["timing"].update(median_s=d["timing"]["q3_s"] * 2), "need min <= q1 <= median"),
    ("negative sample", lambda d: d["timing"]["samples"].__setitem__(0, -1.0), "0 or below"),
    ("null timing", lambda d: d.update(timing=None), "an ok record has no timing"),
    ("wrong type", lambda d: d["key"].update(batch_size="one"), "key.batch_size"),
    ("other backend", lambda d: d["env"].update(backend="cpu"), "differs from key.backend"),
    ("unknown version", lambda d: d.update(schema_version=SCHEMA_VERSION + 1),
     f"schema_version {SCHEMA_VERSION + 1}"),
])
def test_a_malformed_record_names_its_file_and_line(tmp_path, name, change, message):
    path = write_lines(tmp_path / "x.jsonl", json.dumps(good_line()),
                       json.dumps(mutate(change)))
    error = error_of(tmp_path)
    assert error.startswith(f"{path}:2: "), error
    assert message in error, error


def test_nan_is_refused(tmp_path):
    line = json.dumps(good_line()).replace('"rel_error": 1e-07', '"rel_error": NaN')
    assert "NaN" in line
    path = write_lines(tmp_path / "x.jsonl", line)
    assert error_of(tmp_path).startswith(f"{path}:1: ")


def test_invalid_utf8_names_its_line(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_bytes(json.dumps(good_line()).encode() + b"\n\xff\xfe\n")
    assert "utf-8" in error_of(tmp_path) and error_of(tmp_path).startswith(f"{path}:2: ")


def test_bad_json_names_its_line(tmp_path):
    path = write_lines(tmp_path / "x.jsonl", json.dumps(good_line()), "{not json")
    assert error_of(tmp_path).startswith(f"{path}:2: ")


def test_a_torn_last_line_is_skipped_with_a_warning(tmp_path):
    torn = json.dumps(good_line())[:-20]
    path = tmp_path / "x.jsonl"
    path.write_text(json.dumps(good_line()) + "\n" + torn, encoding="utf-8")
    warnings = []
    assert len(analysis.load(tmp_path, warn=warnings.append)) == 1
    assert len(warnings) == 1 and warnings[0].startswith(f"{path}:2: skipping an unfinished")


@pytest.mark.slow
@pytest.mark.parametrize("line", [b"{not json", b"\xff\xfe", b'{"schema_version": 2, "x": NaN}',
                                  b"[1, 2]"])
def test_cli_prints_one_line_and_exits_1_on_a_bad_line(tmp_path, line):
    results = tmp_path / "results"
    path = results / "x.jsonl"
    results.mkdir()
    path.write_bytes(json.dumps(good_line()).encode() + b"\n" + line + b"\n")
    done = cli(results, tmp_path / "d")
    assert done.returncode == 1
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert done.stderr.startswith(f"{path}:2: malformed record")
    assert "Traceback" not in done.stderr


@pytest.mark.slow
def test_cli_builds_past_a_torn_last_line_with_a_warning(tmp_path):
    results = tmp_path / "results"
    fx.write(results / "r.jsonl", [fx.ok_record(fx.ENV_A, "matmul-128", "eager", None)])
    with open(results / "r.jsonl", "a", encoding="utf-8") as f:
        f.write('{"schema_version": 2, "key"')
    done = cli(results, tmp_path / "docs")
    assert done.returncode == 0, done.stderr
    assert "skipping an unfinished last line" in done.stderr


@pytest.mark.slow
def test_loading_and_building_the_report_never_imports_torch(fixture_root, tmp_path):
    # Into a copy of the fixture site's docs: its charts are current, so none is drawn
    # again (they are drawn in child processes, which this check does not see anyway).
    shutil.copytree(fixture_root / "docs", tmp_path / "docs")
    code = ("import sys; import report; from report.build import build; "
            f"build({str(RESULTS)!r}, {str(tmp_path / 'docs')!r}); "
            "from report import formatting, ledger; "
            "assert 'torch' not in sys.modules, 'torch was imported'; print('ok')")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=300, check=False)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


def test_the_committed_v1_files_load_through_the_upgrade_path():
    """Picked by name, so new results files do not change the counts."""
    for name in V1_FILES:
        assert (ROOT / "results" / name).is_file(), name
    records = pd.concat([analysis.load_file(ROOT / "results" / name) for name in V1_FILES],
                        ignore_index=True)
    by_file = records["source"].map(lambda s: s.rsplit("/", 1)[-1].split(":")[0])
    assert by_file.value_counts().to_dict() == V1_FILES
    assert (records["schema_version"] == SCHEMA_VERSION).all()
    assert (records["process_timing"] == "isolated").all() and records["group"].isna().all()
    assert (records["repeats"] == 1).all() and (records["cache"] == "cold").all()
    assert set(records.loc[records["ok"], "reference"]) == {"eager"}
    eager = records[records["mode"] == "eager"]
    assert not eager["compiled"].any() and not eager["cuda_graphs"].any()
    graph = records[records["mode"] == "cuda-graph"]
    assert graph["cuda_graphs"].all() and not graph["compiled"].any()
    assert set(records.loc[records["backend"] == "cuda", "device_name"]) == {"NVIDIA H200"}
    assert set(records.loc[records["backend"] == "cpu", "torch"]) == {"2.13.0+cpu"}
    assert set(records["tag"]) == {"main", "rerun-1"}
    probes = analysis.probes(analysis.latest(records))
    assert "held-output-overwrite" in set(probes["probe"])
    assert not math.isnan(records["median_s"].max())


# ---- the parsed-rows cache ---------------------------------------------------------------

@pytest.fixture
def rows_cache(tmp_path, monkeypatch):
    cache = tmp_path / "rows-cache"
    monkeypatch.setattr(loading, "ROWS_CACHE", cache)
    return cache


def test_a_results_file_is_parsed_once_per_content_wherever_it_sits(tmp_path, rows_cache):
    first = write_lines(tmp_path / "a" / "r.jsonl", json.dumps(good_line()), "",
                        json.dumps(good_line()))
    parsed = analysis.load(tmp_path / "a")
    assert len(list(rows_cache.glob("*.pickle"))) == 1
    copy = tmp_path / "b" / "r.jsonl"
    copy.parent.mkdir()
    shutil.copy(first, copy)
    cached = analysis.load(tmp_path / "b")
    assert len(list(rows_cache.glob("*.pickle"))) == 1  # the copy was read from the cache
    assert list(cached["source"]) == [f"{copy}:1", f"{copy}:3"]
    assert cached.drop(columns="source").equals(parsed.drop(columns="source"))


def test_a_changed_results_file_is_parsed_again(tmp_path, rows_cache):
    path = write_lines(tmp_path / "r.jsonl", json.dumps(good_line()))
    assert len(analysis.load(tmp_path)) == 1
    write_lines(path, json.dumps(good_line()), json.dumps(good_line()))
    assert len(analysis.load(tmp_path)) == 2


def test_a_torn_last_line_warns_at_every_load(tmp_path, rows_cache):
    (tmp_path / "r.jsonl").write_text(json.dumps(good_line()) + '\n{"torn', encoding="utf-8")
    for _ in range(2):
        warnings = []
        assert len(analysis.load(tmp_path, warn=warnings.append)) == 1
        assert len(warnings) == 1
    assert not list(rows_cache.glob("*.pickle"))


def test_a_cache_entry_no_build_read_for_two_weeks_is_removed(tmp_path, rows_cache):
    write_lines(tmp_path / "old" / "r.jsonl", json.dumps(good_line()))
    analysis.load(tmp_path / "old")
    (stale,) = rows_cache.glob("*.pickle")
    weeks_ago = time.time() - (analysis.ROWS_CACHE_DAYS + 1) * 86400
    os.utime(stale, (weeks_ago, weeks_ago))
    write_lines(tmp_path / "new" / "r.jsonl", json.dumps(good_line()), json.dumps(good_line()))
    analysis.load(tmp_path / "new")
    assert not stale.exists()
    assert len(list(rows_cache.glob("*.pickle"))) == 1


def test_the_rows_cache_is_in_the_checkout_wherever_the_report_runs(tmp_path):
    """Run from another folder, a build leaves no `.cache/` there: the cache is anchored at
    the repository, as bench's caches are."""
    code = f"from report.analysis import load; load({str(RESULTS)!r})"
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120, check=False,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr[-2000:]
    assert not (tmp_path / ".cache").exists()
    assert loading.ROWS_CACHE.is_relative_to(ROOT)


def test_what_an_upgrade_drops_is_a_warning_naming_file_and_line_at_every_load(tmp_path):
    data = json.loads(fx.v1_line(fx.ok_record(fx.ENV_A, "matmul-128", "default", None)))
    data["extra"]["fan_rpm"] = 3000
    path = write_lines(tmp_path / "r" / "v1.jsonl", json.dumps(good_line()), json.dumps(data))
    for _ in range(2):  # a file that warns is never served from the rows cache
        warnings = []
        assert len(analysis.load(tmp_path / "r", warn=warnings.append)) == 2
        assert warnings == [f"{path}:2: schema version 1's extra.fan_rpm has no field in "
                            f"version {SCHEMA_VERSION}; dropped"]
