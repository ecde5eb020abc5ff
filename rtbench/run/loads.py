"""The loads of a scenario: rtprobe's built-in loads, commands and host-side floods,
started together, watched while the tests run, stopped on every path and summed up."""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from rtbench import EXIT_ENV
from rtbench.analysis.loads import achieved_rate
from rtbench.rtprobe.argv import load_args
from rtbench.rtprobe.wire.records import ProbeOutput, RecordError, StartRecord, parse_record
from rtbench.run.pump import LineBuffer, Pump
from rtbench.run.util.owner import LoadDirRegistry
from rtbench.suites.model import LoadSpec
from rtbench.targets.base import ProbeProcess, Target, TargetError
from rtbench.targets.procstat import parse_net_dev, received_rate
from rtbench.targets.shell import LOAD_ENDED

# UDP port a host-side net load floods on the target (discard: nothing listens).
HOST_LOAD_PORT = 9
# A command load that ends this many times in a row, each within COMMAND_QUICK_S
# seconds of its start, is not running: it exits at once (`exit 0`, a wrong option).
COMMAND_QUICK_ENDS = 3
COMMAND_QUICK_S = 1
# the shell's codes for a command it could not start
_CANNOT_START = {126: "is not executable", 127: "was not found"}


def _ignore(_data: bytes) -> None:
    """Drop output nobody reads (a command load's stderr: its launcher sends none)."""


# The words of an rtprobe refusal (exit 3) of what the machine cannot run however it is
# asked: too few CPUs for a test, no C compiler for the build load (probe/src/rtprobe.h).
NOT_APPLICABLE = "not applicable here: "


def not_applicable_reason(line: str) -> str | None:
    """What follows rtprobe's "not applicable here: " in a stderr line, or None."""
    _, marker, why = line.partition(NOT_APPLICABLE)
    return (why.strip() or None) if marker else None


def command_load_failure(ends: list[tuple[int, int]]) -> str | None:
    """Why a command load with these ends (exit code, seconds run) is not a load, or
    None while it may be one."""
    if ends and ends[-1][0] in _CANNOT_START:
        return (f"cannot run: the command {_CANNOT_START[ends[-1][0]]} "
                f"(exit {ends[-1][0]})")
    recent = ends[-COMMAND_QUICK_ENDS:]
    if len(recent) == COMMAND_QUICK_ENDS and all(s <= COMMAND_QUICK_S for _, s in recent):
        return (f"ends at once (exit {recent[-1][0]}, {COMMAND_QUICK_ENDS} times in a row "
                f"within {COMMAND_QUICK_S} s): it puts no load on the machine")
    return None


@dataclass
class _Load:
    """One running load instance."""

    spec: LoadSpec
    proc: ProbeProcess
    cpus: str | None
    output: ProbeOutput = field(default_factory=ProbeOutput)
    lines: LineBuffer = field(default_factory=LineBuffer)
    errors: list[str] = field(default_factory=list)
    work_dir: str | None = None
    # a command load: how its runs ended (exit code, seconds it ran), newest last
    ends: list[tuple[int, int]] = field(default_factory=list)


