"""Checks that a run bundle fits the database before anything is written.

The rtbench-run/1 reader already refuses bad JSON, unknown fields and counts
that do not add up; what is left are the limits of the columns themselves
(text lengths, 32-bit integers, NUL characters PostgreSQL cannot store), which
SQLite would accept and PostgreSQL refuse halfway through a transaction.
"""

from __future__ import annotations

from typing import Any

from rtbench.bundle import RunDetail

INT32_MAX = (1 << 31) - 1
# the longest text inside a JSON field (command line words, sysinfo, tags, params), of a
# reason or error, and of the suite's TOML as stored
JSON_TEXT_MAX = 64 * 1024
REASON_MAX = 1 << 20
SUITE_SOURCE_MAX = 16 << 20


class BundleRejected(ValueError):
    """The run cannot be stored as it is; the text names the field and the limit."""


def _text(value: Any, where: str, limit: int | None = None) -> None:
    """value (str or None) has no NUL and at most limit characters."""
    if value is None:
        return
    text = str(value)
    if "\x00" in text:
        raise BundleRejected(f"{where}: text with a NUL character cannot be stored")
    if limit is not None and len(text) > limit:
        raise BundleRejected(f"{where}: {len(text)} characters, at most {limit} are stored")


def _int32(value: int | None, where: str) -> None:
    """value fits a 32-bit signed integer column."""
    if value is not None and not -INT32_MAX - 1 <= value <= INT32_MAX:
        raise BundleRejected(f"{where}: {value} is outside the 32-bit range stored")


def _no_nul(value: Any, where: str) -> None:
    """No string inside a JSON-like value holds a NUL character or is longer than
    JSON_TEXT_MAX characters (a 50 MB command line is not a command line)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if "\x00" in item:
                raise BundleRejected(f"{where}: text with a NUL character cannot be stored")
            if len(item) > JSON_TEXT_MAX:
                raise BundleRejected(f"{where}: a text of {len(item)} characters, at most "
                                     f"{JSON_TEXT_MAX} are stored")
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def check_bundle(run: RunDetail, statuses: tuple[str, ...]) -> None:
    """Raise BundleRejected when run does not fit the schema's columns."""
    if run.status not in statuses:
        raise BundleRejected(f"run.status: {run.status!r} is not one of {', '.join(statuses)}")
    for name, limit in (("suite", 255), ("hostname", 255), ("board", 255), ("target", 255),
                        ("kernel", 255), ("arch", 64), ("uid", 64), ("status", 32)):
        _text(getattr(run, name), f"run.{name}", limit)
    cpu_model = run.sysinfo.get("cpu_model") if isinstance(run.sysinfo, dict) else None
    _text(cpu_model, "run.sysinfo.cpu_model", 255)
    _text(run.suite_source, "run.suite_source", SUITE_SOURCE_MAX)
    for name in ("sysinfo", "preflight", "tool_versions", "command_line", "tags", "source"):
        _no_nul(getattr(run, name), f"run.{name}")
    for i, sc in enumerate(run.scenarios):
        w = f"run.scenarios[{i}]"
        _text(sc.name, f"{w}.name", 255)
        _text(sc.load_cpus, f"{w}.load_cpus", 255)
        _text(sc.measure_cpus, f"{w}.measure_cpus", 255)
        _no_nul([sc.loads, sc.intensity], w)
        for j, m in enumerate(sc.measurements):
            mw = f"{w}.measurements[{j}]"
            _text(m.name, f"{mw}.name", 255)
            _text(m.test, f"{mw}.test", 64)
            _text(m.status, f"{mw}.status", 32)
            _text(m.probe_version, f"{mw}.probe_version", 64)
            _text(m.reason, f"{mw}.reason", REASON_MAX)
            _int32(m.exit_code, f"{mw}.exit_code")
            _no_nul([m.params, m.command, m.verdicts, m.data, m.start], mw)
            for s in m.series:
                _text(s.label, f"{mw}.series[{s.index}].label", 255)
                _text(s.error, f"{mw}.series[{s.index}].error", REASON_MAX)
                _int32(s.index, f"{mw}.series.index")
                _int32(s.cpu, f"{mw}.series[{s.index}].cpu")
                for bucket, _count in s.hist:
                    _int32(bucket, f"{mw}.series[{s.index}].hist")
                _no_nul(s.warmup, f"{mw}.series[{s.index}].warmup")
            seen: set[tuple[int, int]] = set()
            for w_rec in m.windows:
                key = (w_rec.series, w_rec.index)
                if key in seen:
                    raise BundleRejected(f"{mw}.windows: two windows of series {key[0]} "
                                         f"have index {key[1]}")
                seen.add(key)
                _int32(w_rec.series, f"{mw}.windows.series")
                _int32(w_rec.index, f"{mw}.windows.index")
            for sp in m.spikes:
                _int32(sp.series, f"{mw}.spikes.series")
