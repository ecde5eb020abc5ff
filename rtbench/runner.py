"""Run a suite on a target: scenarios x tests, live progress, every measurement stored.

For each scenario the runner starts its loads, lets them settle, then runs rtprobe once per
test, reading its NDJSON as it arrives, and stores the measurement as soon as it ends.
While a scenario runs it samples /proc once a second and stores the achieved intensity.
SIGINT and SIGTERM are forwarded to rtprobe as SIGINT (it then writes its result with
status 'interrupted'); loads are stopped, the partial measurement is stored and the run is
finished as 'interrupted' (exit 4).  Every child runs in its own process group with
PR_SET_PDEATHSIG, so none outlives a killed rtbench.
"""

from __future__ import annotations

import contextlib
import os
import platform
import select
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import FrameType
from typing import Any, Protocol

from rich.console import Console, Group
from rich.live import Live
from rich.table import Table
from rich.text import Text

from rtbench import (
    EXIT_ENV,
    EXIT_FAIL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    __version__,
    data_dir,
)
from rtbench.owner import LoadDirRegistry, current_owner
from rtbench.preflight import run_preflight
from rtbench.probe import probe_version
from rtbench.records import (
    ProbeOutput,
    RecordError,
    ResultRecord,
    StartRecord,
    WindowRecord,
    parse_record,
)
from rtbench.report.text import for_rich, for_terminal
from rtbench.resultdata import headline
from rtbench.runsave import (
    measurement_detail,
    recovery_bundle,
    with_retries,
    write_recovery_file,
)
from rtbench.store import Store, StoreError
from rtbench.suites import (
    LoadSpec,
    Placement,
    Scenario,
    Suite,
    TestSpec,
    params_to_args,
    plan_placement,
)
from rtbench.targets.local import parse_cpulist
from rtbench.targets.procstat import IntensitySampler, read_steal

# Time rtprobe may take beyond warm-up + duration before it is considered hung.
HANG_GRACE_S = 60.0
# The same for tests that run a fixed amount of work (ctx, pi, ...): their length is only
# a nominal guess, and a large ctx sweep legitimately runs for minutes.
HANG_GRACE_UNTIMED_S = 900.0
# Time rtprobe gets to write its result after SIGINT before it is killed.
INTERRUPT_GRACE_S = 5.0
TICK_S = 0.25


class Target(Protocol):
    """What the runner needs from a target (see rtbench.targets.LocalTarget)."""

    name: str
    probe: Path

    def hostname(self) -> str: ...
    def read_file(self, path: str) -> str: ...
    def sysinfo(self) -> dict[str, Any]: ...
    def spawn_probe(self, args: list[str],
                    cpus: str | None = None) -> subprocess.Popen[bytes]: ...
    def spawn_load(self, command: str, cpus: str | None = None) -> subprocess.Popen[bytes]: ...
    def stop(self, proc: subprocess.Popen[bytes], grace_s: float = 2.0) -> None: ...
    def interrupt(self, proc: subprocess.Popen[bytes]) -> None: ...


@dataclass
class RunOutcome:
    """How a run ended."""

    run_id: int
    status: str  # ok | fail | interrupted | error
    exit_code: int
    measurements: int = 0
    messages: list[str] = field(default_factory=list)


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class StopFlag:
    """Set by SIGINT, SIGTERM or SIGHUP while a run is in progress."""

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


class LineBuffer:
    """Split a byte stream into lines as data arrives, in time linear in its length.

    The unfinished line is kept as a list of chunks and joined once, when its newline
    arrives (appending to one bytes object would copy it again for every chunk).
    """

    def __init__(self) -> None:
        self._pending: list[bytes] = []
        self.lineno = 0

    def feed(self, data: bytes) -> list[tuple[int, str]]:
        """Add data; return the complete lines (numbered from 1)."""
        if b"\n" not in data:
            if data:
                self._pending.append(data)
            return []
        first, *lines = data.split(b"\n")
        tail = lines.pop()
        lines.insert(0, b"".join([*self._pending, first]))
        self._pending = [tail] if tail else []
        out = []
        for raw in lines:
            self.lineno += 1
            out.append((self.lineno, raw.decode("utf-8", errors="replace")))
        return out

    def rest(self) -> str:
        """Text left without a newline (a line cut short by a killed process)."""
        return b"".join(self._pending).decode("utf-8", errors="replace")


