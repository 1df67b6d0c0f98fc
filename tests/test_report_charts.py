"""Charts stay legible and light: issue 48's weight and phone targets, at the source."""

from __future__ import annotations

import os
import re
import shutil

import pytest

from report import charts
from report.coldstart import charts as coldstart_charts

FONT_SIZE = re.compile(r"font-size:\s*([\d.]+)px")


def _heatmap(path, **overrides):
    cells = {
        ("launch-chain-1000", "default"): charts.HeatCell(
            speedup=249.42, measured=True, detail="220.34–270.41"),
        ("launch-chain-1000", "max-autotune"): charts.HeatCell(label="unsupported", measured=True),
        ("mlp (batch 1)", "default"): charts.HeatCell(
            speedup=0.49, measured=True, detail="outlier process"),
    }
    charts.heatmap(path, **({"title": "Speedup vs eager\nhost", "rows": ["launch-chain-1000",
                               "mlp (batch 1)"], "columns": ["default", "max-autotune"],
                             "cells": cells, "colorbar_label": "speedup"} | overrides))
    return path.read_text("utf-8")


def test_no_chart_text_is_smaller_than_the_floor(tmp_path):
    heat = _heatmap(tmp_path / "heat.svg")
    charts.line_chart(tmp_path / "line.svg", title="t", xlabel="batch", ylabel="ms",
                      series={"eager": [charts.Point(1, 2.0), charts.Point(2, 3.0)]},
                      colors={"eager": "#000000"})
    for svg in (heat, (tmp_path / "line.svg").read_text("utf-8")):
        sizes = [float(size) for size in FONT_SIZE.findall(svg)]
        assert sizes, "no <text>: text drawn as paths"
        assert min(sizes) >= charts.MIN_FONT_PT, sorted(set(sizes))
    assert "220.34–270.41" in heat and "outlier process" in heat


def test_slim_svg_says_the_font_once_and_keeps_every_text(tmp_path):
    heat = _heatmap(tmp_path / "heat.svg")
    assert heat.count("font-family") == 1, "the font list is repeated per <text>"
    assert not re.search(r'\bd="[^"]*\d\.\d{3}', heat), "coordinates with more than 2 decimals"
    assert heat.count("<text") >= 10


def test_slim_svg_leaves_mixed_fonts_alone():
    svg = ('<svg><defs><style type="text/css">*{}</style></defs>'
           '<text style="font-size: 9px; font-family: A">a</text>'
           '<text style="font-size: 9px; font-family: B">b</text></svg>')
    assert charts.slim_svg(svg).count("font-family") == 2


def test_heat_map_columns_widen_for_long_ranges(tmp_path):
    def width(detail):
        cells = {("r", "c"): charts.HeatCell(speedup=2.0, measured=True, detail=detail)}
        svg = _heatmap(tmp_path / f"{len(detail)}.svg", rows=["r"], columns=["c"], cells=cells)
        return float(re.search(r'<svg[^>]*width="([\d.]+)pt"', svg)[1])

    assert width("1123.45–2270.41 and more") > width("1.0–1.1")


TICK_ANGLE = re.compile(r'<text [^>]*transform="rotate\((-?[\d.]+) [^>]*>([^<]+)</text>')


def _ladder(path, workloads):
    bars = {rung: [(5.0, 4.0, 6.0)] * len(workloads) for rung in ("cold", "warm", "bundle")}
    coldstart_charts.ladder_chart(path, code="test", title="t", workloads=workloads,
                                  rungs=list(bars), bars=bars)
    return {text: float(angle) for angle, text in TICK_ANGLE.findall(path.read_text("utf-8"))}


