"""Number formatting shared by the reports (the numbers come from rtbench.analysis)."""

from __future__ import annotations

import math
import re
from typing import Any

from rtbench.analysis.measurement import MeasurementStats
from rtbench.analysis.stats import LatencyStats
from rtbench.bundle import MeasurementDetail, ScenarioDetail
from rtbench.core.valuetext import value_text

DEFINITIONS = (
    ("Latency", "time from the deadline (or stimulus) to the moment the "
     "woken thread read the clock, CLOCK_MONOTONIC, in microseconds"),
    ("Warm-up", "the first seconds of each measurement are measured but "
     "kept out of every statistic"),
    ("Overruns", "periods skipped because the thread woke after the next "
     "deadline; counted, never dropped"),
    ("Percentiles", "from the loglin7 histogram: the lower bound of the "
     "bucket holding the ceil(q·n)-th sample, low by less than 1/128 "
     "(0.78 %) of the value; shown only when n ≥ 10/(1−q)"),
    ("Mean", "exact (sum of samples / samples)"),
    ("Stddev", "from bucket mid-points, with the stated error bound"),
    ("Exceedances", "samples at or above a threshold; rate per hour of "
     "measured time (merged series: per hour of wall time, all threads)"),
    ("All series", "the threads of a measurement merged: histograms added, "
     "min of minima, max of maxima"),
)


def fmt_template_value(value: object) -> object:
    """Jinja2's finalize: every {{ value }} of a page through value_text (HTML kept)."""
    if hasattr(value, "__html__"):
        return value
    return value_text(value)


def fmt_us(ns: float | int | None) -> str:
    """Nanoseconds as microseconds with 1-3 decimals and thousands separators ('-' for
    None)."""
    if ns is None:
        return "-"
    us = ns / 1000.0
    if abs(us) < 10:
        return f"{us:.3f}"
    if abs(us) < 100:
        return f"{us:.2f}"
    return f"{us:,.1f}"


def fmt_duration(ns: float | None) -> str:
    """A duration in the unit that suits it (ns, µs, ms, s), 3 significant digits (more
    left of the point, with thousands separators), never in scientific notation."""
    if ns is None or not math.isfinite(ns):
        return "-" if ns is None else "unbounded"
    rounded = float(f"{ns:.3g}")  # 999,960 ns is 1.00 ms, not 1,000 µs
    for scale, unit in ((1e9, "s"), (1e6, "ms"), (1e3, "µs")):
        if abs(rounded) >= scale:
            value = rounded / scale
            if abs(value) >= 100:
                return f"{value:,.0f} {unit}"
            decimals = 2 - math.floor(math.log10(abs(value)))
            return f"{value:.{decimals}f} {unit}"
    return f"{round(ns):,} ns"


# rtprobe writes ASCII: '1000us', '>= 1000us'.
_PROBE_US = re.compile(r"(?<=\d)us\b")


def fmt_probe_text(text: object) -> str:
    """Text rtprobe wrote (a verdict, a reason) in the unit style of everything else:
    '1000us' as '1000µs', '>=' as '≥'."""
    return _PROBE_US.sub("µs", value_text(text)).replace(">=", "≥")


def fmt_count(n: int | float | None) -> str:
    """A count with thousands separators."""
    if n is None:
        return "-"
    if isinstance(n, float) and not n.is_integer():
        return f"{n:,.2f}"
    return f"{int(n):,}"


def fmt_rate(per_hour: float | None) -> str:
    """An exceedance rate per hour."""
    if per_hour is None:
        return "-"
    if per_hour == 0:
        return "0/h"
    if per_hour >= 100:
        return f"{per_hour:,.0f}/h"
    return f"{per_hour:.3g}/h"


def fmt_threshold(ns: int) -> str:
    """A threshold like '100µs' or '2ms'."""
    if ns >= 1_000_000 and ns % 1_000_000 == 0:
        return f"{ns // 1_000_000}ms"
    return f"{ns / 1000:g}µs"


def fmt_exceed(stats: LatencyStats) -> str:
    """Exceedances per threshold: '3 ≥100µs, 0 ≥1ms'."""
    if not stats.exceedances:
        return "-"
    return ", ".join(f"{fmt_count(e.count)} ≥{fmt_threshold(e.threshold_ns)}"
                     for e in stats.exceedances)


