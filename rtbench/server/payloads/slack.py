"""A Slack-compatible body ({"text": ...}, also taken by Mattermost, Rocket.Chat and
Teams' incoming webhooks): one line saying what happened, with the link to the run."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from rtbench.server.payloads.words import headline

if TYPE_CHECKING:
    from rtbench.server.payloads import Context


def render(event: str, data: dict[str, Any], context: Context) -> tuple[bytes, str]:
    """{"text": the event's headline and its link}."""
    text, link = headline(event, data)
    if link:
        text = f"{text} <{link}|run>"
    return json.dumps({"text": text}, sort_keys=True).encode("utf-8"), "application/json"
