"""Axes of the board history plots (SVG and matplotlib): latency labels that step their
unit (µs, ms, s), linear or log ticks, and date ticks at hours, nights, weeks or months.

Pure functions: the plots decide where to draw, these decide what to write.  A latency
of zero is written "0"; a label never carries more digits than it needs.
"""

from __future__ import annotations

import functools
import math
from datetime import datetime, timedelta, timezone

# a range wider than this (largest / smallest positive value) is drawn on a log axis
LOG_RATIO = 100.0
_UNITS = ((1e3, "µs"), (1e6, "ms"), (1e9, "s"))
_HOUR = 3600.0
_DAY = 86400.0


def _digits(value: float, significant: int) -> str:
    """value with at most significant digits, no trailing zeros ('9.4', '180', '0.5')."""
    if value == 0:
        return "0"
    decimals = max(0, significant - 1 - int(math.floor(math.log10(abs(value)))))
    text = f"{value:.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


@functools.lru_cache(maxsize=4096)  # a history writes one per dot: many values repeat
def duration_label(ns: float, significant: int = 3) -> str:
    """A latency in the unit that suits it: '0', 500 ns as '0.5 µs', '22 µs', '1.5 ms',
    '9.4 s' (significant digits at most; 999.96 µs rounds up to '1 ms')."""
    if ns == 0:
        return "0"
    index = 0
    for i, (scale, _) in enumerate(_UNITS):
        if abs(ns) >= scale:
            index = i
    text = _digits(ns / _UNITS[index][0], significant)
    if abs(float(text)) >= 1000 and index < len(_UNITS) - 1:
        index += 1
        text = _digits(ns / _UNITS[index][0], significant)
    return f"{text} {_UNITS[index][1]}"


def use_log(values: list[float]) -> bool:
    """Whether values (latencies, ns) span more than LOG_RATIO: a log axis then."""
    positive = [v for v in values if v > 0]
    return bool(positive) and max(positive) / min(positive) > LOG_RATIO


def _nice_step(span: float, count: int) -> float:
    """A step of 1, 2 or 5 times a power of ten giving about count intervals."""
    raw = span / max(count, 1)
    power = 10.0 ** math.floor(math.log10(raw))
    for factor in (1.0, 2.0, 5.0):
        if factor * power >= raw:
            return factor * power
    return 10.0 * power


def linear_ticks(top: float, count: int = 4) -> list[float]:
    """Ticks from 0 to at least top (ns), at a nice step; [0, 1000] when top is 0."""
    if top <= 0:
        return [0.0, 1000.0]
    step = _nice_step(top, count)
    n = int(math.ceil(top / step - 1e-9))
    return [i * step for i in range(n + 1)]


def log_ticks(low: float, high: float) -> list[float]:
    """Powers of ten from at or below low to at or above high (both > 0)."""
    first = math.floor(math.log10(low))
    last = math.ceil(math.log10(high))
    if last == first:
        last += 1
    return [10.0 ** k for k in range(first, last + 1)]


def _midnight(t: datetime) -> datetime:
    """The start of t's day (UTC)."""
    return t.astimezone(timezone.utc).replace(hour=0, minute=0, second=0, microsecond=0)


def _first_of_month(t: datetime) -> datetime:
    """The start of t's month (UTC)."""
    return _midnight(t).replace(day=1)


def _add_months(t: datetime, months: int) -> datetime:
    """t (a first of month) months later."""
    index = t.year * 12 + t.month - 1 + months
    return t.replace(year=index // 12, month=index % 12 + 1)


def date_ticks(start: datetime, end: datetime, most: int = 7
               ) -> tuple[list[datetime], str, str]:
    """Ticks between start and end (UTC), at most `most`: whole hours, nights (midnight),
    Mondays or first days of months, whichever step keeps them few enough; with the
    strftime format of their labels and a phrase naming the step ('ticks at midnight')."""
    span = (end - start).total_seconds()
    for hours in (1, 3, 6, 12):
        # nights once the runs cover two of them: hours only within a day and a half
        if span / (hours * _HOUR) <= most and span <= 1.5 * _DAY:
            first = start.astimezone(timezone.utc).replace(minute=0, second=0,
                                                           microsecond=0)
            while first.hour % hours:
                first -= timedelta(hours=1)
            return (_steps(first, timedelta(hours=hours), start, end), "%d %b %H:%M",
                    f"ticks every {hours} h")
    for days, phrase in ((1, "ticks at midnight"), (2, "ticks at every 2nd midnight")):
        if span / (days * _DAY) <= most:
            return (_steps(_midnight(start), timedelta(days=days), start, end), "%d %b",
                    f"{phrase} (UTC)")
    for weeks in (1, 2, 4):
        if span / (weeks * 7 * _DAY) <= most:
            monday = _midnight(start) - timedelta(days=start.astimezone(timezone.utc)
                                                  .weekday())
            return (_steps(monday, timedelta(weeks=weeks), start, end), "%d %b",
                    "ticks on Mondays (UTC)" if weeks == 1
                    else f"ticks every {weeks} weeks, on Mondays (UTC)")
    months = next((m for m in (1, 2, 3, 6, 12) if span / (m * 30.4 * _DAY) <= most),
                  12 * math.ceil(span / (most * 365.25 * _DAY)))
    monthly: list[datetime] = []
    at = _first_of_month(start)
    while at <= end:
        if at >= start:
            monthly.append(at)
        at = _add_months(at, months)
    return monthly, "%b %Y", ("ticks on the 1st of each month" if months == 1
                            else f"ticks every {months} months, on the 1st")


def _steps(first: datetime, step: timedelta, start: datetime, end: datetime
           ) -> list[datetime]:
    """first, first + step, ... within [start, end]."""
    out = []
    at = first
    while at <= end:
        if at >= start:
            out.append(at)
        at += step
    return out
