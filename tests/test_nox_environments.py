"""noxfile.py's environments: torch is installed once for `nox -s bench docs` (the notebook's
kernel runs in the release's torch environment), and the models group only where a profile
builds real models. noxfile.py is loaded under a minimal stand-in for nox, as in
tests/test_workflows.py: its functions only name the commands a session runs."""

import importlib.util
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

from bench.backends import BACKENDS
from bench.workloads import lookup
from bench.workloads.registry import ORDER

tomllib = pytest.importorskip("tomllib")  # Python 3.11+

ROOT = Path(__file__).resolve().parents[1]
RELEASE = "2.15.0"


@pytest.fixture
def noxfile(monkeypatch):
    nox = types.ModuleType("nox")
    nox.options = types.SimpleNamespace()
    nox.Session = object
    nox.session = lambda f=None, **_: f if f else (lambda g: g)
    nox.project = types.SimpleNamespace(
        load_toml=lambda path: tomllib.loads((ROOT / path).read_text()),
        dependency_groups=lambda _, *groups: [f"<{group}>" for group in groups])
    monkeypatch.setitem(sys.modules, "nox", nox)
    spec = importlib.util.spec_from_file_location("atlas_noxfile", ROOT / "noxfile.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Session:
    """What a nox session is asked to run, in order; nothing runs."""

    def __init__(self, venv: Path, posargs=()):
        self.virtualenv = types.SimpleNamespace(location=str(venv))
        self.posargs = list(posargs)
        self.commands: list[list[str]] = []

    def run(self, *args, **_):
        self.commands.append([str(arg) for arg in args])

    def install(self, *args):
        self.commands.append(["<session pip install>", *args])


def torch_installs(session: Session) -> list[str]:
    """The interpreter each torch install goes to (the session's own for session.install)."""
    return [command[0] for command in session.commands
            if f"torch=={RELEASE}" in command and "install" in " ".join(command[:4])]


def test_bench_and_the_notebook_kernel_install_torch_into_one_environment(noxfile, tmp_path):
    bench, docs = Session(tmp_path / "bench"), Session(tmp_path / "docs")
    noxfile.run_bench(bench, RELEASE)
    kernel_env = noxfile.notebook_kernel(docs, RELEASE)
    python = str(tmp_path / f"torch-{RELEASE}" / "bin" / "python")
    assert set(torch_installs(bench)) == set(torch_installs(docs)) == {python}
    assert [python, "-m", "bench"] == bench.commands[-1][:3]
    # ipykernel writes its python3 kernel spec under the interpreter's prefix; JUPYTER_PATH
    # names that folder for the site build.
    assert [python, "-m", "ipykernel", "install", "--sys-prefix"] == docs.commands[-1]
    private = Path(kernel_env.pop("TMPDIR"))
    assert kernel_env == {"JUPYTER_PATH": str(tmp_path / f"torch-{RELEASE}" / "share" / "jupyter")}
    # the notebook's torch keeps its default folders in a temp folder of its own, not /tmp
    assert private.is_dir() and private.stat().st_mode & 0o777 == 0o700
    assert private.stat().st_uid == os.getuid()
    private.rmdir()


def test_a_kernel_spec_on_jupyter_path_comes_before_the_builders_own(tmp_path, monkeypatch):
    jupyter_client = pytest.importorskip("jupyter_client.kernelspec")
    done = subprocess.run([sys.executable, "-m", "ipykernel", "install", "--prefix", str(tmp_path)],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "share" / "jupyter"))
    spec = jupyter_client.KernelSpecManager().get_kernel_spec("python3")
    assert Path(spec.resource_dir) == tmp_path / "share" / "jupyter" / "kernels" / "python3"
    assert spec.argv[0] == sys.executable


def test_the_models_group_is_installed_only_for_profiles_with_real_models(noxfile):
    # The quick profile measures no workload that needs timm or transformers, on any backend.
    needing = [name for name in ORDER if lookup(name).requires]
    assert needing
    assert not [name for name in needing for backend in BACKENDS if lookup(name).sizes("quick", backend)]
    assert not noxfile.measures_models([])
    assert not noxfile.measures_models(["--backend", "cpu", "--profile", "quick"])
    assert noxfile.measures_models(["--profile", "full"])
    assert noxfile.measures_models(["--backend", "cpu", "--profile=full"])
    bench = Session(Path("unused"), posargs=["--profile", "full"])
    noxfile.run_bench(bench, RELEASE)
    assert any("<models>" in command for command in bench.commands)
    quick = Session(Path("unused"))
    noxfile.run_bench(quick, RELEASE)
    assert not any("<models>" in command for command in quick.commands)


# ---- a release string is checked before any environment is made from it (issue 94, j2) -----

class Refused(Exception):
    pass


def nox_session(tmp_path: Path, *posargs: str) -> Session:
    session = Session(tmp_path / ".nox" / "ab", posargs)

    def error(message):
        raise Refused(message)

    session.error = error
    return session


@pytest.mark.parametrize("release", ["../../../../x", "2.15.0/../../x", "latest", ""])
def test_nox_refuses_a_torch_release_that_is_no_version_before_making_an_environment(
        noxfile, tmp_path, release):
    session = nox_session(tmp_path, "--torch", "2.15.0", "--torch", release)
    with pytest.raises(Refused) as caught:
        noxfile.ab(session)
    assert str(caught.value) == (f"--torch {release!r} is not a torch release: give a version "
                                 f"such as 2.15.0, 2.16.0rc1, 2.16.0.dev20260101 or 2.15.0+cpu")
    assert session.commands == []  # no venv, no pip
    assert not (tmp_path / ".nox").exists()


def test_nox_refuses_a_bad_atlas_torch_too(noxfile, tmp_path, monkeypatch):
    monkeypatch.setenv("ATLAS_TORCH", "../x")
    session = nox_session(tmp_path, "--profile", "quick")
    with pytest.raises(Refused, match="'../x' is not a torch release"):
        noxfile.bench(session)
    assert session.commands == []


@pytest.mark.parametrize("release", ["2.15.0", "2.16.0rc1", "2.16.0.dev20260101", "2.15.0+cpu"])
def test_nox_takes_every_documented_form_of_a_release(noxfile, tmp_path, release):
    session = nox_session(tmp_path, "--torch", release, "--torch", release)
    noxfile.ab(session)
    assert session.commands[-1][:3] == ["python", "-m", "bench.ab"]
    assert f"{release}-aa@{release}=" in " ".join(session.commands[-1])


@pytest.mark.parametrize("profile", ["quick", "full"])
def test_an_ab_run_installs_the_models_group_into_every_side_when_it_measures_models(
        noxfile, tmp_path, profile):
    """`nox -s ab -- ... -- --profile full --workload gpt2-small-prompts` builds transformers
    models in every side's environment, as `nox -s bench` would in its one."""
    session = Session(tmp_path / "ab", posargs=["--group", "g", "--", "--profile", profile])
    noxfile.measure_ab(session, ["2.14.1", "2.15.0"])
    side_installs = {c[0] for c in session.commands if "<models>" in c}
    sides = {str(tmp_path / f"torch-{r}" / "bin" / "python") for r in ("2.14.1", "2.15.0")}
    assert side_installs == (sides if profile == "full" else set())
    assert session.commands[-1][:3] == ["python", "-m", "bench.ab"]
