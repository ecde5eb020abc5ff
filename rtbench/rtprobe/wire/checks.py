"""Checks shared by the parsers of rtprobe's records: typed members, one-line errors."""

from __future__ import annotations

from typing import Any

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1


class RecordError(ValueError):
    """A line that is not a valid rtprobe/1 record; the message names the line."""


def get_int(obj: dict[str, Any], key: str, where: str, *,
            nullable: bool = False) -> Any:
    """Member key of obj as an int (or None when nullable)."""
    if key not in obj:
        raise RecordError(f"{where}member '{key}' is missing")
    value = obj[key]
    if value is None and nullable:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise RecordError(f"{where}member '{key}' must be an integer, "
                          f"got {short(value)}")
    if not INT64_MIN <= value <= INT64_MAX:
        raise RecordError(f"{where}member '{key}' = {short(value)} does not "
                          "fit in 64 bits")
    return value


def short(value: Any) -> str:
    """repr(value), cut to 60 characters for a message."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def get(obj: dict[str, Any], key: str, kind: type | tuple[type, ...],
        where: str, default: Any = ...) -> Any:
    """Member key of obj checked against kind (missing -> default or error)."""
    if key not in obj:
        if default is ...:
            raise RecordError(f"{where}member '{key}' is missing")
        return default
    value = obj[key]
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if (isinstance(value, bool) and bool not in kinds) or not isinstance(
            value, kinds):
        raise RecordError(f"{where}member '{key}' has the wrong type "
                          f"({type(value).__name__})")
    return value
