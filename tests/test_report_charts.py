"""Charts stay legible and light: issue 48's weight and phone targets, at the source."""

from __future__ import annotations

import re

from report import charts

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
