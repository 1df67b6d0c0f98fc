"""Matplotlib SVG charts, byte-identical from the same data.

Determinism: a fixed `svg.hashsalt` (clip-path ids), no Date metadata, text kept as
<text> (no glyph ids, smaller files), and callers pass data already sorted.

Legibility: no text is smaller than MIN_FONT_PT. A chart is shown at its natural size on a
large screen (1 pt = 4/3 px, so 12 px) and at most 6.2 inches across a phone's 358 px
column (9 pt is then 7.2 px); the stylesheet zooms wider charts (heat maps) to the same
scale on a phone and lets them scroll. No tick label runs into the next: names along x
that would are slanted, and any that still do stop the build (`_save`). Figures
are built with `matplotlib.figure.Figure`, not pyplot, so no global figure state
leaks between charts and nothing needs closing.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import io
import itertools
import math
import os
import re
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import matplotlib
from matplotlib.colors import TwoSlopeNorm
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle
from matplotlib.textpath import TextPath
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from report import safe_output
from report.analysis import MODE_ORDER

STYLE = {
    "svg.hashsalt": "torch-compile-atlas",
    "svg.fonttype": "none",
    "font.size": 9,
    "axes.titlesize": 10,
    "figure.titlesize": 10,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "legend.frameon": False,
    "legend.fontsize": 9,
}

MIN_FONT_PT = 9  # the smallest text in any chart, in points of the SVG
WIDTH_IN = 6.2  # every chart but the heat maps: fits a phone's column at 9 pt >= 7 px

_PALETTE = ("#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860",
            "#da8bc3", "#8c8c8c", "#ccb974", "#64b5cd")
NOT_MEASURED_COLOR = "#e8e8e8"
STATUS_COLOR = "#f3d9a4"


def mode_color(mode: str) -> str:
    index = (MODE_ORDER.index(mode) if mode in MODE_ORDER
             else len(MODE_ORDER) + sum(map(ord, mode)))
    return _PALETTE[index % len(_PALETTE)]


def time_unit(values_s: list[float]) -> tuple[str, float]:
    """The unit that keeps the largest value readable: (label, seconds per unit)."""
    largest = max(values_s, default=0.0)
    for label, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if largest >= scale:
            return label, scale
    return "ns", 1e-9


@dataclass(frozen=True)
class Point:
    x: float
    y: float
    low: float | None = None  # error bar ends, in the units of y
    high: float | None = None


def case_point(x: float, case: dict, scale: float = 1.0, y: str = "median_s") -> Point:
    """A case's median at `x`, with an error bar over its process medians' range where it
    rests on two or more processes (one process has no spread to show)."""
    if case["n_processes"] >= 2 and y == "median_s":
        return Point(x, case["median_s"] / scale, case["lo_s"] / scale, case["hi_s"] / scale)
    return Point(x, case[y] / scale)


class Charted:
    """Which environments a page that lists every environment draws its charts for: the
    first LIMIT of each backend, in the order it lists them; the others keep their tables,
    and the page says how many were not charted (`left_out`). Ten thousand charts on one
    page could not be read, and each takes a tenth of a second or more to draw."""

    # None charts every environment. Each page that caps says, where a chart is missing,
    # how many environments of the backend were left out and that its table has them.
    LIMIT: int | None = 20

    def __init__(self) -> None:
        self.drawn: dict[str, int] = {}
        self.left_out: dict[str, int] = {}

    def draws(self, backend: str) -> bool:
        """Whether the next environment of `backend` the page lists gets its chart."""
        if self.LIMIT is None or self.drawn.get(backend, 0) < self.LIMIT:
            self.drawn[backend] = self.drawn.get(backend, 0) + 1
            return True
        self.left_out[backend] = self.left_out.get(backend, 0) + 1
        return False


# ---- drawing: deferred, skipped when unchanged, spread over the cores ---------------------

_DRAW: dict = {}  # chart kind -> the function that draws it
_QUEUE: list | None = None  # (kind, path, kwargs) while `drawn_together` collects
# (the render's staging folder, the published docs folder) while `drawn_together` reuses
_PUBLISHED: tuple[Path, Path] | None = None
# What a chart's SVG depends on besides its arguments: this file and matplotlib.
_CODE = hashlib.sha256(Path(__file__).read_bytes() + matplotlib.__version__.encode()).hexdigest()


def _key(kind: str, kwargs: dict) -> str:
    text = repr((kind, sorted(kwargs.items()), _CODE))
    return "atlas-chart " + hashlib.sha256(text.encode()).hexdigest()[:32]


def _current(path: Path, key: str) -> bool:
    """Whether `path` holds the chart drawn from the same arguments by the same code (the
    key sits in the SVG's metadata, near the top of the file): drawn there already or, in a
    render into a staging folder, copied from the published tree, which holds the last
    render's charts. A render after new records redraws only the charts they change."""
    try:
        with open(path, encoding="utf-8") as file:
            if key in file.read(4096):
                return True
    except OSError:
        pass
    if _PUBLISHED is None:
        return False
    staged, published = _PUBLISHED
    try:
        relative = Path(path).relative_to(staged)
    except ValueError:
        return False
    found = safe_output.read_plain(published, relative)
    if found is None or key.encode() not in found[1][:4096]:
        return False
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    # keeps the published file's time, so that `mkdocs serve` rebuilds nothing for it
    safe_output.write_bytes(Path(path), found[1], published / relative)
    return True


def _draw(kind: str, path: Path, kwargs: dict) -> None:
    _DRAW[kind](Path(path), _key(kind, kwargs), **kwargs)


def chart(draw):
    """A public chart function: `draw(path, key, **kwargs)` runs now, or later inside
    `drawn_together`, and not at all when the SVG at `path` already holds its key."""
    _DRAW[draw.__name__] = draw

    @functools.wraps(draw)
    def deferred(path: Path, **kwargs) -> None:
        if _current(path, _key(draw.__name__, kwargs)):
            return
        if _QUEUE is None:
            _draw(draw.__name__, path, kwargs)
        else:
            _QUEUE.append((draw.__name__, path, kwargs))
    return deferred


@contextlib.contextmanager
def drawn_together(workers: int | None = None, published: tuple[Path, Path] | None = None):
    """Collect the charts asked for inside the block, and draw them at its end in a pool
    of processes (one per core): matplotlib's layout and SVG writing are most of a
    report's time, and every chart is independent of the others. With `published`, (a
    staging folder, the docs folder it will replace), a chart the docs folder holds drawn
    from the same arguments is copied, not drawn."""
    global _QUEUE, _PUBLISHED
    _QUEUE, _PUBLISHED, jobs = [], published, None
    try:
        yield
        jobs = _QUEUE
    finally:
        _QUEUE, _PUBLISHED = None, None
    workers = min(workers or os.cpu_count() or 1, len(jobs))
    if workers <= 1:
        for job in jobs:
            _draw(*job)
        return
    with ProcessPoolExecutor(workers) as pool:
        for done in [pool.submit(_draw, *job) for job in jobs]:
            done.result()  # a chart that fails fails the build


def _figure(width: float, height: float) -> Figure:
    return Figure(figsize=(width, height), layout="constrained")


def _save(fig: Figure, path: Path, title: str, key: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    svg = _svg(fig, title, key)
    renderer = fig._get_renderer()  # at the figure's own dpi: savefig's leaves text sized at 72
    crowded = [ax for ax in fig.axes if _overlapping(ax.get_xticklabels(), "x0", "x1", renderer)]
    for ax in crowded:  # names too long to stand side by side: model names, local builds
        ax.tick_params(axis="x", labelrotation=30)
        for label in ax.get_xticklabels():
            label.set(ha="right", rotation_mode="anchor")
    if crowded:
        svg = _svg(fig, title, key)
    if clash := overlapping_tick_labels(fig):
        raise ValueError(f"{path.name}: tick labels {clash[0]!r} and {clash[1]!r} overlap")
    path.write_text(slim_svg(svg), encoding="utf-8")


def _svg(fig: Figure, title: str, key: str) -> str:
    svg = io.StringIO()
    fig.savefig(svg, format="svg", metadata={"Date": None, "Description": key,
                                             "Title": title.replace("\n", " · ")})
    return svg.getvalue()


def overlapping_tick_labels(fig: Figure) -> tuple[str, str] | None:
    """Two neighbouring level tick labels of one axis that are drawn over each other, if
    any, as laid out by the figure's last draw: a chart whose names run together is
    unreadable. Slanted labels are left out: their boxes overlap where their text does not."""
    renderer = fig._get_renderer()
    for ax in fig.axes:
        for labels, low, high in ((ax.get_xticklabels(), "x0", "x1"),
                                  (ax.get_yticklabels(), "y0", "y1")):
            if clash := _overlapping(labels, low, high, renderer):
                return clash
    return None


def _overlapping(labels, low: str, high: str, renderer) -> tuple[str, str] | None:
    boxes = sorted((getattr(box, low), getattr(box, high), label.get_text())
                   for label in labels
                   if label.get_visible() and label.get_text() and not label.get_rotation()
                   for box in [label.get_window_extent(renderer)])
    for (_, end, first), (start, _, second) in itertools.pairwise(boxes):
        if start < end - 0.5:  # half a point: labels that merely touch still read
            return first, second
    return None


_FONT_FAMILY = re.compile(r"(?:; )?font-family: ([^;\"]*)")
# Coordinates inside drawing attributes; 1/100 pt is far below a screen pixel.
_DRAWING_ATTRIBUTE = re.compile(r'\b(d|transform|x|y|width|height)="([^"]*)"')
_LONG_DECIMAL = re.compile(r"(-?\d+\.\d\d)\d+")
_INDENT = re.compile(r"\n[ \t]+")


def slim_svg(svg: str) -> str:
    """Matplotlib's SVG in about half the bytes: the font list it repeats on every <text>
    (two thirds of a heat map) is said once in the stylesheet, coordinates keep two
    decimals instead of six, and lines lose their indentation. It draws the same."""
    families = set(_FONT_FAMILY.findall(svg))
    if len(families) == 1:
        rule = f"text{{font-family: {families.pop()}}}"
        svg = _FONT_FAMILY.sub("", svg).replace(
            '<style type="text/css">', '<style type="text/css">' + rule + "\n", 1)
    svg = _INDENT.sub("\n", svg)  # SVG ignores whitespace between elements
    return _DRAWING_ATTRIBUTE.sub(_two_decimals, svg)


def _two_decimals(attribute: re.Match) -> str:
    name, value = attribute.groups()
    return f'{name}="{_LONG_DECIMAL.sub(lambda number: number[1], value)}"'


def _plain_log_ticks(axis) -> None:
    """Ticks at 1, 2, 5 x 10^k written as plain numbers (0.5, 20), not as powers of ten;
    denser when the data spans less than a factor of four, so every axis has labels."""
    low, high = sorted(axis.get_data_interval())
    narrow = low > 0 and high / low < 4
    subs = (1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0) if narrow else (1.0, 2.0, 5.0)
    axis.set_major_locator(LogLocator(base=10, subs=subs))
    axis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
    axis.set_minor_formatter(NullFormatter())


def _legend_below(fig: Figure, ax, count: int) -> None:
    # Below the plot, so long series names never squeeze the axes.
    handles, labels = ax.get_legend_handles_labels()
    longest = max((len(label) for label in labels), default=1)
    columns = max(1, min(count, 74 // (longest + 6)))  # ~74 characters of 9 pt fit across
    fig.legend(handles, labels, loc="outside lower center", ncols=columns)


@chart
def line_chart(path: Path, key: str, *, title: str, xlabel: str, ylabel: str,
               series: dict[str, list[Point]], colors: dict[str, str],
               xbase: int = 2, ylog: bool = True, reference_y: float | None = None,
               speedups: dict[str, list[Point]] | None = None) -> None:
    """One line per series over a log x axis; error bars where points carry them, cut
    where one process is far off. With `speedups`, a second panel below shows each series
    over the baseline at the same x, which separates lines that merge on the first."""
    with matplotlib.rc_context(STYLE):
        fig = _figure(WIDTH_IN, 6.4 if speedups else 4.0)
        if speedups:
            ax, below = fig.subplots(2, 1, sharex=True, height_ratios=(3, 2))
        else:
            ax, below = fig.add_subplot(), None
        for name, points in series.items():
            xs = [p.x for p in points]
            ys = [p.y for p in points]
            errors = None
            if any(p.low is not None for p in points):
                errors = [[p.y - (p.low if p.low is not None else p.y) for p in points],
                          [(p.high if p.high is not None else p.y) - p.y for p in points]]
            ax.errorbar(xs, ys, yerr=errors, label=name, color=colors[name], marker="o",
                        markersize=3.5, linewidth=1.4, capsize=2.5)
        if reference_y is not None:
            ax.axhline(reference_y, color="#555555", linewidth=0.8, linestyle="--")
        ax.set_xscale("log", base=xbase)
        xticks = sorted({p.x for points in series.values() for p in points})
        ax.set_xticks(xticks, [f"{x:g}" for x in xticks])
        ax.minorticks_off()
        if ylog:
            ax.set_yscale("log")
            _plain_log_ticks(ax.yaxis)
        _clip_outliers(ax, series, colors, ylog)
        fig.suptitle(title)
        ax.set_ylabel(ylabel)
        if below is not None:
            for name, points in speedups.items():
                below.plot([p.x for p in points], [p.y for p in points], color=colors[name],
                           marker="o", markersize=3.5, linewidth=1.4)
            below.axhline(1.0, color="#555555", linewidth=0.8, linestyle="--")
            below.set_yscale("log", base=2)
            _plain_log_ticks(below.yaxis)
            below.set_ylabel("speedup over eager")
            below.set_xlabel(xlabel)
            below.set_xticks(xticks, [f"{x:g}" for x in xticks])
            below.minorticks_off()
        else:
            ax.set_xlabel(xlabel)
        _legend_below(fig, ax, len(series))
        _save(fig, path, title, key)


def _clip_outliers(ax, series: dict[str, list[Point]], colors: dict[str, str], log: bool) -> None:
    """Keep the y axis on the medians: a whisker reaching more than 3x past them (one loaded
    process) is cut at the edge and marked with a triangle, instead of flattening every
    line. The figure itself is never hidden."""
    ys = [p.y for points in series.values() for p in points if p.y > 0]
    if not ys:
        return
    if log:
        top, bottom = max(ys) * 3.0, min(ys) / 3.0
    else:
        top, bottom = max(ys) * 1.5, 0.0
    lows = [p.low for points in series.values() for p in points if p.low is not None]
    highs = [p.high for points in series.values() for p in points if p.high is not None]
    pad = 1.15 if log else 1.05
    ax.set_ylim(max(bottom, min([*lows, *ys]) / pad) if log else 0.0,
                min(top, max([*highs, *ys]) * pad))
    cut_top = ax.get_ylim()[1]
    for name, points in series.items():
        clipped = [p.x for p in points if p.high is not None and p.high > cut_top]
        if clipped:
            ax.plot(clipped, [cut_top] * len(clipped), linestyle="none", marker="^",
                    markersize=6, color=colors[name], clip_on=False)


@chart
def bar_chart(path: Path, key: str, *, title: str, xlabel: str, bars: list[tuple[str, Point]],
              colors: dict[str, str]) -> None:
    """Horizontal bars, one per label (top to bottom in the given order), with error bars."""
    with matplotlib.rc_context(STYLE):
        fig = _figure(WIDTH_IN, 1.2 + 0.32 * len(bars))
        ax = fig.add_subplot()
        labels = [label for label, _ in bars]
        values = [p.y for _, p in bars]
        errors = [[p.y - (p.low if p.low is not None else p.y) for _, p in bars],
                  [(p.high if p.high is not None else p.y) - p.y for _, p in bars]]
        positions = list(range(len(bars)))
        ax.barh(positions, values, xerr=errors, color=[colors[label] for label in labels],
                capsize=2.5, height=0.6)
        ax.set_yticks(positions, labels)
        ax.invert_yaxis()
        ax.grid(axis="y", visible=False)
        fig.suptitle(title)
        ax.set_xlabel(xlabel)
        _save(fig, path, title, key)


@chart
def scatter_chart(path: Path, key: str, *, title: str, xlabel: str, ylabel: str,
                  series: dict[str, list[Point]], colors: dict[str, str],
                  bands: tuple[float, float] | None = None) -> None:
    """Points per series over a log x axis; optional shaded y bands (overhead anatomy)."""
    with matplotlib.rc_context(STYLE):
        fig = _figure(WIDTH_IN, 4.2)
        ax = fig.add_subplot()
        if bands:
            ax.axhspan(0, bands[0], color="#c44e52", alpha=0.07, linewidth=0)
            ax.axhspan(bands[1], 1.0, color="#55a868", alpha=0.07, linewidth=0)
        for name, points in series.items():
            ax.scatter([p.x for p in points], [p.y for p in points], label=name,
                       color=colors[name], s=14)
        ax.set_xscale("log")
        _plain_log_ticks(ax.xaxis)
        ax.set_ylim(0, 1.0)
        fig.suptitle(title)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        _legend_below(fig, ax, len(series))
        _save(fig, path, title, key)


@functools.cache  # a heat map asks for the same few labels ("n/m", a status) cell after cell
def _text_width_in(text: str, size_pt: float) -> float:
    return TextPath((0, 0), text, size=size_pt).get_extents().width / 72 if text else 0.0


@dataclass(frozen=True)
class HeatCell:
    speedup: float | None = None  # drawn in colour
    label: str = "n/m"  # shown instead when speedup is None: a status or "n/m"
    measured: bool = False  # a record exists (a failed status), so no hatching
    detail: str = ""  # the range across processes, in small type under the speedup


@chart
def heatmap(path: Path, key: str, *, title: str, rows: list[str], columns: list[str],
            cells: dict[tuple[str, str], HeatCell], colorbar_label: str) -> None:
    """Speedup on a log2 colour scale centred on 1; not-measured cells hatched and grey."""
    limit = 3.0  # colours saturate at 8x faster or slower
    norm = TwoSlopeNorm(vmin=-limit, vcenter=0.0, vmax=limit)
    cmap = matplotlib.colormaps["RdBu"]
    with matplotlib.rc_context(STYLE | {"axes.grid": False}):
        widest = max((_text_width_in(text, MIN_FONT_PT + (0 if text == cell.detail else 1))
                      for cell in cells.values() for text in (cell.detail, cell.label)),
                     default=0.0)
        column_in = max(1.0, widest + 0.15)  # a range like "220.34–270.41" stays in its cell
        # Row labels and the axis title on the left, the colour bar and its labels on the
        # right: the columns get the rest, so the figure is as wide as all three.
        left_in = max((_text_width_in(row, MIN_FONT_PT) for row in rows), default=0.0) + 0.5
        fig = _figure(left_in + column_in * len(columns) + 1.4, 2.5 + 0.42 * len(rows))
        ax = fig.add_subplot()
        for i, row in enumerate(rows):
            for j, column in enumerate(columns):
                cell = cells.get((row, column), HeatCell())
                if cell.speedup is not None:
                    level = max(-limit, min(limit, math.log2(cell.speedup)))
                    color = cmap(norm(level))
                    text = f"{cell.speedup:.2f}×"
                    dark = abs(level) > 0.6 * limit
                    ax.add_patch(Rectangle((j, i), 1, 1, facecolor=color, edgecolor="white"))
                    ink = "white" if dark else "black"
                    ax.text(j + 0.5, i + (0.32 if cell.detail else 0.5), text, ha="center",
                            va="center", fontsize=MIN_FONT_PT + 1, color=ink)
                    if cell.detail:
                        ax.text(j + 0.5, i + 0.72, cell.detail, ha="center", va="center",
                                fontsize=MIN_FONT_PT, color=ink)
                else:
                    face = STATUS_COLOR if cell.measured else NOT_MEASURED_COLOR
                    ax.add_patch(Rectangle((j, i), 1, 1, facecolor=face, edgecolor="white",
                                           hatch=None if cell.measured else "///"))
                    ax.text(j + 0.5, i + 0.5, cell.label, ha="center", va="center",
                            fontsize=MIN_FONT_PT, color="#333333")
        ax.set_xlim(0, len(columns))
        ax.set_ylim(len(rows), 0)
        ax.set_xticks([j + 0.5 for j in range(len(columns))], columns, rotation=30,
                      ha="right")
        ax.set_yticks([i + 0.5 for i in range(len(rows))], rows)
        ax.tick_params(length=0)
        for spine in ax.spines.values():
            spine.set_visible(False)
        mappable = matplotlib.cm.ScalarMappable(norm=norm, cmap=cmap)
        bar = fig.colorbar(mappable, ax=ax, shrink=0.8, pad=0.02)
        ticks = list(range(-int(limit), int(limit) + 1))
        bar.set_ticks(ticks, labels=[f"{2.0 ** t:g}×" for t in ticks])
        bar.set_label(colorbar_label)
        fig.suptitle(title)
        ax.set_xlabel("mode")
        ax.set_ylabel("workload (batch)")
        _save(fig, path, title, key)