class LoadGroup:
    """The loads of one scenario: started together, watched, stopped on every path."""

    def __init__(self, target: Target, pump: Pump,
                 registry: LoadDirRegistry | None = None,
                 host: Callable[[], Target] | None = None) -> None:
        self.target = target
        self.pump = pump
        self.loads: list[_Load] = []
        # the io loads' work directories, so that a killed rtbench's are found later
        self.registry = registry
        # the machine rtbench runs on, for loads placed `on = "host"` (opened on demand)
        self.host = host
        self._net_before: tuple[float, dict[str, tuple[int, int]]] | None = None
        self.received: dict[str, Any] | None = None

    def start(self, specs: tuple[LoadSpec, ...], load_cpus: str | None = None) -> None:
        """Start every instance of every load; a load without its own `cpus` gets load_cpus."""
        for spec in specs:
            cpus = spec.cpus if spec.cpus is not None else load_cpus
            if spec.command is not None:
                # every instance at once: a serial board starts them as one job
                for proc in self.target.start_commands(spec.command, cpus, spec.instances):
                    load = _Load(spec, proc, cpus)
                    self.loads.append(load)
                    if not self.pump.watching(proc):  # a process shared by instances
                        self.pump.add(proc, partial(self._on_command_data, load), _ignore)
            else:
                for _ in range(spec.instances):
                    self._start_builtin(spec, cpus)

    def _start_builtin(self, spec: LoadSpec, cpus: str | None) -> None:
        """Start `rtprobe load KIND --rate R` and read its rate records."""
        assert spec.rate is not None, "suites/parse.py gives every built-in load a rate"
        rate = spec.rate
        where = self.target
        if spec.on == "host":
            where, address = self._host_side()
            args = load_args(str(spec.kind), rate, spec.options, flood_address=address,
                             flood_port=HOST_LOAD_PORT)
        else:
            args = load_args(str(spec.kind), rate, spec.options, cpus=cpus)
        proc = where.start_probe(args)
        load = _Load(spec, proc, cpus)
        self.loads.append(load)
        self.pump.add(proc, lambda data: self._on_data(load, data),
                      lambda data: self._on_stderr(load, data))

    def _host_side(self) -> tuple[Target, str | None]:
        """The host target and the target's address a net load aims at (None: the host
        is the target); the target's /proc/net/dev is read now, to count what it received."""
        if self.host is None:
            raise TargetError("this run has no host side for `on = \"host\"` loads")
        host = self.host()
        address = self.target.address()
        if host.name == self.target.name:
            return host, None
        if address is None:
            raise TargetError(f"target {self.target.name} has no network address for a "
                              "host-side load (`on = \"host\"` needs an ssh target)")
        if self._net_before is None:
            self._net_before = (time.monotonic(),
                                parse_net_dev(self.target.read_file("/proc/net/dev")))
        return host, address

    def _on_data(self, load: _Load, data: bytes) -> None:
        """Parse rate and result records of a built-in load; note its work directory."""
        for lineno, line in load.lines.feed(data):
            if not line.strip():
                continue
            try:
                record = parse_record(line, lineno)
            except RecordError as exc:
                load.errors.append(f"rtprobe load {load.spec.kind}: {exc}")
                continue
            load.output.add(record)
            if isinstance(record, StartRecord) and self.target.name == "local":
                work_dir = record.params.get("work_dir")
                if isinstance(work_dir, str) and self.registry is not None:
                    load.work_dir = work_dir
                    self.registry.add(work_dir)

    @staticmethod
    def _on_command_data(load: _Load, data: bytes) -> None:
        """Note each end of a command load its launcher reports (LOAD_ENDED lines)."""
        for _, line in load.lines.feed(data):
            words = line.split()
            if len(words) != 4 or words[0] != LOAD_ENDED:
                continue
            try:
                code, began, ended = (int(w) for w in words[1:])
            except ValueError:
                continue
            load.ends.append((code, max(0, ended - began)))
            del load.ends[:-COMMAND_QUICK_ENDS]

    @staticmethod
    def _on_stderr(load: _Load, data: bytes) -> None:
        """Keep the last error line of a built-in load."""
        text = data.decode("utf-8", errors="replace").strip()
        if text:
            load.errors.append(text.splitlines()[-1])

    def failures(self) -> list[str]:
        """Built-in loads that ended by themselves; command loads (restarted when they
        end) that cannot run: not found or not executable, or ending at once every time."""
        out = []
        for load in self.loads:
            code = load.proc.poll()
            if load.spec.kind is not None and code is not None:
                if self.pump.watching(load.proc):
                    # its last words (a board's job hands its output over only now)
                    self.pump.drain(load.proc, 2.0)
                why = load.errors[-1] if load.errors else "no message"
                out.append(f"load {load.spec.kind} exited ({code}): {why}")
            elif load.spec.command is not None:
                failed = command_load_failure(load.ends)
                if failed is not None:
                    out.append(f"load {load.spec.command!r} {failed}")
        return out

    def not_applicable(self) -> str | None:
        """Why the board cannot run this scenario: a built-in load that ended refusing
        with rtprobe's "not applicable here" (exit 3), in one line; else None.  Call it
        after failures(), which fetches an ended load's last words."""
        for load in self.loads:
            if load.spec.kind is None or load.proc.poll() != EXIT_ENV:
                continue
            for line in reversed(load.errors):
                why = not_applicable_reason(line)
                if why is not None:
                    return f"load {load.spec.kind} cannot run on this board: {why}"
        return None

    def lost(self) -> bool:
        """True when the connection to the target broke under one of the loads."""
        return any(load.proc.lost for load in self.loads)

    def stop(self) -> None:
        """Stop every load: built-in ones get SIGINT first so they write their result."""
        if self._net_before is not None:
            with suppress(TargetError, ValueError):
                after = parse_net_dev(self.target.read_file("/proc/net/dev"))
                then, before = self._net_before
                self.received = received_rate(before, after, time.monotonic() - then)
        for load in self.loads:
            if load.spec.kind is not None:
                # a board that stopped answering has nothing to interrupt (said already)
                with suppress(TargetError):
                    load.proc.interrupt()
        for load in self.loads:
            # a lost connection leaves nothing to drain or stop here
            if load.spec.kind is not None:
                with suppress(TargetError):
                    if self.pump.watching(load.proc):
                        self.pump.drain(load.proc, 3.0)
                    load.proc.stop()
        # command loads (all on the target) together: the target sweeps once for them all
        with suppress(TargetError):
            self.target.stop_commands([load.proc for load in self.loads
                                       if load.spec.kind is None])
        for load in self.loads:
            self.pump.remove(load.proc)
            if load.work_dir is not None and self.registry is not None:
                # a load killed (or dead) before its own clean-up leaves its directory
                self.registry.remove_dead(load.work_dir)

    def summary(self) -> list[dict[str, Any]]:
        """Per load instance: the recipe, its CPUs, for built-in kinds the achieved rate.

        `target` is the rate asked for ("max": flat out), `achieved` the load's own mean
        over the scenario (its result record, else the mean of its rate records).
        """
        out: list[dict[str, Any]] = []
        for load in self.loads:
            entry = load.spec.describe()
            entry["instances"] = 1
            entry["cpus"] = load.cpus
            if load.spec.kind is not None:
                result = load.output.result
                entry["target"] = load.spec.rate
                entry["achieved"] = achieved_rate(load.output)
                unit = result.raw.get("unit") if result else None
                if unit is None and load.output.rates:
                    unit = load.output.rates[-1].unit
                entry["unit"] = unit
                entry["rate_samples"] = len(load.output.rates)
                footprint = result.raw.get("footprint") if result else None
                if isinstance(footprint, dict):
                    entry["peak_rss_kib"] = footprint.get("peak_rss_kib")
                if load.spec.on == "host":
                    # the other end's count: what the target's busiest interface received
                    entry["received_by_target"] = self.received
                if load.errors:
                    entry["errors"] = load.errors[-3:]
            out.append(entry)
        return out
