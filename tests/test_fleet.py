"""`python -m bench --ray`: tiny CPU cases on a local Ray cluster (2 CPUs, one for the whole
module), driven as a user drives it, by `python -m bench` in a process of its own.

The fleet path is a second launcher for the same engine, so its records are the local
runner's: the same cases, schema and statuses. A worker killed mid-case is that case's
status, a killed driver loses nothing it finished and the same command resumes, and a
second driver on one results folder is refused.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ray = pytest.importorskip("ray", reason="ray is not installed (nox -s tests and nox -s fleet "
                                        "install it; pip install 'torch-compile-atlas[fleet]')")

from bench.records import SCHEMA_VERSION, read_records  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
# One eager case in two processes, and a mode the CPU cannot run: recorded without a process.
PLAN = ["--backend", "cpu", "--workload", "trivial-call", "--mode", "eager", "--mode",
        "cuda-graph", "--shapes", "tiny", "--timing", "isolated", "--timeout", "120"]


@pytest.fixture(scope="module")
def cluster() -> str:
    """The address of a one-node cluster with 2 CPUs, shared by every test here."""
    context = ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield context.address_info["gcs_address"]
    ray.shutdown()


def bench(*args: str, **popen) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "bench", *args], cwd=ROOT, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, **popen)


def finished(process: subprocess.Popen, timeout: float = 240) -> str:
    out, _ = process.communicate(timeout=timeout)
    assert process.returncode == 0, out
    return out


def records(folder: Path) -> list:
    return [r for path in sorted(folder.glob("*.jsonl")) for r in read_records(path)]


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def ppid(pid: int) -> int | None:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


def case_worker(timeout: float = 120) -> int:
    """The pid of the Ray worker whose child is measuring a case now."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for entry in Path("/proc").glob("[0-9]*"):
            if "bench.pool" in cmdline(int(entry.name)) and "bench.case:main" in cmdline(int(entry.name)):
                parent = ppid(int(entry.name))
                if parent and cmdline(parent).startswith("ray::"):
                    return parent
        time.sleep(0.1)
    raise AssertionError("no case started in a Ray worker")


def test_a_ray_run_records_the_same_cases_schema_and_statuses_as_a_local_run(cluster, tmp_path):
    local = bench(*PLAN, "--repeats", "1", "--results-dir", str(tmp_path / "local"),
                  "--cache-dir", str(tmp_path / "cache-local"))
    finished(local)
    out = finished(bench(*PLAN, "--repeats", "1", "--ray", cluster,
                         "--results-dir", str(tmp_path / "ray"),
                         "--cache-dir", str(tmp_path / "cache-ray")))
    assert "1 slot(s) on 1 node(s)" in out

    def shape(record) -> tuple:
        as_dict = json.loads(record.to_json())
        return (record.key, record.process.repeat, record.status, record.process.timing,
                record.process.cache, record.schema_version,
                tuple(sorted(name for name, value in as_dict.items() if value not in (None, [], {}))))

    here, there = records(tmp_path / "local"), records(tmp_path / "ray")
    assert sorted(map(shape, there), key=str) == sorted(map(shape, here), key=str)
    assert {r.status for r in there} == {"ok", "unsupported"}
    assert all(r.schema_version == SCHEMA_VERSION for r in there)
    measured = [r for r in there if r.status == "ok"]
    assert measured and all(r.host and r.host.hostname and r.host.op_s for r in measured)
    assert all(r.process.parent_import_s is None for r in there)  # each case spawned on its node


def test_a_killed_worker_is_its_case_status_and_the_rerun_completes_without_duplicates(
        cluster, tmp_path):
    command = [*PLAN, "--repeats", "2", "--ray", cluster, "--results-dir", str(tmp_path / "r"),
               "--cache-dir", str(tmp_path / "cache")]
    driver = bench(*command)
    os.kill(case_worker(), signal.SIGKILL)  # repeat 0 of the eager case, mid-case
    # Then the driver itself, while repeat 1 runs: what it finished is on disk.
    deadline = time.monotonic() + 120
    while not [r for r in records(tmp_path / "r") if r.status == "error"]:
        assert time.monotonic() < deadline and driver.poll() is None, driver.communicate()[0]
        time.sleep(0.1)
    case_worker()
    driver.kill()
    driver.communicate()
    before = records(tmp_path / "r")
    out = finished(bench(*command))
    assert "1 case process(es) to run of 3" in out
    after = records(tmp_path / "r")
    assert after[:len(before)] == before
    assert sorted((r.key.mode, r.process.repeat, r.status) for r in after) == [
        ("cuda-graph", 0, "unsupported"), ("eager", 0, "error"), ("eager", 1, "ok")]
    (killed,) = [r for r in after if r.status == "error"]
    assert "Ray worker or node running the case was lost" in killed.reason


def test_a_second_driver_on_one_results_folder_is_refused(cluster, tmp_path):
    results = tmp_path / "r"
    first = bench(*PLAN, "--repeats", "1", "--ray", cluster, "--results-dir", str(results),
                  "--cache-dir", str(tmp_path / "cache"))
    try:
        deadline = time.monotonic() + 60
        while not (results / "fleet-driver.lock").exists():
            assert time.monotonic() < deadline and first.poll() is None, first.communicate()[0]
            time.sleep(0.05)
        second = bench(*PLAN, "--repeats", "1", "--ray", cluster, "--results-dir", str(results))
        out, _ = second.communicate(timeout=60)
        assert second.returncode == 1
        assert out.strip().splitlines()[-1].startswith(
            "python -m bench: error: one fleet driver per results folder: another runner (pid "
            f"{first.pid}) is writing")
    finally:
        first.send_signal(signal.SIGTERM)
        first.communicate(timeout=60)
