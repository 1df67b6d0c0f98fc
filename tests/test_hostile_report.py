"""Results files are untrusted input (pull requests, artifacts, other machines): a record
cannot make the report write outside --docs, an impossible figure is refused with
file:line, and `compare` reads exactly the files it was given. Nothing here imports torch.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from fixtures import RESULTS, ROOT
from fixtures import make_results as fx

from bench.records import Environment
from report import analysis
from report.analysis import Data, ResultsError
from report.build import build
from report.site import OutsideDocs, Site

HOSTILE_NAMES = {"parent": "../../README", "escape": "../../escape", "absolute": "/tmp/atlas-abs",
                 "nul": "mlp\x00.md", "long": "w" * 5000, "folder": "workloads/../../x"}


def record_dict(workload="matmul-128", mode="eager", **changes) -> dict:
    data = json.loads(fx.ok_record(fx.ENV_A, workload, mode, None).to_json())
    data.update(changes)
    return data


def write_records(path: Path, *records: dict) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def snapshot(root: Path, skip: Path) -> dict[str, str]:
    """Every file under `root` but `skip`, with a hash of its content."""
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and skip not in p.parents}


@pytest.fixture
def checkout(tmp_path) -> dict[str, Path]:
    """A repository-like tree: README.md, results/ and docs/, with a file one level above."""
    root = tmp_path / "repo"
    (root / "docs").mkdir(parents=True)
    (root / "README.md").write_text("the project's own README\n")
    (tmp_path / "escape.md").write_text("a neighbour's file\n")
    return {"top": tmp_path, "root": root, "results": root / "results", "docs": root / "docs"}


def render_cli(results: Path, docs: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "report", "--results", str(results),
                           "--docs", str(docs)], cwd=ROOT, capture_output=True, text=True,
                          timeout=300, check=False)


# ---- names that reach paths --------------------------------------------------------------

@pytest.mark.parametrize("field", ["workload", "profile"])
@pytest.mark.parametrize("name", HOSTILE_NAMES.values(), ids=HOSTILE_NAMES.keys())
def test_a_name_unfit_for_a_file_name_is_refused_where_it_is_read(tmp_path, field, name):
    data = record_dict()
    if field == "workload":
        data["key"]["workload"] = name
    else:
        data["profile"] = name
    path = write_records(tmp_path / "r" / "hostile.jsonl", record_dict(workload="trivial-call"), data)
    with pytest.raises(ResultsError) as caught:
        analysis.load(tmp_path / "r")
    message = str(caught.value)
    assert message.startswith(f"{path}:2: malformed record: ")
    assert "\n" not in message and "\x00" not in message and len(message) < 400


@pytest.mark.parametrize("field", ["workload", "profile"])
@pytest.mark.parametrize("name", HOSTILE_NAMES.values(), ids=HOSTILE_NAMES.keys())
def test_the_whole_render_of_a_hostile_name_changes_no_file_outside_docs(checkout, field, name):
    """The render as `python -m report` runs it, the fixture set plus one hostile record."""
    shutil.copytree(RESULTS, checkout["results"])
    data = record_dict()
    if field == "workload":
        data["key"]["workload"] = name
    else:
        data["profile"] = name
    write_records(checkout["results"] / "zz-hostile.jsonl", data)
    before = snapshot(checkout["top"], checkout["docs"])
    refused = None
    try:
        build(checkout["results"], checkout["docs"])
    except ResultsError as error:
        refused = error
    assert snapshot(checkout["top"], checkout["docs"]) == before
    assert refused is not None  # read, it was refused: nothing was rendered at all
    assert not any(checkout["docs"].iterdir())


@pytest.mark.slow
def test_a_render_with_hostile_free_text_writes_only_under_docs(checkout):
    """Names that never reach a path may hold anything: the render goes through, and every
    file it writes is under --docs."""
    shutil.copytree(RESULTS, checkout["results"])
    machine = "../../" + "m" * 300
    env = record_dict()["env"]
    env |= {"machine": machine, "device_name": "/etc/passwd\x00", "cpu_model": "../" * 50}
    env_id = Environment(**env).env_id()
    hostile = [record_dict(workload=w, mode=m, env=env, env_id=env_id)
               for w in ("matmul-128", "trivial-call") for m in ("eager", "default")]
    for r in hostile:
        r["key"]["tag"] = "../../tag\x00"
        r["reason"] = "/" * 10_000
    write_records(checkout["results"] / "zz-hostile.jsonl", *hostile)
    before = snapshot(checkout["top"], checkout["docs"])
    result = render_cli(checkout["results"], checkout["docs"])
    assert result.returncode == 0, result.stderr[-3000:]
    assert snapshot(checkout["top"], checkout["docs"]) == before
    assert any(checkout["docs"].rglob("*.md"))


@pytest.mark.parametrize("path", ["../escape.md", "/tmp/atlas-abs.md", "workloads/../../x.md",
                                  "a\x00.md"])
def test_the_site_refuses_to_write_a_path_outside_docs(tmp_path, path):
    site = Site(Data(analysis.load(tmp_path / "none")), tmp_path / "docs")
    with pytest.raises(OutsideDocs):
        site.write(path, "text")
    assert sorted(p.name for p in tmp_path.rglob("*")) == []


# ---- impossible figures --------------------------------------------------------------------

def _huge_timings(data: dict) -> None:
    timing = data["timing"]
    timing["samples"] = [1e12] * len(timing["samples"])
    for name in ("median_s", "q1_s", "q3_s", "min_s", "wall_per_call_s"):
        timing[name] = 1e12
    timing["iqr_s"] = 0.0


IMPOSSIBLE = {
    "timings-of-1e12-s": (_huge_timings, "more than the whole process"),
    "negative-iqr": (lambda d: d["timing"].update(iqr_s=-1.0), "timing.iqr_s -1 is not q3_s - q1_s"),
    "iqr-not-q3-minus-q1": (lambda d: d["timing"].update(iqr_s=d["timing"]["iqr_s"] * 2),
                            "is not q3_s - q1_s"),
    "q1-above-median": (lambda d: d["timing"].update(q1_s=d["timing"]["median_s"] * 1.5),
                        "need min <= q1 <= median <= q3"),
    "negative-cold-first-call": (lambda d: d["compile"].update(cold_first_call_s=-5.0),
                                 "compile.cold_first_call_s -5 is negative"),
    "first-call-longer-than-process": (lambda d: d["compile"].update(warm_first_call_s=1e6),
                                       "longer than the whole process"),
    "negative-peak-rss": (lambda d: d["memory"].update(peak_rss_bytes=-1),
                          "memory.peak_rss_bytes -1 is negative"),
}


@pytest.mark.parametrize("case", IMPOSSIBLE, ids=IMPOSSIBLE.keys())
def test_an_impossible_record_is_refused_with_file_and_line(tmp_path, case):
    spoil, phrase = IMPOSSIBLE[case]
    data = record_dict(mode="default")
    spoil(data)
    path = write_records(tmp_path / "r" / "impossible.jsonl", record_dict(), data)
    with pytest.raises(ResultsError) as caught:
        analysis.load(tmp_path / "r")
    assert str(caught.value).startswith(f"{path}:2: malformed record: ")
    assert phrase in str(caught.value)


def test_an_unsupported_record_of_zero_seconds_still_loads(tmp_path):
    data = json.loads(fx.failed(fx.ENV_A, "matmul-128", "cuda-graph", None, "unsupported",
                                "no graphs here").to_json())
    data["duration_s"] = 0.0
    write_records(tmp_path / "r" / "x.jsonl", data)
    assert analysis.load(tmp_path / "r")["status"].tolist() == ["unsupported"]


# ---- files that are not files --------------------------------------------------------------

def test_a_directory_named_jsonl_is_one_line_naming_it(tmp_path):
    (tmp_path / "r" / "folder.jsonl").mkdir(parents=True)
    with pytest.raises(ResultsError) as caught:
        analysis.load(tmp_path / "r")
    assert str(caught.value) == (f"{tmp_path / 'r' / 'folder.jsonl'}: cannot be read as a "
                                 f"results file: not a regular file")


# ---- compare reads what it is given --------------------------------------------------------

def compare_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "report", "compare", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=300, check=False)


def two_environments(folder: Path) -> tuple[Path, Path]:
    old = write_records(folder / "old.jsonl", *(
        json.loads(fx.ok_record(fx.ENV_A, "matmul-128", m, None).to_json())
        for m in ("eager", "default")))
    new = write_records(folder / "new.jsonl", *(
        json.loads(fx.ok_record(fx.ENV_B, "matmul-128", m, None).to_json())
        for m in ("eager", "default")))
    return old, new


def test_compare_of_two_files_reads_neither_files_neighbours(tmp_path):
    old, new = two_environments(tmp_path)
    (tmp_path / "broken.jsonl").write_text("not json\n")
    (tmp_path / "folder.jsonl").mkdir()
    # The fixture's records name no host: --across-hosts asks for the table anyway.
    result = compare_cli(str(old), str(new), "--across-hosts")
    assert result.returncode == 0, result.stderr
    assert "matmul-128" in result.stdout


def test_compare_of_an_empty_file_says_that_file_holds_no_records(tmp_path):
    _, new = two_environments(tmp_path)
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    (tmp_path / "broken.jsonl").write_text("not json\n")
    result = compare_cli(str(empty), str(new))
    assert result.returncode == 2
    assert result.stderr == f"report compare: error: {empty} holds no records\n"


def test_compare_of_a_directory_named_jsonl_is_one_line(tmp_path):
    _, new = two_environments(tmp_path / "ok")
    (tmp_path / "bad" / "x.jsonl").mkdir(parents=True)
    result = compare_cli(str(tmp_path / "bad"), str(new))
    assert result.returncode == 2
    (line,) = result.stderr.splitlines()
    assert line.endswith("x.jsonl: cannot be read as a results file: not a regular file")


def test_compare_of_one_environment_with_itself_says_so(tmp_path):
    old, _ = two_environments(tmp_path)
    result = compare_cli(str(old), str(old), "--across-hosts")
    assert result.returncode == 0, result.stderr
    assert (f"note: both sides are the same environment (env {fx.ENV_A.env_id()}), and the "
            f"same records: every case is set against itself") in result.stdout.splitlines()


def test_compare_of_two_environments_has_no_such_note(tmp_path):
    old, new = two_environments(tmp_path)
    assert "same environment" not in compare_cli(str(old), str(new)).stdout


# ---- two records of one process started at the same time ---------------------------------

def tied(folder: Path, names: tuple[str, str]) -> list[str]:
    """Two files each holding the same process, started at the same time, with different
    medians; the warnings the load gave."""
    slow = record_dict()
    slow["timing"] = json.loads(fx.ok_record(
        fx.ENV_A, "matmul-128", "eager", None, scale=2.0).to_json())["timing"]
    write_records(folder / names[0], record_dict())
    write_records(folder / names[1], slow)
    warnings: list[str] = []
    Data(analysis.load(folder, warn=warnings.append))
    return warnings


def shown_median(folder: Path) -> float:
    data = Data(analysis.load(folder, warn=lambda _: None))
    return float(data.shown["median_s"].iloc[0])


def test_a_tie_on_started_at_is_decided_by_the_records_not_the_file_names(tmp_path):
    tied(tmp_path / "a", ("a.jsonl", "b.jsonl"))
    tied(tmp_path / "b", ("b.jsonl", "a.jsonl"))
    assert shown_median(tmp_path / "a") == shown_median(tmp_path / "b")


def test_a_tie_on_started_at_warns_naming_both_records_and_the_rule(tmp_path):
    (warning,) = tied(tmp_path, ("a.jsonl", "b.jsonl"))
    assert f"{tmp_path / 'a.jsonl'}:1" in warning and f"{tmp_path / 'b.jsonl'}:1" in warning
    assert "started at the same time" in warning
    assert warning.endswith(analysis.TIE_RULE)


def test_the_same_record_in_two_files_is_no_tie_to_warn_of(tmp_path):
    write_records(tmp_path / "a.jsonl", record_dict())
    write_records(tmp_path / "b.jsonl", record_dict())
    warnings: list[str] = []
    analysis.load(tmp_path, warn=warnings.append)
    assert warnings == []


def test_an_ok_record_wins_a_tie_over_a_failed_one(tmp_path):
    ok = record_dict()
    failed = json.loads(fx.failed(fx.ENV_A, "matmul-128", "eager", None, "error",
                                  "boom").to_json())
    failed["started_at"] = ok["started_at"]
    write_records(tmp_path / "a.jsonl", ok)
    write_records(tmp_path / "b.jsonl", failed)
    data = Data(analysis.load(tmp_path, warn=lambda _: None))
    assert data.shown["status"].tolist() == ["ok"]


# ---- every bad input: one line on stderr, a non-zero exit, no traceback ------------------

def _hostile_name(folder: Path) -> None:
    data = record_dict()
    data["key"]["workload"] = "../../README"
    write_records(folder / "bad.jsonl", data)


def _impossible(folder: Path) -> None:
    data = record_dict()
    data["memory"]["peak_rss_bytes"] = -1
    write_records(folder / "bad.jsonl", data)


def _directory(folder: Path) -> None:
    (folder / "bad.jsonl").mkdir(parents=True)


BAD_INPUTS = {"hostile-name": _hostile_name, "impossible-figure": _impossible,
              "directory-named-jsonl": _directory}


@pytest.mark.slow
@pytest.mark.parametrize("command", ["render", "compare"])
@pytest.mark.parametrize("bad", BAD_INPUTS, ids=BAD_INPUTS.keys())
def test_a_bad_results_file_is_one_line_and_a_non_zero_exit(checkout, bad, command):
    bad_folder = checkout["top"] / "bad"
    bad_folder.mkdir()
    BAD_INPUTS[bad](bad_folder)
    if command == "render":
        result = render_cli(bad_folder, checkout["docs"])
    else:
        _, new = two_environments(checkout["top"] / "good")
        result = compare_cli(str(bad_folder), str(new))
    assert result.returncode != 0
    (line,) = result.stderr.splitlines()
    assert f"{bad_folder / 'bad.jsonl'}" in line
    assert "Traceback" not in result.stdout + result.stderr
