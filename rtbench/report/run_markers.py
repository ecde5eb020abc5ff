"""Markers a runs list shows next to a run's suite (`rtbench ls`, the server's runs list):
what makes a run's figures not those of its suite as defined."""

from __future__ import annotations

from rtbench.analysis.verdict import short_run_text
from rtbench.bundle import RunSummary

__all__ = ["list_markers", "short_run_text"]


def list_markers(run: RunSummary) -> list[str]:
    """The markers of one runs-list row, e.g. ["SHORT RUN (10 % of the suite's length)"]."""
    markers = []
    short = short_run_text(run.scale)
    if short is not None:
        markers.append(short)
    return markers
