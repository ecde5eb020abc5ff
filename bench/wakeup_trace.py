#!/usr/bin/env python3
"""wakeup_trace.py - time rtprobe wakeup and rt-tests' wake-up tests with the scheduler's
own clock, to find where their averages differ (BENCHMARKS.md "wake-up parity").

Each tool runs under a private tracefs instance that records, for its own tasks only
(set_event_pid with event-fork), the events sched_waking and sched_switch and the
system-call entries and exits.  For every wake-up the script finds

    E  the waker's entry into the system call that wakes the wakee,
    W  sched_waking of the wakee (inside that call),
    S  sched_switch onto the wakee (it gets the CPU),
    X  the wakee's exit from its blocking system call (back to user space),

and reports the medians and means of E->W, W->S, S->X and E->X next to the tool's own
average.  E->X is the same span for every tool, measured by the kernel, so a difference
in the tools' averages that E->X does not show comes from the user-space side; a
difference in W->S is time the woken task waits for the CPU.

Usage (root): python3 bench/wakeup_trace.py [ROUNDS]   (default 3)
Environment: CPU (1), PRIO (80), INTERVAL_US (1000), LOOPS (2000).
Prints a Markdown table on stdout.  Uses only the tracefs instance it creates
(instances/rtbench-wakeup-PID, removed at the end), never the global trace buffer.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

TRACEFS = Path("/sys/kernel/tracing")
HERE = Path(__file__).resolve().parent.parent
RTPROBE = Path(os.environ.get("RTPROBE", HERE / "probe" / "build" / "rtprobe"))
CPU = int(os.environ.get("CPU", "1"))
PRIO = int(os.environ.get("PRIO", "80"))
INTERVAL_US = int(os.environ.get("INTERVAL_US", "1000"))
LOOPS = int(os.environ.get("LOOPS", "2000"))

# (ours: rtprobe wakeup mechanism, theirs: rt-tests program)
PAIRS = (("sigwait", "sigwaittest"), ("mq", "pmqtest"), ("sem", "ptsematest"))

LINE = re.compile(r"^\s*(?P<comm>.+?)-(?P<pid>\d+)\s+\[(?P<cpu>\d+)\]\s+\S+\s+"
                  r"(?P<ts>\d+):\s+(?P<event>\w+):\s*(?P<rest>.*)$")


def ours(mechanism: str, wakee_priority: int) -> list[str]:
    """rtprobe wakeup with one pair pinned to CPU, both sides at PRIO unless told."""
    return [str(RTPROBE), "wakeup", "--mechanism", mechanism, "--cpus", str(CPU),
            "--placement", "same", "--priority", str(PRIO), "--waker-priority", str(PRIO),
            "--wakee-priority", str(wakee_priority), "--interval", f"{INTERVAL_US}us",
            "--loops", str(LOOPS), "--warmup", "0"]


def theirs(program: str) -> list[str]:
    """The rt-tests program with the same settings (as bench/wakeup_noise_vs_rttests.sh)."""
    return [program, "-q", "-a", str(CPU), "-p", str(PRIO), "-i", str(INTERVAL_US),
            "-l", str(LOOPS)]


class Instance:
    """A private tracefs instance recording the scheduler and syscall events of one tree."""

    def __init__(self) -> None:
        if not (TRACEFS / "instances").is_dir():
            subprocess.run(["mount", "-t", "tracefs", "nodev", str(TRACEFS)], check=True)
        self.path = TRACEFS / "instances" / f"rtbench-wakeup-{os.getpid()}"
        self.path.mkdir()

    def write(self, name: str, text: str) -> None:
        """Write a control file of the instance."""
        (self.path / name).write_text(text)

    def trace(self, argv: list[str]) -> tuple[str, str]:
        """Run argv with its tasks traced; return (stdout of argv, trace text)."""
        self.write("tracing_on", "0")
        self.write("trace", "")
        self.write("buffer_size_kb", "16384")
        self.write("options/event-fork", "1")
        # The text output prints "mono" in whole microseconds; the TSC counter is printed
        # whole and converted with markers written at CLOCK_MONOTONIC times.
        self.write("trace_clock", "x86-tsc")
        for event in ("sched/sched_waking", "sched/sched_switch",
                      "raw_syscalls/sys_enter", "raw_syscalls/sys_exit"):
            self.write(f"events/{event}/enable", "1")
        # The shell puts its own pid into set_event_pid, then becomes the tool.
        script = (f'echo $$ > {self.path}/set_event_pid && echo 1 > {self.path}/tracing_on'
                  ' && exec "$@"')
        self.write("tracing_on", "1")
        self.write("trace_marker", f"rtbench-cal {time.monotonic_ns()}")
        self.write("tracing_on", "0")
        done = subprocess.run(["sh", "-c", script, "sh", *argv], capture_output=True,
                              text=True, timeout=120, check=False)
        self.write("trace_marker", f"rtbench-cal {time.monotonic_ns()}")
        self.write("tracing_on", "0")
        text = (self.path / "trace").read_text(errors="replace")
        if done.returncode not in (0, 1):
            raise SystemExit(f"wakeup_trace: {' '.join(argv)} exited {done.returncode}: "
                             f"{done.stderr.strip()[-300:]}")
        return done.stdout + done.stderr, text

    def remove(self) -> None:
        """Remove the instance (its buffer goes with it)."""
        self.write("tracing_on", "0")
        self.path.rmdir()


def tsc_per_us(trace: str) -> float:
    """TSC counts per microsecond, from the two calibration markers around the run."""
    marks = [(int(m["ts"]), int(m["rest"].split()[-1])) for m in map(LINE.match,
             trace.splitlines()) if m and "rtbench-cal" in m["rest"]]
    if len(marks) < 2:
        raise SystemExit("wakeup_trace: the calibration markers are missing")
    (c0, n0), (c1, n1) = marks[0], marks[-1]
    return (c1 - c0) / ((n1 - n0) / 1000.0)


def spans(trace: str, leg: int) -> dict[str, list[float]]:
    """Per measured wake-up, E->W, W->S, S->X and E->X in us (see the module text).

    Each cycle starts with a wake-up from outside the traced tasks (the interval timer
    ending a sleep); the wake-ups between the traced tasks that follow are its legs,
    counted from 0.  rtprobe sleeps in the waker, so the measured leg is 0 (the answer,
    its acknowledgement, is leg 1); rt-tests sleep in the receiver, which then wakes the
    sender (leg 0), and the sender's wake-up of the receiver is the measured leg 1.
    """
    scale = tsc_per_us(trace)
    ours = {int(m["pid"]) for m in map(LINE.match, trace.splitlines())
            if m and m["event"] in ("sys_enter", "sys_exit")}
    chain: int | None = None  # legs seen since the last wake-up from outside
    last_enter: dict[int, float] = {}  # pid -> time of its latest sys_enter
    waking: dict[int, tuple[float, float]] = {}  # wakee pid -> (E, W)
    switched: dict[int, tuple[float, float, float]] = {}  # wakee pid -> (E, W, S)
    out: dict[str, list[float]] = {"E->W": [], "W->S": [], "S->X": [], "E->X": []}
    for raw in trace.splitlines():
        match = LINE.match(raw)
        if not match:
            continue
        pid, ts, event, rest = (int(match["pid"]), int(match["ts"]) / scale,
                                match["event"], match["rest"])
        if event == "sys_enter":
            last_enter[pid] = ts
        elif event == "sched_waking":
            woken = re.search(r"pid=(\d+)", rest)
            if not woken:
                continue
            if pid not in ours:
                chain = 0 if int(woken[1]) in ours else chain
            elif chain is not None and int(woken[1]) in ours:
                if chain == leg and pid in last_enter:
                    waking[int(woken[1])] = (last_enter[pid], ts)
                chain += 1
        elif event == "sched_switch":
            nxt = re.search(r"next_pid=(\d+)", rest)
            if nxt and int(nxt[1]) in waking:
                e, w = waking.pop(int(nxt[1]))
                switched[int(nxt[1])] = (e, w, ts)
        elif event == "sys_exit" and pid in switched:
            e, w, s = switched.pop(pid)
            out["E->W"].append(w - e)
            out["W->S"].append(s - w)
            out["S->X"].append(ts - s)
            out["E->X"].append(ts - e)
    return out


def own_average(output: str, is_ours: bool) -> float:
    """The tool's own average wake-up latency in us."""
    if is_ours:
        for line in output.splitlines():
            if '"type":"result"' in line.replace(" ", ""):
                s = json.loads(line)["series"][0]
                return float(s["sum_ns"]) / float(s["count"]) / 1000.0
        raise SystemExit("wakeup_trace: rtprobe printed no result record")
    found = re.findall(r"Avg:?\s+(\d+(?:\.\d+)?)", output)
    if not found:
        raise SystemExit(f"wakeup_trace: no average in: {output[-300:]}")
    return float(found[-1])


