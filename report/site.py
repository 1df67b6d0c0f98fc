"""Writes the generated part of docs/: pages from templates and charts beside them.

Generated paths are listed in GENERATED so a rebuild can remove pages whose
workload disappeared from the results, and touch nothing else in docs/.
"""

from __future__ import annotations

import functools
import html
import itertools
import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import jinja2
import yaml

from report import analysis, formatting, markdown_text, safe_output
from report.analysis import Data, Environment
from report.formatting import FILTERS
from report.markdown_text import Markdown

TEMPLATES = Path(__file__).parent / "templates"
GENERATED_FILES = ("index.md", "methodology.md")
GENERATED_DIRS = ("workloads", "analysis", "concepts", "charts", "data")
WORKLOAD_NAV = "workloads/.nav.json"  # read by report/mkdocs_nav.py; dotfiles are not published
MKDOCS_YML = Path(__file__).parents[1] / "mkdocs.yml"


def repo_url() -> str:
    """The repository the site links to, as mkdocs.yml states it once (`repo_url`)."""
    return yaml.safe_load(MKDOCS_YML.read_text(encoding="utf-8"))["repo_url"]


def template_environment() -> jinja2.Environment:
    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        undefined=jinja2.StrictUndefined,  # a typo in a template fails the build
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        # Every `{{ value }}` that is not markup is escaped as Markdown text, in this one
        # place (report/markdown_text.py): record strings are untrusted.
        autoescape=True,
        finalize=markdown_text.finalize,
    )
    environment.filters.update(FILTERS)
    environment.filters.update(markdown_text.FILTERS)
    environment.filters.update(cell=_cell, value=_value)
    environment.globals["repo_url"] = repo_url()
    environment.globals["thresholds"] = {
        "unstable": analysis.UNSTABLE_IQR_RATIO,
        "moved": analysis.MOVED,
        "launch_bound": analysis.LAUNCH_BOUND,
        "device_bound": analysis.DEVICE_BOUND,
        "gain": analysis.MEANINGFUL_GAIN,
    }
    environment.globals["tie_rule"] = analysis.TIE_RULE
    return environment


@functools.cache
def site_templates() -> jinja2.Environment:
    """The environment every Site of this process renders with: compiling the templates is
    seconds per render, and a process that renders several sites (the tests) compiles them
    once. Jinja still checks each template file's time stamp on every use."""
    return template_environment()


def _cell(value: Any) -> str:
    """Free text (a reason, a probe summary) for one table cell: escaped, emphasis too."""
    if formatting._missing(value):
        return formatting.NOT_MEASURED
    escaped = markdown_text.text(formatting.one_line(value))
    return Markdown(escaped.replace("*", "\\*").replace("_", "\\_"))


def _value(value: Any) -> str:
    """A probe value (any JSON value), objects as `key: value; ...` in key order; strings are
    left plain for the finalize hook, keys escaped here."""
    if isinstance(value, dict):
        return Markdown("; ").join(Markdown("{}: {}").format(_cell(k), _value(v))
                                   for k, v in sorted(value.items()))
    if isinstance(value, list):
        return Markdown(", ").join(_value(v) for v in value)
    return _cell(value) if isinstance(value, str) else formatting.value_text(value)


PIECES_AT_ONCE = 4096


def joined(pieces: Iterator[str]) -> str:
    """A template's output as one string, joined PIECES_AT_ONCE pieces at a time. Jinja's
    `render` joins a list of every piece: the home page with ten thousand environments is
    eight million pieces, most of them strings of their own, and that list took several
    times the page's own size (issue 94)."""
    chunks = []
    while batch := list(itertools.islice(pieces, PIECES_AT_ONCE)):
        chunks.append("".join(batch))
    return "".join(chunks)


class OutsideDocs(ValueError):
    """A generated path that would leave the docs folder; one line."""


