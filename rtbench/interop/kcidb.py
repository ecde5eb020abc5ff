"""KernelCI KCIDB JSON (I/O schema v5.3): a test per cell and one per figure.

Ids are "rtbench:<run uid>..."; the build is "rtbench:<run uid>" (rtbench measures a
running kernel, it does not know the build's KCIDB id: submitters that do replace
`build_id`).  A cell's status is PASS or FAIL from its verdicts (ERROR when it could
not run); figures are DONE tests with their number in microseconds.
"""

from __future__ import annotations

import json
from typing import Any

from rtbench.bundle import RunDetail
from rtbench.interop._cells import cells, figures, safe_name
from rtbench.interop.base import Exporter

ORIGIN = "rtbench"


class KcidbExporter(Exporter):
    """KCIDB v5.3 JSON."""

    name = "kcidb"
    summary = "KernelCI KCIDB JSON (schema 5.3): tests with their values"
    suffix = ".json"

    def export(self, run: RunDetail) -> bytes:
        """The run as a KCIDB document."""
        uid = run.uid or f"run{run.id}"
        build_id = f"{ORIGIN}:{uid}"
        env = {"comment": f"{run.hostname} {run.kernel} {run.arch}",
               "misc": {"hostname": run.hostname, "kernel": run.kernel, "arch": run.arch,
                        "simulated": run.simulated, "tags": run.tags}}
        tests: list[dict[str, Any]] = []
        for n, cell in enumerate(cells(run)):
            m = cell.measurement
            path = safe_name("rtbench", cell.scenario.name, m.name)
            status = "ERROR" if cell.errored else "PASS" if cell.passed else "FAIL"
            tests.append({
                "id": f"{build_id}:{n}", "build_id": build_id, "origin": ORIGIN,
                "path": path, "status": status, "start_time": run.started_at.isoformat(),
                "environment": env,
                "misc": {"verdicts": m.verdicts, "test": m.test,
                         "summary_only": cell.summary_only}})
            for series, stats in cell.per_series:
                for figure, value in figures(stats):
                    if value is None:
                        continue
                    tests.append({
                        "id": f"{build_id}:{n}:{safe_name(series.label)}:{figure}",
                        "build_id": build_id, "origin": ORIGIN,
                        "path": f"{path}.{safe_name(series.label)}."
                                f"{figure.replace('.', '_')}",
                        "status": "DONE", "number": {"value": value, "unit": "us"},
                        "start_time": run.started_at.isoformat(), "environment": env})
        doc = {"version": {"major": 5, "minor": 3}, "tests": tests}
        return (json.dumps(doc, indent=1, allow_nan=False) + "\n").encode()
