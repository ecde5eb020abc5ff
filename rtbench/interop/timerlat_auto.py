"""`rtla timerlat -a` (auto-analysis) output: rtla's own account of the spike that
stopped tracing, mapped to rtbench's cause model.

After the `timerlat top` table (read as rtla-top reads it), rtla prints per CPU that hit
the limit a block opened by `## CPU N hit stop tracing, analyzing it ##`: `IRQ handler
delay` (optionally `(exit from idle)`), `IRQ latency`, `Timerlat IRQ duration`, `Blocking
thread` with its `comm:pid`, and for a thread latency the `NMI`, `IRQ`, `Softirq` and
`Thread interference` sums with one `name:number  value us` line each, closed by a
dashed line and `Thread latency:` (or `IRQ latency:`) `X us (100%)`.  Each block becomes
a `trace` record without events whose `analysis.parts` are these figures in order,
as causes: IRQ handler delay = timer IRQ late (idle when rtla says exit from idle),
Timerlat IRQ duration = timer IRQ, blocking and interfering threads = threads, IRQs
and softirqs by name; what the parts leave of the total is unexplained.

The records are not held as dicts (several KiB each, ten times their text; issue 36):
the file is checked whole when it is read, and the run's trace records are a sequence
that keeps the file's bytes and where each block starts, and reads a block again when
its record is asked for (`rtbench import` stores them a batch at a time).

Completeness: a block cut before its closing `latency: ... (100%)` line is refused.  rtla
prints no count of the CPUs it analyses; its last line, `Saving trace to FILE`, is printed
when it saves the trace, as `-a` always does, so an output without that line after the
last block was cut (between two blocks, or before that line): refused as incomplete
(`--partial` stores it; `-T`/`-i` without `-t` never print the line).
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Iterator, Sequence
from itertools import chain, islice
from typing import Any, overload

from rtbench.bundle import MeasurementDetail, RunDetail
from rtbench.interop._build import (
    check_ns,
    complete,
    number,
    tool_run,
)
from rtbench.interop._lines import check_text, located_lines
from rtbench.interop.base import Importer, ImportFormatError
from rtbench.interop.rtla import RtlaTopImporter

_BLOCK = re.compile(r"^## CPU (\d{1,7}) hit stop tracing")
_FIGURE = re.compile(r"^\s*(?P<label>[A-Za-z][A-Za-z ]*?):?\s+(?:(?P<idle>\(exit from idle\))\s+)?"
                     r"(?P<upto>up to\s+)?(?P<value>\S+) us(?:\s+\((?P<pct>[^)]*)\))?\s*$")
_ENTRY = re.compile(r"^\s*(?P<name>\S.*?):(?P<num>\d{1,10})\s+(?P<value>\S+) us\s*$")
_THREAD_ONLY = re.compile(r"^\s*(?P<name>\S.*?):(?P<num>\d{1,10})\s*$")
_SAVED = re.compile(r"^\s*Saving trace to \S")
_SECTIONS = {"IRQ interference": "irq", "Softirq interference": "softirq",
             "Thread interference": "thread", "NMI interference": "nmi"}


class TimerlatAutoImporter(Importer):
    """rtla timerlat top/hist -a output with its auto-analysis."""

    name = "rtla-timerlat-auto"
    summary = "rtla timerlat -a output: its auto-analysis of each stopping spike, as causes"

    def detect(self, head: bytes, filename: str) -> bool:
        """rtla's stop-tracing analysis header."""
        return re.search(rb"^## CPU \d+ hit stop tracing", head, re.M) is not None or \
            b"rtla timerlat hit stop tracing" in head

    def read(self, data: bytes, filename: str) -> list[RunDetail]:
        """One run: the top table's measurements (if printed) and the analysed spikes."""
        check_text(data, filename)
        numbered = enumerate(located_lines(data))
        top_lines: list[str] = []
        first = None
        for index, (offset, place, line) in numbered:
            if _BLOCK.match(line):
                first = (index, offset, place, line)
                break
            top_lines.append(line)
        if first is None:
            raise ImportFormatError(f"{filename}: no auto-analysis ('## CPU N hit stop "
                                    "tracing'): run rtla timerlat with -a")
        measurements: list[MeasurementDetail] = []
        top = ("\n".join(top_lines) + "\n").encode("utf-8")
        del top_lines
        if b"CPU COUNT" in top:
            measurements.extend(RtlaTopImporter()._timerlat(top, filename)
                                .scenarios[0].measurements)
        records, missing, saved = _scan(data, chain([first], (
            (index, *where) for index, where in numbered)), filename)
        m = MeasurementDetail(
            id=0, name="timerlat-auto-analysis", test="timerlat", params={}, command=[],
            status="ok", exit_code=0, reason=None, thresholds_ns=[], simulated=False,
            probe_version="", t0_unix_ns=None, measured_ns=None, elapsed_ns=None,
            verdicts=[], data={"summary_only": True,
                               "meaning": "rtla's analysis of the spike that stopped "
                                          "tracing, one per CPU"},
            start={}, traces=records)
        m.trace_info = {
            "tracefs": None, "clock": None, "threshold_ns": None, "buffer_kb": None,
            "max_spikes": None, "budget_bytes": None, "events_enabled": [],
            "events_missing": [], "spikes_over": None, "spikes_traced": len(records),
            "spikes_untraced": None, "lost": None, "restored": None,
            "note": "imported from rtla timerlat -a: rtla's own analysis of the one spike "
                    "per CPU that stopped tracing, not every spike"}
        measurements.append(m)
        runs = [tool_run(tool="rtla", tool_version="", command_line=None, fmt=self.name,
                         measurements=measurements)]
        if not missing and not saved:
            missing = ("no 'Saving trace to' line after the last analysis: rtla -a prints "
                       "it last, and prints no count of the CPUs it analyses, so without "
                       "it the output was cut (-T without -t never prints it)")
        complete(runs, filename, data, missing)
        return runs


