"""The paired cold-start check: `--rung cold` beside `--bundle-from` alternates, case by
case and repeat by repeat, an empty-cache process and a foreign bundle's on one host, each
in empty folders of its own; and the page divides a foreign bundle's first call by the
empty caches' only where both ran on one host."""

from __future__ import annotations

import dataclasses
import json
import shutil
import zlib
from pathlib import Path

import pytest
from test_coldstart_bench import WORKLOAD, coldstart
from test_coldstart_host_speed import host
from test_coldstart_page import H100, H200, bundle, record, rendered

import bench.coldstart.__main__ as cli
from bench.coldstart import bundles
from bench.coldstart.records import FOREIGN, BundleInfo, ColdKey, read_folder
from bench.coldstart.runner import Config, Foreign, Runner, chains, plan
from report.coldstart.data import NOT_ON_ONE_HOST, paired, views


def config(tmp: Path, **more) -> Config:
    return Config(**{"backend": "cuda", "workloads": ("gpt2-small", "bert-base"), "batch_sizes": (1,),
                     "modes": ("default",), "rungs": ("cold",), "repeats": 2, "shapes": "seed",
                     "results_dir": tmp / "results", "cache_dir": tmp / "cache"} | more)


def foreign(workload: str, mode: str = "default") -> Foreign:
    info = BundleInfo(path=None, size_bytes=12, sha256="0" * 64, source_env_id=H100.env_id(),
                      source_device=H100.device_name, source_torch=H100.torch)
    return Foreign(Path(f"{workload}-{mode}.bin"),
                   ColdKey("cuda", workload, mode, 1, "cold", "seed", "main"), info)


def order(jobs) -> list[tuple[str, str, int]]:
    return [(j.key.workload, j.key.rung, j.repeat) for j in jobs]


def test_with_rung_cold_an_empty_cache_process_and_the_foreign_bundle_alternate(tmp_path):
    # a bundle of a mode not asked for is not run
    jobs = plan(config(tmp_path), [foreign("bert-base"), foreign("gpt2-small"),
                                   foreign("gpt2-small", "reduce-overhead")])
    assert order(jobs) == [(w, rung, r) for r in (0, 1) for w in ("gpt2-small", "bert-base")
                           for rung in ("cold", FOREIGN)]
    assert {j.key.tag for j in jobs if j.key.rung == FOREIGN} == {f"from-{H100.env_id()}"}
    # each process is a chain of its own, taken in plan order
    assert [order(chain) for chain in chains(jobs)] == [[one] for one in order(jobs)]


def test_an_empty_cache_process_and_a_foreign_bundles_never_share_a_cache_folder(tmp_path):
    runner = Runner(config(tmp_path), H200, say=lambda line: None)
    cold, loaded = plan(config(tmp_path, workloads=("gpt2-small",), repeats=1), [foreign("gpt2-small")])
    assert (cold.key.rung, loaded.key.rung) == ("cold", FOREIGN)
    mine, theirs = runner.folder(cold.key, 0, "cold"), runner.folder(loaded.key, 0, FOREIGN)
    assert mine.parent != theirs.parent and runner.bundle_file(cold.key, 0).parent == mine.parent


def empty_bundle(folder: Path) -> tuple[Path, str]:
    """A well-formed bundle of no artifacts, its description beside it naming the H100."""
    body = (1).to_bytes(8, "big")
    path = folder / "gpt2-small-bs1-default-seed.bin"
    path.write_bytes(zlib.crc32(body).to_bytes(4, "big") + body)
    digest = bundles.sha256(path.read_bytes())
    info = dataclasses.replace(foreign("gpt2-small").bundle, sha256=digest)
    path.with_suffix(".json").write_text(json.dumps({
        "key": dataclasses.asdict(foreign("gpt2-small").key), "bundle": dataclasses.asdict(info),
        "env": dataclasses.asdict(H100)}))
    return path, digest


@pytest.fixture
def planned(tmp_path, monkeypatch):
    """main()'s plan for a command line, the environment and the processes left out."""
    found = []
    monkeypatch.setattr(cli, "environment", lambda backend, machine, slot: (H200, {}))
    monkeypatch.setattr(Runner, "run", lambda self, jobs: found.extend(jobs) or 0)

    def run(*args: str) -> tuple[int, list]:
        found.clear()
        code = cli.main(["--backend", "cuda", "--workload", "gpt2-small", "--mode", "default",
                         "--repeats", "2", "--results-dir", str(tmp_path / "r"), *args])
        return code, order(found)
    return run


def test_without_rung_only_the_foreign_bundle_runs(planned, tmp_path):
    path, digest = empty_bundle(tmp_path)
    assert planned("--bundle-from", str(path), "--bundle-sha256", digest) == (
        0, [("gpt2-small", FOREIGN, 0), ("gpt2-small", FOREIGN, 1)])


def test_the_named_rungs_run_beside_the_foreign_bundle(planned, tmp_path):
    path, _ = empty_bundle(tmp_path)
    assert planned("--bundle-from", str(path), "--trust-descriptions", "--rung", "cold") == (
        0, [("gpt2-small", rung, r) for r in (0, 1) for rung in ("cold", FOREIGN)])


def test_an_untrusted_bundle_is_still_refused_beside_the_ladder(planned, tmp_path, capsys):
    path, _ = empty_bundle(tmp_path)
    assert planned("--bundle-from", str(path), "--rung", "cold") == (1, [])
    assert "is not one you trust" in capsys.readouterr().err


# ---- the page ----------------------------------------------------------------------------

def where(boot: str, hostname: str = "vm"):
    return dataclasses.replace(host(boot, 6.0), hostname=hostname)


