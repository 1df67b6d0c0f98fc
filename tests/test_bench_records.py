"""The record layer: one schema that bench and report share, and the faults an append-only
log must survive (short writes, torn tails, bad bytes, impossible timings)."""

from __future__ import annotations

import dataclasses
import json
import multiprocessing
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from bench import records as records_module
from bench.records import (
    SCHEMA_VERSION,
    Activity,
    CaseKey,
    CompileTimes,
    Correctness,
    DynamoCounters,
    Environment,
    MalformedRecord,
    Memory,
    ModeTraits,
    ProbeResult,
    Process,
    Record,
    RecordWriteError,
    Timing,
    WorkloadInfo,
    append_record,
    read_records,
    record_from_dict,
)
from bench.stats import summarize

ROOT = Path(__file__).resolve().parents[1]
V1_FILES = ("cpu-reference-cpu-torch2.13.0-cpu-8af095daf5ca.jsonl",
            "cuda-lent-gpu-torch2.11.0-cu130-508cb9f520b5.jsonl")

ENV = Environment(
    machine="test-box", backend="cpu", os="Linux-6.8", python="3.11.7", torch="2.13.0+cpu",
    torch_requested=None, triton=None, cuda_runtime=None, cudnn=None, driver=None,
    device_name="Test CPU", gpu_sm_count=None, gpu_memory_bytes=None, cpu_model="Test CPU",
    cpu_count=2, torch_threads=2, float32_matmul_precision="highest",
    cuda_matmul_allow_tf32=None, cudnn_allow_tf32=None,
    git_commit="0123456789abcdef0123456789abcdef01234567", git_dirty=False,
)
TRAITS = ModeTraits(compiled=True, cuda_graphs=False, autotune=False, dynamic=False,
                    description="torch.compile()")


def make_record(tag: str = "main", repeat: int = 0, reason: str | None = None) -> Record:
    samples = (2.0e-5, 2.2e-5, 2.1e-5, 2.5e-5, 1.9e-5)
    return Record(
        key=CaseKey("cpu", "matmul-128", "default", None, "tiny", tag),
        status="ok", reason=reason, profile="quick", env=ENV, env_id=ENV.env_id(),
        started_at="2025-01-01T00:00:00+00:00", duration_s=3.5,
        process=Process(repeat=repeat, repeats=3, run_id="run-1", gpu=None, workers=1,
                        parent_import_s=1.5, cache="cold" if repeat == 0 else "warm"),
        mode_traits=TRAITS,
        workload_info=WorkloadInfo("matmul", "a @ b", ((8, 8), (8, 8)), "torch.float32",
                                   1024, 768, 0),
        timing=Timing(samples=samples, calls_per_sample=4, warmup_calls=100,
                      wall_per_call_s=2.2e-5, timer="perf-counter", **summarize(samples)),
        compile=CompileTimes(0.8, 0.05, (0.8, 1e-4, 5e-5)),
        memory=Memory(None, 300_000_000),
        activity=Activity(5, None, None, None, 1.0, None, None),
        dynamo=DynamoCounters(0, 1, 2, 0, ("skipping cudagraphs due to cpu device",)),
        correctness=Correctness("float64", 1e-7, 1e-3, True),
        probes=(ProbeResult("recompile-on-new-shape", "2 recompiles", None, {"value": 2.0}),),
        stages_s={"build": 0.001},
    )


def as_dict(record: Record) -> dict:
    return json.loads(record.to_json())


def line(data: dict) -> str:
    return json.dumps(data)


def write_lines(path: Path, *lines: str) -> Path:
    path.write_text("".join(text + "\n" for text in lines), encoding="utf-8")
    return path


def read(path: Path, warnings: list | None = None) -> list[Record]:
    return list(read_records(path, warn=(warnings.append if warnings is not None else None)))


