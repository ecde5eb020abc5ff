"""Run a suite on a target: scenarios x tests, every measurement stored as it ends.

For each scenario the runner starts its loads, lets them settle, then runs rtprobe once per
test, reading its NDJSON as it arrives, and stores the measurement as soon as it ends.
While a scenario runs it samples the target's /proc once a second and stores the achieved
intensity.  SIGINT, SIGTERM and SIGHUP are forwarded to rtprobe as SIGINT (it then writes its
result with status 'interrupted'); loads are stopped, the partial measurement is stored
and the run is finished as 'interrupted' (exit 4).  When the connection to the target
breaks, what was measured so far is stored and the run ends as 'lost' (exit 3).

The runner is headless: it talks to the target only through rtbench.targets.base and
tells a display what happens through the events of rtbench.run.events.
"""

from __future__ import annotations

import platform
import select
import signal
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext, suppress
from dataclasses import dataclass, field, replace
from functools import partial
from types import FrameType
from typing import Any

from rtbench import EXIT_ENV, EXIT_USAGE, __version__, data_dir
from rtbench.analysis.loads import achieved_rate
from rtbench.analysis.scenario_check import deciding_flags, measuring_cpus, scenario_flags
from rtbench.analysis.verdict import judged_status, run_verdict
from rtbench.bundle import INCONCLUSIVE, NOT_STARTED, board_of
from rtbench.util.cpulist import parse_cpulist
from rtbench.kinds import packaged, recorded_kinds, registry_for
from rtbench.preflight import run_preflight
from rtbench.rtprobe.argv import load_args, serial_trace_args
from rtbench.rtprobe.catalogue import ProbeMismatch, target_catalogue
from rtbench.rtprobe.wire.records import (
    ProbeOutput,
    RecordError,
    StartRecord,
    WindowRecord,
    parse_record,
)
from rtbench.run.events import (
    MeasurementDone,
    Notice,
    OnEvent,
    ProbeStarted,
    ProbeWarning,
    RunFinished,
    RunStarted,
    SettleDone,
    StepStarted,
    Tick,
    WindowDone,
    ignore,
)
from rtbench.run.util.owner import LoadDirRegistry, current_owner
from rtbench.run.save import MeasurementNotStored, recovery_bundle, with_retries
from rtbench.store import Store, StoreError
from rtbench.store.ingest import measurement_detail
from rtbench.suites.compat import check_param_values, validate_for_probe
from rtbench.suites.model import LoadSpec, Scenario, Suite, SuiteError, TestSpec
from rtbench.suites.placement import Placement, check_placement, plan_placement
from rtbench.targets.base import (
    ProbeProcess,
    Target,
    TargetError,
    TargetLost,
    TargetUsageError,
    open_target,
)
from rtbench.targets.procstat import (
    IntensitySampler,
    parse_net_dev,
    read_steal,
    received_rate,
)
from rtbench.targets.shell import LOAD_ENDED

# UDP port a host-side net load floods on the target (discard: nothing listens).
HOST_LOAD_PORT = 9
# Time rtprobe may take beyond warm-up + duration before it is considered hung.
HANG_GRACE_S = 60.0
# past its expected length, how long rtprobe may go on writing out the records it queued
# for a slow link (its queue holds 1 MiB: about 18 minutes at 9600 baud)
DRAIN_LIMIT_S = 1200.0
# The same for tests that run a fixed amount of work (ctx, pi, ...): their length is only
# a nominal guess, and a large ctx sweep legitimately runs for minutes.
HANG_GRACE_UNTIMED_S = 900.0
# Priority rtprobe's tests use unless their params say otherwise.
DEFAULT_PRIORITY = 80
# Time rtprobe gets to write its result after SIGINT before it is killed.
INTERRUPT_GRACE_S = 5.0
TICK_S = 0.25


def stored_run_error(exc: BaseException, run_id: int) -> RunError | None:
    """An error that stopped a run after it was stored, as a RunError of exit 3 where it
    would otherwise exit 2 (a suite, target-name or path error): exit 2 means nothing ran
    and nothing was stored (docs/commands.md), and this run is stored with status error.
    None for every other exception (raised as it is)."""
    usage = isinstance(exc, (SuiteError, TargetUsageError, OSError)) or (
        isinstance(exc, RunError) and exc.code == EXIT_USAGE)
    if not usage:
        return None
    text = " ".join(str(exc).split()) or type(exc).__name__
    if isinstance(exc, SuiteError):
        text = f"suite {text}"
    return RunError(f"{text}; run {run_id} is stored with status error", EXIT_ENV)


