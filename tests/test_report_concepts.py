"""The concept pages name the fastest mode by the site's one rule (`analysis.choose`): ranked
by the published speedup over eager, and of two modes inside each other's spread with a lead
below the meaningful gain, the cheaper one to pay back (issue 92)."""

from __future__ import annotations

import pytest
from fixtures import make_results as fx

from report.analysis import Data, load
from report.pages import concepts
from report.site import Site

EAGER = (1.0, 1.04, 0.98)
# reduce-overhead's processes 2% faster than cuda-graph's and inside their range: a tie,
# which the hand-captured graph wins by costing 0.05 s to capture against a 4 s compile.
REDUCE_OVERHEAD = tuple(s * 0.30 / 0.35 for s in (1.0, 1.03, 0.98))
CUDA_GRAPH = tuple(s * 1.02 for s in (1.0, 1.03, 0.98))


def processes(mode: str, scales: tuple[float, ...]) -> list:
    return [fx.ok_record(fx.ENV_A, "matmul-128", mode, None, scale=scale, repeat=i,
                         repeats=len(scales)) for i, scale in enumerate(scales)]


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> str:
    root = tmp_path_factory.mktemp("concepts")
    fx.write(root / "results" / "r.jsonl", [*processes("eager", EAGER),
                                            *processes("reduce-overhead", REDUCE_OVERHEAD),
                                            *processes("cuda-graph", CUDA_GRAPH)])
    concepts.render(Site(Data(load(root / "results")), root / "docs"))
    return (root / "docs" / "concepts" / "compile-modes.md").read_text(encoding="utf-8")


def fastest_on(page: str, mode: str) -> str:
    (line,) = [line.strip() for line in page.splitlines() if line.strip().startswith(f"| {mode} |")]
    return [cell.strip() for cell in line.strip("|").split("|")][2]


def test_a_tie_names_the_cheaper_mode_fastest_as_the_guide_does(page):
    # The lowest median latency is reduce-overhead's; the one rule names the graph.
    assert fastest_on(page, "cuda-graph") == "1 of 1 workloads"
    assert fastest_on(page, "reduce-overhead") == "0 of 1 workloads"
    assert fastest_on(page, "eager") == "0 of 1 workloads"
