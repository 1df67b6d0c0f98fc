"""The bring-your-own-model example runs end to end on the CPU, as its page tells a reader
to run it: `python -m bench --workload examples.byom.tiny_models:factory`, then
`python -m report`, which gives the model its own workload page and a recommendation."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SPEC = "examples.byom.tiny_models:factory"

pytestmark = pytest.mark.slow


def run(*args: str) -> str:
    done = subprocess.run([sys.executable, *args], cwd=REPO, capture_output=True, text=True,
                          timeout=900, check=False)
    assert done.returncode == 0, f"`{' '.join(args)}` exited {done.returncode}:\n" + (
        done.stdout + done.stderr)[-4000:]
    return done.stdout


@pytest.fixture(scope="module")
def docs(tmp_path_factory) -> Path:
    pytest.importorskip("torch", reason="the example is measured with torch (nox -s tests has it)")
    root = tmp_path_factory.mktemp("byom")
    # Two modes keep it short: eager and the plain compiled mode, one process each.
    run("-m", "bench", "--workload", SPEC, "--backend", "cpu", "--mode", "eager",
        "--mode", "default", "--repeats", "1", "--budget", "0.1",
        "--results-dir", str(root / "my-results"), "--cache-dir", str(root / "cache"))
    run("-m", "report", "--results", str(root / "my-results"), "--docs", str(root / "docs"))
    return root / "docs"


def test_the_example_model_gets_its_own_workload_page(docs):
    page = (docs / "workloads" / f"{SPEC}.md").read_text(encoding="utf-8")
    assert SPEC in page


def batch_one(section: str) -> str:
    return next(line.strip() for line in section.splitlines() if line.strip().startswith("| 1 |"))


def test_the_example_model_gets_a_recommendation_from_the_guides_rules(docs):
    page = (docs / "analysis" / "bring-your-own-model.md").read_text(encoding="utf-8")
    section = page[page.index("## Your models in these records"):]
    assert "examples.byom.tiny\\_models:factory" in section
    assert f"(../workloads/{SPEC}.md)" in section
    row = batch_one(section)
    recommended = row.split("|")[2].strip()
    assert recommended in ("**eager**", "**default**"), row


def test_the_example_models_own_page_shows_the_same_recommendation(docs):
    page = (docs / "workloads" / f"{SPEC}.md").read_text(encoding="utf-8")
    own = batch_one(page[page.index("## Recommendation"):page.index("## Latency")])
    assert own.split("|")[2].strip() in ("**eager**", "**default**"), own
    assert "device: cpu" in own  # the reason: the guide's path
    byom = (docs / "analysis" / "bring-your-own-model.md").read_text(encoding="utf-8")
    assert own == batch_one(byom[byom.index("## Your models in these records"):])
