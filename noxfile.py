"""Sessions: `nox -s bench docs` measures this machine and builds the site; `nox -s tests`."""

import os

import nox

nox.options.sessions = ["lint", "tests"]
nox.options.default_venv_backend = "venv"

PYPROJECT = nox.project.load_toml("pyproject.toml")
# The torch release the suite is pinned to; ATLAS_TORCH or `-- --torch X` picks another.
TORCH_PIN = "2.13.0"


def torch_release(session: nox.Session) -> str:
    """Take a `--torch X` posarg off the argument list, else ATLAS_TORCH, else the pin."""
    args = list(session.posargs)
    release = os.environ.get("ATLAS_TORCH", TORCH_PIN)
    for i, arg in enumerate(args):
        if arg == "--torch" and i + 1 < len(args):
            release = args.pop(i + 1)
            args.pop(i)
            break
        if arg.startswith("--torch="):
            release = args.pop(i).split("=", 1)[1]
            break
    session.posargs[:] = args
    return release


def install(session: nox.Session, *groups: str, torch: str | None = None) -> None:
    if torch:
        session.install(f"torch=={torch}")
    if groups:
        session.install(*nox.project.dependency_groups(PYPROJECT, *groups))


@nox.session
def bench(session: nox.Session) -> None:
    """Measure every backend found here (options after `--` go to `python -m bench`)."""
    release = torch_release(session)
    install(session, torch=release)
    session.run("python", "-m", "bench", *session.posargs, env={"ATLAS_TORCH_PIN": release})


@nox.session
def docs(session: nox.Session) -> None:
    """Render results/ into docs/ and build site/; `nox -s docs -- serve` serves it live."""
    install(session, "docs", torch=torch_release(session))  # the notebook executes torch
    session.env["NO_MKDOCS_2_WARNING"] = "1"
    session.run("python", "-m", "report", "--results", "results", "--docs", "docs")
    if session.posargs[:1] == ["serve"]:
        session.run("mkdocs", "serve", *session.posargs[1:])
    else:
        session.run("mkdocs", "build", "--strict", *session.posargs)


@nox.session
def tests(session: nox.Session) -> None:
    """Unit, end-to-end and browser tests (browser tests skip without Chromium)."""
    install(session, "test", "docs", "browser", torch=torch_release(session))
    session.run("python", "-m", "pytest", *session.posargs)


@nox.session
def lint(session: nox.Session) -> None:
    install(session, "lint")
    session.run("ruff", "check", "bench", "report", "tests", "noxfile.py", *session.posargs)
