"""hackbench (rt-tests): the time it printed for its message passing.

A summary-only format: one run time per hackbench invocation; no distribution, no
percentile.  A log of several runs gives a series per group of consecutive runs with the
same parameters (its header lines): one run is a one-value series (label `runN`, its
printed `time_s` in the series' facts); a group of runs (label `runN-M`, N and M the first
and last run, counted from 0 in the file) holds how many runs, the shortest, the longest
and their mean, and every printed time, in order, in the series' `times_s` (one float64
array while importing: 8 bytes a run, not a series of several hundred bytes, issue 36).
"""

from __future__ import annotations

import re
from array import array
from typing import Any

import numpy as np

from rtbench.bundle import RunDetail
from rtbench.interop._build import ToolSeries, number, tool_measurement, tool_run
from rtbench.interop._lines import text_lines
from rtbench.interop.base import Importer, ImportFormatError
from rtbench.wire.histpairs import Floats

_HEADER = re.compile(r"^Running in (process|threaded) mode with (\d+) groups using (\d+) "
                     r"file descriptors each \(== (\d+) tasks\)")
_MESSAGES = re.compile(r"^Each sender will pass (\d+) messages of (\d+) bytes")
_TIME = re.compile(r"^Time:\s*(\S+)\s*$")


class HackbenchImporter(Importer):
    """hackbench's stdout."""

    name = "hackbench"
    summary = "hackbench output (Running in ... mode, Time: seconds); summary only"

    def detect(self, head: bytes, filename: str) -> bool:
        """hackbench's first line."""
        return re.search(rb"^Running in (process|threaded) mode with \d+ groups", head,
                         re.M) is not None

    def read(self, data: bytes, filename: str) -> list[RunDetail]:
        """One run; a series per group of consecutive `Time:` lines of one parameter set."""
        groups: list[tuple[dict[str, Any], array[float], str, int]] = []
        params: dict[str, Any] = {}
        runs = 0
        for lineno, line in enumerate(text_lines(data, filename), 1):
            header = _HEADER.match(line)
            if header:
                params = {"mode": header.group(1), "groups": int(header.group(2)),
                          "fds": int(header.group(3)), "tasks": int(header.group(4))}
                continue
            msgs = _MESSAGES.match(line)
            if msgs:
                params = {**params, "loops": int(msgs.group(1)),
                          "datasize": int(msgs.group(2))}
                continue
            time_line = _TIME.match(line)
            if time_line:
                seconds = number(time_line.group(1), f"{filename}: line {lineno}: Time")
                if not groups or groups[-1][0] != params:
                    groups.append((params, array("d"), time_line.group(1), runs))
                groups[-1][1].append(seconds)
                runs += 1
        if not groups:
            raise ImportFormatError(f"{filename}: no 'Time:' line (hackbench did not finish?)")
        series = [_series(*group) for group in groups]
        m = tool_measurement(name="hackbench", test="hackbench", series=series,
                             where=filename, params=params, summary_only=True,
                             data={"unit": "s", "meaning": "wall time of the whole run"})
        return [tool_run(tool="hackbench", tool_version="", command_line=None,
                         fmt=self.name, measurements=[m])]


def _series(params: dict[str, Any], times: array[float], first_text: str, first: int
            ) -> ToolSeries:
    """The series of one run (first_text: its time as printed) or of a group of runs."""
    if len(times) == 1:
        ns = times[0] * 1e9
        return ToolSeries(label=f"run{first}", cpu=None, count=1, min_ns=ns, max_ns=ns,
                          avg_ns=ns, extra={"time_s": first_text, **params})
    column = np.frombuffer(times, dtype=np.float64)  # a view: no copy of the values
    return ToolSeries(label=f"run{first}-{first + len(column) - 1}", cpu=None,
                      count=len(column), min_ns=float(column.min()) * 1e9,
                      max_ns=float(column.max()) * 1e9, avg_ns=float(column.mean()) * 1e9,
                      extra={"runs": len(column), "times_s": Floats(column), **params})
