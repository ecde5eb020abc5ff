"""One rtprobe run watched to its end: its records read as they come and reported as
events, SIGINT passed on, a hang killed, a lost connection noticed; what it produced."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from rtbench import EXIT_ENV, EXIT_USAGE
from rtbench.analysis.verdict import judged_status
from rtbench.bundle import INCONCLUSIVE
from rtbench.rtprobe.wire.records import (
    ProbeOutput,
    RecordError,
    StartRecord,
    WindowRecord,
    parse_record,
)
from rtbench.run.events import OnEvent, ProbeStarted, Tick, WindowDone
from rtbench.run.loads import not_applicable_reason
from rtbench.run.pump import MAX_PROBE_LINE_BYTES, TICK_S, LineBuffer, Pump
from rtbench.run.stopflag import StopFlag
from rtbench.suites.model import TestSpec
from rtbench.targets.base import Target, TargetError, TargetLost
from rtbench.targets.procstat import IntensitySampler

# past its expected length, how long rtprobe may go on writing out the records it queued
# for a slow link (its queue holds 1 MiB: about 18 minutes at 9600 baud)
DRAIN_LIMIT_S = 1200.0


@dataclass
class Measured:
    """What one rtprobe run produced."""

    output: ProbeOutput
    status: str
    returncode: int | None
    messages: list[str]
    reason: str | None = None
    lost: bool = False  # the connection to the target broke while it ran
    lost_why: TargetLost | str | None = None  # what the target said when it was lost


@dataclass
class ProbeWatch:
    """What watching rtprobe needs of the run: the target, the select loop, the stop
    flag, where events and rtprobe's stderr lines go, and the grace after SIGINT."""

    target: Target
    pump: Pump
    stop: StopFlag
    on_event: OnEvent
    on_stderr_line: Callable[[str], None]
    interrupt_grace_s: float


