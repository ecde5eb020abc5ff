"""cyclictest (rt-tests 1.x and 2.x): its --json file and its text output.

The text reader takes what cyclictest prints: the `T:` summary lines (`-q` or the
live display; the last line of each thread counts), the `-h`/`-H` histogram block and
`--histfile` (bucket lines, `# Total`, `# Min/Avg/Max Latencies`, `# Histogram
Overflows`, `# Histogram Overflow at cycle number`), and `-v` per-sample lines
(`thread: cycle: latency`).  Values are microseconds, or nanoseconds with `-N`:
the JSON file says which (resolution_in_ns, or -N in its cmdline); text does not, so
`--format cyclictest-ns` names it, and without it a file whose every thread has a
minimum of at least 1000 is read as nanoseconds (a 1 ms minimum wake-up latency in
microseconds is not a working system) — the run's data records that guess.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from rtbench.bundle import RunDetail
from rtbench.interop._build import (
    ToolSeries,
    check_count,
    member,
    parse_rt_tests_time,
    tool_measurement,
    tool_run,
    unverifiable,
)
from rtbench.interop._jsonhist import hist_rows, loose_json_hists
from rtbench.interop._lines import check_text, split_lines
from rtbench.interop.base import Importer, ImportFormatError
from rtbench.wire.histpairs import IntColumn, Pairs, exact_sum

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_T_LINE = re.compile(
    r"^T:\s*(\d+)\s*\(\s*(\d+)\)\s*P:\s*(\d+)\s*I:\s*(\d+)\s*C:\s*(\d+)\s*"
    r"Min:\s*(\d+)\s*Act:\s*(\d+)\s*Avg:\s*(\d+)\s*Max:\s*(\d+)")
_HIST_LINE = re.compile(r"^(\d+)((?:\s+\d+)+)\s*$")
_SAMPLE_LINE = re.compile(r"^\s*(\d+):\s*(\d+):\s*(\d+)\s*$")
_HASH_LINE = re.compile(r"^#\s*(Total|Min Latencies|Avg Latencies|Max Latencies|"
                        r"Histogram Overflows):((?:\s*\d+)*)\s*$")
_THREAD_OVERFLOW = re.compile(r"^#\s*Thread\s+(\d+):(.*)$")
# what only a result line starts with: a T: line, a histogram or -v line, a `# Total`-like
# line; such a line that none of the patterns above takes is damaged
_LOOKS_LIKE_DATA = re.compile(r"^(T:|-?\d|#\s*(Total|Min Latencies|Avg Latencies|"
                              r"Max Latencies|Histogram Overflows)\b)")
# the lines that close a -h/-H histogram block, all printed by every cyclictest
_HIST_CLOSERS = ("Total", "Min Latencies", "Avg Latencies", "Max Latencies",
                 "Histogram Overflows")


def _argv_option(argv: list[str], short: str, long: str) -> str | None:
    """The value of -X N / -XN / --long=N / --long N in a cyclictest command line."""
    for i, arg in enumerate(argv):
        if arg in (short, long) and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith(long + "="):
            return arg.split("=", 1)[1]
        if short and arg.startswith(short) and len(arg) > len(short) \
                and not arg.startswith("--"):
            return arg[len(short):]
    return None


def _hist_limit(argv: list[str]) -> int | None:
    """The -h/-H bucket count of a command line, when it says."""
    for short, long in (("-h", "--histogram"), ("-H", "--histofall")):
        value = _argv_option(argv, short, long)
        if value is not None and value.isdigit():
            return int(value)
    return None


class CyclictestJsonImporter(Importer):
    """cyclictest --json=FILE (rt-tests 1.x and 2.x)."""

    name = "cyclictest-json"
    summary = "cyclictest --json file (rt-tests 1.x/2.x: 'cmdline:' keys, -nan, histograms)"

    def detect(self, head: bytes, filename: str) -> bool:
        """An rt-tests JSON file whose command line is cyclictest's."""
        return head.lstrip().startswith(b"{") and b"rt_test_version" in head \
            and re.search(rb'"cmdline:?"\s*:\s*"[^"]*cyclictest', head) is not None

    def read(self, data: bytes, filename: str) -> list[RunDetail]:
        """One run with one series per thread."""
        doc = loose_json_hists(data, filename)
        if not isinstance(doc, dict):
            raise ImportFormatError(f"{filename}: expected a JSON object")
        cmdline = member(doc, "cmdline")
        cmdline = cmdline if isinstance(cmdline, str) else ""
        argv = cmdline.split()
        version = member(doc, "rt_test_version")
        version = str(version) if isinstance(version, (str, int, float)) else ""
        resolution = member(doc, "resolution_in_ns")
        if isinstance(resolution, int) and not isinstance(resolution, bool):
            unit_ns = 1 if resolution == 1 else 1000
        else:
            unit_ns = 1 if ("-N" in argv or "--nsecs" in argv) else 1000
        threads = member(doc, "thread")
        if not isinstance(threads, dict) or not threads:
            raise ImportFormatError(f"{filename}: no 'thread' object")
        limit = _hist_limit(argv)
        series = []
        for key in sorted(threads, key=lambda k: (len(str(k)), str(k))):
            series.append(_json_thread(threads[key], str(key), unit_ns, limit,
                                       f"{filename}: thread {key}"))
        sysinfo = member(doc, "sysinfo")
        sysinfo = sysinfo if isinstance(sysinfo, dict) else {}
        rc = member(doc, "return_code")
        m = tool_measurement(
            name="cyclictest", test="cyclic", series=series, where=filename,
            params=_params(argv), command=argv,
            data={"unit": "ns" if unit_ns == 1 else "us", "return_code": rc,
                  "file_version": member(doc, "file_version")},
            status="ok" if rc in (0, None) else "fail", tool_version=version)
        return [tool_run(
            tool="cyclictest", tool_version=version, command_line=cmdline, fmt=self.name,
            measurements=[m], hostname=_text(sysinfo.get("nodename")),
            kernel=_text(sysinfo.get("release")), arch=_text(sysinfo.get("machine")),
            started_at=parse_rt_tests_time(member(doc, "start_time")),
            finished_at=parse_rt_tests_time(member(doc, "end_time")),
            sysinfo={"rt_tests": sysinfo})]


