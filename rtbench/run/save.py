"""Keeping a finished measurement when the database will not take it.

Store writes of a run wait out a database locked by another process (SQLite's own
busy wait, then a few retries with back-off).  When a write still fails, the runner
raises MeasurementNotStored with the run so far and the measurement that could not be
stored as one run bundle; the CLI writes it as an rtbench-run/1 file and names it.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any, TypeVar

from rtbench.bundle import MeasurementDetail, RunDetail, ScenarioDetail
from rtbench.store import StoreError

T = TypeVar("T")

# Pauses between attempts after SQLite's own busy wait (10 s) has run out.
RETRY_DELAYS_S = (1.0, 2.0)


class MeasurementNotStored(StoreError):
    """The database refused a finished measurement; bundle holds the run so far with it."""

    def __init__(self, message: str, bundle: RunDetail) -> None:
        super().__init__(message)
        self.bundle = bundle


def is_busy(exc: StoreError) -> bool:
    """True when the error says the database is locked or busy (worth another try)."""
    text = str(exc).lower()
    return "locked" in text or "busy" in text


def with_retries(write: Callable[[], T], delays: tuple[float, ...] | None = None) -> T:
    """write(), tried again after each delay (RETRY_DELAYS_S) while the database is locked."""
    for delay in RETRY_DELAYS_S if delays is None else delays:
        try:
            return write()
        except StoreError as exc:
            if not is_busy(exc):
                raise
        time.sleep(delay)
    return write()


def recovery_bundle(stored: RunDetail | None, facts: dict[str, Any], run_id: int,
                    scenario_id: int, scenario_name: str,
                    measurement: MeasurementDetail) -> RunDetail:
    """The run so far (as stored, else from facts) plus one measurement not stored.

    It gets a new uid, status 'error' and the tag recovered_from=RUN, so importing it
    stores a complete copy next to the cut-short run.
    """
    run = stored if stored is not None else RunDetail(
        id=0, status="error", started_at=datetime.now(timezone.utc), finished_at=None,
        **facts)
    run.status = "error"
    run.finished_at = datetime.now(timezone.utc)
    run.tags = {**run.tags, "recovered_from": str(run_id)}
    run.uid = uuid.uuid4().hex
    target = next((sc for sc in run.scenarios if sc.id == scenario_id), None)
    if target is None:
        target = ScenarioDetail(id=scenario_id, name=scenario_name, loads=[], load_cpus=None,
                                measure_cpus=None, intensity=None)
        run.scenarios.append(target)
    target.measurements.append(measurement)
    return run
