"""Sessions: `nox -s bench docs` measures this machine and builds the site; `nox -s tests`."""

import argparse
import os
import sys
import tempfile
from pathlib import Path

import nox

# nox puts neither the checkout nor the working folder on sys.path; bench.cmdline is the
# standard library alone, and holds the one definition of a release string.
sys.path.insert(0, str(Path(__file__).parent))
from bench.cmdline import release_problem  # noqa: E402

nox.options.sessions = ["lint", "tests"]
nox.options.default_venv_backend = "venv"

PYPROJECT = nox.project.load_toml("pyproject.toml")
# The torch release the suite is pinned to, stated once in pyproject.toml.
TORCH_PIN = PYPROJECT["tool"]["atlas"]["torch"]
# Exact versions for every dependency group but torch (`nox -s lock` rewrites it).
CONSTRAINTS = Path(__file__).parent / "constraints.txt"


def torch_releases(session: nox.Session) -> list[str]:
    """Take every `--torch X` posarg off the argument list, in order; without one,
    ATLAS_TORCH, else the pin."""
    args, rest, releases = list(session.posargs), [], []
    while args:
        arg = args.pop(0)
        if arg == "--torch" and args:
            releases.append(args.pop(0))
        elif arg.startswith("--torch="):
            releases.append(arg.split("=", 1)[1])
        else:
            rest.append(arg)
    session.posargs[:] = rest
    releases = releases or [os.environ.get("ATLAS_TORCH", TORCH_PIN)]
    for release in releases:  # before any environment is made from it
        if release_problem(release):
            session.error(f"--torch {release_problem(release)}")
    return releases


def torch_release(session: nox.Session) -> str:
    """The one release of a session that installs one (`--torch X`, ATLAS_TORCH or the pin)."""
    releases = torch_releases(session)
    if len(releases) > 1:
        session.error(f"this session installs one torch release; got {', '.join(releases)} "
                      f"(nox -s bench or nox -s ab measure several A/B)")
    return releases[0]


def install(session: nox.Session, *groups: str, torch: str | None = None,
            python: str | None = None, byte_compile: bool = True) -> None:
    """Torch and dependency groups into the session's environment, or into the one whose
    interpreter is `python`. Without `byte_compile`, pip leaves the compiling of each module
    to its first import."""
    options = () if byte_compile else ("--no-compile",)
    pip = ((lambda *args: session.run(python, "-m", "pip", "install", *options, *args,
                                      external=True))
           if python else (lambda *args: session.install(*options, *args)))
    # ATLAS_TORCH_INDEX picks torch's index, e.g. https://download.pytorch.org/whl/cpu on a CPU runner.
    index = os.environ.get("ATLAS_TORCH_INDEX")
    if torch:
        pip(f"torch=={torch}", *(["--index-url", index] if index else []))
    if groups:
        # torch named again: timm pulls torchvision, which pip would otherwise match to the
        # newest torch and upgrade the release just installed.
        pinned = [f"torch=={torch}"] if torch else []
        pip("-c", str(CONSTRAINTS), *pinned, *nox.project.dependency_groups(PYPROJECT, *groups))


def torch_environment(session: nox.Session, release: str, *groups: str) -> str:
    """The interpreter of .nox/torch-RELEASE, with `groups` installed there: one environment
    per release for every session that runs torch (bench, the notebook's kernel in docs),
    so that `nox -s bench docs` downloads and installs torch once, not once per session."""
    venv = Path(session.virtualenv.location).parent / f"torch-{release}"
    python = venv / "bin" / "python"
    if not python.exists():
        session.run("python", "-m", "venv", str(venv))
    install(session, *groups, torch=release, python=str(python))
    return str(python)


