"""The cold-start ladder at a glance: one chart per environment, mode and batch, a group of
bars per workload, one bar per rung for the residual a user pays over eager's first call,
with its range over processes.

Drawn the way report/charts.py draws (its style, determinism and deferred drawing), with
bars rather than lines: the rungs are steps, not an axis with a scale. The residual goes on
a linear axis: it is seconds of waiting, and the rungs differ by seconds, not by decades.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import matplotlib

from report.charts import MIN_FONT_PT, NOT_MEASURED_COLOR, STYLE, WIDTH_IN, _figure, _save, chart

# charts.py keys a drawn SVG on its own code; this file's code goes in as an argument.
CODE = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:16]
# Hot to cool down the ladder: the eye reads the cold rung as the one to get away from.
RUNG_COLORS = {"cold": "#c44e52", "warm": "#dd8452", "bundle": "#4c72b0", "aot": "#55a868",
               "precompile": "#8172b3"}


@chart
def ladder_chart(path: Path, key: str, *, code: str, title: str, workloads: list[str],
                 rungs: list[str], bars: dict[str, list[tuple[float, float, float] | str]]) -> None:
    """`bars[rung][i]`: (median, low, high) residual seconds of `workloads[i]` on `rung`, or
    the words saying why there is none ("not measured", "error"), drawn as a grey stub."""
    with matplotlib.rc_context(STYLE):
        fig = _figure(WIDTH_IN, 3.4)
        ax = fig.add_subplot()
        width = 0.8 / max(len(rungs), 1)
        top = max((b[2] for values in bars.values() for b in values if not isinstance(b, str)),
                  default=1.0)
        for k, rung in enumerate(rungs):
            labelled = False
            for i, bar in enumerate(bars[rung]):
                x = i - 0.4 + width * (k + 0.5)
                if isinstance(bar, str):
                    ax.bar(x, top * 0.03, width, color=NOT_MEASURED_COLOR)
                    ax.text(x, top * 0.05, bar, rotation=90, fontsize=MIN_FONT_PT,
                            ha="center", va="bottom", color="#555555")
                    continue
                median, low, high = bar
                ax.bar(x, median, width, color=RUNG_COLORS.get(rung, "#8c8c8c"),
                       label=None if labelled else rung, capsize=2,
                       yerr=[[median - low], [high - median]])
                labelled = True
        ax.axhline(0, color="#555555", linewidth=0.9)
        ax.set_xticks(range(len(workloads)), workloads)
        ax.set_ylabel("first call less eager's (s)")
        fig.suptitle(title)
        handles, labels = ax.get_legend_handles_labels()
        if labels:
            fig.legend(handles, labels, loc="outside lower center", ncols=len(labels))
        _save(fig, path, title, key)
