"""Two dtypes of one case: the published table compares each mode with eager of its own dtype,
the model and workload pages never set a float32 figure beside a bfloat16 one in a row, the
methodology page states the bfloat16 tolerance eager's own error justifies, and the
break-even page sets lite's compile against default's, a failed lite with its reason."""

from __future__ import annotations

import pytest
from fixtures import dtype_records as dx
from fixtures import make_results as fx

from report import analysis, formatting
from report.analysis import DTYPE, Data, load
from report.pages import break_even, methodology, models, workloads
from report.site import Site

DTYPES = ("float32", "bfloat16")
OTHER = {"float32": "bfloat16", "bfloat16": "float32"}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    results = tmp_path_factory.mktemp("results")
    fx.write(results / "r.jsonl", dx.records())
    data = Data(load(results))
    docs = tmp_path_factory.mktemp("docs")
    site = Site(data, docs)
    for page in (models, workloads, break_even, methodology):
        page.render(site)
    return data, docs


def read(docs, path: str) -> str:
    return (docs / path).read_text(encoding="utf-8")


def lines(text: str) -> list[str]:
    """The page's table rows, unindented (tabs indent them)."""
    return [line.strip() for line in text.splitlines() if line.strip().startswith("| ")]


def published(data: Data, dtype: str, mode: str) -> dict:
    return analysis.row_of(data.published, dx.ENV.env_id(), dx.WORKLOAD, dx.BATCH, mode, dtype)


def figures(data: Data, dtype: str) -> set[str]:
    """Every figure a comparison row of `dtype` may show: eager's latency, each mode's
    speedup, with and without its range."""
    out = {formatting.latency(published(data, dtype, "eager"))}
    for mode in dx.MODES[1:]:
        row = published(data, dtype, mode)
        if row["ok"]:
            out |= {formatting.speedup(row), formatting.times(row["speedup"])}
    return out


def test_every_speedup_compares_a_mode_with_eager_of_its_own_dtype(built):
    data, _ = built
    table = data.published[data.published["ok"].eq(True)]
    eager = {d: published(data, d, "eager")["latency_s"] for d in DTYPES}
    assert eager["float32"] != eager["bfloat16"]
    for r in analysis.rows(table[table["mode"] != "eager"]):
        assert r["latency_base_s"] == pytest.approx(eager[r[DTYPE]]), r["mode"]
        # Paired rounds time the mode at FACTOR of eager's time in its own dtype.
        assert r["speedup"] == pytest.approx(1.0 / dx.FACTOR[r[DTYPE]][r["mode"]]), r["mode"]
    assert set(table[DTYPE]) == set(DTYPES)


def test_the_models_page_gives_each_dtype_a_tab_and_no_row_mixes_them(built):
    data, docs = built
    page = read(docs, "analysis/models.md")
    assert '=== "float32"' in page and '=== "bfloat16"' in page
    assert page.index('=== "float32"') < page.index('=== "bfloat16"')
    tabs = {"float32": page[page.index('=== "float32"'):page.index('=== "bfloat16"')],
            "bfloat16": page[page.index('=== "bfloat16"'):]}
    for dtype, tab in tabs.items():
        (row,) = [line for line in lines(tab) if line.startswith(f"| [{dx.WORKLOAD}](")]
        cells = row.strip("| ").split(" | ")
        assert cells[1] == "1" + ("" if dtype == "float32" else " (bfloat16)")
        shown = [c for c in cells[2:] if c != "error"]
        assert shown and all(c in figures(data, dtype) for c in shown), (dtype, cells)
        assert not any(c in figures(data, OTHER[dtype]) for c in cells[2:]), (dtype, cells)


def test_the_workload_page_shows_bfloat16_cases_with_their_dtype_and_never_beside_float32(built):
    data, docs = built
    page = read(docs, f"workloads/{dx.WORKLOAD}.md")
    rows = lines(page)
    for section in ("| eager | 1 (bfloat16) | ok |", "| reduce-overhead | 1 (bfloat16) | float64 |",
                    "| lite | 1 (bfloat16) | **error** |", "| default | 1 (bfloat16) | 15.0\u00a0s |"):
        assert any(line.startswith(section) for line in rows), section
    # Every row that names a mode at one point holds that dtype's figures, none of the other's.
    checked = 0
    for line in rows:
        cells = line.strip("| ").split(" | ")
        dtype = "bfloat16" if any(c.endswith("(bfloat16)") for c in cells[:3]) else "float32"
        mine, theirs = figures(data, dtype), figures(data, OTHER[dtype])
        assert not any(c in theirs and c not in mine for c in cells), line
        checked += any(c in mine for c in cells)
    assert checked >= 8


def test_the_methodology_page_states_the_bfloat16_tolerance_and_why_a_check_failed(built):
    data, docs = built
    page = read(docs, "methodology.md")
    section = page[page.index("{ #bfloat16-tolerance }"):page.index("## Paired timing")]
    (row,) = [line for line in lines(section) if f"[{dx.WORKLOAD}]" in line]
    cells = row.strip("| ").split(" | ")
    error = formatting.scientific(dx.EAGER_ERROR["bfloat16"])
    # 3 isolated and 3 paired eager processes; 21 bfloat16 processes in all, 3 of them
    # lite's failures without a check, one reduce-overhead output off.
    assert cells[2:] == [f"{error}–{error} (6)", formatting.scientific(dx.TOLERANCE["bfloat16"]),
                         formatting.times(dx.TOLERANCE["bfloat16"] / dx.EAGER_ERROR["bfloat16"]),
                         "17", "1", "3"]
    failed = [line for line in section.splitlines() if line.startswith("- ")]
    assert any("reduce-overhead (isolated process 2): relative error "
               f"{formatting.scientific(dx.WRONG_ERROR)} above the tolerance" in line for line in failed)
    assert any("lite (3 processes): error: " + dx.LITE_FAILS in line for line in failed)


def test_the_break_even_page_sets_lites_cold_compile_against_defaults(built):
    _, docs = built
    page = read(docs, "analysis/break-even.md")
    section = lines(page[page.index("{ #lite }"):page.index("## How it is computed")])
    ok = next(line for line in section if line.startswith(f"| [{dx.WORKLOAD}]("))
    cells = ok.strip("| ").split(" | ")
    ratio = dx.COLD_S["lite"] / dx.COLD_S["default"]
    assert cells[1:5] == ["1", formatting.times(ratio), formatting.seconds(dx.COLD_S["lite"]),
                          formatting.seconds(dx.COLD_S["default"])]
    failed = next(line for line in section if line.startswith(f"| {dx.WORKLOAD} | 1 (bfloat16) |"))
    assert "lite failed" in failed and dx.LITE_FAILS in failed
    # Each dtype's cases are summed apart.
    summary = lines(page[:page.index("{ #lite }")])
    assert any(line.startswith("| lite (bfloat16) | 0 (+1 failed) |") for line in summary)
    assert any(line.startswith("| lite | 1 | 0 |") for line in summary)
