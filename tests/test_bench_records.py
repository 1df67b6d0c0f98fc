"""Results files: records round-trip, bad lines name file:line, appends never tear."""

from __future__ import annotations

import contextlib
import json
import multiprocessing
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from bench_helpers import ROOT, child_pids, line_count, make_record, only_results_file, records
from bench_helpers.appender import append_many

from bench.records import (
    SCHEMA_VERSION,
    MalformedRecord,
    Record,
    append_record,
    read_records,
    record_from_dict,
)


def write_lines(path, *lines: str):
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def good_line(**changes) -> str:
    data = json.loads(make_record().to_json())
    data.update(changes)
    return json.dumps(data)


def test_record_round_trips_through_json():
    record = make_record()
    assert record_from_dict(json.loads(record.to_json())) == record


def test_to_json_writes_sorted_keys_on_one_line():
    text = make_record().to_json()
    assert "\n" not in text
    data = json.loads(text)
    assert list(data) == sorted(data)
    assert list(data["env"]) == sorted(data["env"])


def test_to_json_refuses_nan():
    with pytest.raises(ValueError):
        make_record(extra={"x": float("nan")}).to_json()


def test_unknown_status_is_refused_when_built():
    with pytest.raises(ValueError, match="status 'great'"):
        Record(**{**make_record().__dict__, "status": "great"})


def test_good_file_reads_back_every_record(tmp_path):
    path = write_lines(tmp_path / "r.jsonl", good_line(), "", good_line())
    assert records(path) == [make_record(), make_record()]


def test_garbage_line_names_file_and_line(tmp_path):
    path = write_lines(tmp_path / "r.jsonl", good_line(), "not json {")
    with pytest.raises(MalformedRecord, match=f"^{path}:2: "):
        records(path)


def test_wrong_schema_version_names_file_and_line(tmp_path):
    path = write_lines(tmp_path / "r.jsonl", good_line(schema_version=SCHEMA_VERSION + 1))
    with pytest.raises(MalformedRecord, match=f"^{path}:1: .*schema_version 2"):
        records(path)


def test_unknown_status_in_file_names_file_and_line(tmp_path):
    path = write_lines(tmp_path / "r.jsonl", good_line(), good_line(), good_line(status="great"))
    with pytest.raises(MalformedRecord, match=f"^{path}:3: .*status 'great'"):
        records(path)


def test_missing_field_names_file_and_line(tmp_path):
    data = json.loads(good_line())
    del data["env_id"]
    path = write_lines(tmp_path / "r.jsonl", json.dumps(data))
    with pytest.raises(MalformedRecord, match=f"^{path}:1: .*env_id"):
        records(path)


def test_append_creates_the_file_and_its_folder(tmp_path):
    path = tmp_path / "new" / "r.jsonl"
    append_record(path, make_record())
    assert records(path) == [make_record()]
    assert path.read_bytes().endswith(b"\n")


def test_concurrent_appends_leave_only_complete_lines(tmp_path):
    path = tmp_path / "r.jsonl"
    workers, each = 4, 25
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(workers)
    processes = [context.Process(target=append_many, args=(str(path), n, each, barrier))
                 for n in range(workers)]
    for process in processes:
        process.start()
    for process in processes:
        process.join(timeout=120)
        assert process.exitcode == 0
    assert line_count(path) == workers * each
    found = records(path)
    assert sorted(r.key.tag for r in found) == sorted(
        f"w{w}-{n}" for w in range(workers) for n in range(each))


def test_torn_last_line_is_dropped_on_next_append(tmp_path):
    path = tmp_path / "r.jsonl"
    append_record(path, make_record(tag="first"))
    with open(path, "ab") as out:
        out.write(make_record(tag="torn").to_json()[:200].encode())  # no newline
    append_record(path, make_record(tag="second"))
    assert [r.key.tag for r in records(path)] == ["first", "second"]


def test_torn_only_line_is_dropped_on_next_append(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_bytes(b'{"schema_version": 1, "ke')
    append_record(path, make_record())
    assert records(path) == [make_record()]


def case_scratch_dir(pid: int) -> Path | None:
    """The atlas-case-* folder of a `python -m bench.case SPEC RESULT` process."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
    except OSError:
        return None
    if "bench.case" not in argv:
        return None
    folder = Path(argv[argv.index("bench.case") + 1]).parent
    return folder if folder.name.startswith("atlas-case-") else None


def test_run_killed_mid_run_leaves_only_complete_lines(tmp_path):
    results = tmp_path / "results"
    # four cases: eager ones each run a case process, cuda-graph ones are recorded at once
    command = [sys.executable, "-m", "bench", "--shapes", "tiny", "--results-dir", str(results),
               "--workload", "trivial-call", "--workload", "matmul-128", "--mode", "eager",
               "--mode", "cuda-graph", "--budget", "0.02"]
    run = subprocess.Popen(command, cwd=ROOT, start_new_session=True, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    case_processes = []
    try:
        deadline = time.monotonic() + 120
        while not any(line_count(p) for p in results.glob("*.jsonl")):
            assert run.poll() is None, "the run ended before it could be killed"
            assert time.monotonic() < deadline, "no record within 120 s"
            time.sleep(0.05)
        os.killpg(run.pid, signal.SIGSTOP)  # freeze it, so no new case process starts
        case_processes = {pid: case_scratch_dir(pid) for pid in child_pids(run.pid)}
        os.killpg(run.pid, signal.SIGKILL)
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
        run.wait()
        # Case processes run in sessions of their own, and the killed runner cannot end
        # them or remove their scratch folders, so the test does.
        for pid, scratch in case_processes.items():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)
            if scratch is not None:
                shutil.rmtree(scratch, ignore_errors=True)
    path = only_results_file(results)
    assert path.read_bytes().endswith(b"\n")
    found = list(read_records(path))
    assert 1 <= len(found) < 4
    assert line_count(path) == len(found)


@pytest.mark.parametrize("line", ["[1, 2]", '{"schema_version": 1, "key": [1]}'])
def test_json_that_is_not_a_record_object_names_file_and_line(tmp_path, line):
    path = write_lines(tmp_path / "r.jsonl", good_line(), line)
    with pytest.raises(MalformedRecord, match=rf"^{re.escape(str(path))}:2: "):
        list(read_records(path))
