"""Figures and regions in words, for the pages and the condition of a verdict. The
structured fields (Comparison, Region) stay the data; these only format them."""

from __future__ import annotations

import itertools
import math

from report import formatting
from report.ledger.comparison import Comparison, HostRegion, Region


def figure_text(value: float | None, unit: str) -> str:
    """One figure in its unit, or "not measured"."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return formatting.NOT_MEASURED
    if unit == "ratio":
        return f"{formatting.sig(value)}×"
    if unit == "seconds":
        return formatting.seconds(value)
    if unit == "fraction":
        return formatting.percent(value)
    if unit == "bytes":
        return formatting.binary_bytes(value)
    if unit == "calls":
        count = formatting.calls(value)
        return count if math.isinf(value) else f"{count} {'call' if value == 1 else 'calls'}"
    if unit == "pass":
        return "pass" if value else "fail"
    if unit == "extra kernels":
        return f"{formatting.number(value)} extra"
    return formatting.number(value)


def span_text(lo: float, hi: float, unit: str) -> str:
    """"1.7–3.0×", or one figure where lo and hi read the same."""
    a, b = figure_text(lo, unit), figure_text(hi, unit)
    if a == b:
        return a
    if lo < 0:  # a dash would read as a minus sign
        return f"{a} to {b}"
    if unit == "ratio":
        return f"{formatting.sig(lo)}–{b}"
    if unit == "calls":
        return f"{a} to never" if math.isinf(hi) else f"{formatting.calls(lo)}–{b}"
    return f"{a}–{b}"


def num(x: float) -> str:
    return f"{int(x)}" if float(x).is_integer() else f"{x:g}"


def point(c: Comparison) -> str:
    return c.workload if c.batch is None else f"{c.workload} at {c.axis} {c.batch}"


def points(items: list[Comparison], limit: int = 8) -> str:
    """"mlp at batch 1, vit16x6x384 at batch 2, 4 and 8": a workload's points named once."""
    named = []
    for (workload, axis), run in itertools.groupby(items[:limit], lambda c: (c.workload, c.axis)):
        run = list(run)
        if len(run) == 1 or any(c.batch is None for c in run):
            named += [point(c) for c in run]
            continue
        *first, last = [num(c.batch) for c in run]
        named.append(f"{workload} at {axis} {', '.join(first)} and {last}")
    more = f", plus {len(items) - limit} more" if len(items) > limit else ""
    return ", ".join(named) + more


def host_text(host_us: tuple[float, float] | None) -> str:
    """What one eager op cost on the host (the host probe): where a verdict rests on it."""
    if host_us is None:
        return ""
    lo, hi = host_us
    span = formatting.sig(lo) if formatting.sig(lo) == formatting.sig(hi) else \
        f"{formatting.sig(lo)}–{formatting.sig(hi)}"
    return f"eager op {span}{formatting.UNIT_SPACE}µs on the host"


def _us(x: float) -> str:
    return f"{formatting.sig(x)}{formatting.UNIT_SPACE}µs"


def host_region_text(h: HostRegion) -> str:
    """"holds where an eager op costs more than 8.1 µs (of the 6.5–11.0 µs measured)": where
    a host-dependent speedup's host model clears the claim, among the hosts it was fitted on."""
    measured = f"the {formatting.sig(h.lo_us)}–{_us(h.hi_us)} measured"

    def part(outcome: str, where: str, probe: float | None) -> str:
        if where == "above":
            return f"{outcome} where an eager op costs more than {_us(probe)}"
        if where == "below":
            return f"{outcome} where an eager op costs less than {_us(probe)}"
        if where == "everywhere":
            return f"{outcome} at every host"
        return f"{outcome} at some hosts only" if where == "mixed" else f"{outcome} at no host"

    parts = [part("holds", *h.holds)] if h.holds else []
    parts += [part(outcome, *where) for outcome, where in (("exceeds", h.exceeds),
                                                          ("fails", h.fails))
              if where[0] != "nowhere"]
    parts = parts or [part("fails", *h.fails)]  # an upper bound no host surely passes
    return f"{', '.join(parts)} (of {measured}, {formatting.processes(h.processes, 'paired')})"


def host_regions_text(regions: tuple[HostRegion, ...], axis: str) -> str:
    """Each host-dependent point's host region; the point named where a region has several."""
    if len(regions) == 1:
        return f"host model: {host_region_text(regions[0])}"
    return "host model: " + "; ".join(
        f"at {axis} {num(h.batch)} {host_region_text(h)}" if h.batch is not None
        else host_region_text(h) for h in regions)


def region_words(r: Region, unit: str, with_host: bool = True) -> str:
    """"holds at batch 1–2 (1.7–3.0×, launch-bound, eager op 5 µs on the host, 3 proc.)";
    without the host probe where the words must fit a table cell or a one-line answer."""
    label = r.outcome if r.settled else f"unsettled, leans {r.outcome}"
    where = ""
    if r.first is not None:
        where = f" at {r.axis} {num(r.first)}" + (f"–{num(r.last)}" if r.last != r.first else "")
    details = [span_text(r.lo, r.hi, unit)] if r.lo is not None else []
    if r.bounds:
        details.append("/".join(r.bounds))
    if r.host_us and with_host:
        details.append(host_text(r.host_us))
    if r.processes:
        a, b = r.processes
        details.append(formatting.processes(f"{a}{'–' + str(b) if b != a else ''}"))
    text = f"{label}{where} ({', '.join(details)})" if details else f"{label}{where}"
    return f"{text} — {host_regions_text(r.host_regions, r.axis)}" if r.host_regions else text


def region_text(regions: list[Region], unit: str, because: list[str] = ()) -> str:
    """Workload by workload: "vit16x6x384: holds at batch 1–2 (…), fails at batch 16–32 (…)"."""
    parts: dict[str, list[str]] = {}
    for r in regions:
        parts.setdefault(r.workload, []).append(region_words(r, unit))
    text = "; ".join(f"{w}: {', '.join(runs)}" for w, runs in parts.items())
    return text + "".join(f". Not settled: {b}" for b in because)


def flops_text(x: float) -> str:
    for unit, scale in (("TFLOP", 1e12), ("GFLOP", 1e9), ("MFLOP", 1e6), ("kFLOP", 1e3)):
        if x >= scale:
            return f"{x / scale:.3g} {unit}"
    return f"{x:.3g} FLOP"
