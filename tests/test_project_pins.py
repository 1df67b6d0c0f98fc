"""The measured torch release is named once, in pyproject.toml, and every reader agrees with it."""

import re
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")  # Python 3.11+

ROOT = Path(__file__).resolve().parents[1]


def release_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split("."))


def test_bench_group_admits_the_release_nox_installs():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    pin = pyproject["tool"]["atlas"]["torch"]
    (requirement,) = pyproject["dependency-groups"]["bench"]
    match = re.fullmatch(r"torch>=([\d.]+)", requirement)
    assert match, f"bench group should ask for a floor release of torch, got {requirement!r}"
    # pip's cap on fresh machines is lifted only when a project file asks for the new release.
    assert release_tuple(pin)[:2] >= release_tuple(match.group(1))[:2]


def test_noxfile_names_no_release_of_its_own():
    noxfile = (ROOT / "noxfile.py").read_text()
    assert 'PYPROJECT["tool"]["atlas"]["torch"]' in noxfile
    assert not re.search(r"""["']\d+\.\d+\.\d+["']""", noxfile)


def test_the_models_extra_and_the_models_group_name_the_same_packages():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    extra = pyproject["project"]["optional-dependencies"]["models"]
    assert extra == pyproject["dependency-groups"]["models"]
    assert {re.split(r"[<>=]", r)[0] for r in extra} == {"timm", "transformers"}