class Pump:
    """select() over children's pipes, dispatching data to callbacks."""

    def __init__(self) -> None:
        self._readers: dict[int, tuple[Any, Callable[[bytes], None]]] = {}

    def add(self, stream: Any, callback: Callable[[bytes], None]) -> None:
        """Watch a pipe; callback gets each chunk (b'' once at EOF)."""
        os.set_blocking(stream.fileno(), False)
        self._readers[stream.fileno()] = (stream, callback)

    def watching(self, stream: Any) -> bool:
        """True while the pipe has not reached EOF."""
        return stream.fileno() in self._readers if not stream.closed else False

    def poll(self, timeout_s: float) -> None:
        """Wait up to timeout_s for data and dispatch it."""
        if not self._readers:
            time.sleep(max(0.0, timeout_s))
            return
        ready, _, _ = select.select(list(self._readers), [], [], max(0.0, timeout_s))
        for fd in ready:
            stream, callback = self._readers[fd]
            try:
                data = os.read(fd, 65536)
            except BlockingIOError:
                continue
            if not data:
                del self._readers[fd]
                stream.close()
            callback(data)

    def drain(self, stream: Any, timeout_s: float) -> None:
        """Read a pipe until EOF or timeout_s passes."""
        end = time.monotonic() + timeout_s
        while self.watching(stream) and time.monotonic() < end:
            self.poll(min(TICK_S, end - time.monotonic()))
        if self.watching(stream):
            self.remove(stream)

    def remove(self, stream: Any) -> None:
        """Stop watching and close a pipe."""
        if not stream.closed:
            self._readers.pop(stream.fileno(), None)
            stream.close()


@dataclass
class _Load:
    """One running load instance."""

    spec: LoadSpec
    proc: subprocess.Popen[bytes]
    cpus: str | None
    output: ProbeOutput = field(default_factory=ProbeOutput)
    lines: LineBuffer = field(default_factory=LineBuffer)
    errors: list[str] = field(default_factory=list)
    work_dir: str | None = None