@dataclass
class RunOutcome:
    """How a run ended."""

    run_id: int
    status: str  # ok | fail | interrupted | error | lost
    exit_code: int
    measurements: int = 0
    messages: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # rtprobe's own, each once


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class StopFlag:
    """Set by SIGINT, SIGTERM or SIGHUP (a closed terminal) while a run is in progress."""

    def __init__(self) -> None:
        self.signal_name: str | None = None

    def __bool__(self) -> bool:
        return self.signal_name is not None

    def handle(self, signum: int, frame: FrameType | None) -> None:
        """Signal handler: remember the first signal."""
        if self.signal_name is None:
            self.signal_name = signal.Signals(signum).name

    @contextmanager
    def installed(self) -> Iterator[StopFlag]:
        """Install the handlers for STOP_SIGNALS, restoring the old ones after."""
        old = {s: signal.signal(s, self.handle) for s in STOP_SIGNALS}
        try:
            yield self
        finally:
            for signum, handler in old.items():
                signal.signal(signum, handler)


# The longest line read from rtprobe: its records are a few KiB (a result with
# thousands of CPUs some MiB); a longer line is refused as it arrives, not kept.
MAX_PROBE_LINE_BYTES = 16 << 20


class LineBuffer:
    """Split a byte stream into lines as data arrives, in time linear in its length.

    The unfinished line is kept as a list of chunks and joined once, when its newline
    arrives (appending to one bytes object would copy it again for every chunk).  A line
    longer than max_line_bytes is not kept: its bytes are dropped as they come, and it is
    returned as an empty line whose number is in `overlong`.
    """

    def __init__(self, max_line_bytes: int = 1 << 62) -> None:
        self._pending: list[bytes] = []
        self._pending_bytes = 0
        self._dropping = False
        self.max_line_bytes = max_line_bytes
        self.overlong: set[int] = set()
        self.lineno = 0

    def _keep(self, data: bytes) -> None:
        """Hold part of the unfinished line, or drop it once the line is too long."""
        if self._dropping or not data:
            return
        self._pending.append(data)
        self._pending_bytes += len(data)
        if self._pending_bytes > self.max_line_bytes:
            self._pending, self._pending_bytes, self._dropping = [], 0, True

    def feed(self, data: bytes) -> list[tuple[int, str]]:
        """Add data; return the complete lines (numbered from 1)."""
        if b"\n" not in data:
            self._keep(data)
            return []
        first, *lines = data.split(b"\n")
        tail = lines.pop()
        self._keep(first)
        head = b"".join(self._pending)
        head_overlong = self._dropping
        self._pending, self._pending_bytes, self._dropping = [], 0, False
        out = []
        for index, raw in enumerate([head, *lines]):
            self.lineno += 1
            if (index == 0 and head_overlong) or len(raw) > self.max_line_bytes:
                self.overlong.add(self.lineno)
                out.append((self.lineno, ""))
                continue
            out.append((self.lineno, raw.decode("utf-8", errors="replace")))
        self._keep(tail)
        return out

    def rest(self) -> str:
        """Text left without a newline (a line cut short by a killed process)."""
        if self._dropping:
            return "(a line too long to keep)"
        return b"".join(self._pending).decode("utf-8", errors="replace")


class Pump:
    """select() over the target processes' output, dispatching it to callbacks."""

    def __init__(self) -> None:
        self._watched: dict[int, tuple[ProbeProcess, Callable[[bytes], None],
                                       Callable[[bytes], None]]] = {}

    def add(self, proc: ProbeProcess, on_stdout: Callable[[bytes], None],
            on_stderr: Callable[[bytes], None]) -> None:
        """Watch a process; the callbacks get each chunk (on_stdout b'' once at EOF)."""
        self._watched[id(proc)] = (proc, on_stdout, on_stderr)

    def watching(self, proc: ProbeProcess) -> bool:
        """True while the process's output has not reached EOF."""
        return id(proc) in self._watched

    def poll(self, timeout_s: float) -> None:
        """Wait up to timeout_s for output and dispatch it.

        TargetLost from a process ends its watch and propagates.
        """
        fds = [fd for proc, _, _ in self._watched.values() for fd in proc.fds()]
        if fds:
            select.select(fds, [], [], max(0.0, timeout_s))
        else:
            time.sleep(max(0.0, timeout_s))
        for key, (proc, on_stdout, on_stderr) in list(self._watched.items()):
            try:
                out, err = proc.read_available()
            except TargetLost:
                self._watched.pop(key, None)
                raise
            if err:
                on_stderr(err)
            if out:
                on_stdout(out)
            if proc.at_eof():
                del self._watched[key]
                on_stdout(b"")

    def drain(self, proc: ProbeProcess, timeout_s: float) -> None:
        """Read a process's output until EOF or timeout_s passes."""
        end = time.monotonic() + timeout_s
        while self.watching(proc) and time.monotonic() < end:
            self.poll(min(TICK_S, end - time.monotonic()))
        self.remove(proc)

    def remove(self, proc: ProbeProcess) -> None:
        """Stop watching a process."""
        self._watched.pop(id(proc), None)


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


