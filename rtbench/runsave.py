"""Keeping a finished measurement when the database will not take it.

Store writes of a run wait out a database locked by another process (SQLite's own
busy wait, then a few retries with back-off).  When a write still fails, the run so far
and the measurement that could not be stored are written as an rtbench-run/1 JSON file
(rtbench.interop.runjson) that `rtbench import` can store later; the error names it.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
import uuid
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TypeVar

from rtbench.bundle import MeasurementDetail, RunDetail, ScenarioDetail, SeriesDetail
from rtbench.records import ProbeOutput
from rtbench.store import StoreError
from rtbench.store.ingest import series_rows

T = TypeVar("T")

# Pauses between attempts after SQLite's own 10 s busy wait has run out.
RETRY_DELAYS_S = (1.0, 2.0)


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


def measurement_detail(*, name: str, test: str, params: dict[str, Any], command: list[str],
                       output: ProbeOutput, status: str, thresholds_ns: list[int],
                       reason: str | None) -> MeasurementDetail:
    """A measurement as the store would hold it, built from the probe's records."""
    start, result = output.start, output.result
    start_raw = dict(start.raw) if start else {}
    start_raw.pop("sysinfo", None)
    detail = MeasurementDetail(
        id=0, name=name, test=test, params=params, command=command, status=status,
        exit_code=result.exit_code if result else None,
        reason=reason if reason is not None else (result.reason if result else None),
        thresholds_ns=[int(x) for x in thresholds_ns],
        simulated=bool(start.simulated if start else False),
        probe_version=start.version if start else "",
        t0_unix_ns=start.t0_unix_ns if start else None,
        measured_ns=result.measured_ns if result else None,
        elapsed_ns=result.elapsed_ns if result else None,
        verdicts=result.verdicts if result else [], data=result.data if result else {},
        start=start_raw, windows=list(output.windows), spikes=list(output.spikes))
    for row in series_rows(output, thresholds_ns):
        detail.series.append(SeriesDetail(
            index=row["series_index"], label=row["label"], cpu=row["cpu"],
            count=row["count"], min_ns=row["min_ns"], max_ns=row["max_ns"],
            sum_ns=row["sum_ns"], overruns=row["overruns"], early=row["early"],
            exceed=[(int(a), int(b)) for a, b in row["exceed"]],
            worst=[(int(a), int(b)) for a, b in row["worst"]],
            warmup=row["warmup"], hist=[(int(a), int(b)) for a, b in row["hist"]],
            spikes_dropped=row["spikes_dropped"], raw_dropped=row["raw_dropped"],
            error=row["error"]))
    return detail


def recovery_bundle(stored: RunDetail | None, facts: dict[str, Any], scenario_id: int,
                    scenario_name: str, measurement: MeasurementDetail) -> RunDetail:
    """The run so far (as stored, else from facts) plus one measurement not stored.

    It gets a new uid, status 'error' and the tag recovered_from=RUN, so importing it
    stores a complete copy next to the cut-short run.
    """
    run = stored if stored is not None else RunDetail(
        id=0, status="error", started_at=datetime.now(timezone.utc), finished_at=None,
        **facts)
    run.status = "error"
    run.finished_at = datetime.now(timezone.utc)
    run.tags = {**run.tags, "recovered_from": str(run.id or "unknown")}
    run.uid = uuid.uuid4().hex
    target = next((sc for sc in run.scenarios if sc.id == scenario_id), None)
    if target is None:
        target = ScenarioDetail(id=scenario_id, name=scenario_name, loads=[], load_cpus=None,
                                measure_cpus=None, intensity=None)
        run.scenarios.append(target)
    target.measurements.append(measurement)
    return run


def write_recovery_file(run: RunDetail, directories: list[Path]) -> Path | None:
    """Write run as rtbench-run/1 JSON into the first directory that takes it."""
    from rtbench.interop.runjson import dumps

    text = dumps(run)
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S")
    for directory in directories:
        path = directory / f"run-{run.tags.get('recovered_from', 'x')}-{stamp}.json"
        tmp = None
        try:
            directory.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=directory)
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                out.write(text)
                out.flush()
                os.fsync(out.fileno())
            os.replace(tmp, path)
            return path
        except OSError:
            if tmp is not None:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
    return None
