"""Achieved load intensity from /proc/stat, /proc/interrupts and /proc/loadavg.

Pure parsers plus a sampler that takes one snapshot a second while a scenario runs and
reduces the first and last snapshots to rates: CPU busy % (user+nice+system+irq+softirq+
steal over all jiffies, total and per CPU), context switches/s, interrupts/s (total from
/proc/stat, per CPU from /proc/interrupts) and the load average.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rtbench.targets.base import TargetError, TargetLost

# /proc/stat cpu fields: user nice system idle iowait irq softirq steal (guest is in user).
_IDLE_FIELDS = (3, 4)
_FIELDS = 8


@dataclass(frozen=True)
class ProcSnapshot:
    """One reading of the kernel's counters."""

    t_s: float
    cpu: dict[str, tuple[int, int]]  # "cpu", "cpu0"...: (busy jiffies, total jiffies)
    ctxt: int
    intr: int
    irq_per_cpu: tuple[int, ...]
    loadavg: tuple[float, float, float]


def parse_proc_stat(text: str) -> tuple[dict[str, tuple[int, int]], int, int]:
    """Return per-CPU (busy, total) jiffies, context switches and interrupts."""
    cpu: dict[str, tuple[int, int]] = {}
    ctxt = intr = 0
    for line in text.splitlines():
        words = line.split()
        if not words:
            continue
        if words[0].startswith("cpu"):
            values = [int(w) for w in words[1:1 + _FIELDS]]
            total = sum(values)
            idle = sum(values[i] for i in _IDLE_FIELDS if i < len(values))
            cpu[words[0]] = (total - idle, total)
        elif words[0] == "ctxt":
            ctxt = int(words[1])
        elif words[0] == "intr":
            intr = int(words[1])
    return cpu, ctxt, intr


def steal_fraction(text: str) -> float | None:
    """Fraction of all CPU time stolen by the hypervisor since boot (None if unknown)."""
    for line in text.splitlines():
        words = line.split()
        if words and words[0] == "cpu" and len(words) > 8:
            values = [int(w) for w in words[1:9]]
            total = sum(values)
            return values[7] / total if total else None
    return None


def read_steal(read_file: Callable[[str], str]) -> float | None:
    """steal_fraction() of a target's /proc/stat (None when it cannot be read)."""
    try:
        return steal_fraction(read_file("/proc/stat"))
    except TargetLost:
        raise
    except (OSError, TargetError):
        return None


def parse_interrupts(text: str) -> tuple[int, ...]:
    """Sum /proc/interrupts per CPU column."""
    lines = text.splitlines()
    if not lines:
        return ()
    ncpu = len(lines[0].split())
    sums = [0] * ncpu
    for line in lines[1:]:
        words = line.split()[1:1 + ncpu]
        for i, word in enumerate(words):
            if not word.isdigit():
                break
            sums[i] += int(word)
    return tuple(sums)


def parse_loadavg(text: str) -> tuple[float, float, float]:
    """Return the 1, 5 and 15 minute load averages."""
    words = text.split()
    return float(words[0]), float(words[1]), float(words[2])


# what one sample reads
SAMPLED_FILES = ("/proc/stat", "/proc/interrupts", "/proc/loadavg")


@dataclass
class IntensitySampler:
    """Collects snapshots through read_file (a target's) and reduces them to rates."""

    read_file: Callable[[str], str]
    now: Callable[[], float]
    snapshots: list[ProcSnapshot] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    # reads the three files at once when given (Target.read_files: one board session)
    read_many: Callable[[list[str]], list[str]] | None = None

    def sample(self) -> None:
        """Take one snapshot; a file that cannot be read is noted once, not fatal."""
        try:
            if self.read_many is not None:
                stat, interrupts, loadavg = self.read_many(list(SAMPLED_FILES))
            else:
                stat, interrupts, loadavg = (self.read_file(f) for f in SAMPLED_FILES)
            cpu, ctxt, intr = parse_proc_stat(stat)
            irq = parse_interrupts(interrupts)
            load = parse_loadavg(loadavg)
        except TargetLost:
            raise
        except (OSError, TargetError, ValueError, IndexError) as exc:
            message = f"cannot sample /proc: {exc}"
            if message not in self.errors:
                self.errors.append(message)
            return
        self.snapshots.append(ProcSnapshot(self.now(), cpu, ctxt, intr, irq, load))

    def intensity(self) -> dict[str, Any]:
        """Reduce the snapshots to the achieved intensity (empty rates if < 2 samples)."""
        result: dict[str, Any] = {"samples": len(self.snapshots)}
        if self.errors:
            result["errors"] = list(self.errors)
        if len(self.snapshots) < 2:
            return result
        first, last = self.snapshots[0], self.snapshots[-1]
        elapsed = last.t_s - first.t_s
        result["elapsed_s"] = round(elapsed, 3)

        def busy_pct(name: str) -> float | None:
            if name not in first.cpu or name not in last.cpu:
                return None
            busy = last.cpu[name][0] - first.cpu[name][0]
            total = last.cpu[name][1] - first.cpu[name][1]
            return round(100.0 * busy / total, 2) if total > 0 else None

        result["cpu_busy_pct"] = busy_pct("cpu")
        result["cpu_busy_pct_per_cpu"] = {
            name: busy_pct(name) for name in sorted(last.cpu) if name != "cpu"
        }
        result["ctxt_per_s"] = round((last.ctxt - first.ctxt) / elapsed, 1)
        result["irq_per_s"] = round((last.intr - first.intr) / elapsed, 1)
        if len(first.irq_per_cpu) == len(last.irq_per_cpu):
            pairs = zip(first.irq_per_cpu, last.irq_per_cpu, strict=True)
            result["irq_per_s_per_cpu"] = [round((b - a) / elapsed, 1) for a, b in pairs]
        loads = [s.loadavg[0] for s in self.snapshots]
        result["loadavg_1m_last"] = last.loadavg[0]
        result["loadavg_1m_max"] = max(loads)
        return result


def parse_net_dev(text: str) -> dict[str, tuple[int, int]]:
    """/proc/net/dev as {interface: (received packets, received bytes)}."""
    out: dict[str, tuple[int, int]] = {}
    for line in text.splitlines()[2:]:
        name, sep, rest = line.partition(":")
        fields = rest.split()
        if sep and len(fields) >= 2:
            out[name.strip()] = (int(fields[1]), int(fields[0]))
    return out


def received_rate(before: dict[str, tuple[int, int]], after: dict[str, tuple[int, int]],
                  elapsed_s: float) -> dict[str, Any] | None:
    """Packets/s and bytes/s the busiest interface other than lo received, or None."""
    best: tuple[int, int, str] | None = None
    for name, (packets, nbytes) in after.items():
        if name == "lo" or name not in before:
            continue
        delta = (packets - before[name][0], nbytes - before[name][1], name)
        if best is None or delta[0] > best[0]:
            best = delta
    if best is None or elapsed_s <= 0:
        return None
    return {"interface": best[2], "packets_per_s": round(best[0] / elapsed_s, 1),
            "bytes_per_s": round(best[1] / elapsed_s, 1)}
