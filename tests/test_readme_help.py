"""The README and the reference pages against the commands they describe.

The options page (docs/reference/options.md) lists every option of each command in a table
under the command's heading; `--help` is the other statement of the same options. These
tests keep the two in step, keep every option the README or a reference page names real,
and keep the README short, its links alive and every reference page in the site's nav."""

from __future__ import annotations

import fnmatch
import functools
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
REFERENCE = ROOT / "docs" / "reference"
OPTIONS_PAGE = REFERENCE / "options.md"
README_MAX_LINES = 150

# Each command the options page has a table for (its heading there), and its arguments.
DOCUMENTED = {
    "python -m bench": ("-m", "bench"),
    "python -m bench host": ("-m", "bench", "host"),
    "python -m bench.coldstart": ("-m", "bench.coldstart"),
    "python -m bench.ab": ("-m", "bench.ab"),
}
# Commands the pages name options of without a table of their own.
MENTIONED = (("-m", "report"), ("-m", "report", "compare"), ("-m", "report", "export"),
             ("-m", "report.releases"), ("-m", "bench.host.slowed"))
# A word that reads as an option: two dashes, a letter, then letters, digits and dashes.
OPTION = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
# argparse lists each option on a line of its own, indented by two spaces.
HELP_ENTRY = re.compile(r"^  (?:-\w, )?(--[a-z][a-z0-9-]*)", re.M)


@functools.cache
def help_options(*args: str) -> frozenset[str]:
    done = subprocess.run([sys.executable, *args, "--help"], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    found = frozenset(HELP_ENTRY.findall(done.stdout)) - {"--help"}
    assert found, f"no option found in the help of {' '.join(args)}"
    return found


def nox_options() -> frozenset[str]:
    """The options noxfile.py takes off a session's arguments itself (`--torch X`)."""
    return frozenset(re.findall(r'arg == "(--[a-z][a-z0-9-]*)"', (ROOT / "noxfile.py").read_text()))


def sections(page: Path) -> dict[str, str]:
    """The page's text under each `## ` heading, by the heading without its backticks."""
    parts = re.split(r"^## (.+)$", page.read_text(encoding="utf-8"), flags=re.M)
    return {title.replace("`", "").strip(): body for title, body in zip(parts[1::2], parts[2::2],
                                                                        strict=True)}


def table_options(text: str) -> set[str]:
    """Every option in the first column of the Markdown tables of `text`."""
    rows = [line.split("|")[1] for line in text.splitlines() if line.startswith("| `--")]
    return {option for cell in rows for option in OPTION.findall(cell)}


def documents() -> list[Path]:
    return [README, *sorted(REFERENCE.glob("*.md"))]


@pytest.mark.parametrize("command", DOCUMENTED)
def test_the_options_table_of_each_command_is_its_help(command):
    documented = table_options(sections(OPTIONS_PAGE)[command])
    helped = help_options(*DOCUMENTED[command])
    assert not documented - helped, f"{command}: documented but not in --help"
    assert not helped - documented, f"{command}: in --help but not on {OPTIONS_PAGE.name}"


@pytest.mark.parametrize("document", documents(), ids=lambda p: p.name)
def test_every_option_the_readme_and_reference_name_exists(document):
    known = {"--help"} | nox_options()
    for args in [*DOCUMENTED.values(), *MENTIONED]:
        known |= help_options(*args)
    named = set(OPTION.findall(document.read_text(encoding="utf-8")))
    assert not named - known, f"{document.name} names options no command takes"


@pytest.mark.parametrize("document", documents(), ids=lambda p: p.name)
def test_an_engine_command_line_uses_only_the_engines_options(document):
    """`python -m bench ...` and `nox -s bench -- ...` lines (and their continuation lines)
    pass only options of `python -m bench` itself, or nox's `--torch`."""
    engine = help_options(*DOCUMENTED["python -m bench"]) | nox_options()
    invocation = re.compile(r"(python -m bench|nox -s bench --)(?![.\w-]| host)(.*)")
    lines = document.read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines):
        found = invocation.search(line)
        if not found:
            continue
        command = found.group(2)
        while command.rstrip().endswith("\\") and number + 1 < len(lines):
            number += 1
            command += lines[number]
        command = command.split("`")[0] if "`" in line[:found.start()] else command
        assert not set(OPTION.findall(command)) - engine, f"{document.name}: {line.strip()}"


