"""Prometheus Alertmanager's webhook body (version 4), so that a receiver written for
Alertmanager (a chat bridge, an incident tool) takes rtbench's events as they are.

Each event is one alert.  A regression is firing from its confirmation (or suspicion,
for receivers that asked for it) until it resolves; its fingerprint is the same for
both, so the receiver pairs them.  threshold_breach and board_offline are one-off
alerts: firing, without an end.
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any

from rtbench.server.payloads.words import headline

if TYPE_CHECKING:
    from rtbench.server.payloads import Context

_ALERT_NAMES = {"regression": "RtbenchRegression",
                "regression_suspected": "RtbenchRegression",
                "regression_resolved": "RtbenchRegression",
                "threshold_breach": "RtbenchThresholdBreach",
                "board_offline": "RtbenchBoardOffline"}
_NO_END = "0001-01-01T00:00:00Z"  # Alertmanager's "not resolved"


def _labels(event: str, data: dict[str, Any]) -> dict[str, str]:
    """The alert's labels: what it is about (no run id: a label set names the alert)."""
    run = data.get("run") or {}
    labels = {"alertname": _ALERT_NAMES.get(event, "Rtbench"),
              "board": str(data.get("board") or run.get("board") or run.get("hostname")
                           or ""),
              "suite": str(data.get("suite") or run.get("suite") or "")}
    if event.startswith("regression"):
        labels.update(cell=str(data.get("cell") or ""), metric=str(data.get("metric") or ""),
                      kernel=str(data.get("kernel") or ""),
                      severity="warning" if data.get("state") == "suspected" else "critical")
    else:
        labels.update(kernel=str(run.get("kernel") or ""), severity="critical")
    return {k: v for k, v in labels.items() if v}


def render(event: str, data: dict[str, Any], context: Context) -> tuple[bytes, str]:
    """One Alertmanager webhook message holding one alert for event."""
    labels = _labels(event, data)
    summary, link = headline(event, data)
    resolved = event == "regression_resolved"
    status = "resolved" if resolved else "firing"
    starts = str(data.get("first_seen") or context.sent_at.isoformat())
    fingerprint = hashlib.sha256(json.dumps(labels, sort_keys=True).encode()).hexdigest()[:16]
    alert = {"status": status, "labels": labels,
             "annotations": {"summary": summary, **({"run_url": link} if link else {})},
             "startsAt": starts,
             "endsAt": context.sent_at.isoformat() if resolved else _NO_END,
             "generatorURL": link, "fingerprint": fingerprint}
    group_key = "{}:" + json.dumps(labels, sort_keys=True)
    body = {"version": "4", "groupKey": group_key, "truncatedAlerts": 0,
            "status": status, "receiver": "rtbench", "groupLabels": labels,
            "commonLabels": labels, "commonAnnotations": alert["annotations"],
            "externalURL": context.public_url, "alerts": [alert]}
    return json.dumps(body, sort_keys=True).encode("utf-8"), "application/json"
