"""End to end: `python -m report` then `mkdocs build --strict`, as the docs session runs
them, on the fixtures and on no results at all. Built in a temporary copy of docs/ so
the working tree is untouched; the notebook is replaced by a trivial one, because it
belongs to another part of the project and is tested there."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys

import pytest
import yaml
from fixtures import RESULTS, ROOT

pytestmark = pytest.mark.slow

NOTEBOOK = "notebooks/dissecting-torch-compile.ipynb"


def placeholder_notebook() -> str:
    return json.dumps({
        "cells": [{"cell_type": "markdown", "id": "a", "metadata": {},
                   "source": ["# Dissecting torch.compile\n", "placeholder"]}],
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                    "language": "python"}},
        "nbformat": 4, "nbformat_minor": 5,
    })


def build_site(tmp_path, results, tool: str = "mkdocs") -> subprocess.CompletedProcess:
    docs, site = tmp_path / "docs", tmp_path / "site"
    for static in ("javascripts", "stylesheets"):
        shutil.copytree(ROOT / "docs" / static, docs / static)
    (docs / NOTEBOOK).parent.mkdir(parents=True)
    (docs / NOTEBOOK).write_text(placeholder_notebook(), encoding="utf-8")
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    config.update(docs_dir=str(docs), site_dir=str(site),
                  hooks=[str(ROOT / hook) for hook in config["hooks"]])
    for plugin in config["plugins"]:
        if isinstance(plugin, dict) and "mkdocs-jupyter" in plugin:
            plugin["mkdocs-jupyter"]["cache"] = False
    (tmp_path / "mkdocs.yml").write_text(yaml.safe_dump(config), encoding="utf-8")
    report = subprocess.run(
        [sys.executable, "-m", "report", "--results", str(results), "--docs", str(docs)],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert report.returncode == 0, report.stderr
    done = subprocess.run(
        [sys.executable, "-m", tool, "build", "--strict", "-f", str(tmp_path / "mkdocs.yml")],
        cwd=ROOT, capture_output=True, text=True, timeout=600, check=False)
    return done


@pytest.fixture(scope="module")
def fixture_site(tmp_path_factory):
    root = tmp_path_factory.mktemp("fixture-site")
    done = build_site(root, RESULTS)
    assert done.returncode == 0, done.stderr[-3000:]
    return root / "site"


def test_fixture_site_builds_strictly_with_every_page(fixture_site):
    for page in ("index.html", "methodology/index.html", "workloads/matmul-128/index.html",
                 "analysis/launch-overhead/index.html", "concepts/cuda-graphs/index.html"):
        assert (fixture_site / page).is_file(), page
    home = (fixture_site / "index.html").read_text(encoding="utf-8")
    assert 'class="tabbed-set tabbed-alternate"' in home
    assert "javascripts/tablesort.js" in home
    # The hook put the generated workload pages into the nav.
    assert 'href="workloads/vit16x6x384/"' in home


def test_properdocs_builds_the_same_pages_from_the_same_config(fixture_site, tmp_path):
    """ProperDocs, the maintained fork of MkDocs 1.x, reads the same mkdocs.yml: leaving
    MkDocs is then a change of one tool name (noxfile.py's docs-properdocs session)."""
    pytest.importorskip("properdocs", reason="the properdocs dependency group is not installed")
    done = build_site(tmp_path, RESULTS, tool="properdocs")
    assert done.returncode == 0, done.stderr[-3000:]
    pages = {p.relative_to(fixture_site) for p in fixture_site.rglob("*.html")}
    assert pages == {p.relative_to(tmp_path / "site") for p in (tmp_path / "site").rglob("*.html")}


def test_site_pulls_nothing_from_the_network(fixture_site):
    for html in fixture_site.rglob("*.html"):
        text = html.read_text("utf-8")
        # Links to other sites are fine; scripts, images, styles and fonts must be local.
        assert not re.search(r'<(script|img)[^>]+src="https?://', text), html
        assert not re.search(r'<link[^>]+href="https?://[^"]+"[^>]*rel="stylesheet"', text), html
        assert "fonts.googleapis.com" not in text, html


def test_site_builds_strictly_from_no_results(tmp_path):
    done = build_site(tmp_path, tmp_path / "no-results")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "not measured" in (tmp_path / "site/index.html").read_text("utf-8").lower()


def test_output_does_not_depend_on_the_hash_seed(tmp_path):
    """Separate processes with different string hashing (set order) give the same bytes."""
    outputs = []
    for seed in ("1", "2"):
        out = tmp_path / f"docs-{seed}"
        subprocess.run(
            [sys.executable, "-m", "report", "--results", str(RESULTS), "--docs", str(out)],
            cwd=ROOT, capture_output=True, text=True, timeout=300, check=True,
            env={**os.environ, "PYTHONHASHSEED": seed})
        outputs.append({p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()})
    assert outputs[0] == outputs[1]