def test_the_sentinel_sizes_on_the_options_page_are_the_registrys():
    from bench.workloads import ORDER, lookup

    text = sections(OPTIONS_PAGE)["python -m bench"]
    listed = text.split("The sentinel workload sizes:", 1)[1].split("\n\n")[1]
    documented = set()
    for item in listed.splitlines():
        found = re.fullmatch(r"- `([\w.-]+)`(?: at batch (\d+))?", item.strip())
        assert found, f"not a sentinel item: {item!r}"
        documented.add((found.group(1), int(found.group(2)) if found.group(2) else None))
    registry = {(name, size) for name in ORDER for size in lookup(name).sentinel_batch_sizes}
    assert documented == registry


def test_the_readme_fits_in_150_lines():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines"


def test_every_relative_link_of_the_readme_resolves():
    links = re.findall(r"\]\(([^)\s]+)\)", README.read_text(encoding="utf-8"))
    relative = [link for link in links if not re.match(r"[a-z]+:|#", link)]
    assert relative, "the README links no page of the repository"
    missing = [link for link in relative if not (ROOT / link.split("#")[0]).exists()]
    assert not missing, f"README.md links to what is not there: {missing}"


def map_paths() -> list[str]:
    """The paths the README's "Map of the code" names in its first column: the first of a
    row in full, the others beside it in the first one's folder (`report/ledger/`,
    `claims.yaml` is report/claims.yaml)."""
    readme = README.read_text(encoding="utf-8")
    table = readme[readme.index("## Map of the code"):].split("\n## ", 1)[0]
    found = []
    for line in table.splitlines()[4:]:
        first, *rest = re.findall(r"`([^`]+)`", line.split(" | ")[0])
        folder = str(Path(first.rstrip("/")).parent)
        found += [first.rstrip("/"), *(f"{folder}/{name.rstrip('/')}" for name in rest)]
    return found


def test_the_readme_map_names_every_module_of_bench_and_report():
    """Each module by its own path or, inside a package below bench/ or report/, by that
    package's folder; every package by its folder or by its modules."""
    named = map_paths()
    missing = []
    for path in sorted((ROOT / "bench").rglob("*.py")) + sorted((ROOT / "report").rglob("*.py")):
        relative = path.relative_to(ROOT)
        if path.name == "__init__.py" and len(relative.parts) == 2:
            continue  # bench/ and report/ themselves
        folders = ["/".join(relative.parts[:n]) for n in range(2, len(relative.parts))]
        if path.name == "__init__.py":
            if not any(fnmatch.fnmatch(name, f"{relative.parent}/*") or name in folders
                       for name in named):
                missing.append(str(relative.parent))
        elif not any(fnmatch.fnmatch(str(relative), name) or name in folders for name in named):
            missing.append(str(relative))
    assert not missing, f"the README's map of the code does not name {missing}"
    gone = [name for name in named if name.startswith(("bench/", "report/")) and not any(ROOT.glob(name))]
    assert not gone, f"the README's map of the code names what is not there: {gone}"


def test_every_reference_page_is_in_the_nav():
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))

    def paths(entries) -> set[str]:
        found = set()
        for entry in entries:
            values = entry.values() if isinstance(entry, dict) else [entry]
            for value in values:
                found |= paths(value) if isinstance(value, list) else {value}
        return found

    in_nav = paths(config["nav"])
    pages = {f"reference/{page.name}" for page in REFERENCE.glob("*.md")}
    assert pages and not pages - in_nav, f"reference pages missing from mkdocs.yml: {pages - in_nav}"