class TraceRecords(Sequence[dict[str, Any]]):
    """The trace records of a file's analysis blocks, each read again from the file's
    bytes when it is asked for: memory for the file and 17 bytes a block, not a dict of
    several KiB."""

    def __init__(self, data: bytes, filename: str, starts: array[int], places: array[int],
                 indices: array[int]) -> None:
        self._data, self._filename = data, filename
        # each block's opening line: the offset of its piece of bytes, its place there,
        # and its 0-based line number
        self._starts, self._places, self._indices = starts, places, indices

    def __len__(self) -> int:
        """How many analysis blocks."""
        return len(self._starts)

    def _from(self, block: int) -> Iterator[dict[str, Any]]:
        """The records from the block-th on, read in one pass."""
        if block >= len(self._starts):
            return iter(())
        lines = located_lines(self._data, self._starts[block])
        numbered = ((self._indices[block] + n, line) for n, (_, _, line)
                    in enumerate(islice(lines, self._places[block], None)))
        return (record for record, _ in _blocks(numbered, self._filename))

    @overload
    def __getitem__(self, index: int) -> dict[str, Any]: ...

    @overload
    def __getitem__(self, index: slice) -> list[dict[str, Any]]: ...

    def __getitem__(self, index: int | slice) -> dict[str, Any] | list[dict[str, Any]]:
        """One record (read from its block), or a slice as a list."""
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError("trace record index out of range")
        return next(self._from(index))

    def __iter__(self) -> Iterator[dict[str, Any]]:
        """Every record in order, one pass over the blocks."""
        return self._from(0)

    def __eq__(self, other: object) -> bool:
        """Equal to a sequence of the same records."""
        if isinstance(other, Sequence) and not isinstance(other, (str, bytes)):
            return len(self) == len(other) and all(
                mine == theirs for mine, theirs in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        """Short: how many records."""
        return f"TraceRecords({len(self)} rtla analyses of {self._filename})"


def _scan(data: bytes, located: Iterator[tuple[int, int, int, str]], filename: str
          ) -> tuple[TraceRecords, str, bool]:
    """Every analysis block checked (located: the lines from the first block on, with
    their 0-based index, byte offset and place), as TraceRecords; what a cut last block
    lacks, and whether a `Saving trace to` line follows the last block's opening line."""
    starts, places, indices = array("q"), array("q"), array("q")

    def numbered() -> Iterator[tuple[int, str]]:
        for index, offset, place, line in located:
            if _BLOCK.match(line):
                starts.append(offset)
                places.append(place)
                indices.append(index)
            yield index, line
    end: list[tuple[str, bool]] = []
    for _ in _blocks(numbered(), filename, end):
        pass  # each record is made (and checked) here, then dropped
    missing, saved = end[0]
    if missing:  # the cut block is not a record
        for column in (starts, places, indices):
            column.pop()
    return TraceRecords(data, filename, starts, places, indices), missing, saved


def _blocks(numbered: Iterator[tuple[int, str]], filename: str,
            end: list[tuple[str, bool]] | None = None
            ) -> Iterator[tuple[dict[str, Any], int]]:
    """The trace record of every analysis block with its opening line's index
    (numbered: the lines from the first block on, with their 0-based index); at the
    end, appended to end: what a cut last block lacks, and whether a `Saving trace to`
    line follows the last block's opening line."""
    block: dict[str, Any] | None = None
    opened_at = 0
    section = ""
    closing = False
    saved = False
    for lineno, line in numbered:
        where = f"{filename}: line {lineno + 1}"
        if _SAVED.match(line):
            saved = True
        opened = _BLOCK.match(line)
        if opened:
            saved = False
            if block is not None:
                raise ImportFormatError(f"{where}: a new CPU block before the "
                                        "'latency: ... (100%)' line closing the last one")
            block = _new_block(int(opened.group(1)))
            opened_at = lineno
            section, closing = "", False
            continue
        if block is None or not line.strip():
            continue  # the summary lines after the blocks
        stripped = line.strip()
        if stripped.startswith("---"):
            closing = True
            continue
        if stripped.startswith("->") or "stack" in stripped.lower():
            block["analysis"]["stack"].append(stripped.removeprefix("->").strip())
            continue
        figure = _FIGURE.match(line)
        if figure and not _ENTRY.match(line):
            label = figure.group("label").strip()
            ns = check_ns(number(figure.group("value"), where) * 1000, where)
            if closing:
                block["latency_ns"] = ns
                block["context"] = "irq" if label.startswith("IRQ") else "thread"
                _finish(block)
                yield block, opened_at
                block = None
                continue
            section = _figure(block, label, ns, figure.group("idle") is not None, where)
            continue
        entry = _ENTRY.match(line)
        if entry and section:
            ns = check_ns(number(entry.group("value"), where) * 1000, where)
            _entry(block, section, entry.group("name").strip(), int(entry.group("num")), ns)
            continue
        only = _THREAD_ONLY.match(line)
        if only and section == "blocking":
            block["analysis"]["blocking_thread"] = [only.group("name").strip(),
                                                    int(only.group("num"))]
            continue
        raise ImportFormatError(f"{where}: not a line of rtla's auto-analysis "
                                f"({stripped[:60]!r})")
    missing = "" if block is None else \
        f"no 'latency: ... (100%)' line closing the analysis of CPU {block['cpu']}"
    if end is not None:
        end.append((missing, saved))


def _new_block(cpu: int) -> dict[str, Any]:
    """An empty record for one CPU's analysis."""
    return {"schema": "rtprobe/1", "type": "trace", "series": None, "cpu": cpu,
            "t_ns": None, "latency_ns": None, "clock": None, "events": [],
            "analysis": {"tool": "rtla timerlat -a", "parts": [], "notes": [], "stack": [],
                         "figures": {}, "blocking_thread": None}}


def _figure(block: dict[str, Any], label: str, ns: int, idle: bool, where: str) -> str:
    """Record one `Label: value us` line; the section its entry lines belong to."""
    analysis = block["analysis"]
    analysis["figures"][label] = ns
    if label == "IRQ handler delay":
        analysis["parts"].append({"phase": "timer_late", "kind": "idle" if idle
                                  else "irq_late", "ns": ns, "label": "CPU idle (exit from "
                                  "idle)" if idle else "timer IRQ late: hardware/hypervisor "
                                  "or IRQs off (rtla does not tell)"})
        return ""
    if label == "Timerlat IRQ duration":
        analysis["parts"].append({"phase": "timer_irq", "kind": "timer_irq", "ns": ns,
                                  "label": "timer IRQ (timerlat handler)",
                                  "key": "timer_irq", "family": "timer_irq"})
        return ""
    if label == "Blocking thread":
        analysis["blocking_ns"] = ns
        return "blocking"
    if label in _SECTIONS:
        return _SECTIONS[label]
    if label == "Previous IRQ interference":
        analysis["notes"].append(f"a previous IRQ may have delayed the timer IRQ by up to "
                                 f"{ns / 1000:.2f} us")
        return ""
    if label == "IRQ latency":
        return ""
    raise ImportFormatError(f"{where}: unknown figure {label!r} in rtla's auto-analysis")


def _entry(block: dict[str, Any], section: str, name: str, num: int, ns: int) -> None:
    """One `name:number value us` line of a section, as a cause part."""
    parts = block["analysis"]["parts"]
    if section in ("blocking", "thread"):
        if section == "blocking":
            block["analysis"]["blocking_thread"] = [name, num]
        parts.append({"phase": "scheduling", "kind": "thread", "ns": ns,
                      "key": f"thread:{name}:{num}", "family": f"thread:{name}",
                      "label": f"{name} (pid {num})"})
    elif section == "irq":
        parts.append({"phase": "scheduling", "kind": "irq", "ns": ns,
                      "key": f"irq:{num}:{name}", "family": f"irq:{num}:{name}",
                      "label": f"IRQ {num} {name}"})
    elif section == "softirq":
        parts.append({"phase": "scheduling", "kind": "softirq", "ns": ns,
                      "key": f"softirq:{name}", "family": f"softirq:{name}",
                      "label": f"softirq {name}"})
    else:
        parts.append({"phase": "scheduling", "kind": "nmi", "ns": ns, "key": "nmi",
                      "family": "nmi", "label": "NMI"})


def _finish(block: dict[str, Any]) -> None:
    """An IRQ-latency block names the thread that ran while the IRQ waited."""
    analysis = block["analysis"]
    thread = analysis.get("blocking_thread")
    if block["context"] == "irq" and thread:
        for part in analysis["parts"]:
            if part["kind"] == "irq_late":
                part["label"] = (f"timer IRQ late while {thread[0]} (pid {thread[1]}) ran: "
                                 "IRQs off or hardware/hypervisor")
                part["key"] = f"irq_late:thread:{thread[0]}:{thread[1]}"
                part["family"] = f"irq_late:thread:{thread[0]}"