def measures_models(bench_args: list[str]) -> bool:
    """Whether a `python -m bench` run may build a real model (timm, transformers): the
    quick profile, the default, has none (bench/workloads/models.py) and refuses one named."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--profile", default="quick")
    # `nox -s ab -- AB-OPTIONS -- BENCH-OPTIONS`: a "--" would end argparse's options
    return parser.parse_known_args([a for a in bench_args if a != "--"])[0].profile != "quick"


@nox.session
def bench(session: nox.Session) -> None:
    """Measure every backend found here (options after `--` go to `python -m bench`); the
    models group too when the profile measures the real models (any but quick). Two or
    more `--torch` measure those releases A/B, as `nox -s ab` does."""
    releases = torch_releases(session)
    if len(releases) > 1:
        measure_ab(session, releases)
        return
    run_bench(session, releases[0])


def run_bench(session: nox.Session, release: str) -> None:
    groups = ("models",) if measures_models(session.posargs) else ()
    python = torch_environment(session, release, *groups)
    session.run(python, "-m", "bench", *session.posargs, env={"ATLAS_TORCH_PIN": release},
                external=True)


@nox.session
def ab(session: nox.Session) -> None:
    """Releases A/B on this host in one run: `nox -s ab -- --torch 2.14.1 --torch 2.15.0`
    installs each into its own environment and runs `python -m bench.ab`, which alternates
    their processes (ABBA per workload size); a release named twice is an A/A run. Other
    options go to bench.ab (--group, --repeats, --workload, --backend, --results-dir,
    --dry-run) or, any other, to every `python -m bench` turn (--profile, --machine...)."""
    releases = torch_releases(session)
    if len(releases) < 2:
        session.error("name two or more releases: --torch A --torch B (the same one twice "
                      "for an A/A run)")
    measure_ab(session, releases)


def ab_labels(releases: list[str]) -> list[str]:
    """A label per release: the release, then `-aa`, `-aa2`... for a release named again."""
    seen: dict[str, int] = {}
    labels = []
    for release in releases:
        seen[release] = seen.get(release, 0) + 1
        count = seen[release]
        labels.append(release if count == 1 else f"{release}-aa" + (str(count - 1) if count > 2
                                                                     else ""))
    return labels


def measure_ab(session: nox.Session, releases: list[str]) -> None:
    """Each release in its torch environment under .nox/ (the one `nox -s bench` uses:
    `bench/` needs torch alone), then `python -m bench.ab` over them; the session's own
    environment runs the orchestrator, which never imports torch."""
    groups = ("models",) if measures_models(session.posargs) else ()  # as run_bench
    sides = []
    for release, label in zip(releases, ab_labels(releases), strict=True):
        sides += ["--env", f"{label}@{release}={torch_environment(session, release, *groups)}"]
    session.run("python", "-m", "bench.ab", *sides, *session.posargs)


@nox.session
def docs(session: nox.Session) -> None:
    """Render results/ into docs/ and build site/; `nox -s docs -- serve` serves it live."""
    build_site(session, torch_release(session), *session.posargs)


def build_site(session: nox.Session, release: str, *args: str, tool: str = "mkdocs",
               groups: tuple[str, ...] = ("docs",)) -> None:
    # Compiled at first import: a build imports a few of the modules it installs (byte-
    # compiling all of the docs group is 9 of its 20 s of install CPU; those imported, 2 s).
    install(session, *groups, byte_compile=False)
    session.env.update(notebook_kernel(session, release), NO_MKDOCS_2_WARNING="1")
    session.run("python", "-m", "report", "--results", "results", "--docs", "docs")
    if args[:1] == ("serve",):
        session.run(tool, "serve", *args[1:])
    else:
        session.run(tool, "build", "--strict", *args)


def notebook_kernel(session: nox.Session, release: str) -> dict[str, str]:
    """The notebook executes torch. Its kernel runs in the release's torch environment,
    which `nox -s bench` has made (or this makes), so the docs environment needs no second
    copy of torch: ipykernel there writes a `python3` kernel spec naming that interpreter,
    and JUPYTER_PATH, searched before the builder's own kernel, points the site build at it."""
    python = torch_environment(session, release)
    session.run(python, "-m", "pip", "install", "-c", str(CONSTRAINTS), f"torch=={release}",
                "ipykernel", external=True)
    session.run(python, "-m", "ipykernel", "install", "--sys-prefix", external=True,
                silent=True)
    # The notebook compiles with torch's default cache folders, which live in the temp folder:
    # a private one (mode 0700), never a shared /tmp where another user could plant a
    # precompiled header that torch would compile in (bench/pool.py, private_temp).
    private = tempfile.mkdtemp(prefix="atlas-notebook-")
    return {"JUPYTER_PATH": str(Path(python).parent.parent / "share" / "jupyter"),
            "TMPDIR": private}