def watch_probe(watch: ProbeWatch, args: list[str], expected_s: float,
                sampler: IntensitySampler, cpus: str | None, grace_s: float) -> Measured:
    """Run rtprobe (pinned to cpus if given), reporting its records as events.

    Handles SIGINT, hangs and a lost connection.
    """
    proc = watch.target.start_probe(args, cpus)
    output = ProbeOutput()
    lines = LineBuffer(MAX_PROBE_LINE_BYTES)
    stderr = bytearray()
    stderr_lines = LineBuffer(1 << 16)
    messages: list[str] = []
    bad_records: list[str] = []
    # when rtprobe last wrote: past its expected length it may still be writing out
    # the records it queued for a slow link (docs/rtprobe.md), which is no hang
    last_output = [time.monotonic()]

    def on_stdout(data: bytes) -> None:
        last_output[0] = time.monotonic()
        for lineno, line in lines.feed(data):
            if lineno in lines.overlong:
                why = (f"line {lineno}: longer than {MAX_PROBE_LINE_BYTES >> 20} MiB, "
                       "more than any rtprobe record; not read")
                bad_records.append(why)
                if len(messages) < 5:
                    messages.append(f"rtprobe output: {why}")
                continue
            if not line.strip():
                continue
            try:
                record = parse_record(line, lineno)
            except RecordError as exc:
                bad_records.append(str(exc)[:300])
                if len(messages) < 5:
                    messages.append(f"rtprobe output: {str(exc)[:300]}")
                continue
            output.add(record)
            if isinstance(record, StartRecord):
                watch.on_event(ProbeStarted(record))
            elif isinstance(record, WindowRecord):
                watch.on_event(WindowDone(record))

    def on_stderr(data: bytes) -> None:
        stderr.extend(data)
        del stderr[:-4096]
        for _, line in stderr_lines.feed(data):
            watch.on_stderr_line(line)

    watch.pump.add(proc, on_stdout, on_stderr)
    deadline = time.monotonic() + expected_s + grace_s
    next_sample = time.monotonic() + 1.0
    interrupted_at: float | None = None
    killed_why: str | None = None
    lost = False
    lost_exc: TargetLost | None = None  # what the target said when it was lost
    try:
        while watch.pump.watching(proc):
            try:
                watch.pump.poll(TICK_S)
            except TargetLost as exc:
                lost, lost_exc = True, exc
            if lost or proc.lost:
                lost = True
                messages.append(f"connection to target {watch.target.name} lost; "
                                "the finished windows are kept")
                break
            now = time.monotonic()
            if now >= next_sample:
                try:
                    sampler.sample()
                except TargetLost as exc:
                    # the /proc read found the connection gone: keep what came
                    lost, lost_exc = True, exc
                    messages.append(f"connection to target {watch.target.name} lost; "
                                    "the finished windows are kept")
                    break
                next_sample += 1.0
            if watch.stop and interrupted_at is None:
                proc.interrupt()
                interrupted_at = now
            if interrupted_at is not None and now - interrupted_at > watch.interrupt_grace_s:
                killed_why = "rtprobe did not stop after SIGINT; killed"
                messages.append(killed_why)
                break
            if now > deadline and (now - last_output[0] > grace_s
                                   or now > deadline + DRAIN_LIMIT_S):
                silent = now - last_output[0] > grace_s
                killed_why = (f"rtprobe ran {grace_s:g} s past its expected length; "
                              "killed (hung? " + (f"no output for {grace_s:g} s)"
                                                  if silent else
                                                  f"still writing {DRAIN_LIMIT_S:g} s "
                                                  "later)"))
                messages.append(killed_why)
                break
            watch.on_event(Tick())
    finally:
        watch.pump.remove(proc)
        try:
            proc.stop()
        except TargetError:
            lost = True
    if lines.rest().strip():
        messages.append("rtprobe's last line was cut short (process killed?)")
    returncode = proc.poll()
    if proc.lost and not lost:
        # stopping it showed the target gone (e.g. a serial board that rebooted)
        lost = True
        messages.append(f"connection to target {watch.target.name} lost; "
                        "the finished windows are kept")
    if lost:
        status = output.result.status if output.result is not None else "lost"
        return Measured(output, status, returncode, messages, lost=True,
                        lost_why=lost_exc or proc.lost_why)
    status = output.result.status if output.result is not None else \
        ("interrupted" if watch.stop else "error")
    reason = None
    if status == "error" or returncode not in (0, 1, 4):
        text = stderr.decode("utf-8", errors="replace").strip().splitlines()
        if text:
            messages.append(text[-1])
            reason = text[-1]
        elif output.result is None:
            reason = f"rtprobe ended without a result (exit {returncode})"
            messages.append(reason)
    why_not = not_applicable_reason(reason or "") \
        if returncode == EXIT_ENV and output.result is None else None
    if why_not is not None:
        # the board cannot run this test however it is asked (too few CPUs)
        status, reason = INCONCLUSIVE, why_not
    if killed_why is not None and status == "error":
        reason = killed_why
    if bad_records and status != "interrupted":
        # the valid windows are kept; the measurement cannot be trusted as a whole
        status = "error"
        more = f" (and {len(bad_records) - 1} more)" if len(bad_records) > 1 else ""
        reason = f"invalid rtprobe output: {bad_records[0]}{more}"
    return Measured(output, status, returncode, messages, reason)


def judge_evidence(measured: Measured, test: TestSpec, target_name: str) -> None:
    """What a finished test's output can claim: one that ended ok without the
    evidence to pass (no samples, too few for its threshold) is inconclusive with
    why; a test rtprobe refused with exit 2 is the target's error, not the user's
    (the suite's values passed this rtprobe before the run began)."""
    result = measured.output.result
    if measured.status == "ok" and result is not None:
        samples = sum(s["count"] for s in result.series
                      if isinstance(s.get("count"), int) and not isinstance(s["count"], bool))
        status, why = judged_status(measured.status, samples, bool(result.series),
                                    bool(test.thresholds_ns or result.verdicts))
        if status != measured.status:
            measured.status, measured.reason = status, why
            measured.messages.append(f"{status}: {why}")
    if measured.returncode == EXIT_USAGE and measured.status == "error":
        said = (measured.reason or "exit 2").removeprefix("rtprobe: ")
        measured.reason = f"rtprobe refused it on target {target_name}: {said}"
