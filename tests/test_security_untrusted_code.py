"""Two ways code could reach a run from outside it: a cache bundle, which holds compiled code
and pickles and writes files where its keys say, and the shared temp folder, where torch keeps
precompiled headers that it compiles into kernels without asking who wrote them."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from bench_helpers import bench_env, run_bench
from torch._inductor.runtime.autotune_cache import AutotuneCacheArtifact
from torch.compiler._cache import _serialize_single_cache
from torch.utils._appending_byte_serializer import AppendingByteSerializer

from bench import pool
from bench.coldstart import bundles
from bench.coldstart.records import read_folder
from bench.records import read_records

ROOT = Path(__file__).resolve().parents[1]
TINY = ["--backend", "cpu", "--shapes", "tiny", "--mode", "default", "--repeats", "1"]


def coldstart(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "bench.coldstart", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=900, stdin=subprocess.DEVNULL,
                          env=env)


def crafted(*keys: str) -> bytes:
    """A bundle made with torch's own serializer, one autotune artifact per key."""
    writer = AppendingByteSerializer(serialize_fn=_serialize_single_cache)
    writer.extend([("autotune", [AutotuneCacheArtifact(key, b'{"planted": 1}') for key in keys])])
    return writer.to_bytes()


def foreign_bundle(folder: Path, data: bytes, workload: str = "matmul-128",
                   sha256: str | None = None) -> Path:
    """`data` as a bundle from another environment, with the description that says so."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{workload}-bs-default-tiny.bin"
    path.write_bytes(data)
    key = {"backend": "cpu", "workload": workload, "mode": "default", "batch_size": None,
           "rung": "cold", "shapes": "tiny", "tag": "main"}
    bundle = {"path": None, "size_bytes": len(data),
              "sha256": sha256 or hashlib.sha256(data).hexdigest(),
              "source_env_id": "0123456789ab", "source_device": "Other", "source_torch": "x",
              "artifacts": {}}
    path.with_suffix(".json").write_text(json.dumps({"key": key, "bundle": bundle,
                                                     "env": {"backend": "cpu"}}))
    return path


def files_under(folder: Path) -> set[Path]:
    return {p for p in folder.rglob("*")} if folder.exists() else set()


# ---- bundles -----------------------------------------------------------------------------

@pytest.mark.parametrize("key", ["/abs/evil.pth", "../../evil.pth", "ab/../../x", "a/b/c",
                                 "a\\b", "", "."])
def test_a_key_outside_the_cache_folder_is_refused(key):
    with pytest.raises(bundles.BundleRefused, match="not a plain name"):
        bundles.check_key(key)


def test_the_keys_torch_writes_pass():
    for key in ["fxyz0123abcd", "ab/abcdef0123.best_config", "pgo:code_state_x.pt"]:
        bundles.check_key(key)
    data = crafted("ab/abc.best_config", "cd/def.best_config")
    assert bundles.artifact_keys(data) == [("autotune", "ab/abc.best_config"),
                                           ("autotune", "cd/def.best_config")]


def test_a_corrupt_or_truncated_bundle_is_refused():
    data = crafted("ab/abc.best_config")
    with pytest.raises(bundles.BundleRefused, match="checksum"):
        bundles.artifact_keys(data[:4] + data[4:-1] + b"x")
    with pytest.raises(bundles.BundleRefused):
        bundles.artifact_keys(b"short")


@pytest.mark.slow
def test_a_bundle_nobody_vouched_for_is_refused_before_anything_is_written(tmp_path):
    """No --bundle-sha256 and no --trust-descriptions: a description beside a bundle is as
    untrusted as the bundle, so its sha256 proves nothing."""
    target = tmp_path / "site-packages" / "evil.pth"
    path = foreign_bundle(tmp_path / "in", crafted(str(target)))
    done = coldstart(*TINY, "--workload", "matmul-128", "--results-dir", str(tmp_path / "r"),
                     "--cache-dir", str(tmp_path / "c"), "--bundle-from", str(path))
    assert done.returncode == 1 and done.stderr.count("\n") == 1, done.stderr
    assert "is not one you trust" in done.stderr and str(path) in done.stderr
    assert not target.exists() and not (tmp_path / "r").exists()


@pytest.mark.slow
def test_a_trusted_bundle_whose_keys_escape_is_refused_and_writes_nothing(tmp_path):
    """The reproduction: autotune artifacts keyed by absolute paths. Even when the user vouches
    for the exact bytes, a key that leaves the cache folder stops the run before any load."""
    target = tmp_path / "site-packages" / "evil.pth"
    dots = "/".join([".."] * 12) + str(tmp_path / "dots.pth")
    data = crafted(str(target), dots)
    path = foreign_bundle(tmp_path / "in", data)
    before = files_under(tmp_path)
    done = coldstart(*TINY, "--workload", "matmul-128", "--results-dir", str(tmp_path / "r"),
                     "--cache-dir", str(tmp_path / "c"), "--bundle-from", str(path),
                     "--bundle-sha256", hashlib.sha256(data).hexdigest())
    assert done.returncode == 1 and done.stderr.count("\n") == 1, done.stderr
    assert "not a plain name inside the cache folder" in done.stderr
    assert files_under(tmp_path) == before  # nothing written anywhere under the test's folder
    assert not target.exists() and not (tmp_path / "dots.pth").exists()


@pytest.mark.slow
def test_a_description_that_lies_about_the_bytes_is_refused(tmp_path):
    data = crafted("ab/abc.best_config")
    path = foreign_bundle(tmp_path / "in", data, sha256="0" * 64)
    done = coldstart(*TINY, "--workload", "matmul-128", "--results-dir", str(tmp_path / "r"),
                     "--cache-dir", str(tmp_path / "c"), "--bundle-from", str(path),
                     "--trust-descriptions")
    assert done.returncode == 1 and "is not one you trust" in done.stderr, done.stderr


def test_the_child_checks_the_bytes_it_loads_again(tmp_path):
    """A bundle swapped after the runner checked it: the child hashes what it reads."""
    data = crafted("ab/abc.best_config")
    with pytest.raises(bundles.BundleRefused, match="is not one you trust"):
        bundles.checked(data + b"", ["f" * 64])
    assert bundles.checked(data, [hashlib.sha256(data).hexdigest()]) == \
        hashlib.sha256(data).hexdigest()


# ---- the temp folder -----------------------------------------------------------------------

@pytest.fixture
def planted_tmp(shared_tmp):
    """The shared temp folder (conftest) with torch's default folder planted in it the way
    another user could: world-writable, a header inside."""
    import getpass

    planted = shared_tmp / f"torchinductor_{getpass.getuser()}" / "precompiled_headers"
    planted.mkdir(parents=True)
    for part in (planted.parent, planted):
        part.chmod(0o777)
    (planted / "planted.h").write_text("__attribute__((constructor)) static void x(void) {}\n")
    return shared_tmp


SHOW_TEMP = """
import json, os, sys, tempfile
def report():
    from torch._inductor import codecache
    from torch._inductor.runtime.cache_dir_utils import default_cache_dir
    path = os.environ["ATLAS_TEST_TEMP_REPORT"]
    with open(path + "." + str(os.getpid()), "w") as out:
        info = os.stat(tempfile.gettempdir())
        json.dump({"tmp": tempfile.gettempdir(), "default": default_cache_dir(),
                   "headers": codecache._HEADER_DIR, "mode": info.st_mode & 0o777,
                   "uid": info.st_uid}, out)
