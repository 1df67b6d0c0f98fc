"""Jinja filters that turn numbers into table text.

Every filter renders a missing value (None) as "not measured", so a template can
never print a blank or a zero for something that was not measured. Units are in
each cell ("12.3 µs") so that the sortable-table script can compare cells with
different units.
"""

from __future__ import annotations

import math
import re
from typing import Any

from report.analysis.vocabulary import outlier

NOT_MEASURED = "not measured"
# Between a figure and its unit: a narrow table column wraps "32 µs" onto two lines otherwise.
UNIT_SPACE = "\u00a0"


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def sig(value: float, digits: int = 3) -> str:
    """`digits` significant figures without switching to scientific notation."""
    if value == 0:
        return "0"
    if abs(value) < 1e-3:  # relative errors and the like: 1.23e-07 reads better
        return f"{value:.{digits - 1}e}"
    decimals = max(digits - 1 - int(math.floor(math.log10(abs(value)))), 0)
    return f"{value:,.{decimals}f}"


def _unit(value: float) -> tuple[str, float]:
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if abs(value) >= scale:
            return unit, scale
    return "ns", 1e-9


def seconds(value: float | None) -> str:
    if _missing(value):
        return NOT_MEASURED
    unit, scale = _unit(value)
    return f"{sig(value / scale)}{UNIT_SPACE}{unit}"


def minutes(value_s: float | None) -> str:
    """A duration of minutes, from seconds: "5.2 min"."""
    return NOT_MEASURED if _missing(value_s) else f"{sig(value_s / 60, 2)}{UNIT_SPACE}min"


def seconds_range(low: float | None, high: float | None) -> str:
    """"13.5–23.2 s": one unit where both ends share it, and no line break inside (a word
    joiner after the dash), so that a narrow table cell keeps a range on one line."""
    if _missing(low) or _missing(high):
        return NOT_MEASURED
    if sig(low) == sig(high):
        return seconds(low)
    unit, scale = _unit(low or high)  # zero takes the other end's unit: "0–230 ms"
    if _unit(high)[0] != unit:
        return f"{seconds(low)}\u2013\u2060{seconds(high)}"
    return f"{sig(low / scale)}\u2013\u2060{sig(high / scale)}{UNIT_SPACE}{unit}"


def _spread(text: str, within: str, n: int | None, repeated: bool | None) -> str:
    """A figure with its spread across processes: "1.23 ms (1.20–1.31, 3 proc.)". One
    process is marked "single run" where its environment has repeated cases, and left
    bare in an environment of single runs, which says so once above its tables."""
    if n is not None and n >= 2:
        return f"{text} ({within})"
    return f"{text} (single run)" if repeated else text


def latency(row: dict | None, side: str = "") -> str:
    """A case's median over processes with their range; `side` "_base" reads the
    baseline columns of a comparison."""
    median = None if row is None else row.get(f"median_s{side}")
    if _missing(median):
        return NOT_MEASURED
    unit, scale = _unit(median)
    n = int(row[f"n_processes{side}"])
    kind = "paired" if row.get(f"timing{side}") == "paired" else ""
    within = f"{sig(row[f'lo_s{side}'] / scale)}–{sig(row[f'hi_s{side}'] / scale)}, {processes(n, kind)}"
    return _spread(seconds(median), within, n, row.get("env_repeated"))


def speedup(row: dict | None, column: str = "speedup", host: bool = True) -> str:
    """A ratio of medians with its range over every pairing of the two sides' processes;
    a paired ratio (see analysis.compare) with the range of its processes, and, where it
    depends on the host and `host` asks for it, the host-probe figure it was measured at."""
    value = None if row is None else row.get(column)
    if _missing(value):
        return NOT_MEASURED
    pairings = row.get("pairings")
    if pairings == 0:  # the baseline against itself
        return times(value)
    within = f"{row[column + '_lo']:.2f}–{row[column + '_hi']:.2f}"
    if outlier(row[column + "_lo"], row[column + "_hi"]):
        within += ", an outlier process"
    if column == "speedup" and row.get("paired"):
        spread = f"{within}, {processes(int(pairings), 'paired')}" if pairings >= 2 else "single paired run"
        if (host and row.get("ratio_bound") == "host-dependent"
                and not _missing(row.get("host_probe_us"))):
            spread += f"; host-dependent: {row['host_probe_us']:.1f}{UNIT_SPACE}µs per eager op here"
        return f"{times(value)} ({spread})"
    return _spread(times(value), within, pairings, row.get("env_repeated"))


_FIGURE_AND_UNIT = re.compile(r"(\d) (ns|µs|ms|s|min|B|KiB|MiB|GiB)(?!\w)")


def units(text: str | None) -> str | None:
    """Free text (a claim's quoted figures) with each figure kept on one line with its unit."""
    return text if text is None else _FIGURE_AND_UNIT.sub(rf"\1{UNIT_SPACE}\2", text)


def processes(count: int | str, kind: str = "") -> str:
    """"3 proc.", "3×3 proc.", "3 paired proc.": kept on one line, like a figure and its unit."""
    return " ".join(str(part) for part in (count, kind, "proc.") if part).replace(" ", UNIT_SPACE)


