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

Completeness: a block cut before its closing `latency: ... (100%)` line is refused.  rtla
prints no count of the CPUs it analyses; its last line, `Saving trace to FILE`, is printed
when it saves the trace, as `-a` always does, so an output without that line after the
last block was cut (between two blocks, or before that line): refused as incomplete
(`--partial` stores it; `-T`/`-i` without `-t` never print the line).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from itertools import chain
from typing import Any

from rtbench.bundle import MeasurementDetail, RunDetail
from rtbench.interop._build import (
    check_ns,
    complete,
    number,
    tool_run,
)
from rtbench.interop._lines import check_text, lines
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
        numbered = enumerate(lines(data))
        top_lines: list[str] = []
        first = None
        for index, line in numbered:
            if _BLOCK.match(line):
                first = index
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
        records, missing, saved = _blocks(chain([(first, line)], numbered), filename)
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


def _blocks(numbered: Iterator[tuple[int, str]], filename: str
            ) -> tuple[list[dict[str, Any]], str, bool]:
    """The trace records of every analysis block (numbered: the lines from the first
    block on, with their 0-based index), what a cut last block lacks, and whether a
    `Saving trace to` line follows the last block's opening line."""
    records: list[dict[str, Any]] = []
    block: dict[str, Any] | None = None
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
                records.append(block)
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
    return records, missing, saved


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