def _text(value: Any) -> str:
    """A string value or ""."""
    return value if isinstance(value, str) else ""


def _num(obj: dict[str, Any], key: str, where: str) -> float | None:
    """A number member (None when absent or null, e.g. from -nan)."""
    value = obj.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ImportFormatError(f"{where}: {key} must be a number")
    return float(value)


def _json_thread(obj: Any, key: str, unit_ns: int, limit: int | None,
                 where: str) -> ToolSeries:
    """One thread of a cyclictest JSON file."""
    if not isinstance(obj, dict):
        raise ImportFormatError(f"{where}: expected an object")
    if isinstance(obj.get("receiver"), dict):
        obj = obj["receiver"]
    cycles = _num(obj, "cycles", where)
    if cycles is None:
        raise ImportFormatError(f"{where}: no cycles count")
    count = check_count(cycles, f"{where}: cycles")
    lo, hi, avg = _num(obj, "min", where), _num(obj, "max", where), _num(obj, "avg", where)
    raw_hist = obj.get("histogram")
    hist: list[tuple[int, int]] | Pairs | None = None
    overflow = 0
    overflow_at = None
    if isinstance(raw_hist, (dict, Pairs)) and (raw_hist or limit is not None):
        hist = hist_rows(raw_hist, where)
        total = exact_sum(hist.counts) if isinstance(hist, Pairs) \
            else sum(n for _, n in hist)
        if total > count:
            raise ImportFormatError(f"{where}: histogram holds {total} samples, "
                                    f"more than the {count} cycles")
        overflow = count - total
        if overflow:
            overflow_at = limit if limit is not None else (hist[-1][0] + 1 if hist else 0)
    elif raw_hist is not None and not isinstance(raw_hist, (dict, Pairs)):
        raise ImportFormatError(f"{where}: histogram must be an object")
    cpu = obj.get("cpu")
    return ToolSeries(
        label=f"T{key}", cpu=cpu if isinstance(cpu, int) and not isinstance(cpu, bool)
        else None, count=count,
        min_ns=None if count == 0 or lo is None else lo * unit_ns,
        max_ns=None if count == 0 or hi is None else hi * unit_ns,
        avg_ns=None if count == 0 or avg is None else avg * unit_ns,
        hist=hist, hist_unit_ns=unit_ns, overflow=overflow, overflow_at=overflow_at)


