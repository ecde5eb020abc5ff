"""Webhook deliveries of the results server: recorded, updated, listed (one row each)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone

from sqlalchemy import insert, select, update

from rtbench.core.redact import redact
from rtbench.store import Store
from rtbench.store import schema as t
from rtbench.store.utc import as_utc

DELIVERY_STATUSES = ("pending", "delivered", "failed")


@dataclass
class Delivery:
    """One webhook delivery as stored."""

    id: int
    event: str
    url: str
    body: str
    status: str
    attempts: int
    last_code: int | None
    last_error: str | None
    created_at: datetime
    finished_at: datetime | None


def add_delivery(store: Store, event: str, url: str, body: str) -> int:
    """Record a delivery about to be tried (status pending); its id.  The URL is stored
    with its credentials hidden (the pages and the API show it)."""
    with store.transaction(f"record a {event} webhook delivery") as conn:
        res = conn.execute(insert(t.webhook_deliveries).values(
            event=event, url=redact(url), body=body, status="pending", attempts=0,
            created_at=datetime.now(timezone.utc)))
        key = res.inserted_primary_key
        assert key is not None
        return int(key[0])


def update_delivery(store: Store, delivery_id: int, *, status: str, attempts: int,
                    code: int | None, error: str | None) -> None:
    """Record an attempt's outcome (finished_at set once delivered or failed)."""
    if status not in DELIVERY_STATUSES:
        raise ValueError(f"delivery status {status!r} is not one of "
                         f"{', '.join(DELIVERY_STATUSES)}")
    done = None if status == "pending" else datetime.now(timezone.utc)
    with store.transaction(f"update webhook delivery {delivery_id}") as conn:
        conn.execute(update(t.webhook_deliveries)
                     .where(t.webhook_deliveries.c.id == delivery_id)
                     .values(status=status, attempts=attempts, last_code=code,
                             last_error=None if error is None else redact(error)[:1000],
                             finished_at=done))


def list_deliveries(store: Store, limit: int = 100) -> list[Delivery]:
    """The newest deliveries, newest first."""
    d = t.webhook_deliveries
    with store.transaction("list webhook deliveries") as conn:
        rows = conn.execute(select(d).order_by(d.c.id.desc()).limit(limit)).all()
    return [Delivery(r.id, r.event, r.url, r.body, r.status, r.attempts, r.last_code,
                     r.last_error, as_utc(r.created_at) or datetime.now(timezone.utc),
                     as_utc(r.finished_at)) for r in rows]
