"""hackbench (rt-tests): the time it printed for its message passing.

A summary-only format: one run time per hackbench invocation (several `Time:` lines
when a log holds several runs, one series each); no distribution, no percentile.
"""

from __future__ import annotations

import re

from rtbench.bundle import RunDetail
from rtbench.interop._build import ToolSeries, number, tool_measurement, tool_run
from rtbench.interop._lines import text_lines
from rtbench.interop.base import Importer, ImportFormatError

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
        """One run; a series per `Time:` line."""
        series: list[ToolSeries] = []
        params: dict[str, object] = {}
        for lineno, line in enumerate(text_lines(data, filename), 1):
            header = _HEADER.match(line)
            if header:
                params = {"mode": header.group(1), "groups": int(header.group(2)),
                          "fds": int(header.group(3)), "tasks": int(header.group(4))}
                continue
            msgs = _MESSAGES.match(line)
            if msgs:
                params.update(loops=int(msgs.group(1)), datasize=int(msgs.group(2)))
                continue
            time_line = _TIME.match(line)
            if time_line:
                seconds = number(time_line.group(1), f"{filename}: line {lineno}: Time")
                ns = seconds * 1e9
                series.append(ToolSeries(label=f"run{len(series)}", cpu=None, count=1,
                                         min_ns=ns, max_ns=ns, avg_ns=ns,
                                         extra={"time_s": time_line.group(1), **params}))
        if not series:
            raise ImportFormatError(f"{filename}: no 'Time:' line (hackbench did not finish?)")
        m = tool_measurement(name="hackbench", test="hackbench", series=series,
                             where=filename, params=params, summary_only=True,
                             data={"unit": "s", "meaning": "wall time of the whole run"})
        return [tool_run(tool="hackbench", tool_version="", command_line=None,
                         fmt=self.name, measurements=[m])]