@dataclass
class _Measured:
    """What one rtprobe run produced."""

    output: ProbeOutput
    status: str
    returncode: int | None
    messages: list[str]
    reason: str | None = None


def allowed_cpus(sysinfo: dict[str, Any]) -> set[int]:
    """The CPUs rtprobe may use on the target (sysinfo cpus_allowed, else online)."""
    for key in ("cpus_allowed", "cpus_online"):
        text = sysinfo.get(key)
        if isinstance(text, str) and text.strip():
            try:
                return parse_cpulist(text.strip())
            except ValueError:
                continue
    count = sysinfo.get("cpus_configured")
    return set(range(count)) if isinstance(count, int) and count > 0 else {0}


@dataclass(frozen=True)
class FixedArgsTest(TestSpec):
    """A test whose rtprobe arguments are given whole, run like any other test of a suite.

    For a front end that maps another tool's command line onto rtprobe (rtbench
    cyclictest): `args` are what rtprobe gets, and `policy`/`priority` in params say
    what the run-time checks need to know (an RT policy needs RT permission).
    """

    args: tuple[str, ...] = ()

    def probe_args(self, scenario: Scenario, simulate: str | None,
                   policy: str | None = None) -> list[str]:
        """The given arguments (with --simulate for a simulated run)."""
        args = list(self.args)
        if simulate is not None:
            args += ["--simulate", simulate]
        return args

    def policy_use(self) -> str:
        """"rt" when the given arguments ask for fifo or rr, else "none" (nothing to
        replace or check)."""
        return "rt" if self.params.get("policy") in ("fifo", "rr") else "none"