class LoadGroup:
    """The loads of one scenario: started together, watched, stopped on every path."""

    def __init__(self, target: Target, pump: Pump,
                 registry: LoadDirRegistry | None = None) -> None:
        self.target = target
        self.pump = pump
        self.loads: list[_Load] = []
        # the io loads' work directories, so that a killed rtbench's are found later
        self.registry = registry

    def start(self, specs: tuple[LoadSpec, ...], load_cpus: str | None = None) -> None:
        """Start every instance of every load; a load without its own `cpus` gets load_cpus."""
        for spec in specs:
            cpus = spec.cpus if spec.cpus is not None else load_cpus
            for _ in range(spec.instances):
                if spec.command is not None:
                    proc = self.target.spawn_load(spec.command, cpus)
                    self.loads.append(_Load(spec, proc, cpus))
                else:
                    self._start_builtin(spec, cpus)

    def _start_builtin(self, spec: LoadSpec, cpus: str | None) -> None:
        """Start `rtprobe load KIND --rate R` and read its rate records."""
        rate = spec.rate if isinstance(spec.rate, str) else f"{spec.rate:g}"
        args = ["load", str(spec.kind), "--rate", rate]
        if cpus is not None:
            args += ["--cpus", cpus]
        args += params_to_args(spec.options)
        proc = self.target.spawn_probe(args)
        load = _Load(spec, proc, cpus)
        self.loads.append(load)
        assert proc.stdout is not None and proc.stderr is not None
        self.pump.add(proc.stdout, lambda data: self._on_data(load, data))
        self.pump.add(proc.stderr, lambda data: self._on_stderr(load, data))

    def _on_data(self, load: _Load, data: bytes) -> None:
        """Parse rate and result records of a built-in load."""
        for lineno, line in load.lines.feed(data):
            if not line.strip():
                continue
            try:
                record = parse_record(line, lineno)
            except RecordError as exc:
                load.errors.append(f"rtprobe load {load.spec.kind}: {exc}")
                continue
            load.output.add(record)
            if isinstance(record, StartRecord):
                work_dir = record.params.get("work_dir")
                if isinstance(work_dir, str) and self.registry is not None:
                    load.work_dir = work_dir
                    self.registry.add(work_dir)

    @staticmethod
    def _on_stderr(load: _Load, data: bytes) -> None:
        """Keep the last error line of a built-in load."""
        text = data.decode("utf-8", errors="replace").strip()
        if text:
            load.errors.append(text.splitlines()[-1])

    def failures(self) -> list[str]:
        """Built-in loads that ended by themselves (external ones are restarted)."""
        out = []
        for load in self.loads:
            if load.spec.kind is not None and load.proc.poll() is not None:
                why = load.errors[-1] if load.errors else "no message"
                out.append(f"load {load.spec.kind} exited ({load.proc.returncode}): {why}")
        return out

    def stop(self) -> None:
        """Stop every load: built-in ones get SIGINT first so they write their result."""
        for load in self.loads:
            if load.spec.kind is not None:
                self.target.interrupt(load.proc)
        for load in self.loads:
            if load.spec.kind is not None and load.proc.stdout is not None:
                self.pump.drain(load.proc.stdout, 3.0)
            self.target.stop(load.proc)
            for stream in (load.proc.stdout, load.proc.stderr):
                if stream is not None:
                    self.pump.remove(stream)
            if load.work_dir is not None and self.registry is not None:
                # a load killed (or dead) before its clean-up leaves its directory
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
                rates = [r.achieved for r in load.output.rates]
                result = load.output.result
                achieved = result.raw.get("achieved") if result else None
                if achieved is None and rates:
                    achieved = sum(rates) / len(rates)
                entry["target"] = load.spec.rate
                entry["achieved"] = achieved
                unit = result.raw.get("unit") if result else None
                if unit is None and load.output.rates:
                    unit = load.output.rates[-1].unit
                entry["unit"] = unit
                entry["rate_samples"] = len(rates)
                if load.errors:
                    entry["errors"] = load.errors[-3:]
            out.append(entry)
        return out


@dataclass
class _SeriesProgress:
    """Running per-series figures for the live display."""

    label: str
    windows: int = 0
    last: WindowRecord | None = None
    min_ns: int | None = None
    max_ns: int | None = None
    sum_ns: int = 0
    count: int = 0
    overruns: int = 0


def _us(ns: float | None) -> str:
    """Nanoseconds as microseconds for display."""
    return "-" if ns is None else f"{ns / 1000:.1f}"