def main() -> int:
    """Run the rounds and print the table."""
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    if os.geteuid() != 0:
        print("wakeup_trace: run as root (tracefs and SCHED_FIFO)", file=sys.stderr)
        return 3
    for tool in ("sigwaittest", "pmqtest", "ptsematest"):
        if shutil.which(tool) is None:
            print(f"wakeup_trace: {tool} not found; install rt-tests", file=sys.stderr)
            return 3
    inst = Instance()
    rows: dict[str, dict[str, list[float]]] = {}
    try:
        for r in range(rounds):
            for mechanism, program in PAIRS:
                runs = [(f"wakeup {mechanism}, wakee +1", ours(mechanism, PRIO + 1), True),
                        (f"wakeup {mechanism}", ours(mechanism, PRIO), True),
                        (program, theirs(program), False)]
                for label, argv, is_ours in (runs if r % 2 == 0 else runs[::-1]):
                    output, trace = inst.trace(argv)
                    got = spans(trace, 0 if is_ours else 1)
                    row = rows.setdefault(label, {})
                    row.setdefault("own avg", []).append(own_average(output, is_ours))
                    for key, values in got.items():
                        if values:
                            row.setdefault(key + " median", []).append(
                                statistics.median(values))
                            row.setdefault(key + " mean", []).append(
                                statistics.fmean(values))
                    row.setdefault("wake-ups traced", []).append(float(len(got["E->X"])))
    finally:
        inst.remove()
    keys = ["own avg", "E->X mean", "E->X median", "E->W median", "W->S median",
            "S->X median", "wake-ups traced"]
    print("| tool | " + " | ".join(keys) + " |")
    print("|---" * (len(keys) + 1) + "|")
    for label, row in rows.items():
        cells = [f"{statistics.median(row[k]):.2f}" if k in row else "-" for k in keys]
        print(f"| {label} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
