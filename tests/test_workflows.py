"""The GitHub workflows are safe and do their job, checked offline.

Static checks (valid YAML, actions pinned to commit SHAs, least permissions, concurrency,
no `${{ }}` inside a script, zizmor clean at medium and above), then the release
workflow's two scripts run for real with bash against a fake `gh`, the PyPI fixture and
a local git remote: which release gets measured, and how the pull request is opened.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from fixtures import ROOT
from test_report_releases import NEWEST, PYPI_FIXTURE, results_with

from report.releases.next import RELEASE_PATTERN

GITHUB = ROOT / ".github"
WORKFLOWS = sorted((GITHUB / "workflows").glob("*.y*ml"))
SHA_PIN = re.compile(r"^[\w.-]+/[\w./-]+@[0-9a-f]{40} # v\d+\.\d+\.\d+$")


def load(name: str) -> dict:
    return yaml.safe_load((GITHUB / "workflows" / name).read_text())


def steps(workflow: dict):
    for job_name, job in workflow["jobs"].items():
        for step in job["steps"]:
            yield job_name, step


def step(workflow: dict, job: str, step_id: str | None = None, name_has: str = "") -> dict:
    for candidate in workflow["jobs"][job]["steps"]:
        if (step_id and candidate.get("id") == step_id) or (
                name_has and name_has in candidate.get("name", "")):
            return candidate
    raise LookupError(f"{job}: no step {step_id or name_has!r}")


def test_the_workflows_and_dependabot_are_valid_yaml():
    assert {path.name for path in WORKFLOWS} >= {"tests.yml", "site.yml", "torch-release.yml"}
    for path in WORKFLOWS:
        workflow = yaml.safe_load(path.read_text())
        assert isinstance(workflow, dict) and workflow.get("jobs"), path.name
        assert True in workflow or "on" in workflow, f"{path.name}: no trigger"  # YAML 1.1 reads `on` as True
    dependabot = yaml.safe_load((GITHUB / "dependabot.yml").read_text())
    ecosystems = {update["package-ecosystem"] for update in dependabot["updates"]}
    assert dependabot["version"] == 2 and "github-actions" in ecosystems


def test_every_action_is_pinned_to_a_commit_sha_with_its_version():
    uses = [line.split("uses:", 1)[1].strip() for path in WORKFLOWS
            for line in path.read_text().splitlines() if line.strip().lstrip("- ").startswith("uses:")]
    assert uses
    unpinned = [ref for ref in uses if not ref.startswith("./") and not SHA_PIN.match(ref)]
    assert unpinned == [], "pin each action as owner/repo@<40-hex SHA> # vX.Y.Z"


def test_every_job_has_least_permissions_and_every_workflow_a_concurrency_group():
    for path in WORKFLOWS:
        workflow = yaml.safe_load(path.read_text())
        assert workflow.get("permissions") in ({}, {"contents": "read"}), path.name
        assert workflow.get("concurrency", {}).get("group"), path.name
        for name, job in workflow["jobs"].items():
            assert "permissions" in job, f"{path.name}: job {name} has no permissions block"
            assert job.get("timeout-minutes"), f"{path.name}: job {name} has no timeout"


def test_only_the_pages_deploy_can_write_and_it_is_never_cancelled_halfway():
    site = load("site.yml")
    assert site["jobs"]["build"]["permissions"] == {"contents": "read"}
    assert site["jobs"]["deploy"]["permissions"] == {"pages": "write", "id-token": "write"}
    assert site["concurrency"]["cancel-in-progress"] is False


def test_the_release_workflow_measures_read_only_and_a_small_job_opens_the_pr():
    jobs = load("torch-release.yml")["jobs"]
    assert set(jobs["measure"]["permissions"].values()) == {"read"}
    assert jobs["propose"]["permissions"] == {"contents": "write", "pull-requests": "write"}
    assert jobs["propose"]["needs"] == "measure"
    assert [s for s in jobs["propose"]["steps"] if "uses" in s and "create-pull-request" in s["uses"]] == []


def test_no_expression_is_expanded_inside_a_script():
    """Inputs and step outputs reach scripts through `env:`, never `${{ }}` in `run:`."""
    for path in WORKFLOWS:
        for job, each in steps(yaml.safe_load(path.read_text())):
            assert "${{" not in each.get("run", ""), f"{path.name}: job {job}: {each.get('name')}"


def test_checkouts_keep_no_credentials():
    for path in WORKFLOWS:
        for _, each in steps(yaml.safe_load(path.read_text())):
            if each.get("uses", "").startswith("actions/checkout@"):
                assert each.get("with", {}).get("persist-credentials") is False, path.name


def test_workflows_only_call_nox_sessions_that_exist():
    sessions = set(re.findall(r"@nox\.session\s+def (\w+)", (ROOT / "noxfile.py").read_text()))
    called = {name for path in WORKFLOWS for _, each in steps(yaml.safe_load(path.read_text()))
              for name in re.findall(r"nox -s (\w+)", each.get("run", ""))}
    assert called and called <= sessions


def test_ci_runs_the_readme_check_and_lint():
    tests = load("tests.yml")
    runs = {name: "\n".join(s.get("run", "") for s in job["steps"])
            for name, job in tests["jobs"].items()}
    assert "bash .ci/run" in runs["tests"]
    assert "nox -s lint" in runs["lint"]
    lint_session = (ROOT / "noxfile.py").read_text().split("def lint(", 1)[1].split("@nox.session")[0]
    assert '"zizmor", "--offline", "--min-severity", "medium"' in lint_session


def test_the_ab_run_stops_inside_the_job_timeout_on_the_cpu_build_and_keeps_its_records():
    measure = load("torch-release.yml")["jobs"]["measure"]
    bench = step({"jobs": {"m": measure}}, "m", name_has="measure it A/B")
    max_minutes = int(re.search(r"--max-minutes (\d+)", bench["env"]["AB_OPTIONS"]).group(1))
    assert max_minutes <= measure["timeout-minutes"] - 30  # room to build the site and upload
    assert bench["env"]["ATLAS_TORCH_INDEX"] == "https://download.pytorch.org/whl/cpu"
    assert "ATLAS_TORCH_INDEX" in (ROOT / "noxfile.py").read_text()
    assert ('nox -s ab -- --torch "$PREVIOUS" --torch "$TORCH_RELEASE" --torch "$TORCH_RELEASE"'
            in bench["run"])  # one job, one runner: A/B, and the new release again for A/A
    uploads = {s["with"]["name"].split("-")[0]: s for s in measure["steps"]
               if s.get("uses", "").startswith("actions/upload-artifact@")}
    assert uploads["results"]["with"]["path"].rstrip("/") == "results"
    assert uploads["results"]["if"].startswith("always()")
    assert uploads["site"]["with"]["path"].rstrip("/") == "site"


def test_the_workflow_checks_releases_with_the_detectors_pattern():
    text = (GITHUB / "workflows" / "torch-release.yml").read_text()
    assert text.count(f"^{RELEASE_PATTERN}$") == 2  # once per job


def test_site_url_is_set_and_mkdocs_is_capped_below_2():
    site_url = re.search(r"^site_url:\s*(\S+)", (ROOT / "mkdocs.yml").read_text(), re.M)
    assert site_url and site_url.group(1).startswith("https://") and site_url.group(1).endswith("/")
    assert '"mkdocs>=1.6,<2"' in (ROOT / "pyproject.toml").read_text()


def test_every_dependency_group_but_torch_is_pinned_in_constraints_txt():
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    groups = tomllib.loads((ROOT / "pyproject.toml").read_text())["dependency-groups"]
    names = {re.split(r"[<>=!~\[; ]", item, maxsplit=1)[0].lower().replace("_", "-")
             for group in groups.values() for item in group if isinstance(item, str)}
    pins = dict(line.split("==") for line in (ROOT / "constraints.txt").read_text().splitlines()
                if line and not line.startswith("#"))
    pinned = {name.lower().replace("_", "-") for name in pins}
    assert names - {"torch"} <= pinned
    assert "torch" not in pinned  # each session picks its torch release
    noxfile = (ROOT / "noxfile.py").read_text()
    assert '"-c", str(CONSTRAINTS)' in noxfile and '"constraints.txt"' in noxfile


def zizmor() -> str | None:
    beside_python = Path(sys.executable).with_name("zizmor")
    return str(beside_python) if beside_python.exists() else shutil.which("zizmor")


def test_zizmor_finds_nothing_at_medium_or_above():
    found = zizmor()
    if found is None:
        pytest.skip("zizmor is not installed here; `nox -s lint` installs and runs it")
    done = subprocess.run([found, "--offline", "--min-severity", "medium", "--format", "json",
                           str(GITHUB)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout) == []


# The release workflow's scripts, run with bash as GitHub runs them.

FAKE_GH = """#!/bin/bash
echo "$*" >> "$FAKE_GH_LOG"
case "$1 $2" in
  "api "*) printf '%s' "${FAKE_REFS:-}" ;;        # what --jq '.[].ref' prints: one ref a line
  "pr list") echo "${FAKE_OPEN_PRS:-0}" ;;        # what --jq length prints
  "pr create") shift 2; while [ $# -gt 0 ]; do
      [ "$1" = --body-file ] && cp "$2" "$FAKE_GH_LOG.body"; shift; done ;;
esac
"""


def run_script(script: str, cwd: Path, tmp_path: Path, **env: str) -> subprocess.CompletedProcess:
    bin_dir = tmp_path / "bin"
    if not bin_dir.exists():
        bin_dir.mkdir()
        (bin_dir / "gh").write_text(FAKE_GH)
        (bin_dir / "gh").chmod(0o755)
        (bin_dir / "python").symlink_to(sys.executable)
    (tmp_path / "step.sh").write_text(script)
    base = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(tmp_path), "GIT_CONFIG_NOSYSTEM": "1",
            "PYTHONPATH": str(ROOT), "ATLAS_PYPI_JSON": str(PYPI_FIXTURE),
            "FAKE_GH_LOG": str(tmp_path / "gh.log"), "GITHUB_OUTPUT": str(tmp_path / "output"),
            "RUNNER_TEMP": str(tmp_path), "GH_TOKEN": "fake-token", "REPOSITORY": "owner/atlas",
            "RUN_ID": "7"}
    return subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(tmp_path / "step.sh")],
                          cwd=cwd, env=base | env, capture_output=True, text=True, check=False)


def pick(tmp_path: Path, measured: tuple[str, ...] = ("2.14.1+cpu",), **env: str):
    """Run the `pick the release` step in a checkout whose results/ has these CPU records."""
    checkout = tmp_path / "checkout"
    results_with(checkout / "results", *(("cpu", torch) for torch in measured))
    script = step(load("torch-release.yml"), "measure", step_id="release")["run"]
    done = run_script(script, checkout, tmp_path, **{"REQUESTED": "", **env})
    output = tmp_path / "output"
    return done, (output.read_text() if output.exists() else "")


@pytest.mark.parametrize(("case", "env", "measured", "picked"), [
    ("new release on PyPI", {}, ("2.14.1+cpu",), NEWEST),
    ("already measured", {}, (f"{NEWEST}+cpu",), None),
    ("its branch exists", {"FAKE_REFS": f"refs/heads/results/torch-{NEWEST}\n"}, ("2.14.1+cpu",), None),
    ("only a longer branch name", {"FAKE_REFS": f"refs/heads/results/torch-{NEWEST}-old\n"},
     ("2.14.1+cpu",), NEWEST),
    ("an open pull request", {"FAKE_OPEN_PRS": "1"}, ("2.14.1+cpu",), None),
    ("asked for by hand", {"REQUESTED": "2.12.1"}, ("2.14.1+cpu",), "2.12.1"),
])
def test_the_release_step_picks_each_release_once(tmp_path, case, env, measured, picked):
    done, output = pick(tmp_path, measured, **env)
    assert done.returncode == 0, f"{case}: {done.stderr}"
    previous = {NEWEST: "2.14.1", "2.12.1": "2.12.0"}.get(picked)
    assert output == (f"torch={picked}\nprevious={previous}\ngroup=ci7\n" if picked else ""), case


@pytest.mark.parametrize("requested", ['2.15.0"; touch pwned; "', "2.15", "2.15.0rc1",
                                       "$(touch pwned)", "2.15.0\ntorch=9.9.9"])
def test_the_release_step_refuses_an_input_that_is_not_a_release(tmp_path, requested):
    done, output = pick(tmp_path, REQUESTED=requested)
    assert done.returncode == 1 and output == ""
    assert "::error::" in done.stdout
    assert not list(tmp_path.rglob("pwned"))
    assert not (tmp_path / "gh.log").exists()  # refused before any lookup


def test_the_release_step_fails_loudly_when_pypi_cannot_be_read(tmp_path):
    (tmp_path / "garbage.json").write_text("{not json")
    done, output = pick(tmp_path, ATLAS_PYPI_JSON=str(tmp_path / "garbage.json"))
    assert done.returncode == 1 and output == ""
    assert "report.releases: " in done.stderr


def git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
                          cwd=cwd, capture_output=True, text=True, check=True).stdout


def propose(tmp_path: Path, new_records: bool) -> tuple[subprocess.CompletedProcess, Path]:
    """Run the `propose` job's script in a clone of a local remote, after the download."""
    origin, checkout = tmp_path / "origin.git", tmp_path / "checkout"
    git("init", "--quiet", "--bare", "--initial-branch=main", str(origin), cwd=tmp_path)
    git("clone", "--quiet", str(origin), str(checkout), cwd=tmp_path)
    (checkout / "results").mkdir()
    (checkout / "results" / "old.jsonl").write_text("{}\n")
    git("add", "results", cwd=checkout)
    git("commit", "--quiet", "-m", "old records", cwd=checkout)
    git("push", "--quiet", "origin", "HEAD:main", cwd=checkout)
    if new_records:  # what actions/download-artifact leaves in results/
        (checkout / "results" / f"cpu-torch{NEWEST}.jsonl").write_text("{}\n")
    script = step(load("torch-release.yml"), "propose", name_has="open the pull request")["run"]
    done = run_script(script, checkout, tmp_path, TORCH_RELEASE=NEWEST, PREVIOUS="2.14.1",
                      GROUP="ci7", BASE="main",
                      SERVER="https://github.com", RUN_URL="https://github.com/owner/atlas/actions/runs/7")
    return done, origin


def test_propose_pushes_the_records_to_their_branch_and_opens_the_pr(tmp_path):
    done, origin = propose(tmp_path, new_records=True)
    assert done.returncode == 0, done.stderr
    branch = f"results/torch-{NEWEST}"
    assert git("--git-dir", str(origin), "diff", "--name-only", "main", branch, cwd=tmp_path) == (
        f"results/cpu-torch{NEWEST}.jsonl\n")
    calls = (tmp_path / "gh.log").read_text()
    assert f"pr create --repo owner/atlas --base main --head {branch} " in calls
    body = (tmp_path / "gh.log.body").read_text()
    assert f"site-torch-{NEWEST}" in body and "https://github.com/owner/atlas/actions/runs/7" in body
    assert "A/B against torch 2.14.1" in body and "group=ci7,label=2.14.1" in body
    assert "fake-token" not in done.stdout + done.stderr


def test_propose_does_nothing_without_new_records(tmp_path):
    done, origin = propose(tmp_path, new_records=False)
    assert done.returncode == 0, done.stderr
    assert "nothing to propose" in done.stdout
    assert not (tmp_path / "gh.log").exists()
    heads = git("--git-dir", str(origin), "for-each-ref", "--format=%(refname)", "refs/heads", cwd=tmp_path)
    assert heads.split() == ["refs/heads/main"]


# The A/B step and the compare step, run here against one release under three labels: a
# nox without installs makes every --torch this interpreter, through noxfile's own
# argument handling and labels.

FAKE_NOX = """#!{python}
import os, subprocess, sys, tomllib, types

root = os.environ["PYTHONPATH"]
nox = types.ModuleType("nox")
nox.options = types.SimpleNamespace()
nox.Session = object
nox.session = lambda f=None, **k: f if f else (lambda g: g)
nox.project = types.SimpleNamespace(load_toml=lambda p: tomllib.load(open(os.path.join(root, p), "rb")),
                                    dependency_groups=lambda *a: [])
sys.modules["nox"] = nox
sys.path.insert(0, root)
cwd = os.getcwd()
os.chdir(root)
import noxfile
os.chdir(cwd)

args = sys.argv[1:]
name = args[args.index("-s") + 1]
session = types.SimpleNamespace(posargs=args[args.index("--") + 1:] if "--" in args else [])
with open(os.environ["FAKE_NOX_LOG"], "a") as log:
    log.write(" ".join(args) + "\\n")
if name == "ab":
    releases = noxfile.torch_releases(session)
    sides = [x for label in noxfile.ab_labels(releases) for x in ("--env", f"{{label}}={{sys.executable}}")]
    sys.exit(subprocess.call([sys.executable, "-m", "bench.ab", *sides, *session.posargs]))
if name == "docs":  # the site build is tested elsewhere; its environment's python is used
    os.makedirs(".nox/docs/bin", exist_ok=True)
    with open(".nox/docs/bin/python", "w") as wrapper:  # a link would lose the venv
        wrapper.write(f"#!/bin/sh\\nexec {{sys.executable}} \\"$@\\"\\n")
    os.chmod(".nox/docs/bin/python", 0o755)
    sys.exit(0)
sys.exit(f"fake nox: no session {{name}}")
"""


@pytest.mark.slow
def test_the_ab_step_and_the_compare_step_run_here_under_three_labels(tmp_path):
    from bench import ab
    from bench.records import read_records

    checkout = tmp_path / "checkout"
    checkout.mkdir()
    run_script("true", checkout, tmp_path)  # makes bin/ with the fake gh and python
    (tmp_path / "bin" / "nox").write_text(FAKE_NOX.format(python=sys.executable))
    (tmp_path / "bin" / "nox").chmod(0o755)
    (tmp_path / "tmp").mkdir()
    workflow = load("torch-release.yml")
    env = {"TORCH_RELEASE": NEWEST, "PREVIOUS": "2.14.1", "GROUP": "ci7",
           "FAKE_NOX_LOG": str(tmp_path / "nox.log"), "TMPDIR": str(tmp_path / "tmp"),
           "AB_OPTIONS": "--backend cpu --workload matmul-128 --mode eager --mode default "
                         "--shapes tiny --rounds 3 --budget 0.02 --repeats 2 --machine ci-test "
                         f"--cache-dir {tmp_path / 'cache'}",
           "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md")}
    measured = run_script(step(workflow, "measure", name_has="measure it A/B")["run"], checkout,
                          tmp_path, **env)
    assert measured.returncode == 0, measured.stdout[-2000:] + measured.stderr[-2000:]
    records = [r for path in sorted((checkout / "results").glob("*.jsonl"))
               for r in read_records(path)]
    paired = sorted((r for r in records if r.process.timing == "paired"), key=lambda r: r.started_at)
    turns = list(dict.fromkeys((ab.parse_tag(r.key.tag)[1], r.process.repeat) for r in paired))
    assert turns == [("2.14.1", 0), (NEWEST, 0), (f"{NEWEST}-aa", 0),
                     (f"{NEWEST}-aa", 1), (NEWEST, 1), ("2.14.1", 1)]
    assert {ab.parse_tag(r.key.tag)[0] for r in records} == {"ci7"}
    compared = run_script(step(workflow, "measure", name_has="compare the two releases")["run"],
                          checkout, tmp_path, **env)
    assert compared.returncode == 0, compared.stderr[-2000:]
    summary = (tmp_path / "summary.md").read_text()
    assert "A/B group ci7: old " in summary and "(label 2.14.1" in summary
    assert f"(label {NEWEST}," in summary and "one host, one run" in summary
    # the group measured its own floor; on a loaded runner it can read as a factor, not ±
    floor = re.search(r"^A/A noise floor: .+? \(median over (\d+) cases", summary, re.M)
    assert floor and int(floor[1]) == 2, summary