def _params(argv: list[str]) -> dict[str, Any]:
    """The cyclictest options a reader wants to see (priority, interval, threads)."""
    out: dict[str, Any] = {}
    for key, short, long in (("priority", "-p", "--priority"),
                             ("interval_us", "-i", "--interval"),
                             ("loops", "-l", "--loops"), ("duration", "-D", "--duration"),
                             ("histogram", "-h", "--histogram")):
        value = _argv_option(argv, short, long)
        if value is not None:
            out[key] = value
    return out


class CyclictestTextImporter(Importer):
    """What cyclictest prints: -q summary, -h/-H histograms, --histfile, -v samples."""

    name = "cyclictest"
    summary = ("cyclictest text: T: summary lines (-q), -h/-H histogram block, "
               "--histfile, -v samples (microseconds)")
    unit_ns: int | None = None  # None: microseconds unless the values say -N

    def detect(self, head: bytes, filename: str) -> bool:
        """cyclictest's summary line, histogram header or -v header near the start."""
        text = head.decode("utf-8", "replace")
        return bool(re.search(r"^T:\s*\d+\s*\(\s*\d+\)\s*P:", text, re.M)
                    or re.search(r"^# Histogram\s*$", text, re.M)
                    or re.search(r"^Thread \d+ Interval: \d+", text, re.M)
                    or "# /dev/cpu_dma_latency set to" in text)

    def read(self, data: bytes, filename: str) -> list[RunDetail]:
        """One run: a series per thread, from the richest block the file holds."""
        check_text(data, filename)
        parsed = _TextParse(filename)
        for lineno, line in enumerate(split_lines(data, _ANSI), 1):
            parsed.line(line, lineno)
        series, note = parsed.series(self.unit_ns)
        if not series:
            raise ImportFormatError(f"{filename}: no cyclictest results in it")
        unit = "ns" if series[0].hist_unit_ns == 1 else "us"
        data_out: dict[str, Any] = {"unit": unit, "blocks": sorted(parsed.blocks)}
        if note:
            data_out["unit_guess"] = note
        if parsed.overflow_cycles:
            data_out["overflow_cycles"] = parsed.overflow_cycles
        m = tool_measurement(name="cyclictest", test="cyclic", series=series,
                             where=filename, data=data_out,
                             params=parsed.params)
        runs = [tool_run(tool="cyclictest", tool_version="", command_line=None,
                         fmt=self.name, measurements=[m])]
        if parsed.blocks == {"samples"}:
            return unverifiable(runs, filename, "cyclictest -v prints neither its loop count "
                                "nor a closing line (a cut reads as fewer cycles)")
        return runs


class CyclictestNsTextImporter(CyclictestTextImporter):
    """cyclictest -N text (values in nanoseconds); only by --format."""

    name = "cyclictest-ns"
    summary = "cyclictest -N text output (nanoseconds); use with --format"
    unit_ns = 1

    def detect(self, head: bytes, filename: str) -> bool:
        """Never guessed: the text does not say -N."""
        return False


class CyclictestUsTextImporter(CyclictestTextImporter):
    """cyclictest text read as microseconds, whatever the values look like."""

    name = "cyclictest-us"
    summary = "cyclictest text output, microseconds (no -N guess); use with --format"
    unit_ns = 1000

    def detect(self, head: bytes, filename: str) -> bool:
        """Never guessed."""
        return False