def times(value: float | None) -> str:
    """A speedup: 1.23×."""
    return NOT_MEASURED if _missing(value) else f"{value:.2f}×"


def percent(value: float | None) -> str:
    return NOT_MEASURED if _missing(value) else f"{100 * value:.1f}%"


def binary_bytes(value: float | None) -> str:
    if _missing(value):
        return NOT_MEASURED
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if value >= scale:
            return f"{sig(value / scale)}{UNIT_SPACE}{unit}"
    return f"{int(value)}{UNIT_SPACE}B"


def number(value: float | None) -> str:
    """Counts that may be averages per call: 12, 12.5, 1,234."""
    if _missing(value):
        return NOT_MEASURED
    if float(value).is_integer():
        return f"{int(value):,}"
    return sig(value)


def millions(value: float | None) -> str:
    """A parameter count as models are named by it: 124,439,808 reads "124M"."""
    return NOT_MEASURED if _missing(value) else f"{value / 1e6:.0f}M"


def calls(value: float | None) -> str:
    if _missing(value):
        return NOT_MEASURED
    return "never" if math.isinf(value) else f"{int(value):,}"


def about_calls(value: float | None, lo: float | None = None, hi: float | None = None) -> str:
    """`about` with its noun: "1 call", "about 2,000 calls", "never"."""
    text = about(value, lo, hi)
    return text if text in (NOT_MEASURED, "never") else f"{text} call{'' if text == '1' else 's'}"


def about(value: float | None, lo: float | None = None, hi: float | None = None) -> str:
    """A count rounded to what its range supports: one significant figure where the range
    spans more than a factor of three, else two ("about 10,000"); exact when it is small."""
    if _missing(value):
        return NOT_MEASURED
    if math.isinf(value):
        return "never"
    wide = lo is None or hi is None or lo <= 0 or math.isinf(hi) or hi / lo > 3
    digits = 1 if wide else 2
    if value < 10 ** digits:
        return f"{int(value):,}"
    rounded = round(value, digits - 1 - int(math.floor(math.log10(value))))
    return f"about {int(rounded):,}"


def scientific(value: float | None) -> str:
    return NOT_MEASURED if _missing(value) else f"{value:.2e}"


def batch(value: int | float | None) -> str:
    """Non-batched workloads have no batch size: an em dash, never 'not measured'. A batch
    from a table that joined batched and unbatched rows is a float: 8.0 reads 8."""
    if _missing(value):
        return "—"
    return str(int(value)) if float(value).is_integer() else str(value)


def yes_no(value: bool | None) -> str:
    return NOT_MEASURED if _missing(value) else ("pass" if value else "fail")


def one_line(value: Any) -> str:
    """Every run of white space, line breaks included, as one space; a UNIT_SPACE stays."""
    return re.sub(r"[^\S\u00a0]+", " ", str(value)).strip()


def cell(value: Any) -> str:
    """Free text (a reason, a probe summary) made safe for one Markdown table cell."""
    if _missing(value):
        return NOT_MEASURED
    text = one_line(value)
    for raw, safe in (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"), ("|", "\\|"),
                      ("*", "\\*"), ("_", "\\_"), ("`", "\\`"), ("[", "\\["), ("]", "\\]")):
        text = text.replace(raw, safe)
    return text


def value_text(value: Any) -> str:
    """A probe value: any JSON value, objects as `key: value; ...` in key order."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return sig(value) if value else "0"
    if isinstance(value, dict):
        return "; ".join(f"{cell(k)}: {value_text(v)}" for k, v in sorted(value.items()))
    if isinstance(value, list):
        return ", ".join(value_text(v) for v in value)
    return cell(value)


def microseconds(value: float | None) -> str:
    """A host-probe figure, already in microseconds: 6.95 µs."""
    return NOT_MEASURED if _missing(value) else f"{value:.2f}{UNIT_SPACE}µs"


def faults(value: float | None) -> str:
    """Page faults per call: "4,032", "0.5"; "not recorded" before records version 8."""
    if _missing(value):
        return "not recorded"
    return f"{value:,.0f}" if value >= 10 else f"{value:.1f}"


def day(value) -> str:
    """A timestamp to the minute, UTC."""
    return NOT_MEASURED if _missing(value) else value.strftime("%Y-%m-%d %H:%M UTC")


def on_off(setting: str) -> str:
    """A recorded switch ("True"/"False", as the environment table holds it) as on/off."""
    return {"True": "on", "False": "off"}.get(str(setting), str(setting))


FILTERS = {
    "microseconds": microseconds,
    "day": day,
    "seconds": seconds,
    "minutes": minutes,
    "seconds_range": seconds_range,
    "latency": latency,
    "speedup": speedup,
    "times": times,
    "processes": processes,
    "units": units,
    "percent": percent,
    "bytes": binary_bytes,
    "number": number,
    "calls": calls,
    "about": about,
    "about_calls": about_calls,
    "sci": scientific,
    "batch": batch,
    "passfail": yes_no,
    "cell": cell,
    "value": value_text,
    "onoff": on_off,
    "faults": faults,
}
