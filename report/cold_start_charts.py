"""The cold-start ladder as one chart per workload, batch and environment: the first call
of each rung, one bar per compile mode, eager's first call as a dashed line.

Drawn the way report/charts.py draws (its style, determinism and deferred drawing), with
bars rather than lines: the rungs are steps, not an axis with a scale.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import matplotlib

from report.charts import (
    MIN_FONT_PT,
    NOT_MEASURED_COLOR,
    STYLE,
    WIDTH_IN,
    _figure,
    _plain_log_ticks,
    _save,
    chart,
    mode_color,
)

# charts.py keys a drawn SVG on its own code; this file's code goes in as an argument.
CODE = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:16]


@chart
def ladder_chart(path: Path, key: str, *, code: str, title: str, rungs: list[str], modes: list[str],
                 bars: dict[str, list[tuple[float, float, float] | str]],
                 eager_s: float | None) -> None:
    """`bars[mode][i]`: (median, low, high) first-call seconds at `rungs[i]`, or the words
    saying why there is none ("not measured", "unsupported"), drawn as a grey stub."""
    with matplotlib.rc_context(STYLE):
        fig = _figure(WIDTH_IN, 3.6)
        ax = fig.add_subplot()
        width = 0.8 / max(len(modes), 1)
        measured = [b[0] for values in bars.values() for b in values if not isinstance(b, str)] + (
            [eager_s] if eager_s else [])
        floor = min(measured) / 2 if measured else 1e-3
        for m, mode in enumerate(modes):
            for i, bar in enumerate(bars[mode]):
                x = i - 0.4 + width * (m + 0.5)
                if isinstance(bar, str):
                    ax.bar(x, floor * 0.4, width, bottom=floor, color=NOT_MEASURED_COLOR)
                    ax.text(x, floor * 1.5, bar, rotation=90, fontsize=MIN_FONT_PT,
                            ha="center", va="bottom", color="#555555")
                    continue
                median, low, high = bar
                ax.bar(x, median - floor, width, bottom=floor, color=mode_color(mode),
                       label=mode if i == next(j for j, b in enumerate(bars[mode])
                                             if not isinstance(b, str)) else None,
                       yerr=[[median - low], [high - median]], capsize=2)
        if eager_s:
            ax.axhline(eager_s, color="#555555", linewidth=0.9, linestyle="--",
                       label="eager first call")
        ax.set_yscale("log")
        _plain_log_ticks(ax.yaxis)
        ax.set_xticks(range(len(rungs)), rungs)
        ax.set_ylabel("first call (s)")
        fig.suptitle(title)
        handles, labels = ax.get_legend_handles_labels()
        if labels:
            fig.legend(handles, labels, loc="outside lower center", ncols=min(len(labels), 4))
        _save(fig, path, title, key)