@nox.session(name="docs-properdocs")
def docs_properdocs(session: nox.Session) -> None:
    """`docs` built by ProperDocs, the maintained fork of MkDocs 1.x, from the same mkdocs.yml:
    switching is this one tool name. The tests session builds the fixture site with it too."""
    build_site(session, torch_release(session), *session.posargs, tool="properdocs",
               groups=("docs", "properdocs"))


@nox.session
def release(session: nox.Session) -> None:
    """`bench` then `docs`, torch installed once (CI for a new release)."""
    release = torch_release(session)
    run_bench(session, release)
    build_site(session, release)


@nox.session
def tests(session: nox.Session) -> None:
    """Unit, end-to-end and browser tests (browser tests skip without Chromium)."""
    # Byte-compiled at install, unlike the docs session: uncompiled, the install was 90 s
    # shorter but the suite 125-145 s longer (twelfth session), its many fresh processes
    # compiling torch's modules at their first imports side by side.
    install(session, "test", "docs", "browser", "properdocs", "models", torch=torch_release(session))
    # One worker more than the cores, each module on one worker (tests/conftest.py): many tests
    # wait on subprocesses, timeouts and the browser. On two cores a third worker cut the suite
    # from 22 to 20 minutes (tenth session); a fourth made it slower, 25 minutes against 22
    # (twelfth session), though three left the cores 17% idle. `-- -n 0` runs serially.
    workers = str((os.cpu_count() or 1) + 1)
    session.run("python", "-m", "pytest", "-n", workers, "--dist", "loadscope",
                "--no-loadscope-reorder", *session.posargs)


@nox.session
def fleet(session: nox.Session) -> None:
    """`python -m bench --ray` with the fleet group (Ray) installed: without options, the
    fleet tests on a local cluster; with options after `--`, a fleet run, such as
    `nox -s fleet -- --ray auto --profile full` (docs/reference/fleet.md)."""
    release = torch_release(session)
    if not session.posargs:
        install(session, "test", "fleet", torch=release)
        session.run("python", "-m", "pytest", "-n", "0", "tests/test_fleet.py",
                    "tests/test_bench_imports.py")
        return
    groups = ("fleet", "models") if measures_models(session.posargs) else ("fleet",)
    python = torch_environment(session, release, *groups)
    session.run(python, "-m", "bench", *session.posargs, env={"ATLAS_TORCH_PIN": release},
                external=True)


@nox.session
def lint(session: nox.Session) -> None:
    """Ruff over the code; zizmor over .github/ (offline), failing on a finding of medium or above."""
    install(session, "lint")
    session.run("ruff", "check", "bench", "report", "tests", "examples", "noxfile.py", *session.posargs)
    session.run("zizmor", "--offline", "--min-severity", "medium", ".github")


# What each session installs for its torch release, never from constraints.txt: torch, the
# torchvision that timm pulls in (built for one torch release), and their CUDA wheels.
TORCH_COUPLED = ("torch", "torchvision", "triton", "nvidia-", "cuda-")


@nox.session
def lock(session: nox.Session) -> None:
    """Rewrite constraints.txt from a fresh install of every dependency group but bench (torch)."""
    session.install(*nox.project.dependency_groups(PYPROJECT, "docs", "test", "browser", "lint",
                                                   "properdocs", "models", "fleet"))
    frozen = session.run("python", "-m", "pip", "freeze", silent=True)
    kept = [line for line in frozen.splitlines(True)
            if not line.lower().startswith(TORCH_COUPLED)]
    header = [line for line in CONSTRAINTS.read_text().splitlines(True) if line.startswith("#")]
    CONSTRAINTS.write_text("".join(header) + "".join(kept))