class Site:
    """Pages and charts of one render. They are written under `out_dir`: `docs_dir` itself,
    or (report/build.py) a fresh folder that is swapped into docs_dir once every page is
    there. Links between pages are reckoned from docs_dir either way. `results` is the folder
    `data` was loaded from, for the pages that read records of their own kind there (the
    cold-start ladder); None renders those as not measured."""

    def __init__(self, data: Data, docs_dir: Path, out_dir: Path | None = None,
                 results: Path | None = None):
        self.data = data
        self.results = Path(results) if results is not None else None
        self.docs = Path(docs_dir)
        self.out = Path(out_dir) if out_dir is not None else self.docs
        self.templates = site_templates()
        self.written: set[Path] = set()

    @property
    def published(self) -> Path | None:
        """The docs folder this render will replace, where the last render's files are;
        None when the render writes into it directly."""
        return self.docs if self.out != self.docs else None

    def by_backend(self, build: Callable[[Environment], dict[str, Any] | None]
                   ) -> list[dict[str, Any]]:
        """[{name, envs: [{env, ...build(env)}]}] for every backend, measured or not.

        `build` may return None for an environment with nothing to show on that page;
        the environment is then left out. A backend left with no environment gets no tab
        (`backend_tabs`): the page names it once, below the tabs, as not measured.
        """
        return [{"name": backend,
                 "envs": [{"env": env, **view} for env in self.data.envs(backend)
                          if (view := build(env)) is not None]}
                for backend in self.data.backends]

    def inside(self, path: str) -> Path:
        """`out/path`, or OutsideDocs if that would be anywhere but under it (names in
        paths come from records, which are checked as they are read; this is the backstop).
        Its folders are made here, and none of them may be a link."""
        target = self.out / path
        root = os.path.abspath(self.out)
        if ("\0" in path or Path(path).is_absolute()
                or os.path.commonpath([root, os.path.abspath(target)]) != root
                or ".." in Path(path).parts):
            raise OutsideDocs(f"refusing to write {path!r}: it is not a path under {self.docs}")
        safe_output.make_folders(self.out, Path(path).parent)
        return target

    def chart_path(self, page: str, name: str) -> tuple[Path, str]:
        """Where a chart is written, and the link to it from `page` (a docs-relative path)."""
        path = f"charts/{name}.svg"
        target = self.inside(path)
        if target.is_symlink():  # matplotlib would write through it
            target.unlink()
        self.written.add(target)
        link = os.path.relpath(self.docs / path, (self.docs / page).parent).replace(os.sep, "/")
        return target, link

    def page(self, path: str, template: str, **context: Any) -> None:
        pieces = self.templates.get_template(template).generate(data=self.data,
                                                                page_path=path, **context)
        self.write(path, markdown_text.theme_safe_title(joined(pieces)))

    def write(self, path: str, text: str) -> None:
        target = self.inside(path)
        self.written.add(target)
        # Never through a link; an unchanged file keeps its mtime (safe_output.write_bytes).
        previous = self.published / path if self.published else None
        safe_output.write_bytes(target, text.encode("utf-8"), previous)

    def write_workload_nav(self, sections: list[dict[str, Any]]) -> None:
        # The theme puts nav titles into its HTML as they are: families and workload names
        # come from records, so they go in as HTML text.
        escaped = [{**section, "family": html.escape(section["family"]),
                    "pages": [[html.escape(title), path] for title, path in section["pages"]]}
                   for section in sections]
        self.write(WORKLOAD_NAV, json.dumps(escaped, indent=1, sort_keys=True) + "\n")

    def remove_stale(self) -> None:
        """Generated files this render did not write (a workload that left the results);
        nothing to do in a fresh folder."""
        for name in GENERATED_DIRS:
            folder = self.out / name
            if folder.is_symlink() or not folder.is_dir():
                continue
            for path in sorted(folder.rglob("*"), reverse=True):
                if (path.is_symlink() or path.is_file()) and path not in self.written:
                    path.unlink()
                elif path.is_dir() and not any(path.iterdir()):
                    path.rmdir()