class RunError(Exception):
    """The suite cannot run on this target: one line for the user, with its exit code."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


class Runner:
    """Runs a suite on a target into a store, telling on_event what happens.

    validate() checks the suite against the target before anything is stored; run()
    measures it into the store.

    interrupt_grace_s is how long rtprobe gets to write its result after SIGINT;
    hang_grace_s, when given, replaces the per-test time allowed past the expected length.
    A caller that runs several runners at once (rtbench fleet, one thread per board)
    passes one shared `stop` flag whose signal handlers it installs itself (only the
    main thread can), and `tags` the run is created with; `source` says where a run that
    did not come from a suite file came from (rtbench cyclictest: its argv).
    """

    store: Store

    def __init__(self, target: Target, *, simulate: str | None = None,
                 on_event: OnEvent = ignore, interrupt_grace_s: float = INTERRUPT_GRACE_S,
                 hang_grace_s: float | None = None, policy: str | None = None,
                 stop: StopFlag | None = None, tags: dict[str, str] | None = None,
                 source: dict[str, Any] | None = None, board: str | None = None,
                 accept_undefined: bool = False) -> None:
        self.target = target
        # exit as if every scenario happened as defined (rtbench run --accept-undefined)
        self.accept_undefined = accept_undefined
        self.not_as_defined: list[str] = []  # "scenario: flag", each way one was not
        self.board = board  # the board's name (None: the target's host, bundle.board_of)
        self.simulate = simulate
        self.policy = policy  # "other": every test as SCHED_OTHER (rtbench run --policy)
        self.warnings: list[str] = []  # rtprobe's own warning lines, each once
        self.on_event = on_event
        self.interrupt_grace_s = interrupt_grace_s
        self.hang_grace_s = hang_grace_s
        # a flag of our own installs its signal handlers around run(); a shared one is the
        # caller's to install
        self._own_stop = stop is None
        self.stop = StopFlag() if stop is None else stop
        self.tags = dict(tags or {})
        self.source = dict(source or {})  # where the run came from, when not a suite file
        self.kinds = packaged()  # the suite's test kinds (run())
        self.pump = Pump()
        self._host_target: Target | None = None
        self.statuses: list[str] = []
        self.started: set[tuple[str, str]] = set()  # (scenario, test) that began
        self.scenario_ids: dict[str, int] = {}  # stored scenario rows, by name
        # each scenario's start records: the CPUs its tests measured on
        self.starts: dict[str, list[dict[str, Any]]] = {}
        self.lost = False
        self.lost_why: str | None = None  # the target's words when it was lost, if any
        self.messages: list[str] = []
        self._sysinfo: dict[str, Any] | None = None
        self.run_id = 0
        self.registry: LoadDirRegistry | None = None
        # what the run was created with, for a recovery bundle when the store fails
        self._facts: dict[str, Any] = {}

    def sysinfo(self) -> dict[str, Any]:
        """The target's sysinfo (asked once)."""
        if self._sysinfo is None:
            self._sysinfo = self.target.sysinfo()
        return self._sysinfo

    def validate(self, suite: Suite) -> None:
        """Before anything runs: the target's rtprobe (its `describe --json`) has every test
        kind, option and load kind the suite uses (and --simulate for every test of a
        simulated run, whose value rtprobe accepts), and the CPUs the suite names exist on
        the target.  RunError or SuiteError say what is wrong."""
        try:
            validate_for_probe(suite, target_catalogue(self.target), self.simulate is not None)
        except ProbeMismatch as exc:
            raise RunError(str(exc), exc.exit_code) from None
        check_param_values(suite, self.target)
        if self.simulate is not None:
            # one simulated sample: rtprobe parses SEED[:DIST] the same way for every
            # test, and refuses a bad one with exit 2 before anything runs
            done = self.target.run_probe(["cyclic", "--simulate", self.simulate, "--loops",
                                          "1", "--warmup", "0", "--threads", "1"],
                                         timeout_s=10.0)
            if done.returncode == EXIT_USAGE:
                why = (done.stderr.strip().splitlines() or ["refused by rtprobe"])[-1]
                raise RunError(f"--simulate {self.simulate!r}: "
                               f"{why.removeprefix('rtprobe: ')}", EXIT_USAGE)
        check_placement(suite, allowed_cpus(self.sysinfo()))
        self._check_loads(suite)
        self._check_policy(suite)
        if self.simulate is None:
            self._check_rt_permission(suite)

    def _check_loads(self, suite: Suite) -> None:
        """Refuse, before anything runs, loads this target cannot run: host-side loads
        toward a target without a network address, any load where the target says so."""
        if self.target.name == "local":
            return
        for scenario in suite.scenarios:
            if any(load.on == "host" for load in scenario.loads) \
                    and self.target.address() is None:
                raise RunError(
                    f"scenario {scenario.name!r} of {suite.source} has a host-side load "
                    f"(on = \"host\"), which floods the target's network address, and "
                    f"target {self.target.name} has none: remove that load or measure the "
                    "board over ssh", EXIT_USAGE)
        if any(s.loads for s in suite.scenarios):
            why = self.target.loads_unsupported()
            if why is not None:
                raise RunError(why, EXIT_ENV)

    def _check_policy(self, suite: Suite) -> None:
        """--policy other cannot run a test that needs RT priorities (pi): refuse it."""
        if self.policy is None:
            return
        for test in suite.tests:
            if test.policy_use() == "rt":
                raise RunError(
                    f"--policy {self.policy}: test {test.name!r} ({test.test}) needs "
                    f"SCHED_FIFO or SCHED_RR (priorities are what it measures); remove it "
                    f"from {suite.source} or run without --policy", EXIT_USAGE)

    def _check_rt_permission(self, suite: Suite) -> None:
        """Once, before anything starts or is stored: may this user use the RT priority
        the suite's tests need?  A 10 ms `rtprobe cyclic` asks the kernel (exit 3 if not)."""
        needs_rt = [t for t in suite.tests if t.policy_use() == "rt"
                    or (self.policy is None and t.policy_use() == "any")]
        if not needs_rt:
            return
        priorities = [p for p in (t.params.get("priority", DEFAULT_PRIORITY)
                                  for t in needs_rt)
                      if isinstance(p, int) and not isinstance(p, bool)]
        priority = max(priorities, default=DEFAULT_PRIORITY)
        done = self.target.run_probe(["cyclic", "--duration", "10ms", "--warmup", "0",
                                      "--threads", "1", "--priority", str(priority),
                                      "--no-pmqos"], timeout_s=30.0)
        if done.returncode != EXIT_ENV:
            return
        why = (done.stderr.strip().splitlines() or ["no message"])[-1]
        why = why.removeprefix("rtprobe: ")
        if "not permitted" not in why:
            raise RunError(f"real-time scheduling does not work on target "
                           f"{self.target.name}: {why}", EXIT_ENV)
        raise RunError(
            f"SCHED_FIFO priority {priority} is not permitted for this user, so no test can "
            f"run: run as root, grant CAP_SYS_NICE (setcap cap_sys_nice+ep on rtprobe) or "
            f"an rtprio limit (ulimit -r {priority}; /etc/security/limits.conf), or pass "
            "--policy other to measure without real-time scheduling (the results are then "
            "not real-time)", EXIT_ENV)

    def run(self, suite: Suite, store: Store, command_line: list[str]) -> RunOutcome:
        """Run every scenario x test of suite into store; return the outcome (never raises
        on SIGINT)."""
        self.store = store
        sysinfo = self.sysinfo()
        facts = run_preflight(sysinfo, read_steal(self.target.read_file))
        allowed = allowed_cpus(sysinfo)
        has_loads = any(s.loads for s in suite.scenarios)
        owner = current_owner()
        # the owner lets a later rtbench tell that this process is gone (run abandoned)
        versions = {"rtbench": __version__, "rtprobe": self.target.probe_version(),
                    "python": platform.python_version(), "owner": owner}
        raw_uname = sysinfo.get("uname")
        uname: dict[str, Any] = raw_uname if isinstance(raw_uname, dict) else {}
        self._facts = dict(
            suite=suite.name, suite_source=suite.text or suite.source, scale=suite.scale,
            hostname=self.target.hostname(), target=self.target.name, sysinfo=sysinfo,
            preflight=facts, tool_versions=versions, command_line=list(command_line),
            simulated=self.simulate is not None, tags=dict(self.tags),
            board=self.board or board_of(self.target.name, self.target.hostname()))
        # the traits of kinds the packaged copy lacks (a new probe test), for every later
        # reader of the run (rtbench/kinds)
        described = {t.test: t.kind.host for t in suite.tests if t.kind.host.name}
        self.kinds = registry_for(described)
        recorded = recorded_kinds(described.values())
        if self.source or recorded:
            self._facts["source"] = {**(self.source or {"tool": "rtbench"}),
                                     **({"kinds": recorded} if recorded else {})}
        handlers: AbstractContextManager[object] = \
            self.stop.installed() if self._own_stop else nullcontext()
        with handlers:
            run_id = with_retries(lambda: self.store.create_run(**self._facts))
            self.run_id = run_id
            self._facts.update(kernel=str(uname.get("release") or ""),
                               arch=str(uname.get("machine") or ""))
            self.registry = LoadDirRegistry(data_dir() / "loads", owner)
            self.on_event(RunStarted(run_id, suite))
            try:
                for scenario in suite.scenarios:
                    if self.stop or self.lost:
                        break
                    placement = plan_placement(scenario, allowed, has_loads)
                    self._run_scenario(run_id, suite, scenario, placement)
            except BaseException as exc:
                with suppress(StoreError):
                    self.store.finish_run(run_id, "interrupted" if self.stop else "error")
                stored = None if self.stop else stored_run_error(exc, run_id)
                if stored is not None:
                    raise stored from exc
                raise
            finally:
                self.registry.close()
                self._close_host()
            if self.lost:
                never = self._store_never_started(run_id, suite)
                if never:
                    self.messages.append("never started (the connection to the target "
                                         "was lost first): " + ", ".join(never))
            status, code = run_verdict(self.statuses, interrupted=bool(self.stop),
                                       lost=self.lost,
                                       not_as_defined=bool(self.not_as_defined),
                                       accept_undefined=self.accept_undefined)
            why = self.lost_why if self.lost else None
            with_retries(lambda: self.store.finish_run(run_id, status, reason=why))
            self._check_regressions(run_id)
        self.on_event(RunFinished(run_id, status, code))
        return RunOutcome(run_id, status, code, len(self.statuses), self.messages,
                          self.warnings)

    def _check_regressions(self, run_id: int) -> None:
        """The regression board's check of the stored run against its board's baseline
        (docs/server.md); a database failure there is a warning, the run stays stored."""
        from rtbench.regress.board import check_stored_run

        try:
            check_stored_run(self.store, run_id)
        except StoreError as exc:
            self.warnings.append(f"run {run_id} was not checked for regressions: {exc}")

    def _store_never_started(self, run_id: int, suite: Suite) -> list[str]:
        """Store each measurement the lost connection kept from starting as a row with
        status `not started` and the reason (scenario rows added where missing); their
        'scenario / test' labels."""
        reason = (f"never started: the connection to target {self.target.name} was "
                  "lost before it could start")
        never: list[str] = []
        for scenario in suite.scenarios:
            for test in suite.tests:
                if (scenario.name, test.name) in self.started:
                    continue
                never.append(f"{scenario.name} / {test.name}")
                with suppress(StoreError):
                    self._store_not_started(run_id, scenario, test, reason)
        return never

    def _store_inconclusive(self, run_id: int, scenario: Scenario,
                            tests: Sequence[TestSpec], reason: str) -> None:
        """The tests of a scenario the board cannot make, each stored as an
        `inconclusive` row (no samples) with the reason, and said once."""
        self.messages.append(f"{scenario.name}: {reason}; its tests are inconclusive")
        self.on_event(Notice(f"{scenario.name}: {reason}; its tests are stored as "
                             "inconclusive"))
        for test in tests:
            self.started.add((scenario.name, test.name))
            self.statuses.append(INCONCLUSIVE)
            self._store_not_started(run_id, scenario, test, reason, INCONCLUSIVE)

    def _store_not_started(self, run_id: int, scenario: Scenario, test: TestSpec,
                           reason: str, status: str = NOT_STARTED) -> None:
        """One measurement row without samples (`not started`, or `status`) under its
        scenario's row."""
        scenario_id = self.scenario_ids.get(scenario.name)
        if scenario_id is None:
            scenario_id = with_retries(lambda: self.store.add_scenario(
                run_id, name=scenario.name, loads=[ld.describe() for ld in scenario.loads],
                load_cpus=scenario.load_cpus, measure_cpus=scenario.measure_cpus))
            self.scenario_ids[scenario.name] = scenario_id
        detail = measurement_detail(
            ProbeOutput(), name=test.name, test=test.test, params=dict(test.params),
            command=[], status=status, thresholds_ns=list(test.thresholds_ns))
        detail.reason = reason
        detail.simulated = self.simulate is not None
        with_retries(lambda: self.store.add_measurement_detail(scenario_id, detail))

    def _on_probe_stderr(self, line: str) -> None:
        """Pass rtprobe's own warnings on (each distinct one once per run)."""
        text = "".join(ch for ch in line.strip() if ch.isprintable())
        if "warning:" not in text or text in self.warnings:
            return
        self.warnings.append(text)
        self.on_event(ProbeWarning(text))

    def _host(self) -> Target:
        """This machine as a target, for loads placed on the host (opened once)."""
        if self._host_target is None:
            if self.target.name == "local":
                return self.target
            host = open_target("local")
            host.open()
            self._host_target = host
        return self._host_target

    def _close_host(self) -> None:
        """Close the host side if a host load opened it."""
        if self._host_target is not None:
            self._host_target.close()
            self._host_target = None

    def _wait(self, seconds: float, sampler: IntensitySampler) -> None:
        """Wait (pumping load output and sampling /proc) unless stopped."""
        end = time.monotonic() + seconds
        next_sample = time.monotonic() + 1.0
        while not self.stop and time.monotonic() < end:
            self.pump.poll(min(TICK_S, end - time.monotonic()))
            if time.monotonic() >= next_sample:
                sampler.sample()
                next_sample += 1.0
            self.on_event(Tick())

    def _lose(self, where: str, why: BaseException | str | None = None) -> None:
        """The connection to the target broke (why: the target's words, or the exception
        that carried them): note it; the run stops after storing."""
        if not self.lost:
            self.lost = True
            said = str(why) if why is not None else ""
            # the target's own words name it already ("serial://...: the board stopped ...")
            said = said.removeprefix(f"{self.target.name}: ")
            self.lost_why = said or None
            detail = f" ({said})" if said else ""
            self.messages.append(f"{where}: connection to target {self.target.name} "
                                 f"lost{detail}")

    def _run_scenario(self, run_id: int, suite: Suite, scenario: Scenario,
                      placement: Placement) -> None:
        """Start the loads, run every test, stop the loads, store the intensity.

        The effective placement is stored with the scenario before anything starts.
        """
        scenario = replace(scenario, load_cpus=placement.load_cpus,
                           measure_cpus=placement.measure_cpus)
        scenario_id = self.store.add_scenario(
            run_id, name=scenario.name, loads=[ld.describe() for ld in scenario.loads],
            load_cpus=scenario.load_cpus, measure_cpus=scenario.measure_cpus)
        self.scenario_ids[scenario.name] = scenario_id
        self.store.set_scenario_intensity(scenario_id, {"placement": placement.describe()})
        loads = LoadGroup(self.target, self.pump, self.registry, self._host)
        if scenario.loads:
            grace = self.hang_grace_s if self.hang_grace_s is not None else HANG_GRACE_S
            self.target.expect_loads_for(scenario.settle_ns / 1e9 + sum(
                t.expected_seconds() + grace for t in suite.tests))
        sampler = IntensitySampler(self.target.read_file, time.monotonic,
                                   read_many=self.target.read_files)
        try:
            loads.start(scenario.loads, scenario.load_cpus)
            sampler.sample()
            if scenario.settle_ns:
                label = f"{scenario.name}: loads settling"
                self.on_event(StepStarted(label, scenario.settle_ns / 1e9, False))
                self._wait(scenario.settle_ns / 1e9, sampler)
                self.on_event(SettleDone(label))
            for index, test in enumerate(suite.tests):
                if self.stop or self.lost:
                    break
                if loads.lost():
                    self._lose(scenario.name)
                    break
                failures = loads.failures()
                inapplicable = loads.not_applicable() if failures else None
                if inapplicable is not None:
                    # the board cannot make this scenario: each test left says so
                    self._store_inconclusive(run_id, scenario, suite.tests[index:],
                                             inapplicable)
                    break
                if failures:
                    # the scenario's stress is gone: its remaining tests would lie
                    self.messages += failures
                    self.statuses.append("error")
                    for failure in failures:
                        self.on_event(Notice(f"{scenario.name}: {failure}; its remaining "
                                             "tests are skipped"))
                    break
                self._measure(scenario_id, scenario, test, sampler, loads)
        except TargetLost as exc:
            self._lose(scenario.name, exc)
        finally:
            try:
                sampler.sample()
            except TargetLost as exc:
                self._lose(scenario.name, exc)
            loads.stop()
            intensity = sampler.intensity()
            intensity["placement"] = placement.describe()
            intensity["loads"] = loads.summary()
            intensity["measuring_cpus"] = measuring_cpus(self.starts.get(scenario.name, []),
                                                         self.kinds)
            intensity["not_as_defined"] = scenario_flags(
                intensity["loads"], intensity, scenario.measure_cpus)
            self.not_as_defined += [
                f"{scenario.name}: {flag}" for flag in deciding_flags(
                    intensity["loads"], intensity, scenario.measure_cpus,
                    self.simulate is not None)]
            with suppress(StoreError):
                with_retries(lambda: self.store.set_scenario_intensity(scenario_id,
                                                                       intensity))

    def _measure(self, scenario_id: int, scenario: Scenario, test: TestSpec,
                 sampler: IntensitySampler, loads: LoadGroup | None = None) -> None:
        """Run one test in scenario and store it.

        A load that ended while the test ran makes the test an error (it did not run
        under its scenario), with the load's last message as the reason.
        """
        args = test.probe_args(scenario, self.simulate, self.policy)
        baud = getattr(self.target, "baud", None)
        args += serial_trace_args(test.params, baud if isinstance(baud, int) else None)
        command = [self.target.probe_path(), *args]
        expected = test.expected_seconds()
        step = f"{scenario.name} / {test.name}"
        self.started.add((scenario.name, test.name))
        if test.runs() > 1:  # wakeup: warm-up + duration once per mechanism
            step += f" ({test.runs()} mechanisms, ~{expected:.0f} s)"
        self.on_event(StepStarted(step, expected, True))
        grace = self.hang_grace_s
        if grace is None:
            grace = HANG_GRACE_S if test.traits().timed else HANG_GRACE_UNTIMED_S
        try:
            measured = self._run_probe(args, expected, sampler, test.affinity(scenario),
                                       grace)
        except TargetLost:
            # the target was lost while rtprobe was being started: this test never
            # began, and is stored with the ones after it as not started
            self.started.discard((scenario.name, test.name))
            raise
        load_failures = loads.failures() if loads is not None else []
        inapplicable = loads.not_applicable() if loads is not None and load_failures \
            else None
        if inapplicable is not None and measured.status not in ("interrupted", "lost"):
            # measured without its scenario's load, which the board cannot run
            measured.status, measured.reason = INCONCLUSIVE, inapplicable
            measured.messages.append(inapplicable)
        elif load_failures and measured.status not in ("interrupted", "lost"):
            measured.status = "error"
            measured.reason = "; ".join(load_failures)
            measured.messages += load_failures
        params = dict(measured.output.start.params) if measured.output.start \
            else dict(test.params)
        self._judge_evidence(measured, test)
        if measured.output.start is not None:
            self.starts.setdefault(scenario.name, []).append(measured.output.start.raw)
        self._store_measurement(scenario_id, scenario.name, measured, name=test.name,
                                test=test.test, params=params, command=command,
                                thresholds_ns=list(test.thresholds_ns))
        self.statuses.append(measured.status)
        self.messages += [f"{scenario.name} / {test.name}: {m}" for m in measured.messages]
        self.on_event(MeasurementDone(scenario.name, test.name, test.test, measured.status,
                                      measured.output, list(measured.messages)))

    def _judge_evidence(self, measured: _Measured, test: TestSpec) -> None:
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
            measured.reason = f"rtprobe refused it on target {self.target.name}: {said}"

    def _store_measurement(self, scenario_id: int, scenario_name: str, measured: _Measured,
                           **fields: Any) -> None:
        """Store a measurement, waiting out a locked database.

        A result the store cannot take (totals beyond 64 bits) leaves the measurement
        stored from its windows alone, as an error with the reason.  When the database
        refuses for good, MeasurementNotStored carries the run so far and this
        measurement (the CLI keeps them in a recovery file).
        """
        output = measured.output
        for attempt in range(3):
            detail = measurement_detail(output, status=measured.status, **fields)
            if measured.reason is not None:
                detail.reason = measured.reason
            try:
                with_retries(lambda d=detail: self.store.add_measurement_detail(  # type: ignore[misc]
                    scenario_id, d))
                return
            except StoreError as exc:
                try:
                    stored = self.store.get_run(self.run_id)
                except StoreError:
                    stored = None
                raise MeasurementNotStored(str(exc), recovery_bundle(
                    stored, dict(self._facts), self.run_id, scenario_id, scenario_name,
                    detail)) from None
            except (OverflowError, ValueError, KeyError, TypeError) as exc:
                # keep what can be kept: the windows, then only the start
                output = ProbeOutput(start=output.start, windows=output.windows,
                                     spikes=output.spikes) if attempt == 0 \
                    else ProbeOutput(start=output.start)
                measured.status = "error"
                measured.reason = f"rtprobe's output could not be stored ({exc})"

    def _run_probe(self, args: list[str], expected_s: float, sampler: IntensitySampler,
                   cpus: str | None = None, grace_s: float = HANG_GRACE_S) -> _Measured:
        """Run rtprobe (pinned to cpus if given), reporting its records as events.

        Handles SIGINT, hangs and a lost connection.
        """
        proc = self.target.start_probe(args, cpus)
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
                    self.on_event(ProbeStarted(record))
                elif isinstance(record, WindowRecord):
                    self.on_event(WindowDone(record))

        def on_stderr(data: bytes) -> None:
            stderr.extend(data)
            del stderr[:-4096]
            for _, line in stderr_lines.feed(data):
                self._on_probe_stderr(line)

        self.pump.add(proc, on_stdout, on_stderr)
        deadline = time.monotonic() + expected_s + grace_s
        next_sample = time.monotonic() + 1.0
        interrupted_at: float | None = None
        killed_why: str | None = None
        lost = False
        lost_exc: TargetLost | None = None  # what the target said when it was lost
        try:
            while self.pump.watching(proc):
                try:
                    self.pump.poll(TICK_S)
                except TargetLost as exc:
                    lost, lost_exc = True, exc
                if lost or proc.lost:
                    lost = True
                    messages.append(f"connection to target {self.target.name} lost; "
                                    "the finished windows are kept")
                    break
                now = time.monotonic()
                if now >= next_sample:
                    try:
                        sampler.sample()
                    except TargetLost as exc:
                        # the /proc read found the connection gone: keep what came
                        lost, lost_exc = True, exc
                        messages.append(f"connection to target {self.target.name} lost; "
                                        "the finished windows are kept")
                        break
                    next_sample += 1.0
                if self.stop and interrupted_at is None:
                    proc.interrupt()
                    interrupted_at = now
                if interrupted_at is not None and now - interrupted_at > self.interrupt_grace_s:
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
                self.on_event(Tick())
        finally:
            self.pump.remove(proc)
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
            messages.append(f"connection to target {self.target.name} lost; "
                            "the finished windows are kept")
        if lost:
            self._lose("rtprobe", lost_exc or proc.lost_why)
            status = output.result.status if output.result is not None else "lost"
            return _Measured(output, status, returncode, messages)
        status = output.result.status if output.result is not None else \
            ("interrupted" if self.stop else "error")
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
        return _Measured(output, status, returncode, messages, reason)
