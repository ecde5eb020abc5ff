"""stress-ng --cyclic: the latency report in its log.

stress-ng prints the number of samples it kept, mean, min, max, percentiles and a
distribution in fixed-width intervals; the run keeps all of them (percentiles in
data["tool_percentiles_ns"]).  When the printed distribution is cut short
("for the first N buckets of M") it does not add up to the samples, and the series
keeps no histogram rather than a partial one.
"""

from __future__ import annotations

import re
from typing import Any

from rtbench.bundle import RunDetail
from rtbench.interop._build import (
    ToolSeries,
    complete,
    number,
    tool_measurement,
    tool_run,
)
from rtbench.interop._lines import check_text, lines
from rtbench.interop.base import Importer, ImportFormatError
from rtbench.wire.histpairs import IntColumn, Pairs, exact_sum

_PREFIX = re.compile(r"^stress-ng:\s*\w+:\s*\[\d+\]\s*cyclic:\s*(.*)$")
_SCHED = re.compile(r"^sched (\S+): (\d+) ns delay, (\d+) samples")
_MEAN = re.compile(r"^mean: (\S+) ns, mode: (\S+) ns")
_MINMAX = re.compile(r"^min: (\S+) ns, max: (\S+) ns, std\.dev\. (\S+)")
_PCT = re.compile(r"^(\d+(?:\.\d+)?)%:\s*(\d+) ns")
_DIST = re.compile(r"^latency distribution \((\d+) ns intervals\)")
_BUCKET = re.compile(r"^(\d+)\s+(\d+)$")
_DONE = re.compile(r"^stress-ng:\s*\w+:\s*\[\d+\]\s*(?:un)?successful run completed")


class StressNgCyclicImporter(Importer):
    """The log of `stress-ng --cyclic N`."""

    name = "stress-ng-cyclic"
    summary = "stress-ng --cyclic log (mean/min/max, percentiles, distribution)"

    def detect(self, head: bytes, filename: str) -> bool:
        """stress-ng's cyclic stressor lines."""
        return b"stress-ng:" in head and re.search(rb"\] cyclic: ", head) is not None

    def read(self, data: bytes, filename: str) -> list[RunDetail]:
        """One run with one series (the cyclic stressor's samples)."""
        check_text(data, filename)
        facts: dict[str, Any] = {}
        percentiles: dict[str, int] = {}
        # the distribution's rows: bucket (in widths) and count
        buckets, counts = IntColumn(), IntColumn()
        width = None
        completed = False
        for lineno, line in enumerate(lines(data), 1):
            completed = completed or _DONE.match(line.strip()) is not None
            match = _PREFIX.match(line.strip())
            if not match:
                continue
            body = match.group(1).strip()
            where = f"{filename}: line {lineno}"
            if m := _SCHED.match(body):
                facts.update(policy=m.group(1), delay_ns=int(m.group(2)),
                             samples=int(m.group(3)))
            elif m := _MEAN.match(body):
                facts.update(mean=number(m.group(1), where), mode=number(m.group(2), where))
            elif m := _MINMAX.match(body):
                facts.update(min=number(m.group(1), where), max=number(m.group(2), where),
                             stddev=number(m.group(3), where))
            elif m := _PCT.match(body):
                percentiles[m.group(1)] = int(m.group(2))
            elif m := _DIST.match(body):
                width = int(m.group(1))
            elif width and (m := _BUCKET.match(body)):
                if int(m.group(1)) % width:
                    raise ImportFormatError(f"{where}: bucket {m.group(1)} is not a "
                                            f"multiple of {width} ns")
                buckets.append(int(m.group(1)) // width)
                counts.append(int(m.group(2)))
        if "samples" not in facts or "mean" not in facts or "min" not in facts:
            raise ImportFormatError(f"{filename}: no stress-ng cyclic latency report "
                                    "(sched/mean/min lines)")
        count = facts["samples"]
        hist = Pairs(buckets.array(), counts.array())
        kept_hist = hist if len(hist) and exact_sum(hist.counts) == count else None
        series = ToolSeries(label="cyclic", cpu=None, count=count,
                            min_ns=facts["min"] if count else None,
                            max_ns=facts["max"] if count else None,
                            avg_ns=facts["mean"] if count else None, hist=kept_hist,
                            hist_unit_ns=width or 1000,
                            extra={"stddev_ns": facts.get("stddev"),
                                   "mode_ns": facts.get("mode")})
        measurement = tool_measurement(
            name="stress-ng-cyclic", test="cyclic", series=[series], where=filename,
            params={"policy": facts.get("policy"), "delay_ns": facts.get("delay_ns")},
            data={"unit": "ns", "tool_percentiles_ns": percentiles,
                  "distribution_complete": kept_hist is not None})
        runs = [tool_run(tool="stress-ng", tool_version="", command_line=None,
                         fmt=self.name, measurements=[measurement])]
        return complete(runs, filename, data, _missing(completed))


def _missing(completed: bool) -> str:
    """What a stress-ng log lacks to be complete ("" when nothing): its closing line."""
    if not completed:
        return "no 'successful run completed' line (stress-ng did not finish)"
    return ""