class Progress:
    """Live progress: current step, per-series min/avg/max, suite ETA."""

    def __init__(self, console: Console, suite: Suite) -> None:
        self.console = console
        self.suite = suite
        self.total = len(suite.scenarios) * len(suite.tests)
        self.done = 0
        self.remaining_s = suite.estimated_seconds()
        self.step = ""
        self.step_end = 0.0
        self.step_estimate = 0.0
        self.series: dict[int, _SeriesProgress] = {}
        self.live: Live | None = None

    def __enter__(self) -> Progress:
        if self.console.is_terminal:
            self.live = Live(self.render(), console=self.console, auto_refresh=False,
                             transient=True)
            self.live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.live is not None:
            self.live.__exit__(None, None, None)
            self.live = None

    def begin(self, step: str, expected_s: float) -> None:
        """A new measurement (or settle phase) starts."""
        self.step = step
        self.step_estimate = expected_s
        self.step_end = time.monotonic() + expected_s
        self.series = {}
        self.refresh()

    def end(self, line: str | None) -> None:
        """The current step ended; line (if any) is printed above the live display."""
        self.remaining_s = max(0.0, self.remaining_s - self.step_estimate)
        self.step_estimate = 0.0
        if line is not None:
            self.done += 1
            self.console.print(line, highlight=False)
        self.refresh()

    def on_start(self, record: StartRecord) -> None:
        """Learn the series labels."""
        for entry in record.series:
            index = int(entry.get("index", len(self.series)))
            self.series[index] = _SeriesProgress(str(entry.get("label", index)))

    def on_window(self, window: WindowRecord) -> None:
        """Fold a window into the per-series figures."""
        sp = self.series.setdefault(window.series, _SeriesProgress(str(window.series)))
        sp.windows += 1
        sp.last = window
        if window.warmup or window.count == 0:
            return
        sp.count += window.count
        sp.sum_ns += window.sum_ns
        sp.overruns += window.overruns
        if window.min_ns is not None:
            sp.min_ns = window.min_ns if sp.min_ns is None else min(sp.min_ns, window.min_ns)
        if window.max_ns is not None:
            sp.max_ns = window.max_ns if sp.max_ns is None else max(sp.max_ns, window.max_ns)

    def eta_s(self) -> float:
        """Seconds left in the suite (estimate)."""
        current = max(0.0, self.step_end - time.monotonic())
        return self.remaining_s - self.step_estimate + current

    def render(self) -> Group:
        """The live display."""
        eta = int(self.eta_s())
        head = Text(for_terminal(f"{self.suite.name}: {self.step}   ")
                    + f"[{self.done}/{self.total} done, ETA {eta // 60}:{eta % 60:02d}]")
        table = Table(box=None, padding=(0, 1))
        for column in ("series", "windows", "last min", "last avg", "last max",
                       "min us", "avg us", "max us", "overruns"):
            table.add_column(column, justify="right")
        for sp in self.series.values():
            last = sp.last
            last_avg = last.sum_ns / last.count if last and last.count else None
            table.add_row(
                for_rich(sp.label), str(sp.windows),
                _us(last.min_ns if last else None), _us(last_avg),
                _us(last.max_ns if last else None),
                _us(sp.min_ns), _us(sp.sum_ns / sp.count if sp.count else None),
                _us(sp.max_ns), str(sp.overruns))
        return Group(head, table)

    def refresh(self) -> None:
        """Redraw the live display (terminal only)."""
        if self.live is not None:
            self.live.update(self.render(), refresh=True)


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


