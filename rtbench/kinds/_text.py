"""What the kinds' headlines and tables share: microseconds as text, dict items of a list."""

from __future__ import annotations

from typing import Any


def us_text(ns: Any) -> str:
    """Nanoseconds as microseconds with 2 decimals (lmbench's precision)."""
    return f"{float(ns) / 1000:.2f}"


def dict_items(value: Any) -> list[dict[str, Any]]:
    """The dict items of a list (anything else: empty)."""
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []
