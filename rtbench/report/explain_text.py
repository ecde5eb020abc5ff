"""`rtbench explain` as text: each cell's ranked causes and its worst spikes' time lines.

Every name that came from a board (thread names, IRQ names, callers) passes through
for_terminal: no control characters reach the terminal.  Plain lines, no rich markup.
"""

from __future__ import annotations

from rtbench.analysis.trace_causes import CauseMove, CellExplanation, cause_moves, explain_run
from rtbench.analysis.trace_spike import SpikeExplanation
from rtbench.bundle import RunDetail
from rtbench.report.format import fmt_us
from rtbench.report.text import for_terminal

PHASE_NAMES = {"timer_late": "timer IRQ late", "timer_irq": "timer IRQ",
               "scheduling": "scheduling", "switch_in": "switch-in", "unknown": "(no phase)"}
NO_TRACES = ("run {run} has no trace records: nothing to explain; measure with --trace "
             "(rtbench run SUITE --trace) to record the kernel events of each spike")


NOT_TRACED = ("run {run} has no trace records: it asked for tracing, but tracing could not "
              "be used ({why}); fix that and measure again with --trace")


def untraced_reason(run: RunDetail) -> str | None:
    """Why a run that asked for tracing holds no trace (rtprobe's note of a --trace=auto
    that ran untraced), None when it did not ask or was traced."""
    for scenario in run.scenarios:
        for m in scenario.measurements:
            info = m.trace_info
            if isinstance(info, dict) and info.get("note") and not info.get("clock") \
                    and not m.traces:
                return for_terminal(str(info["note"]))
    return None


def pct(share: float) -> str:
    """A share as a whole percent ("73 %")."""
    return f"{share * 100:.0f} %"


def cause_sentence(cell: CellExplanation, index: int = 0) -> str:
    """"python3 (pid 4, RT 95): main cause of 73 % of spikes >= 100 us" for one row."""
    row = cell.causes[index]
    over = f" ≥ {fmt_us(cell.threshold_ns)} µs" if cell.threshold_ns else ""
    return (f"{for_terminal(row.cause.label)}: main cause of {pct(row.share_spikes)} of "
            f"traced spikes{over} ({row.spikes_main} of {len(cell.spikes)}), "
            f"{pct(row.share_latency)} of their latency")


def cell_lines(cell: CellExplanation, worst: int) -> list[str]:
    """The text of one cell: headline, cause table, worst spikes, notes."""
    name = for_terminal(cell.name)
    if not cell.traced:
        return [f"{name}: no trace records"]
    over = f" ≥ {fmt_us(cell.threshold_ns)} µs" if cell.threshold_ns else ""
    untraced = f", {cell.spikes_untraced} untraced" if cell.spikes_untraced else ""
    lines = [f"{name}: {len(cell.spikes)} traced spike(s){over}{untraced} "
             f"(from {cell.source})"]
    if cell.causes:
        lines.append(f"  {'rank':>4}  {'main cause of':>15}  {'in spikes':>9}  "
                     f"{'latency':>8}  cause")
        shown = [r for r in cell.causes if r.spikes_main or r.spikes_present]
        for rank, row in enumerate(shown, 1):
            main = f"{row.spikes_main} ({pct(row.share_spikes)})"
            lines.append(f"  {rank:>4}  {main:>15}  {row.spikes_present:>9}  "
                         f"{pct(row.share_latency):>8}  {for_terminal(row.cause.label)}")
        lines.append("  " + cause_sentence(cell))
    for n, spike in enumerate(cell.worst(worst), 1):
        lines.extend(spike_lines(spike, n))
    for note in cell.notes:
        lines.append(f"  note: {for_terminal(note)}")
    return lines


def spike_lines(spike: SpikeExplanation, n: int) -> list[str]:
    """One spike's headline and time line (offsets from the expected expiry)."""
    where = f" on CPU {spike.cpu}" if spike.cpu is not None else ""
    at = f" at t={spike.t_ns / 1e9:.3f} s" if spike.t_ns is not None else ""
    thread = ""
    if spike.thread is not None:
        thread = f", thread {for_terminal(spike.thread[0])} (pid {spike.thread[1]})"
    approx = " (times approximate)" if spike.approximate else ""
    lines = [f"  spike {n}: {fmt_us(spike.latency_ns)} µs{where}{at}{thread}{approx}"]
    for seg in spike.segments:
        phase = PHASE_NAMES.get(seg.phase, seg.phase)
        lines.append(f"    +{fmt_us(seg.start_ns):>10} µs  {fmt_us(seg.duration_ns):>9} µs  "
                     f"{phase:<15} {for_terminal(seg.cause.label)}")
    if not spike.segments:
        lines.append("    nothing attributed")
    for note in spike.notes:
        lines.append(f"    note: {for_terminal(note)}")
    return lines


def move_lines(moves: list[CauseMove], limit: int = 10) -> list[str]:
    """"IRQ 24 eth0: 73 % -> 4 % of spikes" per cause family."""
    out = []
    for move in moves[:limit]:
        before = "-" if move.before is None else pct(move.before)
        after = "-" if move.after is None else pct(move.after)
        out.append(f"{for_terminal(move.label)}: {before} → {after} of traced spikes")
    return out


def cause_changes(runs: list[tuple[str, RunDetail]]
                  ) -> list[tuple[str, str, list[CauseMove] | None]]:
    """(first label, other label, moves) from the first run to each other one whose
    traces can be compared (None: one of the two has no trace records); [] when no run
    was traced."""
    explained = [(label, [c for c in explain_run(run) if c.traced]) for label, run in runs]
    if not any(cells for _, cells in explained):
        return []
    (first, base), out = explained[0], []
    for label, cells in explained[1:]:
        out.append((first, label, cause_moves(base, cells) if base and cells else None))
    return out


def change_lines(changes: list[tuple[str, str, list[CauseMove] | None]]) -> list[str]:
    """The text of cause_changes: a heading per pair and a line per cause."""
    lines = []
    for first, other, moves in changes:
        if moves is None:
            lines.append(f"causes of spikes, {first} → {other}: unknown (one of them has no "
                         "trace records; measure both with --trace)")
            continue
        lines.append(f"causes of spikes, {first} → {other} (share of traced spikes each "
                     "was the main cause of):")
        lines.extend("  " + line for line in move_lines(moves))
    return lines
