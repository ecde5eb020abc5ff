"""The causes of a run's spikes, ranked, and how they moved between runs (pure).

Each traced spike is explained by rtbench.analysis.trace_spike; a cell's causes are
ranked by the spikes they are the main cause of (the cause holding the most of the
spike), then by their share of all traced latency; a cause holding under 0.5 % of the
latency (0 % as printed) comes after every other.  What the traces could not show
(events the kernel lacked, lost events, spikes over the threshold left untraced) is
said in notes; a cell without trace records has no causes and says so.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rtbench.analysis.trace_spans import CONSOLE_LABEL, Cause, console_irq_names
from rtbench.analysis.trace_spike import SpikeExplanation, explain_spike
from rtbench.bundle import MeasurementDetail, RunDetail

# a latency share below this prints as 0 %: such a cause is ranked after all others
NEGLIGIBLE_SHARE = 0.005
# what each missing event hides from the attribution
_MISSING_MEANS = (
    ("preemptirq:irq_disable", "no preemptirq events (CONFIG_PREEMPTIRQ_EVENTS): a late "
     "timer IRQ cannot be told apart as IRQs off or hardware/hypervisor"),
    ("irq:irq_handler_entry", "no irq_handler events: IRQ handlers are not seen"),
    ("irq:softirq_entry", "no softirq events: softirq handlers are not seen"),
    ("sched:sched_switch", "no sched_switch events: the threads that ran are not named"),
    ("sched:sched_waking", "no sched_waking events: the wake-up is placed by sched_wakeup"),
    ("timer:hrtimer_expire_entry", "no hrtimer events: the timer IRQ phase cannot be cut"),
)


@dataclass
class CauseRow:
    """One cause of a cell: the spikes it led, the spikes it was in, its latency share."""

    cause: Cause
    spikes_main: int
    spikes_present: int
    total_ns: int
    share_spikes: float  # spikes_main / traced spikes
    share_latency: float  # total_ns / traced latency


@dataclass
class CellExplanation:
    """The traced spikes of one measurement, their ranked causes and the notes."""

    name: str  # "scenario/measurement"
    threshold_ns: int | None
    spikes: list[SpikeExplanation] = field(default_factory=list)
    causes: list[CauseRow] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    spikes_over: int | None = None
    spikes_untraced: int | None = None
    source: str = "trace events"

    @property
    def traced(self) -> bool:
        """Whether this cell has trace records at all."""
        return bool(self.spikes)

    def worst(self, n: int) -> list[SpikeExplanation]:
        """The n largest traced spikes."""
        return sorted(self.spikes, key=lambda s: -(s.latency_ns or 0))[:n]


def _missing(info: dict[str, Any] | None) -> frozenset[str]:
    """The events the kernel lacked, from the trace summary."""
    values = (info or {}).get("events_missing")
    if not isinstance(values, list):
        return frozenset()
    return frozenset(v for v in values if isinstance(v, str))


def explain_measurement(name: str, m: MeasurementDetail,
                        console: frozenset[str] = frozenset()) -> CellExplanation:
    """The causes of one measurement's traced spikes; console: the IRQ names of the
    serial console rtbench talked over (its interrupts are rtbench's own traffic)."""
    info = m.trace_info if isinstance(m.trace_info, dict) else None
    threshold = info.get("threshold_ns") if info else None
    cell = CellExplanation(name=name, threshold_ns=threshold if isinstance(threshold, int)
                           and not isinstance(threshold, bool) else None)
    missing = _missing(info)
    for record in m.traces:
        if isinstance(record, dict):
            cell.spikes.append(explain_spike(record, missing, console))
    if any(isinstance(r, dict) and "analysis" in r for r in m.traces):
        cell.source = "imported analysis"
    _rank(cell)
    _cell_notes(cell, info, missing)
    return cell


def _rank(cell: CellExplanation) -> None:
    """Fill cell.causes from its spikes."""
    main: dict[Cause, int] = {}
    present: dict[Cause, int] = {}
    total: dict[Cause, int] = {}
    latency = 0
    for spike in cell.spikes:
        causes = spike.causes()
        if not causes or spike.blind:  # no events: not evidence for any cause
            continue
        span = sum(causes.values())
        latency += span
        top = next(iter(causes))
        main[top] = main.get(top, 0) + 1
        for cause, ns in causes.items():
            total[cause] = total.get(cause, 0) + ns
            if span and ns * 10 >= span:  # a tenth of the spike or more
                present[cause] = present.get(cause, 0) + 1
    counted = sum(main.values())
    rows = [CauseRow(cause=c, spikes_main=main.get(c, 0), spikes_present=present.get(c, 0),
                     total_ns=ns, share_spikes=main.get(c, 0) / counted if counted else 0.0,
                     share_latency=ns / latency if latency else 0.0)
            for c, ns in total.items()]
    # a cause holding a negligible share of the latency (0 % printed) never ranks first
    rows.sort(key=lambda r: (r.share_latency < NEGLIGIBLE_SHARE, -r.spikes_main,
                             -r.total_ns, r.cause.key))
    cell.causes = rows


def _cell_notes(cell: CellExplanation, info: dict[str, Any] | None,
                missing: frozenset[str]) -> None:
    """What the traces of this cell could not show."""
    blind = sum(1 for s in cell.spikes if s.blind)
    if blind:
        cell.notes.append(f"{blind} traced spike(s) had no event of their CPU in the "
                          "window (left out of the ranking): their causes are unknown")
    if info is None:
        if cell.spikes:
            cell.notes.append("no trace summary: which events were missing is unknown")
        return
    for event, meaning in _MISSING_MEANS:
        if event in missing:
            cell.notes.append(meaning)
    lost = info.get("lost")
    if isinstance(lost, int) and lost > 0:
        cell.notes.append(f"{lost} event(s) lost to ring-buffer overruns: some windows "
                          "are incomplete")
    over, untraced = info.get("spikes_over"), info.get("spikes_untraced")
    if isinstance(over, int):
        cell.spikes_over = over
    if isinstance(untraced, int):
        cell.spikes_untraced = untraced
        if untraced > 0 and "spikes_replaced" in info:  # a probe that keeps the worst
            cell.notes.append(f"{untraced} smaller spike(s) over the threshold were not "
                              f"traced (the per-run limit keeps the {len(cell.spikes)} "
                              "worst): their causes are unknown")
        elif untraced > 0:
            cell.notes.append(f"{untraced} spike(s) over the threshold were not traced "
                              "(the per-run limit): their causes are unknown")
    if info.get("clock") not in (None, "mono"):
        cell.notes.append(f"trace clock {info.get('clock')}: event times aligned "
                          "approximately")
    note = info.get("note")
    if isinstance(note, str) and note:
        cell.notes.append(note)


def explain_run(run: RunDetail, cells: list[str] | None = None) -> list[CellExplanation]:
    """Every measurement of the run (or those whose "scenario/name" matches a pattern
    in cells: exact, or a substring) with its causes."""
    console = console_irq_names(run.sysinfo if isinstance(run.sysinfo, dict) else {},
                                run.target or "")
    out = []
    for sc in run.scenarios:
        for m in sc.measurements:
            name = f"{sc.name}/{m.name}"
            if cells and not any(c == name or c in name for c in cells):
                continue
            out.append(explain_measurement(name, m, console))
    return out


@dataclass
class CauseMove:
    """One cause family's share of spikes in two runs (None: not seen there)."""

    label: str
    before: float | None
    after: float | None


def cause_moves(before: list[CellExplanation], after: list[CellExplanation]
                ) -> list[CauseMove]:
    """How each cause family's share of the main causes moved (threads by name, not
    pid: pids differ between runs); largest change first."""
    a, b = _family_shares(before), _family_shares(after)
    labels = {**{k: v[1] for k, v in a.items()}, **{k: v[1] for k, v in b.items()}}
    moves = [CauseMove(labels[k], a[k][0] if k in a else None, b[k][0] if k in b else None)
             for k in labels]
    moves.sort(key=lambda m: -abs((m.after or 0.0) - (m.before or 0.0)))
    return moves


def _family_shares(cells: list[CellExplanation]) -> dict[str, tuple[float, str]]:
    """family -> (share of traced spikes it was the main cause of, label)."""
    counts: dict[str, int] = {}
    labels: dict[str, str] = {}
    spikes = 0
    for cell in cells:
        for row in cell.causes:
            fam = row.cause.family
            counts[fam] = counts.get(fam, 0) + row.spikes_main
            labels.setdefault(fam, _family_label(row.cause))
        spikes += sum(r.spikes_main for r in cell.causes)
    return {k: (n / spikes if spikes else 0.0, labels[k]) for k, n in counts.items()}


def _family_label(cause: Cause) -> str:
    """A cause's label without the parts that change between runs (a thread's pid)."""
    if cause.family.startswith("console:"):
        inner = Cause(cause.kind, cause.key.removeprefix("console:"),
                      cause.family.removeprefix("console:"),
                      cause.label.removeprefix(CONSOLE_LABEL))
        return CONSOLE_LABEL + _family_label(inner)
    if cause.family.startswith("load:"):
        return f"rtbench load {cause.family.partition(':')[2]}"
    if cause.kind == "thread":
        return cause.family.partition(":")[2] or cause.label
    return cause.label


def explanation_json(cells: list[CellExplanation], worst: int = 5) -> list[dict[str, Any]]:
    """The cells as JSON-ready dicts (`rtbench explain --json`)."""
    return [{
        "cell": c.name, "threshold_ns": c.threshold_ns, "source": c.source,
        "spikes_traced": len(c.spikes), "spikes_over": c.spikes_over,
        "spikes_untraced": c.spikes_untraced, "notes": c.notes,
        "causes": [{"kind": r.cause.kind, "key": r.cause.key, "label": r.cause.label,
                    "spikes_main": r.spikes_main, "spikes_present": r.spikes_present,
                    "total_ns": r.total_ns, "share_spikes": round(r.share_spikes, 4),
                    "share_latency": round(r.share_latency, 4)} for r in c.causes],
        "worst": [spike_json(s) for s in c.worst(worst)],
    } for c in cells]


def spike_json(s: SpikeExplanation) -> dict[str, Any]:
    """One explained spike as a JSON-ready dict."""
    main = s.main_cause()
    return {
        "series": s.series, "cpu": s.cpu, "t_ns": s.t_ns, "latency_ns": s.latency_ns,
        "main_cause": main.label if main else None,
        "thread": None if s.thread is None else
        {"comm": s.thread[0], "pid": s.thread[1], "prio": s.thread[2]},
        "phases_ns": s.phases, "approximate": s.approximate, "notes": s.notes,
        "segments": [{"start_ns": g.start_ns, "end_ns": g.end_ns, "phase": g.phase,
                      "kind": g.cause.kind, "label": g.cause.label} for g in s.segments],
        "handlers": [{"label": h[0], "start_ns": h[1], "duration_ns": h[2]}
                     for h in s.handlers],
    }
