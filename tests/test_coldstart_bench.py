"""`python -m bench.coldstart` on CPU with tiny shapes: every rung of the ladder runs in a
process of its own, a bundle saved by one process is a hit in another, a crash in one rung
is recorded as that rung's status while the rest go on, and bad input gets one line."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from bench.coldstart.records import LADDER, read, read_folder

ROOT = Path(__file__).resolve().parents[1]
# The ladder's rungs apply to any model; regional compilation (not run here) needs blocks.
# A rung's process is mostly its compile, and the ladder is six of them: one GEMM compiles to
# a call of the library's kernel, where an MLP's ReLU is a C++ kernel that every cold
# process builds with the compiler again (half of the ladder's CPU time on 2 cores).
WORKLOAD = "matmul-128"
# torch.compiler.precompile.capture arrived in 2.15.0 (2.14.1 has a precompile without it):
# before it, the rung is recorded as unsupported.
HAS_PRECOMPILE = hasattr(getattr(torch.compiler, "precompile", None), "capture")


def coldstart(*args: str, env: dict | None = None, timeout: float = 900) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "bench.coldstart", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL, env=env)


def selection(tmp: Path, *more: str) -> list[str]:
    return ["--backend", "cpu", "--workload", WORKLOAD, "--shapes", "tiny", "--mode", "default",
            "--repeats", "1", "--results-dir", str(tmp / "results"),
            "--cache-dir", str(tmp / "cache"), *more]


@pytest.fixture(scope="module")
def ladder(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("ladder")
    done = coldstart(*selection(tmp))
    assert done.returncode == 0, done.stderr[-3000:]
    records = read_folder(tmp / "results")
    return {"tmp": tmp, "records": {r.key.rung: r for r in records}, "count": len(records),
            "output": done.stdout}


def test_every_rung_of_the_ladder_runs_in_its_own_process(ladder):
    records = ladder["records"]
    assert sorted(records) == sorted(LADDER)
    assert ladder["count"] == len(LADDER)
    for rung, record in records.items():
        if rung == "precompile" and not HAS_PRECOMPILE:
            assert record.status == "unsupported", (record.status, record.reason)
            continue
        assert record.status == "ok", (rung, record.reason, record.log_tail)
        assert record.first_call_s > 0 and record.steady.median_s > 0
        assert record.dtype == "float32"  # the workload's own, which the ladder never casts
        # the speed of the host that compiled: the probe and the compile-like task, per block
        assert record.host is not None and len(record.host.op_s) == 15
        assert all(t > 0 for t in record.host.op_s) and record.host.cpus_available >= 1
        assert len(record.host_task_s) == 5 and all(0 < t < 60 for t in record.host_task_s)
        if sys.platform.startswith("linux"):  # the compiler runs are logged there
            assert record.compiler_runs is not None and record.compiler_s is not None
    # aot and precompile load what a separate saving process compiled
    assert records["aot"].prepare_s > 0 and records["aot"].load_s is not None
    if HAS_PRECOMPILE:
        assert records["precompile"].prepare_s > 0


def test_cold_misses_and_warm_hits_the_fx_graph_cache(ladder):
    cold, warm = ladder["records"]["cold"].counters, ladder["records"]["warm"].counters
    assert cold.get("inductor.fxgraph_cache_miss", 0) >= 1
    assert cold.get("inductor.fxgraph_cache_hit", 0) == 0
    assert warm.get("inductor.fxgraph_cache_hit", 0) >= 1
    assert warm.get("inductor.fxgraph_cache_miss", 0) == 0


def test_a_bundle_saved_by_one_process_is_a_hit_in_another(ladder):
    cold, bundle = ladder["records"]["cold"], ladder["records"]["bundle"]
    assert cold.saved is not None and cold.saved.size_bytes > 0
    assert cold.saved.artifacts.get("inductor", 0) >= 1
    assert bundle.loaded is not None and bundle.loaded.sha256 == cold.saved.sha256
    assert bundle.loaded.outcome == "hit"
    assert bundle.counters.get("inductor.fxgraph_cache_hit", 0) >= 1
    assert bundle.load_s is not None and bundle.load_s <= bundle.first_call_s
    # repeat 0's bundle is published in the results folder, its source environment beside it
    published = ladder["tmp"] / "results" / cold.saved.path
    about = json.loads(published.with_suffix(".json").read_text())
    assert published.stat().st_size == cold.saved.size_bytes
    assert about["env"]["device_name"] == cold.env.device_name
    assert about["bundle"]["source_env_id"] == cold.env_id


def test_a_rerun_measures_nothing_twice(ladder):
    done = coldstart(*selection(ladder["tmp"]))
    assert done.returncode == 0, done.stderr[-3000:]
    assert "0 process(es) recorded" in done.stdout
    assert len(read_folder(ladder["tmp"] / "results")) == ladder["count"]


def test_a_bundle_from_elsewhere_is_loaded_into_empty_caches(ladder, tmp_path):
    """The cross-machine path, on one machine: a bundle whose description names another
    environment is loaded by --bundle-from and its outcome recorded."""
    cold = ladder["records"]["cold"]
    source = ladder["tmp"] / "results" / cold.saved.path
    copy = tmp_path / "elsewhere" / source.name
    copy.parent.mkdir()
    copy.write_bytes(source.read_bytes())
    about = json.loads(source.with_suffix(".json").read_text())
    about["bundle"]["source_env_id"], about["bundle"]["source_device"] = "0123456789ab", "Other GPU"
    copy.with_suffix(".json").write_text(json.dumps(about))
    done = coldstart("--backend", "cpu", "--repeats", "1", "--shapes", "tiny", "--mode", "default",
                     "--workload", WORKLOAD, "--results-dir", str(tmp_path / "r"),
                     "--cache-dir", str(tmp_path / "c"), "--bundle-from", str(copy.parent),
                     "--bundle-sha256", cold.saved.sha256)
    assert done.returncode == 0, done.stderr[-3000:]
    (record,) = read_folder(tmp_path / "r")
    assert record.loaded.sha256 == hashlib.sha256(copy.read_bytes()).hexdigest()
    assert record.key.rung == "foreign-bundle" and record.key.tag == "from-0123456789ab"
    assert record.status == "ok", record.reason
    assert record.loaded.source_device == "Other GPU" and record.loaded.outcome == "hit"


CRASH = """
import os, signal, sys, json
spec = next((a for a in sys.argv if a.endswith("spec.json")), None)  # the launcher's argv
if spec is not None:
    once = os.environ["ATLAS_TEST_CRASHED"]
    if json.load(open(spec)).get("rung") == "eager" and not os.path.exists(once):
        open(once, "w").close()
        print("injected crash", file=sys.stderr, flush=True)
        import resource
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        os.kill(os.getpid(), signal.SIGSEGV)
"""


def test_a_crash_in_one_process_is_recorded_and_the_rest_go_on(tmp_path):
    """The first eager process dies of SIGSEGV (injected from a sitecustomize on the path,
    no hook in bench/); it is recorded as an error and the next process, eager's second
    repeat (no compile to wait for), is still measured."""
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text(CRASH)
    env = os.environ | {"PYTHONPATH": os.pathsep.join([str(hooks), str(ROOT)]),
                        "ATLAS_TEST_CRASHED": str(tmp_path / "crashed")}
    args = [*selection(tmp_path, "--rung", "eager")]
    args[args.index("--repeats") + 1] = "2"
    done = coldstart(*args, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    crashed, after = sorted(read_folder(tmp_path / "results"), key=lambda r: r.started_at)
    assert crashed.status == "error"
    assert "SIGSEGV" in crashed.reason
    assert any("injected crash" in line for line in crashed.log_tail)
    assert after.status == "ok" and after.key.rung == "eager"
    assert {crashed.repeat, after.repeat} == {0, 1}


OLD_RELEASE = """
import torch.compiler
torch.compiler.precompile = None  # as in the releases before it (2.11.0 to 2.14.1)
"""


def test_a_rung_the_release_lacks_is_recorded_without_a_process(tmp_path):
    """A release without torch.compiler.precompile (simulated from a sitecustomize on the
    path, no hook in bench/): the rung is recorded unsupported, with the reason, by the
    runner itself, and no process is spent on it."""
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text(OLD_RELEASE)
    env = os.environ | {"PYTHONPATH": os.pathsep.join([str(hooks), str(ROOT)])}
    done = coldstart(*selection(tmp_path, "--rung", "precompile"), env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    [record] = read_folder(tmp_path / "results")
    assert record.key.rung == "precompile" and record.status == "unsupported"
    assert "has no torch.compiler.precompile" in record.reason
    assert record.duration_s == 0.0 and record.first_call_s is None
    assert record.dtype is None  # no process built the model


@pytest.mark.parametrize(("args", "expected"), [
    (["--workload", "nope"], "unknown workload 'nope'"),
    (["--rung", "lukewarm"], "unknown rung 'lukewarm' (valid: eager, cold, warm"),
    (["--mode", "fast"], "unknown mode 'fast' (valid: default, reduce-overhead"),
    (["--repeats", "0"], "must be a whole number of 1 or more"),
    (["--max-minutes", "nan"], "must be a positive number"),
    (["--bundle-from", "/nonexistent/bundle.bin"], "--bundle-from /nonexistent/bundle.bin: no such"),
    (["--tag", "from-abc"], "tag 'from-abc' may hold only letters"),
    (["--tag", "a b"], "tag 'a b' may hold only letters"),
])
def test_bad_input_gets_one_line(args, expected):
    done = coldstart(*args, timeout=120)
    assert done.returncode != 0
    assert done.stderr.count("\n") == 1, done.stderr
    assert expected in done.stderr and done.stderr.startswith("python -m bench.coldstart: error:")


def test_a_malformed_results_file_is_named_with_its_line(tmp_path):
    results = tmp_path / "results"
    results.mkdir()
    bad = results / "coldstart-x-cpu-torch2.15.0-000000000000.ndjson"
    bad.write_text('{"schema_version": 1}\n')
    with pytest.raises(ValueError, match=f"{bad}:1: malformed cold-start record"):
        list(read(bad))
