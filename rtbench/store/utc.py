"""Datetimes read back from the database, in UTC (SQLite keeps them naive)."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import overload


@overload
def as_utc(value: datetime) -> datetime: ...
@overload
def as_utc(value: None) -> None: ...
def as_utc(value: datetime | None) -> datetime | None:
    """Naive datetimes (SQLite) marked as UTC, others (PostgreSQL) converted to UTC."""
    if value is None:
        return None
    if value.tzinfo is not None:
        return value.astimezone(timezone.utc)
    return value.replace(tzinfo=timezone.utc)
