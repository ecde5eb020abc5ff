"""jitterdebugger: its results.json and its binary samples.raw.

results.json holds, per CPU, a histogram in microseconds (or nanoseconds, as its
sysinfo.resolution_in_ns says), count, min, max and avg.  samples.raw is a packed
little-endian array of 28-byte records (u32 cpu, u64 tv_sec, u64 tv_nsec, u64
latency), microseconds unless jitterdebugger ran with -N (`--format
jitterdebugger-raw-ns`); every sample lands in the exact histogram.

Completeness: samples.raw has no header, no closing record and no count, so a file cut
between two records (280 bytes of it, or half) reads as a shorter run.  Nor does
results.json tell: jitterdebugger stops its writer thread without draining the samples
still queued, so the file holds a few samples fewer than results.json counts even when
whole.  A samples.raw is therefore refused as incomplete (IncompleteOutput):
`import --partial` stores its samples as a 'partial' run with that reason, and
results.json is the tool's exact, checked account.
"""

from __future__ import annotations

import re
import struct
from typing import Any

import numpy as np

from rtbench.bundle import RunDetail
from rtbench.interop._build import (
    MAX_NS,
    ToolSeries,
    check_count,
    first_true,
    tool_measurement,
    tool_run,
)
from rtbench.interop._jsonhist import hist_rows, loose_json_hists
from rtbench.interop.base import Importer, ImportFormatError, IncompleteOutput
from rtbench.wire.histpairs import Pairs, exact_sum

RECORD = struct.Struct("<IQQQ")
# the same record as a numpy dtype (packed: 28 bytes)
RECORD_DTYPE = np.dtype([("cpu", "<u4"), ("sec", "<u8"), ("nsec", "<u8"),
                         ("latency", "<u8")])


class JitterdebuggerJsonImporter(Importer):
    """jitterdebugger's results.json."""

    name = "jitterdebugger-json"
    summary = "jitterdebugger results.json (per-CPU histogram, count, min, avg, max)"

    def detect(self, head: bytes, filename: str) -> bool:
        """A JSON object with "version", "sysinfo" and "cpu" (jitterdebugger's layout)."""
        return head.lstrip().startswith(b"{") and b'"cpu"' in head and \
            re.search(rb'^\{\s*"version"\s*:\s*\d+\s*,\s*"sysinfo"', head) is not None

    def read(self, data: bytes, filename: str) -> list[RunDetail]:
        """One run, a series per CPU."""
        doc = loose_json_hists(data, filename)
        if not isinstance(doc, dict) or not isinstance(doc.get("cpu"), dict):
            raise ImportFormatError(f"{filename}: no 'cpu' object")
        sysinfo = doc.get("sysinfo") if isinstance(doc.get("sysinfo"), dict) else {}
        assert isinstance(sysinfo, dict)
        resolution = sysinfo.get("resolution_in_ns")
        unit_ns = 1 if resolution == 1 else 1000
        series = []
        for key in sorted(doc["cpu"], key=lambda k: (len(str(k)), str(k))):
            series.append(_cpu(doc["cpu"][key], str(key), unit_ns, f"{filename}: cpu {key}"))
        m = tool_measurement(name="jitterdebugger", test="cyclic", series=series,
                             where=filename, data={"unit": "ns" if unit_ns == 1 else "us",
                                                   "file_version": doc.get("version")})
        return [tool_run(tool="jitterdebugger", tool_version="", command_line=None,
                         fmt=self.name, measurements=[m],
                         hostname=str(sysinfo.get("nodename") or ""),
                         kernel=str(sysinfo.get("release") or ""),
                         arch=str(sysinfo.get("machine") or ""),
                         sysinfo={"jitterdebugger": sysinfo})]