import atexit
if os.environ.get("ATLAS_TEST_TEMP_REPORT"):
    atexit.register(report)
"""


@pytest.mark.slow
@pytest.mark.parametrize("isolation", ["fork", "spawn"])
def test_a_case_never_uses_the_shared_temp_folder(tmp_path, planted_tmp, isolation):
    """A case that compiles C++ kernels on CPU, its runner started with TMPDIR in the shared
    folder: torch's default folder there is left as it was planted, and the case's own temp
    folder, default cache folder and header folder lie in a private folder (0700)."""
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text(SHOW_TEMP)
    report = tmp_path / "temp"
    env = bench_env(planted_tmp) | {"PYTHONPATH": os.pathsep.join([str(hooks), str(ROOT)]),
                                   "ATLAS_TEST_TEMP_REPORT": str(report)}
    before = files_under(planted_tmp / next(p.name for p in planted_tmp.glob("torchinductor_*")))
    done = run_bench(*TINY, "--workload", "mlp", "--profile", "full", "--batch-size", "1",
                     "--timing", "isolated", "--isolation", isolation,
                     "--results-dir", str(tmp_path / "results"),
                     "--cache-dir", str(tmp_path / "cache"), env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    [record] = [r for f in (tmp_path / "results").glob("*.jsonl") for r in read_records(f)]
    assert record.status == "ok", record.reason
    planted = planted_tmp / next(p.name for p in planted_tmp.glob("torchinductor_*"))
    assert files_under(planted) == before
    seen = [json.loads(p.read_text()) for p in tmp_path.glob("temp.*")]
    cases = [s for s in seen if Path(s["tmp"]) != planted_tmp]
    assert cases, seen  # the case process (the runner itself reports the shared folder)
    for found in cases:
        private = Path(found["tmp"])
        assert found["mode"] == 0o700 and found["uid"] == os.getuid()
        assert Path(found["headers"]).is_relative_to(private)
        assert Path(found["default"]).is_relative_to(private)
        # and what the header folder there leads to is private too, or the user's own
        real = Path(found["headers"]).resolve()
        assert real.is_relative_to(private.resolve()) or real == pool.header_folder()


@pytest.mark.slow
def test_a_cold_start_process_never_uses_the_shared_temp_folder(tmp_path, planted_tmp):
    planted = next(planted_tmp.glob("torchinductor_*"))
    before = files_under(planted)
    done = coldstart(*TINY, "--workload", "mlp", "--rung", "cold",
                     "--results-dir", str(tmp_path / "r"), "--cache-dir", str(tmp_path / "c"),
                     env=os.environ | {"TMPDIR": str(planted_tmp)})
    assert done.returncode == 0, done.stderr[-3000:]
    [record] = read_folder(tmp_path / "r")
    assert record.status == "ok", (record.reason, record.log_tail)
    assert files_under(planted) == before
    assert not [p for p in planted_tmp.iterdir() if p.name != planted.name
                and not p.name.startswith("atlas-")]