def changed(**sections) -> dict:
    """A good record's dict with parts replaced; `timing__median_s=0` reaches into a section."""
    data = as_dict(make_record())
    for name, value in sections.items():
        section, _, field = name.partition("__")
        if field:
            data[section][field] = value
        else:
            data[section] = value
    return data


# ---- one schema ---------------------------------------------------------------------------

def test_record_round_trips_through_json():
    record = make_record()
    assert record_from_dict(json.loads(record.to_json())) == record


def test_to_json_writes_sorted_keys_on_one_line():
    text = make_record().to_json()
    assert "\n" not in text
    data = json.loads(text)
    assert list(data) == sorted(data)
    assert list(data["env"]) == sorted(data["env"])


def test_importing_the_record_layer_does_not_import_torch():
    code = "import sys, bench.records, bench.modes; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


def test_every_mode_states_its_traits_once_and_records_copy_them():
    from bench.modes import MODES

    assert MODES["reduce-overhead"].traits.cuda_graphs and MODES["reduce-overhead"].compiled
    assert not MODES["eager"].compiled and not MODES["eager"].traits.cuda_graphs
    assert MODES["max-autotune"].traits.autotune and not MODES["default"].traits.autotune
    assert MODES["default-dynamic"].traits.dynamic
    assert MODES["default-dynamic"].applies_to(varying_shapes=True)
    assert not MODES["default-dynamic"].applies_to(varying_shapes=False)
    assert MODES["default"].applies_to(varying_shapes=False)


# ---- validation: bench and report agree by construction -------------------------------------

@pytest.mark.parametrize("data, message", [
    (changed(status="great"), "status 'great'"),
    (changed(surprise=1), "unknown field"),
    (changed(timing__surprise=1), r"timing: unknown field"),
    (changed(timing__median_s=float("nan")), "finite"),
    (changed(duration_s="3.5"), "duration_s: expected a number"),
    (changed(process__repeat=1.5), "process.repeat: expected an integer"),
    (changed(started_at="yesterday"), "ISO 8601"),
    (changed(started_at="2025-01-01T00:00:00"), "UTC offset"),
    (changed(env__backend="cuda"), "env.backend 'cuda' differs from key.backend 'cpu'"),
    (changed(env_id="000000000000"), "env_id"),
    (changed(key="cpu/matmul"), "key: expected an object"),
], ids=["status", "unknown-field", "unknown-nested-field", "nan", "wrong-type", "float-for-int",
        "bad-time", "naive-time", "backend-mismatch", "env-id", "section-type"])
def test_an_invalid_record_is_refused_with_what_is_wrong(data, message):
    with pytest.raises(ValueError, match=message):
        record_from_dict(data)


@pytest.mark.parametrize("data, message", [
    (changed(timing=None), "ok record has no timing"),
    (changed(timing__median_s=0.0), "median, min or wall time of 0 or below"),
    (changed(timing__median_s=-1e-5), "median, min or wall time of 0 or below"),
    (changed(timing__median_s=9e-5), "min <= q1 <= median <= q3"),
    (changed(timing__median_s=1.95e-5), "min <= q1 <= median <= q3"),
    (changed(timing__samples=[2e-5, -1e-6, 2.1e-5, 2.5e-5, 1.9e-5]), "0 or below"),
    (changed(timing__count=7), "count 7"),
    (changed(duration_s=-1.0), "duration_s -1.0 is negative"),
], ids=["null-timing", "zero-median", "negative-median", "median-above-q3", "median-below-q1",
        "negative-sample", "count", "negative-duration"])
def test_impossible_timings_are_refused(data, message):
    with pytest.raises(ValueError, match=message):
        record_from_dict(data)


def test_a_failed_case_needs_no_timing():
    data = changed(status="timeout", reason="no result within 5 s", timing=None)
    assert record_from_dict(data).status == "timeout"