def fmt_intensity(intensity: dict[str, Any] | None) -> str:
    """The achieved load intensity in one short line (each load: achieved/target)."""
    if not intensity:
        return "-"
    parts = []
    if intensity.get("cpu_busy_pct") is not None:
        parts.append(f"cpu {intensity['cpu_busy_pct']:.0f}%")
    if intensity.get("ctxt_per_s") is not None:
        parts.append(f"{_si(intensity['ctxt_per_s'])} ctxt/s")
    if intensity.get("irq_per_s") is not None:
        parts.append(f"{_si(intensity['irq_per_s'])} irq/s")
    for load in intensity.get("loads") or []:
        text = fmt_load_rate(load) if isinstance(load, dict) else None
        if text:
            parts.append(text)
    return " · ".join(parts) if parts else "-"


def fmt_per_s(value: object) -> str:
    """A rate per second as a whole number with separators ('-' if unknown)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return "-"
    return f"{value:,.0f}"


def fmt_load_rate(load: dict[str, Any]) -> str | None:
    """A built-in load's achieved rate against its target: 'sched 19.9k/20k messages/s'."""
    if load.get("achieved") is None:
        return None
    target = load.get("target", load.get("rate"))
    if target == "max":
        wanted = "max"
    elif isinstance(target, (int, float)) and not isinstance(target, bool):
        wanted = _si(float(target))
    else:
        wanted = "?"
    unit = load.get("unit") or ""
    return f"{load.get('kind') or 'load'} {_si(float(load['achieved']))}/{wanted} {unit}".rstrip()


def fmt_placement(scenario: ScenarioDetail) -> str:
    """Where the scenario's loads and tests ran: 'loads 0-1 | tests 2-3 (split)'."""
    placement = (scenario.intensity or {}).get("placement")
    rule = placement.get("rule") if isinstance(placement, dict) else None
    everything = placement.get("cpus") if isinstance(placement, dict) else None
    if scenario.load_cpus is None and scenario.measure_cpus is None:
        where = f"all CPUs{' ' + str(everything) if everything else ''} shared"
        return where if rule in (None, "shared") else f"{where} ({rule})"
    text = (f"loads {scenario.load_cpus or 'any CPU'} | "
            f"tests {scenario.measure_cpus or 'default CPUs'}")
    return f"{text} ({rule})" if rule else text


def _si(value: float) -> str:
    """A rate with a k/M suffix (3 significant digits below 1000)."""
    if value >= 1e6:
        return f"{value / 1e6:.1f}M"
    if value >= 1e3:
        return f"{value / 1e3:.1f}k"
    return f"{value:.3g}"


def notes_once(ms: MeasurementStats) -> list[tuple[str, str]]:
    """(series, note) with each series note once: the series it holds for ('cpu0, cpu1',
    or 'every series' when it holds for all of several)."""
    holders: dict[str, list[str]] = {}
    for label, s in ms.per_series:
        for note in s.notes:
            holders.setdefault(note, []).append(label)
    every = len(ms.per_series) > 1
    return [("every series" if every and len(labels) == len(ms.per_series)
             else ", ".join(labels), note) for note, labels in holders.items()]


def figure_caption(m: MeasurementDetail, bucket_error_pct: str) -> str:
    """What a measurement's figure (report/plot.py histogram_svg) draws, and only that."""
    windows = [w for w in m.windows if w.count and w.max_ns is not None]
    text = ("Top: " if windows else "") + (
        "latency histogram, log–log: the number of samples in each loglin7 bucket (a "
        f"count, not a density; each bucket ≤ {bucket_error_pct} % of its value wide), "
        "warm-up excluded")
    if m.thresholds_ns:
        text += "; dashed lines: the thresholds"
    if windows:
        per_series: dict[int, int] = {}
        for w in windows:
            per_series[w.series] = per_series.get(w.series, 0) + 1
        shape = ("points: one window per series" if max(per_series.values()) == 1
                 else "the largest (solid) and mean (dotted) latency")
        text += (f". Bottom: per window of {_window_text(windows)}, {shape} of each series "
                 "over time")
        if any(w.warmup for w in windows):
            text += ", warm-up shaded"
    return text + "."


def _window_text(windows: list[Any]) -> str:
    """The length of the windows: 'about 1 s' or 'about 250 ms'."""
    lengths = sorted(w.end_ns - w.start_ns for w in windows)
    typical = lengths[len(lengths) // 2] / 1e9
    return f"about {typical:g} s" if typical >= 1 else f"about {typical * 1000:.0f} ms"
