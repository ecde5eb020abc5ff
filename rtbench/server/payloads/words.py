"""One line in words for each webhook event (Slack's text, Alertmanager's summary)."""

from __future__ import annotations

from typing import Any

_FIGURE_UNITS = {"exceedance_rate": " per million"}


def _clean(value: object) -> str:
    """value as text on one line without control characters (board text is data)."""
    return "".join(c if c.isprintable() else " " for c in str(value))[:200]


def _change(data: dict[str, Any]) -> str:
    """'+25.0 %' from the relative change, '' when there is none."""
    rel = data.get("rel")
    return f" ({rel * 100:+.1f} %)" if isinstance(rel, (int, float)) else ""


def headline(event: str, data: dict[str, Any]) -> tuple[str, str]:
    """(the event in one line, the link to its run or '')."""
    run = data.get("run") or {}
    link = str(run.get("url") or "")
    if event in ("regression", "regression_suspected", "regression_resolved"):
        where = (f"{_clean(data.get('board'))}: {_clean(data.get('suite'))} / "
                 f"{_clean(data.get('cell'))} {_clean(data.get('metric'))}")
        if event == "regression_resolved":
            return (f"rtbench: regression resolved on {where} (started on kernel "
                    f"{_clean(data.get('kernel'))}, back on "
                    f"{_clean(data.get('resolved_kernel'))})", link)
        state = _clean(data.get("state") or "confirmed")
        return (f"rtbench: {state} regression on {where}, kernel "
                f"{_clean(data.get('kernel'))}{_change(data)}", link)
    if event == "threshold_breach":
        failed = ", ".join(_clean(m) for m in data.get("failed_measurements") or [])
        board = _clean(run.get("board") or run.get("hostname"))
        return (f"rtbench: run {run.get('id')} on {board} "
                f"crossed its thresholds ({failed or 'see the run'})", link)
    if event == "board_offline":
        return (f"rtbench: board {_clean(data.get('board'))} is offline "
                f"({_clean(data.get('reason') or 'no reason given')})", link)
    return (f"rtbench: {_clean(event)}", link)