def test_json_nan_literal_in_a_file_names_file_and_line(tmp_path):
    text = make_record().to_json().replace('"duration_s": 3.5', '"duration_s": NaN')
    path = write_lines(tmp_path / "r.jsonl", make_record().to_json(), text)
    with pytest.raises(MalformedRecord, match=rf"^{re.escape(str(path))}:2: .*NaN"):
        read(path)


def test_to_json_refuses_nan():
    record = dataclasses.replace(make_record(), stages_s={"build": float("nan")})
    with pytest.raises(ValueError):
        record.to_json()


# ---- reading files -------------------------------------------------------------------------

def test_good_file_reads_back_every_record(tmp_path):
    path = write_lines(tmp_path / "r.jsonl", make_record().to_json(), "", make_record().to_json())
    assert read(path) == [make_record(), make_record()]


@pytest.mark.parametrize("bad", ["not json {", "[1, 2]", '{"schema_version": 2, "key": [1]}',
                                 line(changed(schema_version=SCHEMA_VERSION + 1))])
def test_a_bad_line_in_the_middle_names_file_and_line(tmp_path, bad):
    path = write_lines(tmp_path / "r.jsonl", make_record().to_json(), bad, make_record().to_json())
    with pytest.raises(MalformedRecord, match=rf"^{re.escape(str(path))}:2: malformed record"):
        read(path)


def test_invalid_utf8_names_file_and_line(tmp_path):
    path = tmp_path / "r.jsonl"
    good = make_record().to_json().encode()
    path.write_bytes(good + b"\n" + good.replace(b"matmul-128", b"matmul-\xff\xfe") + b"\n")
    with pytest.raises(MalformedRecord, match=rf"^{re.escape(str(path))}:2: .*utf-8"):
        read(path)


def test_a_torn_last_line_is_skipped_with_a_warning(tmp_path):
    path = tmp_path / "r.jsonl"
    torn = make_record(tag="torn").to_json()[:200]
    path.write_text(make_record().to_json() + "\n" + torn, encoding="utf-8")
    warnings: list[str] = []
    assert read(path, warnings) == [make_record()]
    assert len(warnings) == 1 and f"{path}:2" in warnings[0]


def test_a_torn_tail_is_repaired_by_the_next_append_and_resume_reads_everything(tmp_path):
    path = tmp_path / "r.jsonl"
    append_record(path, make_record(tag="first"))
    with open(path, "ab") as out:
        out.write(make_record(tag="torn").to_json()[:200].encode())  # a crash mid-line
    assert [r.key.tag for r in read(path, [])] == ["first"]  # what a resuming run sees
    append_record(path, make_record(tag="second"))
    warnings: list[str] = []
    assert [r.key.tag for r in read(path, warnings)] == ["first", "second"]
    assert warnings == []