class _TextParse:
    """The blocks of one cyclictest text output, line by line."""

    def __init__(self, filename: str) -> None:
        self.filename = filename
        self.t_lines: dict[int, tuple[int, ...]] = {}
        # the histogram's columns: bucket values, then one column of counts per thread
        self.hist_columns: list[IntColumn] = []
        self.hist_last = 0
        self.hash: dict[str, list[int]] = {}
        self.samples: dict[int, IntColumn] = {}
        self.overflow_cycles: dict[str, list[int]] = {}
        self.blocks: set[str] = set()
        self.params: dict[str, Any] = {}
        self.last_line = 0

    def line(self, line: str, lineno: int) -> None:
        """Take one line."""
        where = f"{self.filename}: line {lineno}"
        self.last_line = lineno
        stripped = line.strip()
        if not stripped:
            return
        t_match = _T_LINE.match(stripped)
        if t_match:
            values = tuple(int(v) for v in t_match.groups())
            self.t_lines[values[0]] = values
            self.params.setdefault("priority", values[2])
            self.params.setdefault("interval_us", values[3])
            self.blocks.add("summary")
            return
        h_match = _HIST_LINE.match(stripped)
        if h_match:
            row = [int(h_match.group(1))] + [int(v) for v in h_match.group(2).split()]
            if self.hist_columns and len(row) != len(self.hist_columns):
                raise ImportFormatError(f"{where}: histogram line has {len(row)} columns, "
                                        f"earlier ones {len(self.hist_columns)}")
            if not self.hist_columns:
                self.hist_columns = [IntColumn() for _ in row]
            for column, value in zip(self.hist_columns, row, strict=True):
                column.append(value)
            self.hist_last = row[0]
            self.blocks.add("histogram")
            return
        hash_match = _HASH_LINE.match(stripped)
        if hash_match:
            self.hash[hash_match.group(1)] = [int(v) for v in hash_match.group(2).split()]
            return
        s_match = _SAMPLE_LINE.match(stripped)
        if s_match:
            thread, cycle, latency = (int(v) for v in s_match.groups())
            taken = self.samples.setdefault(thread, IntColumn())
            if cycle != len(taken):
                # cyclictest numbers each thread's samples 0, 1, 2, ... as it prints them
                raise ImportFormatError(f"{where}: thread {thread} cycle {cycle} where cycle "
                                        f"{len(taken)} belongs: -v lines are missing")
            taken.append(latency)
            self.blocks.add("samples")
            return
        o_match = _THREAD_OVERFLOW.match(stripped)
        if o_match:
            cycles = [int(v) for v in re.findall(r"\d+", o_match.group(2).split("#")[0])]
            self.overflow_cycles[f"T{o_match.group(1)}"] = cycles
            return
        if _LOOKS_LIKE_DATA.match(stripped):
            raise ImportFormatError(f"{where}: not a complete cyclictest line "
                                    f"({stripped[:60]!r}): a negative or missing value, or "
                                    "the output was cut")

    def _threads(self) -> int:
        """How many threads the blocks describe."""
        for key in ("Min Latencies", "Max Latencies", "Total"):
            if self.hash.get(key):
                return len(self.hash[key])
        if self.t_lines:
            return max(self.t_lines) + 1
        if self.hist_columns:
            return len(self.hist_columns) - 1
        return max(self.samples) + 1 if self.samples else 0

    def series(self, unit_ns: int | None) -> tuple[list[ToolSeries], str]:
        """One ToolSeries per thread, and the note on a guessed unit ("" if none)."""
        n = self._threads()
        if n > 4096:
            raise ImportFormatError(f"{self.filename}: {n} threads is not a cyclictest run")
        if n == 0:
            raise ImportFormatError(f"{self.filename}: no cyclictest result in it (no T: "
                                    "line, histogram or -v sample line)")
        if self.hist_columns:
            missing = [key for key in _HIST_CLOSERS if key not in self.hash]
            if missing:
                raise ImportFormatError(f"{self.filename}: the histogram block has no "
                                        f"'# {missing[0]}' line: the output was cut short")
            if "Histogram Overflows" in self.hash and len(self.overflow_cycles) < n:
                raise ImportFormatError(
                    f"{self.filename}: line {self.last_line}: cut short: "
                    f"{len(self.overflow_cycles)} of {n} '# Thread N:' overflow lines")
        note = ""
        if unit_ns is None:
            mins = self._mins(n)
            if mins and all(v >= 1000 for v in mins):
                unit_ns = 1
                note = ("read as nanoseconds (cyclictest -N): every thread's minimum is "
                        ">= 1000; use --format cyclictest-us to read microseconds")
            else:
                unit_ns = 1000
        out = []
        for t in range(n):
            out.append(self._thread(t, unit_ns))
        return out, note

    def _mins(self, n: int) -> list[int]:
        """Each thread's minimum, from whatever block has it."""
        if self.t_lines:
            return [v[5] for v in self.t_lines.values()]
        if self.hash.get("Min Latencies"):
            return self.hash["Min Latencies"]
        return [int(v.array().min()) for v in self.samples.values() if len(v)]

    def _col(self, key: str, t: int) -> int | None:
        """Thread t's value on a `# key:` line."""
        values = self.hash.get(key)
        if values is None:
            return None
        if t >= len(values):
            raise ImportFormatError(f"{self.filename}: '# {key}' has no value for thread {t}")
        return values[t]

    def _thread(self, t: int, unit_ns: int) -> ToolSeries:
        """Thread t's series: histogram if printed, else samples, else the summary."""
        where = f"{self.filename}: thread {t}"
        t_line = self.t_lines.get(t)
        lo = self._col("Min Latencies", t)
        hi = self._col("Max Latencies", t)
        avg = self._col("Avg Latencies", t)
        count: int | None = None
        if t_line is not None:
            count, lo, avg, hi = t_line[4], t_line[5], t_line[7], t_line[8]
        hist = None
        overflow = 0
        overflow_at = None
        samples = None
        extra: dict[str, Any] = {}
        if self.hist_columns:
            if 1 + t >= len(self.hist_columns):
                raise ImportFormatError(f"{where}: missing from the histogram lines")
            hist = Pairs(self.hist_columns[0].array(), self.hist_columns[1 + t].array())
            overflow = self._col("Histogram Overflows", t) or 0
            total = self._col("Total", t)
            in_hist = exact_sum(hist.counts)
            if total is not None and total != in_hist:
                raise ImportFormatError(f"{where}: '# Total' says {total}, the histogram "
                                        f"lines hold {in_hist}")
            if count is None:
                count = in_hist + overflow
            elif in_hist + overflow != count:
                raise ImportFormatError(f"{where}: histogram {in_hist} + overflows {overflow} "
                                        f"is not the {count} cycles of its T: line")
            if overflow:
                overflow_at = self.hist_last + 1
        elif t in self.samples and len(self.samples[t]):
            taken = self.samples[t].array()
            if taken.dtype.kind == "O" or int(taken.max()) > (1 << 62) // unit_ns:
                samples = taken.astype(object) * unit_ns
            else:
                samples = taken.astype(np.int64)
                samples *= unit_ns
            if count is None:
                count = len(samples)
                lo, hi = int(taken.min()), int(taken.max())
        if count is None:
            raise ImportFormatError(f"{where}: no cycle count (no T: line, histogram or samples)")
        if samples is not None and len(samples) != count:
            samples = None  # -v and the summary disagree (output cut short): keep the summary
            extra["samples_dropped"] = "the -v lines do not cover every cycle"
        ts = ToolSeries(label=f"T{t}", cpu=None, count=count,
                        min_ns=None if lo is None or count == 0 else lo * unit_ns,
                        max_ns=None if hi is None or count == 0 else hi * unit_ns,
                        avg_ns=None if avg is None or count == 0 else float(avg * unit_ns),
                        hist=hist, hist_unit_ns=unit_ns, overflow=overflow,
                        overflow_at=overflow_at, samples_ns=samples, extra=extra)
        if samples is not None and ts.avg_ns is None:
            ts.extra["avg_from_samples"] = True
        return ts
