"""Fixtures shared by several test modules."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from fixtures import RESULTS, ROOT
from fixtures.hostile import write_hostile_results
from fixtures.site import FIXTURE_HASH_SEED, build_site

from report.analysis import Data, load

# `nox -s tests` runs the suite on pytest-xdist workers (--dist loadscope; noxfile.py says how
# many). A module's tests stay on one worker, so that its module fixtures run once; the browser
# tests are one group, so that the real site is built and crawled once, and so are the data
# checks, so that the committed results/ are analysed once (the `committed` fixture: a session
# fixture is one per worker). The longest groups go first: started last, one of them would
# leave the other workers idle at the end.
GROUPS = {"tests/browser/": "browser", "tests/data_checks/": "data_checks"}
LONGEST_FIRST = ("browser", "tests/test_bench_ab.py", "tests/test_security_output.py",
                 "tests/test_coldstart_bench.py", "tests/test_bench_workloads_cases.py",
                 "tests/test_report_pages.py", "tests/test_workflows.py", "data_checks",
                 "tests/test_hostile_bench.py")


def _group(nodeid: str) -> str:
    module = nodeid.split("::", 1)[0]
    return next((group for folder, group in GROUPS.items() if module.startswith(folder)), module)


def pytest_collection_modifyitems(config, items):
    rank = {group: index for index, group in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(_group(item.nodeid), len(rank)))  # stable


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist, absent without it
def pytest_xdist_make_scheduler(config, log):
    # --dist loadgroup would do, but xdist 3.8 names a group through Item._nodeid, which
    # pytest 9.2 no longer reads: every test became a group of its own.
    if config.getvalue("dist") != "loadscope":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class ByGroup(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return _group(nodeid)

    return ByGroup(config, log)


def built_once(tmp_path_factory, name: str, make: Callable[[Path], None]) -> Path:
    """A folder that `make` fills once per test run, whatever the number of workers: each
    xdist worker runs the session fixtures of its own, and the first to ask builds while the
    others wait for it."""
    try:
        import fcntl
    except ImportError:  # not POSIX: each worker builds its own
        folder = tmp_path_factory.mktemp(name)
        make(folder)
        return folder
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # the run's folder, which holds every worker's
    folder, done = base / name, base / f"{name}.done"
    with open(base / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            make(folder)
            done.touch()
    return folder


def _build_site(root: Path, results: Path, hash_seed: str | None = None) -> None:
    done = build_site(root, results, hash_seed=hash_seed)
    assert done.returncode == 0, done.stderr[-3000:]


def _build_hostile_site(root: Path) -> None:
    write_hostile_results(root / "results")
    _build_site(root, root / "results")


@pytest.fixture(scope="session")
def fixture_root(tmp_path_factory):
    """tests/fixtures/results rendered into `docs/` and built into `site/` by mkdocs, once
    for every test that reads the fixture site: each build is most of a minute on 2 cores."""
    return built_once(tmp_path_factory, "fixture-site",
                      lambda root: _build_site(root, RESULTS, FIXTURE_HASH_SEED))


@pytest.fixture(scope="session")
def fixture_site(fixture_root):
    return fixture_root / "site"


@pytest.fixture(scope="session")
def hostile_site(tmp_path_factory):
    """The fixture set with hostile records beside it (tests/fixtures/hostile.py), built
    into a site once for the checks of its HTML and for the browser that opens it."""
    return built_once(tmp_path_factory, "hostile-site", _build_hostile_site) / "site"


@pytest.fixture(scope="session")
def committed() -> Data:
    """The committed results/ loaded and analysed once for every data check
    (tests/data_checks/): each analysis of them is several seconds on 2 cores."""
    if not (ROOT / "results").is_dir():
        pytest.skip("the committed results/ are not here")
    return Data(load(ROOT / "results"))


@pytest.fixture
def shared_tmp():
    """A temporary folder every user may write in, as /tmp is (mode 1777)."""
    folder = Path(tempfile.mkdtemp(prefix="atlas-shared-"))
    folder.chmod(0o1777)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)