class Runner:
    """Runs a validated suite on a target into a store."""

    def __init__(self, target: Target, store: Store, console: Console, *,
                 simulate: str | None = None) -> None:
        self.target = target
        self.store = store
        self.console = console
        self.simulate = simulate
        self.stop = StopFlag()
        self.pump = Pump()
        self.statuses: list[str] = []
        self.usage_error = False
        self.messages: list[str] = []
        self.run_id = 0
        self.registry: LoadDirRegistry | None = None
        # what the run was created with, for a recovery file when the store fails
        self._facts: dict[str, Any] = {}

    def run(self, suite: Suite, command_line: list[str]) -> RunOutcome:
        """Run every scenario x test of suite; return the outcome (never raises on SIGINT)."""
        sysinfo = self.target.sysinfo()
        steal = read_steal(self.target.read_file) if self.target.name == "local" else None
        facts = run_preflight(sysinfo, steal)
        allowed = allowed_cpus(sysinfo)
        has_loads = any(s.loads for s in suite.scenarios)
        owner = current_owner()
        # the owner lets a later rtbench tell that this process is gone (run abandoned)
        versions = {"rtbench": __version__, "rtprobe": probe_version(self.target.probe),
                    "python": platform.python_version(), "owner": owner}
        raw_uname = sysinfo.get("uname")
        uname: dict[str, Any] = raw_uname if isinstance(raw_uname, dict) else {}
        self._facts = dict(
            suite=suite.name, suite_source=suite.text or suite.source, scale=suite.scale,
            hostname=self.target.hostname(), target=self.target.name, sysinfo=sysinfo,
            preflight=facts, tool_versions=versions, command_line=list(command_line),
            simulated=self.simulate is not None)
        with self.stop.installed():
            run_id = with_retries(lambda: self.store.create_run(**self._facts))
            self.run_id = run_id
            self._facts.update(kernel=str(uname.get("release") or ""),
                               arch=str(uname.get("machine") or ""))
            self.registry = LoadDirRegistry(data_dir() / "loads", owner)
            try:
                with Progress(self.console, suite) as progress:
                    for scenario in suite.scenarios:
                        if self.stop:
                            break
                        placement = plan_placement(scenario, allowed, has_loads)
                        self._run_scenario(run_id, suite, scenario, placement, progress)
            except BaseException:
                with contextlib.suppress(StoreError):
                    self.store.finish_run(run_id, "interrupted" if self.stop else "error")
                raise
            finally:
                self.registry.close()
            status, code = self._verdict()
            with_retries(lambda: self.store.finish_run(run_id, status))
        return RunOutcome(run_id, status, code, len(self.statuses), self.messages)

    def _verdict(self) -> tuple[str, int]:
        """The run's status and exit code from the measurements' statuses."""
        if self.stop:
            return "interrupted", EXIT_INTERRUPTED
        if "error" in self.statuses:
            return "error", EXIT_USAGE if self.usage_error else EXIT_ENV
        if "fail" in self.statuses or "break" in self.statuses:
            return "fail", EXIT_FAIL
        return "ok", EXIT_OK

    def _wait(self, seconds: float, sampler: IntensitySampler) -> None:
        """Wait (pumping load output and sampling /proc) unless stopped."""
        end = time.monotonic() + seconds
        next_sample = time.monotonic() + 1.0
        while not self.stop and time.monotonic() < end:
            self.pump.poll(min(TICK_S, end - time.monotonic()))
            if time.monotonic() >= next_sample:
                sampler.sample()
                next_sample += 1.0

    def _run_scenario(self, run_id: int, suite: Suite, scenario: Scenario,
                      placement: Placement, progress: Progress) -> None:
        """Start the loads, run every test, stop the loads, store the intensity.

        The effective placement is stored with the scenario before anything starts.
        """
        scenario = replace(scenario, load_cpus=placement.load_cpus,
                           measure_cpus=placement.measure_cpus)
        scenario_id = self.store.add_scenario(
            run_id, name=scenario.name, loads=[ld.describe() for ld in scenario.loads],
            load_cpus=scenario.load_cpus, measure_cpus=scenario.measure_cpus)
        self.store.set_scenario_intensity(scenario_id, {"placement": placement.describe()})
        loads = LoadGroup(self.target, self.pump, self.registry)
        sampler = IntensitySampler(self.target.read_file, time.monotonic)
        try:
            loads.start(scenario.loads, scenario.load_cpus)
            sampler.sample()
            if scenario.settle_ns:
                progress.begin(f"{scenario.name}: loads settling", scenario.settle_ns / 1e9)
                self._wait(scenario.settle_ns / 1e9, sampler)
                progress.end(None)
            for test in suite.tests:
                if self.stop:
                    break
                failures = loads.failures()
                if failures:
                    # the scenario's stress is gone: its remaining tests would lie
                    self.messages += failures
                    self.statuses.append("error")
                    for failure in failures:
                        self.console.print(f"  [yellow]{for_rich(scenario.name)}: "
                                           f"{for_rich(failure)}; its remaining tests "
                                           "are skipped[/yellow]", highlight=False)
                    break
                self._measure(scenario_id, scenario, test, sampler, progress, loads)
        finally:
            sampler.sample()
            loads.stop()
            intensity = sampler.intensity()
            intensity["placement"] = placement.describe()
            intensity["loads"] = loads.summary()
            with contextlib.suppress(StoreError):
                with_retries(lambda: self.store.set_scenario_intensity(scenario_id,
                                                                       intensity))

    def _measure(self, scenario_id: int, scenario: Scenario, test: TestSpec,
                 sampler: IntensitySampler, progress: Progress,
                 loads: LoadGroup | None = None) -> None:
        """Run one test in scenario and store it.

        A load that ended while the test ran makes the test an error (it did not run
        under its scenario), with the load's last message as the reason.
        """
        args = test.probe_args(scenario, self.simulate)
        command = [str(self.target.probe), *args]
        expected = test.expected_seconds()
        progress.begin(f"{scenario.name} / {test.name}", expected)
        grace = HANG_GRACE_S if test.traits().timed else HANG_GRACE_UNTIMED_S
        measured = self._run_probe(args, expected, sampler, progress,
                                   test.affinity(scenario), grace)
        load_failures = loads.failures() if loads is not None else []
        if load_failures and measured.status not in ("interrupted",):
            measured.status = "error"
            measured.reason = "; ".join(load_failures)
            measured.messages += load_failures
        params = dict(measured.output.start.params) if measured.output.start \
            else dict(test.params)
        self._store_measurement(scenario_id, scenario.name, name=test.name, test=test.test,
                                params=params, command=command, output=measured.output,
                                status=measured.status,
                                thresholds_ns=list(test.thresholds_ns),
                                reason=measured.reason)
        self.statuses.append(measured.status)
        if measured.returncode == EXIT_USAGE:
            self.usage_error = True
        self.messages += [f"{scenario.name} / {test.name}: {m}" for m in measured.messages]
        progress.end(self._line(scenario, test, measured))
        for message in measured.messages:
            self.console.print(f"  [yellow]{for_rich(message)}[/yellow]", highlight=False)

    def _store_measurement(self, scenario_id: int, scenario_name: str,
                           **fields: Any) -> None:
        """Store a measurement, waiting out a locked database.

        Records that the store cannot take (numbers beyond 64 bits in totals) leave the
        measurement stored from its windows alone, as an error with the reason.  When the
        database refuses for good, the run so far and this measurement go to a recovery
        file, and the StoreError raised names it.
        """
        try:
            with_retries(lambda: self.store.add_measurement(scenario_id, **fields))
            return
        except (OverflowError, ValueError, KeyError, TypeError) as exc:
            output: ProbeOutput = fields["output"]
            fields["output"] = ProbeOutput(start=output.start, windows=output.windows,
                                           spikes=output.spikes)
            fields["status"] = "error"
            fields["reason"] = f"rtprobe's result could not be stored ({exc})"
        except StoreError as exc:
            self._recover(exc, scenario_id, scenario_name, fields)
        try:
            with_retries(lambda: self.store.add_measurement(scenario_id, **fields))
        except StoreError as exc:
            self._recover(exc, scenario_id, scenario_name, fields)
        except (OverflowError, ValueError, KeyError, TypeError):
            fields["output"] = ProbeOutput(start=fields["output"].start)
            with_retries(lambda: self.store.add_measurement(scenario_id, **fields))

    def _recover(self, exc: StoreError, scenario_id: int, scenario_name: str,
                 fields: dict[str, Any]) -> None:
        """Write the run so far and this measurement to a recovery file; raise naming it."""
        try:
            stored = self.store.get_run(self.run_id)
        except StoreError:
            stored = None
        run = recovery_bundle(stored, dict(self._facts), scenario_id, scenario_name,
                              measurement_detail(**fields))
        if stored is None:
            run.tags["recovered_from"] = str(self.run_id)
        path = write_recovery_file(run, [data_dir() / "recovered",
                                         Path(os.environ.get("TMPDIR", "/var/tmp"))])
        if path is None:
            raise StoreError(f"{exc}; the measurement could not be kept in a file "
                             "either (no writable directory)") from None
        raise StoreError(f"{exc}; the finished measurements are kept in {path} "
                         f"(`rtbench import {path}` stores them)") from None

    @staticmethod
    def _line(scenario: Scenario, test: TestSpec, measured: _Measured) -> str:
        """One line describing a finished measurement."""
        result: ResultRecord | None = measured.output.result
        worst = None
        count = 0
        if result is not None:
            maxima = [int(s["max_ns"]) for s in result.series if s.get("max_ns") is not None]
            worst = max(maxima) if maxima else None
            count = sum(int(s.get("count", 0)) for s in result.series)
        colour = {"ok": "green", "fail": "red", "break": "red"}.get(measured.status, "yellow")
        head = (f"[{colour}]{measured.status:>11}[/{colour}]  "
                f"{for_rich(scenario.name)} / {for_rich(test.name)}: ")
        if result is not None and not result.series:
            return head + for_rich(headline(test.test, result.data) or "no latency series")
        return (head + f"{count} samples, max {_us(worst)} us, "
                f"{len(measured.output.windows)} windows")

    def _run_probe(self, args: list[str], expected_s: float, sampler: IntensitySampler,
                   progress: Progress, cpus: str | None = None,
                   grace_s: float = HANG_GRACE_S) -> _Measured:
        """Run rtprobe (pinned to cpus if given), feeding its records to progress.

        Handles SIGINT and hangs.
        """
        proc = self.target.spawn_probe(args, cpus)
        assert proc.stdout is not None and proc.stderr is not None
        output = ProbeOutput()
        lines = LineBuffer()
        stderr = bytearray()
        messages: list[str] = []
        bad_records: list[str] = []

        def on_stdout(data: bytes) -> None:
            for lineno, line in lines.feed(data):
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
                    progress.on_start(record)
                elif isinstance(record, WindowRecord):
                    progress.on_window(record)

        def on_stderr(data: bytes) -> None:
            stderr.extend(data)
            del stderr[:-4096]

        self.pump.add(proc.stdout, on_stdout)
        self.pump.add(proc.stderr, on_stderr)
        deadline = time.monotonic() + expected_s + grace_s
        next_sample = time.monotonic() + 1.0
        interrupted_at: float | None = None
        killed_why: str | None = None
        try:
            while self.pump.watching(proc.stdout) or self.pump.watching(proc.stderr):
                self.pump.poll(TICK_S)
                now = time.monotonic()
                if now >= next_sample:
                    sampler.sample()
                    next_sample += 1.0
                if self.stop and interrupted_at is None:
                    self.target.interrupt(proc)
                    interrupted_at = now
                if interrupted_at is not None and now - interrupted_at > INTERRUPT_GRACE_S:
                    killed_why = "rtprobe did not stop after SIGINT; killed"
                    messages.append(killed_why)
                    break
                if now > deadline:
                    killed_why = (f"rtprobe ran {grace_s:g} s past its expected length "
                                  "(hung?); killed")
                    messages.append(killed_why)
                    break
                progress.refresh()
        finally:
            self.target.stop(proc)
            self.pump.remove(proc.stdout)
            self.pump.remove(proc.stderr)
        if lines.rest().strip():
            messages.append("rtprobe's last line was cut short (process killed?)")
        status = output.result.status if output.result is not None else \
            ("interrupted" if self.stop else "error")
        reason = None
        if status == "error" or proc.returncode not in (0, 1, 4):
            text = stderr.decode("utf-8", errors="replace").strip().splitlines()
            if text:
                messages.append(text[-1])
                reason = text[-1]
            elif output.result is None:
                reason = f"rtprobe ended without a result (exit {proc.returncode})"
                messages.append(reason)
        if killed_why is not None and status == "error":
            reason = killed_why
        if bad_records and status != "interrupted":
            # the valid windows are kept; the measurement cannot be trusted as a whole
            status = "error"
            more = f" (and {len(bad_records) - 1} more)" if len(bad_records) > 1 else ""
            reason = f"invalid rtprobe output: {bad_records[0]}{more}"
        return _Measured(output, status, proc.returncode, messages, reason)