def loaded(first: float, repeat: int, boot: str, run: str = "run-a", **more):
    return dataclasses.replace(
        record(H200, FOREIGN, first, 0.004, repeat, tag=f"from-{H100.env_id()}",
               loaded=bundle(H100, "recompile"), host=where(boot, **more)), run_id=run)


def cold(first: float, repeat: int, boot: str, run: str = "run-a", **more):
    return dataclasses.replace(record(H200, "cold", first, 0.004, repeat, host=where(boot, **more)),
                               run_id=run)


def foreign_rung(records):
    ((_, rung),) = next(v for v in views(records) if v.env.env_id == H200.env_id()).foreign
    return rung


def test_a_foreign_bundle_is_divided_by_empty_caches_of_its_own_host(tmp_path):
    records = ([cold(20.0 + 2 * r, r, boot="a") for r in range(3)]
               + [loaded(11.0 + r, r, boot="a") for r in range(3)]
               # another lease's empty caches, three times slower: never in the ratio
               + [cold(66.0, 2, boot="b", run="run-b")])
    got = foreign_rung(records).paired
    assert got.ratio.median == pytest.approx(12.0 / 22.0) and got.ratio.n == 1
    assert (got.cold.low, got.cold.high, got.cold.n) == (20.0, 24.0, 3)
    assert (got.foreign.low, got.foreign.high) == (11.0, 13.0)
    assert got.label == "same host, alternated"
    row = next(line for line in rendered(tmp_path, records).splitlines()
               if line.startswith("| gpt2-small | 1 | default, float32 | NVIDIA H100"))
    assert row.rstrip().endswith("(same host, alternated) |") and "| 0.55×: 12.0" in row


@pytest.mark.parametrize("other", [{"boot": "b"}, {"boot": "a", "hostname": "elsewhere"}])
def test_empty_caches_of_another_host_give_no_ratio(tmp_path, other):
    records = [cold(20.0, 0, **other), loaded(11.0, 0, boot="a")]
    assert foreign_rung(records).paired is None
    text = rendered(tmp_path, records)
    row = next(line for line in text.splitlines()
               if line.startswith("| gpt2-small | 1 | default, float32 | NVIDIA H100"))
    assert row.rstrip().endswith(f"| {NOT_ON_ONE_HOST} |") and "×" not in row.split("|")[-2]
    summary = next(line for line in text.splitlines() if line.startswith("| [NVIDIA H200"))
    assert summary.rstrip().endswith(f"| {NOT_ON_ONE_HOST} |")


def test_processes_without_a_boot_id_pair_with_nothing():
    unknown = dataclasses.replace(host("a", 6.0), boot_id=None)
    assert paired([dataclasses.replace(loaded(11.0, 0, boot="a"), host=unknown)],
                  [dataclasses.replace(cold(20.0, 0, boot="a"), host=unknown)]) is None


def test_hosts_are_divided_one_by_one_and_a_separate_run_says_so():
    """Two leases: each host's foreign median over its own cold median, never pooled."""
    records = [cold(20.0, 0, boot="a", run="x"), loaded(10.0, 0, boot="a", run="y"),
               cold(40.0, 1, boot="b", run="z"), loaded(30.0, 1, boot="b", run="w")]
    got = paired(records[1::2], records[::2])
    assert (got.ratio.low, got.ratio.high, got.ratio.n) == (0.5, 0.75, 2)
    assert got.label == "same host, separate runs"


# ---- one run on the CPU ----------------------------------------------------------------------

@pytest.mark.slow
def test_one_run_alternates_empty_caches_and_a_foreign_bundle_on_one_host(tmp_path):
    """A bundle saved by a cold process, described as another environment's, loaded beside
    fresh empty-cache processes: cold, foreign, cold, foreign, each missing or hitting the
    FX graph cache as its own folders alone say."""
    tiny = ["--backend", "cpu", "--workload", WORKLOAD, "--shapes", "tiny", "--mode", "default",
            "--rung", "cold", "--cache-dir", str(tmp_path / "c")]
    done = coldstart(*tiny, "--repeats", "1", "--results-dir", str(tmp_path / "saved"))
    assert done.returncode == 0, done.stderr[-3000:]
    (source,) = (tmp_path / "saved" / "bundles").rglob("*.bin")
    copy = tmp_path / "elsewhere" / source.name
    copy.parent.mkdir()
    shutil.copyfile(source, copy)
    about = json.loads(source.with_suffix(".json").read_text())
    about["bundle"]["source_env_id"] = "0123456789ab"
    copy.with_suffix(".json").write_text(json.dumps(about))
    done = coldstart(*tiny, "--repeats", "2", "--results-dir", str(tmp_path / "paired"),
                     "--bundle-from", str(copy), "--trust-descriptions")
    assert done.returncode == 0, done.stderr[-3000:]
    found = read_folder(tmp_path / "paired")
    assert [(r.key.rung, r.repeat) for r in found] == [
        ("cold", 0), (FOREIGN, 0), ("cold", 1), (FOREIGN, 1)]
    assert all(r.status == "ok" for r in found), [r.reason for r in found]
    for r in found:
        hits = r.counters.get("inductor.fxgraph_cache_hit", 0)
        # a cold process after a foreign one still compiles from nothing
        assert (hits >= 1) == (r.key.rung == FOREIGN), (r.key.rung, r.repeat, r.counters)
    assert len({(r.host.boot_id, r.host.hostname) for r in found}) == 1
    (view,) = views(found)
    ((_, rung),) = view.foreign
    assert rung.paired.label == "same host, alternated" and rung.paired.cold.n == 2
