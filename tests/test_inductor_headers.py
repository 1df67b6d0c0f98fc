"""Inductor's precompiled headers: kept from one process to the next in a folder proved the
user's own (never a shared temp folder), each record saying whether its first calls built
them, and a case's cold first call never mixing processes that built them with ones that
found them built."""

from __future__ import annotations

import json
import shutil
import stat
from pathlib import Path

import pytest
from bench_helpers import bench_env, run_bench
from fixtures import ROOT

from bench import pool
from bench.records import parse_line, read_records
from report import analysis


def _link_in(env: dict[str, str]) -> Path:
    return Path(env["TMPDIR"]) / f"torchinductor_{pool._inductor_user()}" / "precompiled_headers"


def test_a_case_links_its_header_folder_to_one_folder_of_ours(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    folder = pool.header_folder()
    assert folder == tmp_path / "cache" / "torch-compile-atlas" / "inductor-headers"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    for name in ("one", "two"):  # every case process finds the same folder
        (tmp_path / name).mkdir()
        assert _link_in(pool.private_temp(tmp_path / name)).resolve() == folder.resolve()


@pytest.mark.parametrize("planted", ["cache writable by all", "folder writable by all",
                                     "folder is a link"])
def test_a_header_folder_others_could_have_written_is_not_used(tmp_path, monkeypatch, planted):
    cache = tmp_path / "cache"
    folder = cache / "torch-compile-atlas" / "inductor-headers"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    folder.parent.mkdir(parents=True, mode=0o700)
    if planted == "cache writable by all":
        cache.chmod(0o777)
    elif planted == "folder writable by all":
        folder.mkdir(mode=0o700)
        folder.chmod(0o777)
    else:
        folder.symlink_to(elsewhere, target_is_directory=True)
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    assert pool.header_folder() is None
    (tmp_path / "scratch").mkdir()
    env = pool.private_temp(tmp_path / "scratch")
    assert not _link_in(env).exists()  # the case builds its own, in its private folder


def test_inductor_spells_the_user_name_as_the_link_does(tmp_path, monkeypatch):
    import tempfile

    from torch._inductor.runtime.cache_dir_utils import default_cache_dir

    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)
    assert Path(default_cache_dir()) == tmp_path / f"torchinductor_{pool._inductor_user()}"


def test_an_older_record_does_not_say_whether_it_built_headers():
    """A version 8 record of a compiled CPU process, from the results this site is built
    from: upgraded, it says nothing of the headers (its code did not look)."""
    lines = (ROOT / "results" / "cpu-atlas-cpu-torch2.12.1-cu130-9904f6a3ef0c.jsonl").read_text()
    older = next(line for line in lines.splitlines() if '"schema_version": 8' in line
                 and '"cold_first_call_s": 1' in line)
    record = parse_line(older.encode())
    assert record.schema_version == 9 and record.compile.cold_first_call_s > 0
    assert record.compile.headers_built is None


@pytest.mark.slow
def test_the_first_cold_process_builds_the_headers_and_the_next_finds_them(tmp_path):
    """Two runs of one case, each with empty compile caches, in an empty cache home: the
    first process's first call builds the headers, the second's finds them; the case's cold
    first call is the second's alone."""
    env = bench_env(tmp_path) | {"XDG_CACHE_HOME": str(tmp_path / "home-cache")}
    for run in ("first", "second"):
        done = run_bench("--backend", "cpu", "--shapes", "tiny", "--mode", "default",
                         "--workload", "mlp", "--profile", "full", "--batch-size", "1",
                         "--timing", "isolated", "--repeats", "1",
                         "--results-dir", str(tmp_path / run),
                         "--cache-dir", str(tmp_path / f"cache-{run}"), env=env)
        assert done.returncode == 0, done.stderr[-3000:]
        [written] = (tmp_path / run).glob("*.jsonl")  # both runs' records in one folder
        (tmp_path / "results").mkdir(exist_ok=True)
        shutil.copy(written, tmp_path / "results" / f"{written.stem}-{run}.jsonl")
    records = [r for run in ("first", "second") for f in (tmp_path / run).glob("*.jsonl")
               for r in read_records(f)]
    assert [r.process.cache for r in records] == ["cold", "cold"]
    first, second = (r.compile.headers_built for r in records)
    assert first >= 1 and second == 0  # one header per set of compile flags the kernels use
    assert any((tmp_path / "home-cache" / "torch-compile-atlas" / "inductor-headers")
               .glob("*.gch"))
    case = analysis.cases(analysis.load(tmp_path / "results"))
    assert list(case["cold_first_call_s"]) == [records[1].compile.cold_first_call_s]


def test_the_cold_figure_falls_back_to_processes_that_built_headers_only_when_alone():
    import pandas as pd

    def frame(built: list) -> pd.DataFrame:
        n = len(built)
        return pd.DataFrame({"env_id": ["e"] * n, "workload": ["w"] * n, "mode": ["m"] * n,
                             "batch_size": [1] * n, "shapes": ["seed"] * n,
                             analysis.DTYPE: ["float32"] * n, "cache": ["cold"] * (n - 1) + ["warm"],
                             "headers_built": built})
    assert analysis.counted_cold(frame([1, 0, None, 0])).tolist() == [False, True, True, False]
    assert analysis.counted_cold(frame([1, 2, 0])).tolist() == [True, True, False]
    assert analysis.counted_cold(frame([None, None])).tolist() == [True, False]


def test_a_stream_total_leaves_out_the_process_that_built_the_headers(tmp_path):
    """Three CPU processes of one shape stream from the site's results, one of them marked as
    having built the headers in its first pass: the page reads the other two."""
    from report.shapes.data import stream_records

    source = ROOT / "results" / "cpu-atlas-cpu-torch2.15.0-cu132-becf3a7da63f.jsonl"
    lines = [line for line in source.read_text().splitlines()
             if '"workload": "mlp-batches"' in line and '"mode": "default"' in line
             and '"tag": "main"' in line and '"status": "ok"' in line][:3]
    assert len(lines) == 3
    marked = json.loads(lines[0])
    marked["compile"]["headers_built"] = 1
    marked["schema_version"] = 9
    (tmp_path / source.name).write_text("\n".join([json.dumps(marked), *lines[1:]]) + "\n")
    found = stream_records(analysis.load(tmp_path))
    assert len(found) == 2 and set(found["headers_built"].fillna(0)) == {0}
    assert marked["started_at"] not in set(found["started_at"])


def test_a_cold_start_rung_leaves_out_the_process_that_built_the_headers():
    """The cold rung of one case: the process that built the headers (30 s) beside two that
    found them (20 s, 22 s) gives 21 s and still counts three ok processes; a rung whose
    every process built them keeps them all."""
    from test_coldstart_page import H100, record

    from report.coldstart.data import summarize

    eager = [record(H100, "eager", 1.0, 0.01)]
    mixed = [record(H100, "cold", 30.0, 0.005, repeat=0, headers_built=1),
             record(H100, "cold", 20.0, 0.005, repeat=1, headers_built=0),
             record(H100, "cold", 22.0, 0.005, repeat=2, headers_built=None)]
    rung = summarize(mixed, eager)
    assert (rung.ok, rung.first_call.median) == (3, 21.0)
    alone = [record(H100, "cold", 30.0, 0.005, repeat=r, headers_built=1) for r in range(2)]
    assert summarize(alone, eager).first_call.median == 30.0
