"""CI measures each new PyTorch release once: which release is new, and the workflows."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
import yaml
from fixtures import ROOT

from report.releases import final_releases, measured_releases, next_release

WORKFLOWS = ROOT / ".github" / "workflows"


def pypi(*versions: str, yanked: tuple[str, ...] = ()) -> dict:
    return {"releases": {v: [{"filename": f"torch-{v}.whl", "yanked": v in yanked}]
                         for v in versions}}


def test_final_releases_sort_numerically_and_drop_previews_and_yanked():
    answer = pypi("2.9.1", "2.10.0", "2.13.0", "2.14.0rc1", "2.15.0.dev20261101", "2.13.1",
                  yanked=("2.13.1",))
    answer["releases"]["2.12.0"] = []  # a release with no files cannot be installed
    assert final_releases(answer) == ["2.9.1", "2.10.0", "2.13.0"]


def test_next_release_is_the_newest_unless_measured():
    answer = pypi("2.12.0", "2.13.0")
    assert next_release(answer, {"2.12.0"}) == "2.13.0"
    assert next_release(answer, {"2.13.0"}) is None
    assert next_release({"releases": {}}, set()) is None


def test_measured_releases_come_from_the_committed_records_per_backend():
    assert "2.13.0" in measured_releases(ROOT / "results", "cpu")
    assert "2.13.0" not in measured_releases(ROOT / "results", "cuda")
    assert measured_releases(ROOT / "results", "mps") == set()


def run_cli(tmp_path, answer) -> subprocess.CompletedProcess:
    answer_file = tmp_path / "pypi.json"
    answer_file.write_text(answer if isinstance(answer, str) else json.dumps(answer))
    return subprocess.run([sys.executable, "-m", "report.releases", "--results",
                           str(ROOT / "results"), "--pypi-json", str(answer_file)],
                          cwd=ROOT, capture_output=True, text=True, check=False)


@pytest.mark.parametrize(("versions", "printed"), [(("2.12.0", "2.13.0"), ""),
                                                    (("2.13.0", "2.14.0"), "2.14.0\n")])
def test_cli_prints_only_a_release_the_results_lack(tmp_path, versions, printed):
    done = run_cli(tmp_path, pypi(*versions))
    assert (done.returncode, done.stdout, done.stderr) == (0, printed, "")


def test_cli_unreadable_answer_is_one_line_and_nonzero(tmp_path):
    done = run_cli(tmp_path, "{not json")
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr.startswith("report.releases: ") and done.stderr.count("\n") == 1


def workflow_commands() -> dict[str, str]:
    commands = {}
    for path in sorted(WORKFLOWS.glob("*.yml")):
        jobs = yaml.safe_load(path.read_text())["jobs"]
        commands[path.name] = "\n".join(step.get("run", "") for job in jobs.values()
                                        for step in job["steps"])
    return commands


def test_workflows_only_call_nox_sessions_that_exist():
    sessions = set(re.findall(r"@nox\.session\s+def (\w+)", (ROOT / "noxfile.py").read_text()))
    called = {name for text in workflow_commands().values()
              for name in re.findall(r"nox -s (\w+)", text)}
    assert called and called <= sessions


def test_release_workflow_measures_the_release_it_picked_and_tests_run_ci():
    commands = workflow_commands()
    assert "python -m report.releases" in commands["torch-release.yml"]
    assert '--torch "${{ steps.release.outputs.torch }}"' in commands["torch-release.yml"]
    assert commands["tests.yml"].strip() == "bash .ci/run"