def test_names_too_long_to_stand_side_by_side_are_slanted_and_short_ones_stay_level(tmp_path):
    """Eight model names under eight groups of bars ran into each other ("vit16x6x384" over
    "vit32x12x768"); two stay level."""
    crowded = _ladder(tmp_path / "eight.svg", ["bert-base", "gpt2-small", "llama-small",
                                                "resnet50", "vit-base16", "vit16x6x384",
                                                "vit32x12x768", "vit32x18x1024"])
    assert crowded["vit32x12x768"] == -30 and crowded["bert-base"] == -30, crowded
    roomy = _ladder(tmp_path / "two.svg", ["bert-base", "resnet50"])
    assert roomy["bert-base"] == 0 and roomy["resnet50"] == 0, roomy


def test_a_chart_whose_labels_still_run_together_fails_naming_them(tmp_path):
    """Slanting helps only names along x; crowded names up the side are a chart's defect, so
    the build stops there rather than publish them."""
    fig = charts._figure(3, 1)
    ax = fig.add_subplot()
    ax.set_yticks(range(40), [f"workload-{i}" for i in range(40)])
    with pytest.raises(ValueError, match=r"crowded\.svg: tick labels 'workload-\d+' and"):
        charts._save(fig, tmp_path / "crowded.svg", "t", "k")
    assert not (tmp_path / "crowded.svg").exists()


# ---- a render redraws only what changed ------------------------------------------------------

PAST_NS = 1_000_000_000 * 10**9  # 2001: a published chart's time, told apart from a fresh draw


def _published_and_staged(tmp_path, title="t"):
    """A line chart published in docs/charts (dated in the past), and the render's staging
    folder beside it."""
    published, staged = tmp_path / "docs", tmp_path / "docs" / ".render-1"
    path = published / "charts" / "line.svg"
    path.parent.mkdir(parents=True)
    _line(path, title)
    os.utime(path, ns=(PAST_NS, PAST_NS))
    staged.mkdir()
    return published, staged, path


def _line(path, title="t"):
    charts.line_chart(path, title=title, xlabel="batch", ylabel="ms",
                      series={"eager": [charts.Point(1, 2.0), charts.Point(2, 3.0)]},
                      colors={"eager": "#000000"})


def test_a_render_copies_a_published_chart_drawn_from_the_same_data(tmp_path):
    published, staged, path = _published_and_staged(tmp_path)
    with charts.drawn_together(workers=1, published=(staged, published)):
        _line(staged / "charts" / "line.svg")
        _line(staged / "charts" / "other.svg", title="new")
    copied = staged / "charts" / "line.svg"
    assert copied.read_bytes() == path.read_bytes()
    assert copied.stat().st_mtime_ns == PAST_NS  # copied, not drawn: `mkdocs serve` skips it
    assert (staged / "charts" / "other.svg").stat().st_mtime_ns > PAST_NS  # nothing to copy


def test_a_chart_whose_data_changed_is_drawn_again(tmp_path):
    published, staged, path = _published_and_staged(tmp_path)
    with charts.drawn_together(workers=1, published=(staged, published)):
        _line(staged / "charts" / "line.svg", title="changed")
    drawn = staged / "charts" / "line.svg"
    assert drawn.stat().st_mtime_ns > PAST_NS and "changed" in drawn.read_text("utf-8")


@pytest.mark.parametrize("planted", ["file-link", "folder-link"])
def test_a_published_chart_behind_a_link_is_drawn_not_read(tmp_path, planted):
    """A link planted in docs/ is never read through, even to a file that holds the key."""
    published, staged, path = _published_and_staged(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    shutil.move(published / "charts", elsewhere)
    with open(elsewhere / "line.svg", "a", encoding="utf-8") as planted_file:
        planted_file.write("<!-- planted -->\n")  # the key is still in it
    if planted == "file-link":
        (published / "charts").mkdir()
        (published / "charts" / "line.svg").symlink_to(elsewhere / "line.svg")
    else:
        (published / "charts").symlink_to(elsewhere)
    with charts.drawn_together(workers=1, published=(staged, published)):
        _line(staged / "charts" / "line.svg")
    drawn = staged / "charts" / "line.svg"
    assert not drawn.is_symlink() and "planted" not in drawn.read_text("utf-8")
