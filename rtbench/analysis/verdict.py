"""The verdict of a run (pure functions, no I/O).

run_verdict() gives a run's status and exit code from its measurements' statuses (the
runner uses it).  verdict_of() explains a stored run to a person: what failed, its worst
figure, the likely causes, what to do; the run's end and the top of its report both
render that Verdict (rtbench.report.verdict).  Causes come from the preflight facts
stored with the run, ordered by how often they decide latency; RT throttling is named
only when a busy-loop test failed, and confirmed when its gaps have throttling's shape
(about period - runtime long, one per period).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from rtbench import (
    EMULATED_WORDS,
    EXIT_ENV,
    EXIT_FAIL,
    EXIT_INCONCLUSIVE,
    EXIT_INTERRUPTED,
    EXIT_NOT_AS_DEFINED,
    EXIT_OK,
)
from rtbench.analysis.scenario_check import (
    deciding_flags,
    idle_unchecked,
    measuring_cpus,
    scenario_flags,
)
from rtbench.bundle import (
    INCONCLUSIVE,
    NOT_STARTED,
    MeasurementDetail,
    RunDetail,
    ScenarioDetail,
)
from rtbench.kinds import KindRegistry, run_registry

# Preflight knobs in the order they usually decide a failed run, each with the reason a
# person reads next to the knob's value.
CAUSE_ORDER: tuple[tuple[str, str], ...] = (
    ("preempt_rt", "without PREEMPT_RT, kernel sections that cannot be preempted delay "
                   "RT tasks"),
    ("virtualization", "a virtual machine: the hypervisor can stop a vCPU for "
                       "milliseconds"),
    ("rt_throttling", "RT throttling stops busy RT threads for part of every period"),
    ("cpufreq_governor", "frequency changes slow the wake-up path"),
    ("idle_states", "deep idle states take long to leave"),
    ("smt", "a sibling hyper-thread shares the measuring core"),
    ("irqbalance", "irqbalance can move interrupts onto measuring CPUs"),
    ("clocksource", "a slow clocksource makes every clock read expensive"),
    ("thp", "transparent huge page compaction can stall tasks"),
)
# At most this many causes are listed (the most likely first).
MAX_CAUSES = 4
# Gap lengths within this factor of period - runtime count as throttling gaps.
THROTTLE_GAP_TOLERANCE = 0.5
# Spacing between throttling gaps: within this fraction of a whole number of periods.
THROTTLE_SPACING_TOLERANCE = 0.15
STATUS_FAILED = ("fail", "break")
# Fewer samples than this cannot pass a threshold: one to three samples never judge a
# maximum (docs/design.md), and a pass needs a margin above that.
MIN_DECIDING_SAMPLES = 10


@dataclass(frozen=True)
class Cause:
    """A likely cause from preflight: the knob, its value, why, and what to do."""

    name: str
    value: str
    why: str
    action: str


@dataclass(frozen=True)
class Worst:
    """The worst latency of the run and the highest threshold it crossed."""

    label: str  # "scenario / test"
    max_ns: int
    threshold_ns: int | None  # highest threshold with exceedances (None: none crossed)
    exceedances: int  # samples at or above threshold_ns


@dataclass(frozen=True)
class Throttled:
    """A busy-loop measurement whose gaps look like RT throttling."""

    label: str
    gaps: int
    gap_ns: int  # median gap length
    period_us: int


@dataclass
class Verdict:
    """What a person needs first: the outcome, the worst figure, causes, what to do."""

    status: str
    headline: str
    worst: Worst | None
    failed: list[str] = field(default_factory=list)
    causes: list[Cause] = field(default_factory=list)
    throttled: list[Throttled] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    not_as_defined: list[str] = field(default_factory=list)  # "scenario: what differed"
    short_run: str | None = None  # "SHORT RUN (10 % of the suite's length)", or None
    inconclusive: list[str] = field(default_factory=list)  # "scenario / test: why"


def emulated_note(run: RunDetail) -> str:
    """What a run measured under CPU emulation says, with the evidence its target gave."""
    evidence = run.sysinfo.get("virtualization_evidence") if isinstance(run.sysinfo, dict) \
        else None
    why = f" ({evidence})" if isinstance(evidence, str) and evidence else ""
    return (f"emulated run: the CPU was emulated{why}; {EMULATED_WORDS} — latencies, "
            "spikes and their causes include the emulator's own stalls")


def run_verdict(statuses: Sequence[str], *, interrupted: bool = False, lost: bool = False,
                not_as_defined: bool = False,
                accept_undefined: bool = False) -> tuple[str, int]:
    """(status, exit code) of a run whose measurements ended with statuses.

    Interrupted wins (4), then a lost target (3), then any error (3: the run is stored,
    so it is never a usage error, even where rtprobe refused a test on the target with
    its exit 2 — the suite's values were checked before anything ran), then a failed
    threshold or criterion (1), then a measurement without the evidence to decide it
    (inconclusive, 5: never a pass), then a scenario not as defined (6, unless
    accept_undefined: the user accepted it), else ok (0).  A run not as defined keeps the
    status `ok`: what it measured is stored as measured.
    """
    if interrupted:
        return "interrupted", EXIT_INTERRUPTED
    if lost:
        return "lost", EXIT_ENV
    if "error" in statuses:
        return "error", EXIT_ENV
    if "fail" in statuses or "break" in statuses:
        return "fail", EXIT_FAIL
    if INCONCLUSIVE in statuses:
        return INCONCLUSIVE, EXIT_INCONCLUSIVE
    if not_as_defined and not accept_undefined:
        return "ok", EXIT_NOT_AS_DEFINED
    return "ok", EXIT_OK


def undecided_reason(samples: int, has_series: bool, checked: bool) -> str | None:
    """Why a measurement that ended ok has no evidence to count as one, or None.

    samples: its measured samples over every series; has_series: whether its test
    measures latency samples at all (ipc bandwidth, ctx and hackbench give figures);
    checked: whether a threshold or criterion was to be decided on them.  No samples:
    nothing was measured; fewer than MIN_DECIDING_SAMPLES under a threshold: too few
    for it to pass."""
    if not has_series:
        return None
    if samples <= 0:
        return "no samples: nothing was measured, so nothing can pass"
    if checked and samples < MIN_DECIDING_SAMPLES:
        return (f"only {_plural(samples, 'sample')}: too few for a threshold to pass "
                f"(at least {MIN_DECIDING_SAMPLES} decide)")
    return None


def judged_status(status: str, samples: int, has_series: bool,
                  checked: bool) -> tuple[str, str | None]:
    """The status a measurement that rtprobe ended with status is stored with, and
    why when it differs: ok without the evidence to pass (undecided_reason) is
    inconclusive; every other status stays (a fail on few samples is still a fail)."""
    if status == "ok":
        why = undecided_reason(samples, has_series, checked)
        if why is not None:
            return INCONCLUSIVE, why
    return status, None


def cell_state(m: MeasurementDetail) -> tuple[str, str | None]:
    """A stored measurement's state and its reason: its own status, or `inconclusive`
    with why for one stored `ok` without the evidence to pass (a run stored before
    rtbench judged the evidence, or an import)."""
    state, why = judged_status(m.status, sum(s.count for s in m.series), bool(m.series),
                               bool(m.thresholds_ns or m.verdicts))
    return (state, why) if state != m.status else (m.status, m.reason)


def _label(scenario: str, m: MeasurementDetail) -> str:
    """The name of a measurement as tables show it."""
    return f"{scenario} / {m.name}"


def measurement_worst(m: MeasurementDetail) -> tuple[int | None, dict[int, int]]:
    """The largest sample of m over its series and its exceedances per threshold."""
    maxima = [s.max_ns for s in m.series if s.max_ns is not None]
    exceed: dict[int, int] = {}
    for s in m.series:
        for threshold, count in s.exceed:
            exceed[threshold] = exceed.get(threshold, 0) + count
    return (max(maxima) if maxima else None), exceed


def worst_of(run: RunDetail) -> Worst | None:
    """The run's largest latency sample, the highest threshold it crossed and how often."""
    best: Worst | None = None
    for scenario in run.scenarios:
        for m in scenario.measurements:
            max_ns, exceed = measurement_worst(m)
            if max_ns is None:
                continue
            crossed = sorted(t for t, n in exceed.items() if n > 0)
            threshold = crossed[-1] if crossed else None
            worst = Worst(_label(scenario.name, m), max_ns, threshold,
                          exceed.get(threshold, 0) if threshold is not None else 0)
            if best is None or worst.max_ns > best.max_ns:
                best = worst
    return best


def is_busy_loop(m: MeasurementDetail, kinds: KindRegistry) -> bool:
    """True for a test whose RT threads run flat out, as its kind's `busy_loop` trait
    says (noise always, periodic with --busy)."""
    return kinds.traits(m.test).is_busy_loop(m.params)


def throttling_gaps(events: Iterable[tuple[int, int]], runtime_us: int,
                    period_us: int) -> tuple[int, int] | None:
    """(count, median length) of gaps shaped like RT throttling, or None.

    events are (time, latency) pairs in ns of one series.  Throttling stops an RT task
    for period - runtime once per period, so its gaps are about that long and a whole
    number of periods apart; at least two such gaps, most of them so spaced, are needed.
    """
    if runtime_us < 0 or period_us <= 0 or runtime_us >= period_us:
        return None
    stop_ns = (period_us - runtime_us) * 1000
    period_ns = period_us * 1000
    low, high = stop_ns * (1 - THROTTLE_GAP_TOLERANCE), stop_ns * (1 + THROTTLE_GAP_TOLERANCE)
    gaps = sorted({(t, v) for t, v in events if low <= v <= high})
    if len(gaps) < 2:
        return None
    spaced = 0
    for (t0, _), (t1, _) in zip(gaps, gaps[1:], strict=False):
        periods = (t1 - t0) / period_ns
        if round(periods) >= 1 and abs(periods - round(periods)) <= THROTTLE_SPACING_TOLERANCE:
            spaced += 1
    if spaced * 2 < len(gaps) - 1:
        return None
    lengths = sorted(v for _, v in gaps)
    return len(gaps), lengths[len(lengths) // 2]


def _series_events(m: MeasurementDetail) -> list[list[tuple[int, int]]]:
    """Per series, the (time, latency) of its large samples: spikes, else its worst list."""
    by_series: dict[int, list[tuple[int, int]]] = {}
    for spike in m.spikes:
        by_series.setdefault(spike.series, []).append((spike.t_ns, spike.latency_ns))
    if by_series:
        return list(by_series.values())
    return [list(s.worst) for s in m.series if s.worst]


def _int_fact(sysinfo: dict[str, Any], key: str) -> int | None:
    """An integer sysinfo fact, or None."""
    value = sysinfo.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def throttled_measurements(run: RunDetail) -> list[Throttled]:
    """Failed busy-loop measurements whose gaps have RT throttling's shape."""
    runtime = _int_fact(run.sysinfo, "rt_runtime_us")
    period = _int_fact(run.sysinfo, "rt_period_us") or 1_000_000
    if runtime is None or runtime < 0:
        return []
    found = []
    kinds = run_registry(run.source)
    for scenario in run.scenarios:
        for m in scenario.measurements:
            if m.status not in STATUS_FAILED or not is_busy_loop(m, kinds):
                continue
            for events in _series_events(m):
                shape = throttling_gaps(events, runtime, period)
                if shape is not None:
                    found.append(Throttled(_label(scenario.name, m), shape[0], shape[1],
                                           period))
                    break
    return found


def policy_other(run: RunDetail) -> bool:
    """True when the run's tests ran as SCHED_OTHER (rtbench run --policy other)."""
    policies = {str((m.start.get("common") or {}).get("policy"))
                for sc in run.scenarios for m in sc.measurements
                if isinstance(m.start.get("common"), dict)}
    return "other" in policies


def probe_setup_warnings(run: RunDetail) -> list[str]:
    """What rtprobe could not set up (stored in each start record's `rt`), each once.

    rtprobe prints these only on a terminal, so under rtbench the stored record is
    where they show: memory not locked, or /dev/cpu_dma_latency not held.
    """
    found: list[str] = []
    for sc in run.scenarios:
        for m in sc.measurements:
            rt = m.start.get("rt")
            if not isinstance(rt, dict):
                continue
            raw_pmqos = rt.get("pmqos")
            pmqos: dict[str, Any] = raw_pmqos if isinstance(raw_pmqos, dict) else {}
            texts = []
            if rt.get("mlockall") is False and rt.get("mlock_error"):
                texts.append(f"memory not locked ({rt['mlock_error']}): page faults can "
                             "add latency")
            if pmqos.get("held") is False and pmqos.get("error"):
                texts.append(f"PM-QoS not held ({pmqos['error']}): deep idle states can "
                             "add wake-up latency")
            for text in texts:
                if "not done:" not in text and text not in found:
                    found.append(text)
    return found


def likely_causes(run: RunDetail, throttled: Sequence[Throttled]) -> list[Cause]:
    """Preflight facts that warn (or worse), most likely cause first.

    RT throttling counts only for runs with a failed busy-loop test: it cannot touch a
    test that sleeps most of the time.
    """
    facts = {str(f.get("name")): f for f in run.preflight if isinstance(f, dict)}
    kinds = run_registry(run.source)
    busy_failed = any(m.status in STATUS_FAILED and is_busy_loop(m, kinds)
                      for sc in run.scenarios for m in sc.measurements)
    causes = []
    for name, why in CAUSE_ORDER:
        fact = facts.get(name)
        if fact is None or fact.get("severity") not in ("warn", "bad"):
            continue
        if name == "rt_throttling" and not (busy_failed or throttled):
            continue
        causes.append(Cause(name, str(fact.get("value", "")), why,
                            str(fact.get("advice") or "")))
    if throttled:  # confirmed by the gaps' shape: the first cause
        causes.sort(key=lambda c: c.name != "rt_throttling")
    return causes[:MAX_CAUSES]


def _us(ns: float) -> str:
    """Nanoseconds as microseconds with thousands separators, 1 decimal."""
    return f"{ns / 1000:,.1f} µs"


def _threshold(ns: int) -> str:
    """A threshold for a sentence: 1ms, 100µs."""
    if ns % 1_000_000 == 0:
        return f"{ns // 1_000_000}ms"
    return f"{ns / 1000:g}µs"


def _plural(n: int, word: str) -> str:
    """'1 sample', '2 samples'."""
    return f"{n:,} {word}" if n == 1 else f"{n:,} {word}s"


def short_run_text(scale: float) -> str | None:
    """"SHORT RUN (10 % of the suite's length)" for a run whose durations were scaled
    below its suite's (--scale or the suite's own `scale` < 1); None for a full run."""
    if not math.isfinite(scale) or not 0 < scale < 1:
        return None
    return f"SHORT RUN ({scale * 100:.3g} % of the suite's length)"


def not_as_defined_head(cases: int) -> str:
    """The outcome of a run whose scenarios did not happen as defined."""
    return (f"NOT AS DEFINED in {_plural(cases, 'case')} (below): the run did not test "
            "what its suite defines, so it is not a pass")


def headline_of(status: str, total: int, failed: int, errors: int,
                worst: Worst | None, checked: int | None = None, *,
                short: bool = False, undefined: int = 0, undecided: int = 0) -> str:
    """One sentence: the outcome and the worst figure against its threshold (checked:
    how many measurements had a threshold or criterion; None: all of them; short: a
    short run, whose pass is "PASS (short run)"; undefined: the scenario flags of a run
    that did not happen as defined, which make an ok run NOT AS DEFINED; undecided: the
    measurements of an inconclusive run that had no evidence to decide)."""
    worst_text = ""
    if worst is not None:
        worst_text = f"worst {_us(worst.max_ns)} in {worst.label}"
        if worst.threshold_ns is not None:
            worst_text += (f", {_plural(worst.exceedances, 'sample')} at or above the "
                           f"{_threshold(worst.threshold_ns)} threshold")
    passed = "PASS (short run)" if short else "PASS"
    if status in STATUS_FAILED:
        head = f"FAIL: {failed} of {_plural(total, 'measurement')} crossed a threshold"
    elif status == INCONCLUSIVE:
        head = (f"INCONCLUSIVE: {undecided} of {_plural(total, 'measurement')} had no "
                "evidence to decide (below), so the run is not a pass")
    elif status == "ok" and undefined:
        head = not_as_defined_head(undefined)
    elif status == "ok" and checked == 0:
        head = (f"MEASURED, NO THRESHOLDS SET: {_plural(total, 'measurement')}, none with "
                "a threshold or criterion to pass or fail")
    elif status == "ok" and checked is not None and checked < total:
        head = (f"{passed}: {checked} of {_plural(total, 'measurement')} within every "
                f"threshold; {total - checked} had none set")
    elif status == "ok":
        head = f"{passed}: {_plural(total, 'measurement')} within every threshold"
    elif status == "interrupted":
        head = "INTERRUPTED: the run was stopped; finished measurements are kept"
    elif status == "running":
        head = "RUNNING: the run has not finished"
    elif status == "partial":
        head = ("PARTIAL: an output imported without its closing lines; what it holds is "
                "kept, and it passes nothing")
    elif status == "lost":
        head = ("LOST: the connection to the target broke; the measurements after the last "
                "one listed never started")
    else:
        head = (f"{status.upper()}: {_plural(errors, 'measurement')} of {total} could not "
                "run (see the messages)")
    return f"{head}; {worst_text}" if worst_text else head


def list_verdict(status: str, total: int | None, checked: int | None, *,
                 scale: float = 1.0, undefined: int = 0) -> str:
    """A run's outcome in a few words for a runs list: PASS or FAIL only where thresholds
    or criteria decided (total: its measurements, checked: those with a threshold or
    criterion; None when not counted), NOT AS DEFINED for an ok run with scenario flags
    (undefined), "PASS (short run)" for a pass of a run scaled below its suite."""
    passed = "PASS (short run)" if short_run_text(scale) else "PASS"
    if status in STATUS_FAILED:
        return "FAIL"
    if status != "ok" or total is None or checked is None:
        return status
    if total == 0:
        return "no measurements"
    if undefined:
        return "NOT AS DEFINED"
    if checked == 0:
        return "measured, no thresholds set"
    if checked < total:
        return f"{passed} ({checked} of {total} with thresholds)"
    return passed


def _worst_text(worst: Worst) -> str:
    """'worst 26.0 us in idle / cyclic-1ms'."""
    return f"worst {_us(worst.max_ns)} in {worst.label}"


def lost_headline(measurements: Sequence[tuple[str, MeasurementDetail]],
                  why: str | None = None) -> str:
    """A lost run: why, when the target said (the run's reason), and which measurements
    finished and which were cut short (with samples)."""
    finished = [_label(n, m) for n, m in measurements if m.status in ("ok", *STATUS_FAILED)]
    cut = [(_label(n, m), sum(s.count for s in m.series)) for n, m in measurements
           if m.status == "lost"]
    never = [_label(n, m) for n, m in measurements if m.status == NOT_STARTED]
    parts = [f"{_plural(len(finished), 'measurement')} finished"]
    parts += [f"{label} cut short ({_plural(samples, 'sample')} kept)"
              for label, samples in cut]
    if never:
        tail = "never started: " + ", ".join(never)
    else:  # a run stored before the never-started measurements were stored
        tail = "the measurements after it never started"
    head = "LOST: the connection to the target broke" + (f": {why}" if why else "")
    return head + "; " + ", ".join(parts) + "; " + tail


def inconclusive_headline(states: Sequence[tuple[str, MeasurementDetail, str, str | None]],
                          worst: Worst | None, *, short: bool = False) -> str:
    """The outcome of a run with inconclusive cells (states: scenario, measurement,
    state, reason): how many could not be made on this board (stored inconclusive
    without a series: rtprobe refused them) or had too few samples to decide, then what
    the others say ("the others: PASS: ...")."""
    undecided = [m for _, m, state, _ in states if state == INCONCLUSIVE]
    unmade = sum(1 for m in undecided if not m.series)
    if unmade == len(undecided):
        words = "could not be made on this board"
    elif unmade == 0:
        words = "had too few samples to decide"
    else:
        words = "could not be made on this board or had too few samples to decide"
    head = (f"INCONCLUSIVE: {len(undecided)} of {_plural(len(states), 'measurement')} "
            f"{words} (why below)")
    rest = [m for _, m, state, _ in states if state != INCONCLUSIVE]
    if not rest:
        return f"{head}; {_worst_text(worst)}" if worst is not None else head
    failed = sum(1 for m in rest if m.status in STATUS_FAILED)
    errors = sum(1 for m in rest if m.status == "error")
    status = "fail" if failed else ("error" if errors else "ok")
    checked = sum(1 for m in rest if m.thresholds_ns or m.verdicts)
    return f"{head}; the others: " + headline_of(status, len(rest), failed, errors, worst,
                                                  checked, short=short)


def scenario_intensity(sc: ScenarioDetail, kinds: KindRegistry) -> dict[str, Any] | None:
    """A stored scenario's intensity, with the CPUs its tests measured on read from
    their start records where a run stored before rtbench kept them did not say."""
    if not sc.intensity or "measuring_cpus" in sc.intensity:
        return sc.intensity
    return {**sc.intensity,
            "measuring_cpus": measuring_cpus([m.start for m in sc.measurements
                                              if m.start], kinds)}


def verdict_of(run: RunDetail, warnings: Sequence[str] = ()) -> Verdict:
    """The verdict of run; warnings are rtprobe's own warning lines of this run, if known."""
    measurements = [(sc.name, m) for sc in run.scenarios for m in sc.measurements]
    states = [(name, m, *cell_state(m)) for name, m in measurements]
    undecided = [f"{_label(name, m)}: {why or 'no evidence to decide'}"
                 for name, m, state, why in states if state == INCONCLUSIVE]
    run_status = INCONCLUSIVE if run.status == "ok" and undecided else run.status
    failed = [_label(name, m) for name, m in measurements if m.status in STATUS_FAILED]
    errors = sum(1 for _, m in measurements if m.status == "error")
    worst = worst_of(run)
    throttled = throttled_measurements(run)
    checked = sum(1 for _, m in measurements if m.thresholds_ns or m.verdicts)
    kinds = run_registry(run.source)
    intensities = [(sc, scenario_intensity(sc, kinds)) for sc in run.scenarios]
    flagged = [f"{sc.name}: {flag}" for sc, intensity in intensities
               for flag in scenario_flags(sc.loads, intensity, sc.measure_cpus)]
    undefined = [f"{sc.name}: {flag}" for sc, intensity in intensities
                 for flag in deciding_flags(sc.loads, intensity, sc.measure_cpus,
                                            run.simulated)]
    unchecked = [f"{sc.name}: {text}" for sc, intensity in intensities
                 for text in [idle_unchecked(sc.loads, intensity, sc.measure_cpus)] if text]
    short = short_run_text(run.scale)
    status = "measured" if run_status == "ok" and measurements and not checked \
        else run_status
    if run_status == "ok" and measurements and undefined:
        status = "not_as_defined"
    verdict = Verdict(status, headline_of(run_status, len(measurements), len(failed),
                                          errors, worst, checked, short=short is not None,
                                          undefined=len(undefined) if measurements else 0,
                                          undecided=len(undecided)),
                      worst, failed)
    verdict.inconclusive = undecided
    if run_status == INCONCLUSIVE and undecided:
        verdict.headline = inconclusive_headline(states, worst, short=short is not None)
    verdict.not_as_defined = [flag if flag in undefined else
                              f"{flag} (a simulated run: synthetic latencies cannot be "
                              "disturbed, so this does not decide its verdict)"
                              for flag in flagged]
    verdict.short_run = short
    if run.reason is not None and not measurements:  # a fleet board that measured nothing
        verdict.headline = f"{run.status.upper()}: nothing was measured: {run.reason}"
    if run.status == "lost":
        verdict.headline = lost_headline(measurements, run.reason) + (
            f"; {_worst_text(worst)}" if worst is not None else "")
    if undefined and status != "not_as_defined":
        verdict.headline += (f"; SCENARIO NOT AS DEFINED in "
                             f"{_plural(len(undefined), 'case')} (below)")
    if undecided and run_status != INCONCLUSIVE:
        verdict.headline += (f"; INCONCLUSIVE in {_plural(len(undecided), 'measurement')}"
                             " (below)")
    if short is not None:
        verdict.headline += f"; {short}"
        verdict.notes.append(f"short run: every duration of the suite was scaled to "
                             f"{run.scale * 100:.3g} % (--scale), so rare latencies had "
                             "less time to show than in a full run")
    verdict.throttled = throttled
    if run.status in STATUS_FAILED or run.status == "error":
        verdict.causes = likely_causes(run, throttled)
        if policy_other(run):
            verdict.causes.insert(0, Cause(
                "policy", "SCHED_OTHER", "the tests ran without real-time priority, so "
                "any other task can delay them", "run as root (or grant CAP_SYS_NICE) "
                "without --policy other to measure real-time latencies"))
            del verdict.causes[MAX_CAUSES:]
    verdict.notes += [f"inconclusive {cell}" for cell in undecided]
    verdict.notes += unchecked
    if run.simulated:
        verdict.notes.append("simulated run: the latencies are synthetic, not measurements "
                             "of this machine")
    if run.emulated:
        verdict.headline += f"; EMULATED: {EMULATED_WORDS}"
        verdict.notes.insert(0, emulated_note(run))
    if policy_other(run):
        verdict.notes.append("measured with SCHED_OTHER (--policy other): these are not "
                             "real-time latencies; run as root (or with CAP_SYS_NICE) "
                             "without --policy for real-time figures")
    seen: set[str] = set()
    for line in [*probe_setup_warnings(run), *warnings]:
        if line not in seen:
            seen.add(line)
            verdict.notes.append(line)
    return verdict