def test_a_torn_only_line_is_dropped_on_next_append(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_bytes(b'{"schema_version": 2, "ke')
    append_record(path, make_record())
    assert read(path) == [make_record()]


def test_committed_v1_files_load_through_the_upgrade_path():
    for name in V1_FILES:
        path = ROOT / "results" / name
        raw = [json.loads(text) for text in path.read_text().splitlines() if text.strip()]
        assert {r["schema_version"] for r in raw} == {1}
        loaded = read(path)
        assert len(loaded) == len(raw)
        for before, after in zip(raw, loaded, strict=True):
            assert after.schema_version == SCHEMA_VERSION
            assert after.key.mode == before["key"]["mode"]
            assert after.process.repeats == 1
            assert after.stages_s == before["extra"].get("stage_s", {})
            assert after.mode_traits.compiled == (before["key"]["mode"] not in ("eager",
                                                                              "cuda-graph"))
            if after.correctness:
                assert after.correctness.reference == "eager"
    assert path.read_text().splitlines()[0].startswith('{"activity"')  # never rewritten


def test_v1_probes_become_typed_results():
    cuda = read(ROOT / "results" / V1_FILES[1])
    found = {p.name: p for r in cuda for p in r.probes}
    assert found["held-output-overwrite"].outcome in ("overwritten", "intact", "raised")
    assert set(found["tf32-matmul"].figures) >= {"rel_error_off", "rel_error_on"}


def test_a_v3_record_without_model_settings_or_graph_break_reasons_loads_with_none():
    data = as_dict(make_record())
    for section, name in (("dynamo", "graph_break_reasons"), ("workload_info", "settings"),
                          ("workload_info", "libraries")):
        del data[section][name]
    record = record_from_dict(data)
    assert record.dynamo.graph_break_reasons == ()
    assert record.workload_info.settings == record.workload_info.libraries == {}


def test_model_settings_and_graph_break_reasons_round_trip():
    record = dataclasses.replace(
        make_record(),
        dynamo=DynamoCounters(2, 0, 3, 0, (), ("2x: Call to `torch._dynamo.graph_break()`",)),
        workload_info=dataclasses.replace(make_record().workload_info,
                                          settings={"attn_implementation": "sdpa"},
                                          libraries={"transformers": "5.23.0"}))
    assert record_from_dict(json.loads(record.to_json())) == record


def test_an_unknown_schema_version_lists_the_known_ones():
    unknown = SCHEMA_VERSION + 1
    with pytest.raises(ValueError, match=rf"schema_version {unknown} is not supported .*knows 1, 2"):
        record_from_dict(changed(schema_version=unknown))


# ---- appending -----------------------------------------------------------------------------

def test_append_creates_the_file_and_its_folder(tmp_path):
    path = tmp_path / "new" / "r.jsonl"
    append_record(path, make_record())
    assert read(path) == [make_record()]
    assert path.read_bytes().endswith(b"\n")


def test_a_short_write_leaves_nothing_and_fails_loudly(tmp_path, monkeypatch):
    path = tmp_path / "r.jsonl"
    append_record(path, make_record(tag="kept"))
    before = path.read_bytes()
    real_write = os.write
    calls = []

    def full_disk(fd, data):
        calls.append(len(data))
        return real_write(fd, data[:100]) if len(calls) == 1 else 0  # then the disk is full

    monkeypatch.setattr(records_module.os, "write", full_disk)
    with pytest.raises(RecordWriteError, match=r"could not save .* \(100 of \d+ bytes written\)"):
        append_record(path, make_record(tag="lost"))
    monkeypatch.undo()
    assert path.read_bytes() == before


@pytest.fixture
def tiny_disk(tmp_path):
    """A real 64 KiB tmpfs; skipped where mounting is not allowed (not root)."""
    mount_point = tmp_path / "disk"
    mount_point.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount_point)],
                      capture_output=True).returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    yield mount_point
    subprocess.run(["umount", str(mount_point)], check=True)


def test_a_really_full_disk_leaves_the_file_whole(tiny_disk):
    path = tiny_disk / "r.jsonl"
    append_record(path, make_record(tag="kept"))
    with open(path, "ab") as out:  # a size that is not a multiple of the 4096-byte page
        out.write(b" " * 1000 + b"\n")
    filler = os.open(tiny_disk / "filler", os.O_WRONLY | os.O_CREAT)
    try:
        while os.write(filler, b"\0" * 512):
            pass
    except OSError:
        pass  # the disk is full
    finally:
        os.close(filler)
    before = path.read_bytes()
    with pytest.raises(RecordWriteError, match="could not save"):
        append_record(path, make_record(tag="lost", reason="x" * 20_000))
    assert path.read_bytes() == before
    assert [r.key.tag for r in read(path)] == ["kept"]


def _append_many(path: str, worker: int, count: int, barrier) -> None:
    barrier.wait()  # start together, so the appends really overlap
    for number in range(count):
        # A line spanning many pages, so an unlocked writer could interleave.
        append_record(Path(path), make_record(tag=f"w{worker}-{number}", reason="x" * 20_000))


