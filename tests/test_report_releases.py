"""CI measures each new PyTorch release once: which release is new, simulated offline.

tests/fixtures/pypi_torch.json is PyPI's JSON answer for torch cut down to a few files per
release (made up, in PyPI's shape): final releases up to 2.15.0, a yanked 2.15.1, previews,
a post-release and a release without files. The workflow's own decision step runs
against it in tests/test_workflows.py.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest
from fixtures import RESULTS, ROOT

from bench.records import read_records
from report.releases.next import final_releases, measured_releases, next_release

PYPI_FIXTURE = Path(__file__).parent / "fixtures" / "pypi_torch.json"
NEWEST = "2.15.0"  # the newest final, installable release in the fixture


def pypi(*versions: str, yanked: tuple[str, ...] = ()) -> dict:
    return {"releases": {v: [{"filename": f"torch-{v}.whl", "yanked": v in yanked}]
                         for v in versions}}


def results_with(folder: Path, *torch_by_backend: tuple[str, str]) -> Path:
    """A results folder whose records say they were measured with these (backend, torch)."""
    folder.mkdir(parents=True)
    template = next(read_records(RESULTS / "cpu.jsonl"))
    for i, (backend, torch) in enumerate(torch_by_backend):
        env = dataclasses.replace(template.env, backend=backend, torch=torch)
        record = dataclasses.replace(template, env=env, env_id=env.env_id(),
                                     key=dataclasses.replace(template.key, backend=backend))
        (folder / f"{i}-{backend}-{torch}.jsonl").write_text(record.to_json() + "\n")
    return folder


def test_final_releases_sort_numerically_and_drop_previews_and_yanked():
    answer = pypi("2.9.1", "2.10.0", "2.13.0", "2.14.0rc1", "2.15.0.dev20261101", "2.13.1",
                  "0.4.1.post2", yanked=("2.13.1",))
    answer["releases"]["2.12.0"] = []  # a release with no files cannot be installed
    assert final_releases(answer) == ["2.9.1", "2.10.0", "2.13.0"]


def test_the_fixture_is_pypis_shape_and_its_newest_installable_release_is_known():
    answer = json.loads(PYPI_FIXTURE.read_text())
    assert answer["info"]["name"] == "torch"
    assert final_releases(answer)[-3:] == ["2.14.0", "2.14.1", NEWEST]


def test_next_release_is_the_newest_unless_measured():
    answer = pypi("2.12.0", "2.13.0")
    assert next_release(answer, {"2.12.0"}) == "2.13.0"
    assert next_release(answer, {"2.13.0"}) is None
    assert next_release({"releases": {}}, set()) is None


def test_measured_releases_come_from_the_records_per_backend_without_local_tags(tmp_path):
    results = results_with(tmp_path / "results", ("cpu", "2.14.1+cpu"), ("cuda", "2.15.0+cu130"))
    assert measured_releases(results, "cpu") == {"2.14.1"}
    assert measured_releases(results, "cuda") == {"2.15.0"}
    assert measured_releases(results, "mps") == set()
    assert "2.13.0" in measured_releases(ROOT / "results", "cpu")


def run_cli(results: Path, answer: Path | str | dict, *, via_env: bool = False,
            tmp_path: Path | None = None) -> subprocess.CompletedProcess:
    if not isinstance(answer, Path):
        assert tmp_path is not None
        answer_file = tmp_path / "pypi.json"
        answer_file.write_text(answer if isinstance(answer, str) else json.dumps(answer))
        answer = answer_file
    env = {"PATH": "/usr/bin:/bin"}
    args = ["--results", str(results)]
    if via_env:
        env["ATLAS_PYPI_JSON"] = str(answer)
    else:
        args += ["--pypi-json", str(answer)]
    # -S: no site-packages, as the workflow runs it before installing anything.
    return subprocess.run([sys.executable, "-S", "-m", "report.releases", *args], cwd=ROOT,
                          env=env, capture_output=True, text=True, check=False)


@pytest.mark.parametrize("via_env", [False, True])
def test_a_new_release_on_pypi_is_reported_until_it_has_cpu_records(tmp_path, via_env):
    # Before: records up to 2.14.1 on CPU, and 2.15.0 on CUDA only.
    before = [("cpu", "2.13.0+cpu"), ("cpu", "2.14.1+cpu"), ("cuda", "2.15.0+cu130")]
    done = run_cli(results_with(tmp_path / "before", *before), PYPI_FIXTURE, via_env=via_env)
    assert (done.returncode, done.stdout, done.stderr) == (0, f"{NEWEST}\n", "")
    # Once its CPU records are merged, the same answer reports nothing: measured once.
    after = results_with(tmp_path / "after", *before, ("cpu", f"{NEWEST}+cpu"))
    done = run_cli(after, PYPI_FIXTURE, via_env=via_env)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def test_the_committed_results_against_the_fixture():
    measured = measured_releases(ROOT / "results", "cpu")
    done = run_cli(ROOT / "results", PYPI_FIXTURE)
    assert done.returncode == 0, done.stderr
    assert done.stdout == ("" if NEWEST in measured else f"{NEWEST}\n")


@pytest.mark.parametrize(("versions", "printed"), [(("2.12.0", "2.13.0"), ""),
                                                    (("2.13.0", "2.14.0"), "2.14.0\n")])
def test_cli_prints_only_a_release_the_results_lack(tmp_path, versions, printed):
    results = results_with(tmp_path / "results", ("cpu", "2.13.0+cpu"))
    done = run_cli(results, pypi(*versions), tmp_path=tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (0, printed, "")


def test_cli_unreadable_answer_is_one_line_and_nonzero(tmp_path):
    done = run_cli(ROOT / "results", "{not json", tmp_path=tmp_path)
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr.startswith("report.releases: ") and done.stderr.count("\n") == 1


def test_the_release_before_is_the_previous_final_installable_one():
    from report.releases.next import previous_release

    fixture = json.loads(PYPI_FIXTURE.read_text())
    assert previous_release(fixture, NEWEST) == "2.14.1"  # 2.15.1 is yanked, previews skipped
    assert previous_release(fixture, "2.12.1") == "2.12.0"
    assert previous_release(pypi("2.13.0", "2.14.0", yanked=("2.13.0",)), "2.14.0") is None


@pytest.mark.parametrize(("before", "code", "printed"), [("2.15.0", 0, "2.14.1\n"),
                                                         ("1.0.0", 0, ""), ("2.15", 2, "")])
def test_cli_before_prints_the_release_to_measure_against(before, code, printed):
    done = subprocess.run([sys.executable, "-m", "report.releases", "--pypi-json",
                           str(PYPI_FIXTURE), "--before", before], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)
    assert (done.returncode, done.stdout) == (code, printed)
    assert done.stderr.count("\n") == (1 if code else 0)
