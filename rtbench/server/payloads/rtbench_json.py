"""rtbench's own webhook body: the event, when it was sent, rtbench's version and the
event's data, as one JSON object (signed by the dispatcher when a secret is set)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rtbench.server.payloads import Context


def render(event: str, data: dict[str, Any], context: Context) -> tuple[bytes, str]:
    """{"event", "sent_at", "rtbench", **data} as JSON."""
    body = {"event": event, "sent_at": context.sent_at.isoformat(),
            "rtbench": context.version, **data}
    return json.dumps(body, sort_keys=True, default=str).encode("utf-8"), \
        "application/json"
