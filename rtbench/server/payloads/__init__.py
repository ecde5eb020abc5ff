"""Webhook payload formats: one module per format, each with render(event, data, ctx).

A receiver names its format in the lab's webhook file (`format = "alertmanager"`); the
dispatcher renders each event once per receiver with the module registered here.
Adding a format is adding one module and one line of FORMATS.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from rtbench.server.payloads import alertmanager, rtbench_json, slack


@dataclass(frozen=True)
class Rendered:
    """A body ready to POST and its content type."""

    body: bytes
    content_type: str


@dataclass(frozen=True)
class Context:
    """What every format may need beside the event: when it is sent, the server's
    public URL ("" when unknown: links stay relative) and rtbench's version."""

    sent_at: datetime
    public_url: str
    version: str


# format name -> render(event, data, context) -> (body, content type)
Renderer = Callable[[str, dict[str, Any], Context], tuple[bytes, str]]
FORMATS: dict[str, Renderer] = {
    "rtbench": rtbench_json.render,
    "alertmanager": alertmanager.render,
    "slack": slack.render,
}
DEFAULT_FORMAT = "rtbench"


def render(fmt: str, event: str, data: dict[str, Any], context: Context) -> Rendered:
    """The body of event for a receiver of format fmt."""
    body, content_type = FORMATS[fmt](event, data, context)
    return Rendered(body, content_type)
