"""Loads and params printed the way a user writes them in a suite file (TOML inline tables)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# The keys of a load as a suite file writes them, in that order (see docs/suites.md).
LOAD_KEYS = ("kind", "command", "rate", "instances", "cpus", "options")


def toml_value(value: Any) -> str:
    """One value as TOML: strings quoted and escaped, whole floats without '.0'."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return str(int(value))
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, Mapping):
        return inline_table(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return toml_string(str(value))


def toml_string(text: str) -> str:
    """A TOML basic string: quotes, backslashes and control characters escaped."""
    out = []
    for ch in text:
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif ch in _SHORT_ESCAPES:
            out.append(_SHORT_ESCAPES[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04X}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


_SHORT_ESCAPES = {"\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def _key(name: str) -> str:
    """A TOML key: bare when it can be, else quoted."""
    bare = name and all(ch.isascii() and (ch.isalnum() or ch in "-_") for ch in name)
    return name if bare else toml_string(name)


def inline_table(table: Mapping[str, Any]) -> str:
    """A table as a TOML inline table: { a = 1, b = "x" } ({} when empty)."""
    if not table:
        return "{}"
    return "{ " + ", ".join(f"{_key(str(k))} = {toml_value(v)}" for k, v in table.items()) + " }"


def load_text(load: Mapping[str, Any]) -> str:
    """A stored load recipe as its suite-file line, defaults left out.

    { kind = "cpu", rate = 80 } or { command = "find /", instances = 2 }: instances 1,
    no cpus and empty options are what a user leaves out; keys rtbench adds when it
    runs the load (achieved rate, unit, ...) are not part of the recipe.
    """
    shown: dict[str, Any] = {}
    for key in LOAD_KEYS:
        value = load.get(key)
        if value is None or (key == "instances" and value == 1) or (
                key == "options" and not value):
            continue
        shown[key] = value
    return inline_table(shown)


def params_text(params: Mapping[str, Any]) -> str:
    """A test's params as the suite file's inline table ('-' when there are none)."""
    return inline_table(params) if params else "-"