def _cpu(obj: Any, key: str, unit_ns: int, where: str) -> ToolSeries:
    """One CPU's series."""
    if not isinstance(obj, dict):
        raise ImportFormatError(f"{where}: expected an object")
    values = {}
    for name in ("count", "min", "max", "avg"):
        value = obj.get(name)
        if value is not None and (isinstance(value, bool)
                                  or not isinstance(value, (int, float))):
            raise ImportFormatError(f"{where}: {name} must be a number")
        values[name] = value
    if values["count"] is None:
        raise ImportFormatError(f"{where}: no count")
    count = check_count(values["count"], f"{where}: count")
    raw = obj.get("histogram", {})
    if not isinstance(raw, (dict, Pairs)):
        raise ImportFormatError(f"{where}: histogram must be an object")
    hist = hist_rows(raw, where)
    total = exact_sum(hist.counts) if isinstance(hist, Pairs) else sum(n for _, n in hist)
    overflow = count - total
    if overflow < 0:
        raise ImportFormatError(f"{where}: histogram holds {total} samples, count {count}")
    return ToolSeries(
        label=f"cpu{key}", cpu=int(key) if key.isdigit() else None, count=count,
        min_ns=None if values["min"] is None or not count else values["min"] * unit_ns,
        max_ns=None if values["max"] is None or not count else values["max"] * unit_ns,
        avg_ns=None if values["avg"] is None or not count else values["avg"] * unit_ns,
        hist=hist, hist_unit_ns=unit_ns, overflow=overflow,
        overflow_at=(hist[-1][0] + 1 if hist else 0) if overflow else None)


class JitterdebuggerRawImporter(Importer):
    """jitterdebugger's samples.raw (every sample, microseconds)."""

    name = "jitterdebugger-raw"
    summary = "jitterdebugger samples.raw (binary, every sample; microseconds)"
    unit_ns = 1000

    def detect(self, head: bytes, filename: str) -> bool:
        """Named samples.raw, and its first records look like (cpu, time, latency)."""
        if not filename.endswith(".raw") or len(head) < RECORD.size:
            return False
        cpu, _, nsec, _ = RECORD.unpack_from(head)
        return bool(cpu < 4096 and nsec < 1_000_000_000)

    def read(self, data: bytes, filename: str) -> list[RunDetail]:
        """One run, a series per CPU, with the exact histogram of every sample."""
        if not data or len(data) % RECORD.size:
            raise ImportFormatError(f"{filename}: {len(data)} bytes is not a whole number "
                                    f"of {RECORD.size}-byte jitterdebugger records")
        # the records as arrays over the bytes (no copy)
        records = np.frombuffer(data, dtype=RECORD_DTYPE)
        cpus, secs, nsecs = records["cpu"], records["sec"], records["nsec"]
        latencies = records["latency"]
        limit = MAX_NS // self.unit_ns
        at = first_true(lambda s: (cpus[s] >= 4096) | (nsecs[s] >= 1_000_000_000)
                        | (latencies[s] > limit), len(records))
        if at is not None:
            raise ImportFormatError(f"{filename}: record {at} (cpu {int(cpus[at])}, "
                                    f"latency {int(latencies[at])}) is not a sample")
        seen: set[int] = set()
        for start in range(0, len(cpus), 1 << 16):
            seen.update(np.unique(cpus[start:start + (1 << 16)]).tolist())
        series = []
        for cpu in sorted(seen):
            values = latencies[cpus == cpu].view(np.int64)  # each <= MAX_NS
            values *= self.unit_ns
            series.append(ToolSeries(label=f"cpu{cpu}", cpu=cpu, count=len(values),
                                     min_ns=int(values.min()), max_ns=int(values.max()),
                                     avg_ns=None, samples_ns=values))
        first_sec, last_sec = int(secs.min()), int(secs.max())
        first = (first_sec, int(nsecs[secs == first_sec].min()))
        last = (last_sec, int(nsecs[secs == last_sec].max()))
        span = (last[0] - first[0]) * 1_000_000_000 + last[1] - first[1]
        m = tool_measurement(name="jitterdebugger", test="cyclic", series=series,
                             where=filename, measured_ns=span,
                             data={"unit": "ns" if self.unit_ns == 1 else "us",
                                   "records": len(data) // RECORD.size})
        runs = [tool_run(tool="jitterdebugger", tool_version="", command_line=None,
                         fmt=self.name, measurements=[m])]
        raise IncompleteOutput(
            f"{filename}: record {len(data) // RECORD.size}: completeness cannot be "
            "checked: samples.raw has no count and no closing record, so a file cut "
            "between two records reads as a shorter run; import jitterdebugger's "
            "results.json for its checked counts", runs)


class JitterdebuggerRawNsImporter(JitterdebuggerRawImporter):
    """samples.raw of `jitterdebugger -N` (nanoseconds); only by --format."""

    name = "jitterdebugger-raw-ns"
    summary = "jitterdebugger -N samples.raw (nanoseconds); use with --format"
    unit_ns = 1

    def detect(self, head: bytes, filename: str) -> bool:
        """Never guessed: the file does not say -N."""
        return False