def test_concurrent_appends_leave_only_complete_lines(tmp_path):
    path = tmp_path / "r.jsonl"
    workers, each = 4, 25
    context = multiprocessing.get_context("fork")
    barrier = context.Barrier(workers)
    processes = [context.Process(target=_append_many, args=(str(path), n, each, barrier))
                 for n in range(workers)]
    for process in processes:
        process.start()
    for process in processes:
        process.join(timeout=120)
        assert process.exitcode == 0
    found = read(path)
    assert len(path.read_bytes().splitlines()) == len(found) == workers * each
    assert sorted(r.key.tag for r in found) == sorted(
        f"w{w}-{n}" for w in range(workers) for n in range(each))


# ---- b2: upgrades never change a recorded value, nor drop one silently ---------------------

def v1_dict(record: Record) -> dict:
    data = as_dict(record)
    for name in ("process", "mode_traits", "probes", "warmup", "stages_s", "log_tail", "host",
                 "paired"):
        data.pop(name)
    del data["key"]["dtype"]
    data["schema_version"] = 1
    data["extra"] = {"stage_s": {"build": 0.5}}
    return data


def test_a_version_3_record_whose_key_names_bfloat16_stays_bfloat16():
    data = as_dict(make_record())
    data["key"]["dtype"] = "bfloat16"
    data["schema_version"] = 3
    assert record_from_dict(data).key.dtype == "bfloat16"


def test_a_version_1_record_keeps_its_own_stages_probes_and_process():
    record = make_record(repeat=2)
    data = v1_dict(record)
    for name in ("stages_s", "probes", "process"):
        data[name] = as_dict(record)[name]
    notes = []
    upgraded = record_from_dict(data, notes.append)
    assert upgraded.stages_s == record.stages_s and upgraded.probes == record.probes
    assert upgraded.process == record.process  # repeat 2 of 3, not "repeat 0 of 1"
    # extra's stage times ({"build": 0.5}) differ from the record's own: dropped, and said
    assert notes == ["extra.stage_s differs from the record's own stages_s; keeping stages_s, "
                     "dropping extra.stage_s"]


def test_a_version_1_record_takes_its_stages_from_extra_without_a_note():
    notes = []
    upgraded = record_from_dict(v1_dict(make_record()), notes.append)
    assert upgraded.stages_s == {"build": 0.5} and upgraded.process.repeats == 1
    assert notes == []


def test_an_extra_field_with_no_place_is_dropped_with_a_warning_naming_file_and_line(tmp_path):
    data = v1_dict(make_record())
    data["extra"]["gpu_temperature_c"] = 71
    path = tmp_path / "v1.jsonl"
    path.write_text(json.dumps(as_dict(make_record())) + "\n" + json.dumps(data) + "\n")
    warnings = []
    assert len(list(read_records(path, warn=warnings.append))) == 2
    assert warnings == [f"{path}:2: schema version 1's extra.gpu_temperature_c has no field in "
                        f"version {SCHEMA_VERSION}; dropped"]


@pytest.mark.parametrize("version", [True, 1.0, "1"])
def test_a_schema_version_that_is_not_an_integer_is_refused(version):
    data = as_dict(make_record())
    data["schema_version"] = version
    with pytest.raises(ValueError, match=r"schema_version .* is not supported"):
        record_from_dict(data)


@pytest.mark.parametrize("extra, says", [(True, "extra: expected an object, got bool"),
                                         ({"probes": {"p": "x"}}, "extra.probes.p: expected an")])
def test_a_malformed_version_1_extra_names_its_field(tmp_path, extra, says):
    data = v1_dict(make_record())
    data["extra"] = extra
    path = tmp_path / "v1.jsonl"
    path.write_text(json.dumps(data) + "\n")
    with pytest.raises(MalformedRecord, match=re.escape(f"{path}:1: malformed record: {says}")):
        list(read_records(path))
