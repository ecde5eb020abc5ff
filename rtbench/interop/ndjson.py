"""NDJSON: the stored records of a run, one JSON object a line.

Lines in order: the run, then per scenario its record, its measurements, and per
measurement its series, windows, spikes, trace records (`trace`) and trace summary
(`trace_summary`); each has "type" and the keys the store keeps (rtbench-run/1 field
names; trace records as rtprobe wrote them, docs/schema.md).  Good for jq and for
loading into other tools.
"""

from __future__ import annotations

import json
from typing import Any

from rtbench.bundle import RunDetail
from rtbench.interop.base import Exporter
from rtbench.interop.runjson import run_to_json


def _line(kind: str, body: dict[str, Any]) -> str:
    """One record line."""
    return json.dumps({"type": kind, **body}, separators=(",", ":"), allow_nan=False,
                      ensure_ascii=False)


class NdjsonExporter(Exporter):
    """The stored records, one a line."""

    name = "ndjson"
    summary = "NDJSON: the stored records (run, scenario, measurement, series, window, " \
              "spike, trace)"
    suffix = ".ndjson"

    def export(self, run: RunDetail) -> bytes:
        """The run as NDJSON."""
        doc = run_to_json(run)
        scenarios = doc.pop("scenarios")
        lines = [_line("run", {"id": run.id, **doc})]
        for si, sc in enumerate(scenarios):
            measurements = sc.pop("measurements")
            lines.append(_line("scenario", {"scenario": si, **sc}))
            for mi, m in enumerate(measurements):
                where = {"scenario": si, "measurement": mi}
                series, windows, spikes = m.pop("series"), m.pop("windows"), m.pop("spikes")
                traces, info = m.pop("traces", []), m.pop("trace_info", None)
                lines.append(_line("measurement", {**where, **m}))
                lines.extend(_line("series", {**where, **s}) for s in series)
                lines.extend(_line("window", {**where, **w}) for w in windows)
                lines.extend(_line("spike", {**where, **sp}) for sp in spikes)
                lines.extend(_line("trace", {**where, **t}) for t in traces
                             if isinstance(t, dict))
                if isinstance(info, dict):
                    lines.append(_line("trace_summary", {**where, **info}))
        return ("\n".join(lines) + "\n").encode("utf-8")
