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
import time
from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext, suppress
from dataclasses import dataclass, replace
from typing import Any

from rtbench import __version__, data_dir
from rtbench.analysis.scenario_check import deciding_flags, measuring_cpus, scenario_flags
from rtbench.analysis.verdict import run_verdict
from rtbench.bundle import INCONCLUSIVE, NOT_STARTED, board_of
from rtbench.kinds import packaged, recorded_kinds, registry_for
from rtbench.preflight import run_preflight
from rtbench.rtprobe.argv import serial_trace_args
from rtbench.rtprobe.wire.records import ProbeOutput
from rtbench.run.checks import allowed_cpus, validate_suite
from rtbench.run.events import (
    MeasurementDone,
    Notice,
    OnEvent,
    ProbeWarning,
    RunFinished,
    RunStarted,
    SettleDone,
    StepStarted,
    Tick,
    ignore,
)
from rtbench.run.loads import LoadGroup
from rtbench.run.outcome import RunOutcome, stored_run_error
from rtbench.run.pump import TICK_S, Pump
from rtbench.run.save import MeasurementNotStored, recovery_bundle, with_retries
from rtbench.run.stopflag import StopFlag
from rtbench.run.util.owner import LoadDirRegistry, current_owner
from rtbench.run.watch import Measured, ProbeWatch, judge_evidence, watch_probe
from rtbench.store import Store, StoreError
from rtbench.store.ingest import measurement_detail
from rtbench.suites.model import Scenario, Suite, TestSpec
from rtbench.suites.placement import Placement, plan_placement
from rtbench.targets.base import Target, TargetLost, open_target
from rtbench.targets.procstat import IntensitySampler, read_steal

# Time rtprobe may take beyond warm-up + duration before it is considered hung.
HANG_GRACE_S = 60.0
# The same for tests that run a fixed amount of work (ctx, pi, ...): their length is only
# a nominal guess, and a large ctx sweep legitimately runs for minutes.
HANG_GRACE_UNTIMED_S = 900.0
# Time rtprobe gets to write its result after SIGINT before it is killed.
INTERRUPT_GRACE_S = 5.0


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
        """Before anything runs: the suite fits the target (run/checks.py
        `validate_suite()`); RunError or SuiteError say what is wrong."""
        validate_suite(self.target, suite, self.simulate, self.policy, self.sysinfo)

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
        judge_evidence(measured, test, self.target.name)
        if measured.output.start is not None:
            self.starts.setdefault(scenario.name, []).append(measured.output.start.raw)
        self._store_measurement(scenario_id, scenario.name, measured, name=test.name,
                                test=test.test, params=params, command=command,
                                thresholds_ns=list(test.thresholds_ns))
        self.statuses.append(measured.status)
        self.messages += [f"{scenario.name} / {test.name}: {m}" for m in measured.messages]
        self.on_event(MeasurementDone(scenario.name, test.name, test.test, measured.status,
                                      measured.output, list(measured.messages)))

    def _store_measurement(self, scenario_id: int, scenario_name: str, measured: Measured,
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
                   cpus: str | None, grace_s: float) -> Measured:
        """Run rtprobe (pinned to cpus if given), reporting its records as events; a lost
        connection is noted for the run."""
        watch = ProbeWatch(self.target, self.pump, self.stop, self.on_event,
                           self._on_probe_stderr, self.interrupt_grace_s)
        measured = watch_probe(watch, args, expected_s, sampler, cpus, grace_s)
        if measured.lost:
            self._lose("rtprobe", measured.lost_why)
        return measured
