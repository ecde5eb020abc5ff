"""Any value as a person reads it: never a Python repr.

Every place that shows a value whose type it does not control (tool versions, result data,
preflight facts, advice) goes through value_text(): lists are joined with ", ", dicts are
written key=value, None is "—" and booleans are yes/no.  It lives at the root of the
package so the analysis, preflight and report layers share the one formatter.
"""

from __future__ import annotations

from collections.abc import Mapping

UNKNOWN = "—"


def value_text(value: object) -> str:
    """A value for people: lists joined, dicts as key=value, None as '—', bools as yes/no."""
    if value is None:
        return UNKNOWN
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, Mapping):
        return ", ".join(f"{value_text(k)}={_nested(v)}" for k, v in value.items())
    if isinstance(value, (list, tuple, set, frozenset)):
        items = sorted(value, key=str) if isinstance(value, (set, frozenset)) else value
        return ", ".join(_nested(v) for v in items)
    return str(value)


def _nested(value: object) -> str:
    """A value inside a list or dict: nested containers in parentheses."""
    text = value_text(value)
    if isinstance(value, (Mapping, list, tuple, set, frozenset)) and value:
        return f"({text})"
    return text
