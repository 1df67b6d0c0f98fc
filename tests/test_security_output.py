"""What `python -m report` and `report export` write never goes through a link planted in
their output, a render is swapped in whole (a kill, a second render: the old tree or the new
one, never a mix), and every process of a killed render dies with it."""

from __future__ import annotations

import contextlib
import hashlib
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import NamedTuple

import pytest
from fixtures import RESULTS, ROOT

from report.site import GENERATED_FILES

VICTIM_TEXT = "root:x:0:0:root:/root:/bin/bash\n"
# These tests are about where a render writes and when its tree is swapped in, not what the
# pages say: one environment (OLD) and that one with a second (NEW) render in about two
# thirds of the whole fixture set's time, and the killed-render test waits through ten.
OLD_FILES = ("cpu.jsonl",)
NEW_FILES = ("cpu.jsonl", "h100-b.jsonl")


def report(*args: str, **kwargs) -> subprocess.CompletedProcess:
    # Library warnings (pandas' PerformanceWarning) are not the errors these tests read.
    return subprocess.run([sys.executable, "-m", "report", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=300, check=False,
                          env=os.environ | {"PYTHONWARNINGS": "ignore"}, **kwargs)


def tree(docs: Path) -> dict[str, str]:
    """Every path under docs (staging folders of a killed render aside): a hash per file,
    the target per link, "dir" per folder."""
    found = {}
    for path in sorted(docs.rglob("*")):
        relative = path.relative_to(docs)
        if relative.parts[0].startswith(".render-"):
            continue
        if path.is_symlink():
            found[str(relative)] = f"-> {os.readlink(path)}"
        elif path.is_dir():
            found[str(relative)] = "dir"
        else:
            found[str(relative)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def results_of(folder: Path, names: tuple[str, ...]) -> Path:
    folder.mkdir(parents=True)
    for name in names:
        shutil.copy2(RESULTS / name, folder / name)
    return folder


@pytest.fixture(scope="module")
def small(tmp_path_factory) -> Path:
    """NEW_FILES of the fixture set: what every render here reads, the swapped-from aside."""
    return results_of(tmp_path_factory.mktemp("small") / "results", NEW_FILES)


@pytest.fixture(scope="module")
def rendered(tmp_path_factory, small) -> Path:
    """`small` rendered once, as the reference tree."""
    docs = tmp_path_factory.mktemp("reference") / "docs"
    done = report("--results", str(small), "--docs", str(docs), "--jobs", "1")
    assert done.returncode == 0, done.stderr
    return docs


def victims(folder: Path, count: int) -> list[Path]:
    folder.mkdir(exist_ok=True)
    made = []
    for i in range(count):
        victim = folder / f"victim-{i}"
        victim.write_text(VICTIM_TEXT)
        made.append(victim)
    return made


# ---- links planted at every generated path -------------------------------------------------

def test_a_render_writes_through_no_link_planted_at_any_generated_path(rendered, small, tmp_path):
    docs = tmp_path / "docs"
    generated_files = [p.relative_to(rendered) for p in rendered.rglob("*") if p.is_file()]
    paths = [Path(name) for name in GENERATED_FILES] + generated_files
    # A link at every generated file, and at folders the render makes (below the top level,
    # where the whole folder is planted as a link).
    targets = victims(tmp_path / "victims", len(paths) + 1)
    for relative, victim in zip(paths, targets, strict=False):
        (docs / relative).parent.mkdir(parents=True, exist_ok=True)
        if not os.path.lexists(docs / relative):
            (docs / relative).symlink_to(victim)
    victim_dir = tmp_path / "victim-dir"
    victim_dir.mkdir()
    (victim_dir / "keep.md").write_text(VICTIM_TEXT)
    shutil.rmtree(docs / "concepts")
    (docs / "concepts").symlink_to(victim_dir)
    done = report("--results", str(small), "--docs", str(docs), "--jobs", "2")
    assert done.returncode == 0, done.stderr
    assert all(v.read_text() == VICTIM_TEXT for v in targets)
    assert sorted(p.name for p in victim_dir.iterdir()) == ["keep.md"]
    assert (victim_dir / "keep.md").read_text() == VICTIM_TEXT
    assert tree(docs) == tree(rendered)  # the links were replaced by the render's own files


def test_a_link_deep_inside_a_generated_folder_is_replaced_not_followed(rendered, small, tmp_path):
    docs = tmp_path / "docs"
    shutil.copytree(rendered, docs, symlinks=True)
    (victim,) = victims(tmp_path / "victims", 1)
    page = docs / "workloads" / "trivial-call.md"
    page.unlink()
    page.symlink_to(victim)
    done = report("--results", str(small), "--docs", str(docs), "--jobs", "1")
    assert done.returncode == 0, done.stderr
    assert victim.read_text() == VICTIM_TEXT
    assert not page.is_symlink()


def test_a_docs_folder_that_is_a_link_is_refused_in_one_line(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "docs").symlink_to(elsewhere)
    done = report("--results", str(RESULTS), "--docs", str(tmp_path / "docs"))
    assert done.returncode == 1
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"python -m report: error: {tmp_path / 'docs'} is a symbolic link")
    assert list(elsewhere.iterdir()) == []


def test_hand_written_files_beside_the_generated_ones_survive_a_render(rendered, small, tmp_path):
    docs = tmp_path / "docs"
    shutil.copytree(rendered, docs)
    (docs / "javascripts").mkdir()
    (docs / "javascripts" / "mine.js").write_text("// mine\n")
    (docs / "threat-model.md").write_text("# mine\n")
    (docs / "workloads" / "gone.md").write_text("a workload no longer in the results\n")
    done = report("--results", str(small), "--docs", str(docs), "--jobs", "1")
    assert done.returncode == 0, done.stderr
    assert (docs / "javascripts" / "mine.js").read_text() == "// mine\n"
    assert (docs / "threat-model.md").read_text() == "# mine\n"
    assert not (docs / "workloads" / "gone.md").exists()
    assert not list(docs.glob(".render-*"))
    # The same records again: every chart is the published one, copied rather than drawn.
    published = {p.relative_to(rendered): p.stat().st_mtime_ns for p in rendered.rglob("*.svg")}
    assert published and published == {p.relative_to(docs): p.stat().st_mtime_ns
                                        for p in docs.rglob("*.svg")}


# ---- report export ---------------------------------------------------------------------------

def export(folder: Path) -> subprocess.CompletedProcess:
    return report("export", str(folder), "--results", str(RESULTS))


def test_export_replaces_links_at_its_file_names_instead_of_following_them(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    targets = victims(tmp_path / "victims", 2)
    (out / "speedups.csv").symlink_to(targets[0])
    (out / "speedups.json").symlink_to(targets[1])
    done = export(out)
    assert done.returncode == 0, done.stderr
    assert all(v.read_text() == VICTIM_TEXT for v in targets)
    assert not (out / "speedups.csv").is_symlink()
    assert (out / "speedups.csv").read_text().startswith("backend,")


@pytest.mark.parametrize("kind", ["dangling-link", "link-to-folder", "under-a-file"])
def test_export_to_an_unfit_folder_is_one_line(tmp_path, kind):
    if kind == "dangling-link":
        out = tmp_path / "out"
        out.symlink_to(tmp_path / "nothing")
    elif kind == "link-to-folder":
        (tmp_path / "elsewhere").mkdir()
        out = tmp_path / "out"
        out.symlink_to(tmp_path / "elsewhere")
    else:
        (tmp_path / "file").write_text("x")
        out = tmp_path / "file" / "out"
    done = export(out)
    assert done.returncode in (1, 2)
    (line,) = done.stderr.splitlines()
    assert line.startswith("python -m report export: error: ")
    assert "Traceback" not in done.stdout + done.stderr
    assert not (tmp_path / "nothing").exists()
    assert not (tmp_path / "elsewhere").exists() or not any((tmp_path / "elsewhere").iterdir())


def test_export_to_a_read_only_folder_is_one_line(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    if os.geteuid() == 0:
        if shutil.which("chattr") is None or subprocess.run(
                ["chattr", "+i", str(out)], capture_output=True).returncode != 0:
            pytest.skip("root, and this file system has no immutable attribute")
    else:
        out.chmod(0o555)
    try:
        done = export(out)
    finally:
        if os.geteuid() == 0:
            subprocess.run(["chattr", "-i", str(out)], check=True)
        out.chmod(0o755)
    assert done.returncode == 1
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"python -m report export: error: cannot write {out}: ")
    assert list(out.iterdir()) == []


# ---- a render is swapped in whole ------------------------------------------------------------

class OldAndNew(NamedTuple):
    old_results: Path  # OLD_FILES: fewer pages than new_results
    new_results: Path  # `small`, NEW_FILES
    old_docs: Path  # old_results rendered
    trees: dict[str, str]  # "old" and "new" rendered, as tree() reads them
    new_render_s: float  # how long the new render took whole, over the old tree


@pytest.fixture(scope="module")
def old_and_new(tmp_path_factory, small) -> OldAndNew:
    """The two renders every swap test compares with, made once. The new one renders over
    a copy of the old tree, as each killed render does: it copies the charts that did not
    change instead of drawing them, and its time is the span the kills are spread over."""
    base = tmp_path_factory.mktemp("old-and-new")
    old_results = results_of(base / "old-results", OLD_FILES)
    trees, took = {}, {}
    for name, results in (("old", old_results), ("new", small)):
        if name == "new":
            shutil.copytree(base / "old", base / "new", symlinks=True)
        began = time.monotonic()
        done = report("--results", str(results), "--docs", str(base / name), "--jobs", "2")
        took[name] = time.monotonic() - began
        assert done.returncode == 0, done.stderr
        trees[name] = tree(base / name)
    assert trees["old"] != trees["new"]
    return OldAndNew(old_results, small, base / "old", trees, took["new"])


def render_processes(pid: int) -> list[int]:
    """Processes whose parent chain leads to `pid`, or that still carry its process group."""
    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[0] not in ("Z", "X") and (int(fields[2]) == pid or int(fields[1]) == pid):
            found.append(int(entry.name))
    return found


@pytest.mark.slow
@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
def test_a_render_killed_at_random_points_leaves_the_old_tree_or_the_new(old_and_new, tmp_path):
    reference = old_and_new.trees
    docs = tmp_path / "docs"
    rng = random.Random(47)
    attempts = 6
    for attempt in range(attempts):
        shutil.rmtree(docs, ignore_errors=True)
        shutil.copytree(old_and_new.old_docs, docs, symlinks=True)  # as rendered
        render = subprocess.Popen(
            [sys.executable, "-m", "report", "--results", str(old_and_new.new_results),
             "--docs", str(docs), "--jobs", "2"],
            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        # One kill in each sixth of the time the same render took whole, so that its start,
        # its pages and its swap are all hit; a kill after it ended would test nothing.
        time.sleep(0.3 + (attempt + rng.random()) / attempts
                   * max(old_and_new.new_render_s - 0.3, 0))
        family = render_processes(render.pid)
        render.send_signal(signal.SIGTERM if attempt % 2 else signal.SIGKILL)
        render.wait(timeout=60)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and any(render_processes(render.pid)):
            time.sleep(0.1)
        left = [pid for pid in family if Path(f"/proc/{pid}").exists()
                and (Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
                     not in ("Z", "X"))]
        with contextlib.suppress(ProcessLookupError):
            os.killpg(render.pid, signal.SIGKILL)
        assert left == [], (attempt, left)
        assert tree(docs) in (reference["old"], reference["new"]), attempt
    # The next render cleans up what the killed ones left.
    assert report("--results", str(old_and_new.new_results), "--docs", str(docs),
                  "--jobs", "1").returncode == 0
    assert tree(docs) == reference["new"]
    assert not list(docs.glob(".render-*"))


@pytest.mark.slow
def test_two_renders_at_once_leave_one_of_their_trees(old_and_new, tmp_path):
    reference = old_and_new.trees
    docs = tmp_path / "docs"
    renders = [subprocess.Popen([sys.executable, "-m", "report", "--results", str(results),
                                 "--docs", str(docs), "--jobs", "1"], cwd=ROOT,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
               for results in (old_and_new.old_results, old_and_new.new_results)]
    for render in renders:
        assert render.wait(timeout=300) == 0, render.stderr.read()
    assert tree(docs) in (reference["old"], reference["new"])
    assert not list(docs.glob(".render-*"))
