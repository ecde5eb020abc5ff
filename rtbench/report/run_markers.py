"""The markers a run carries wherever it is listed (server runs list, `rtbench ls`, the
matrix, a board's page, a run's page): one function so every list says the same.

- `SHORT RUN (10 % of the suite's length)`: the suite ran at a scale below 1 (every
  duration shortened), so its figures come from fewer samples than the suite defines;
- `traced`: a measurement holds kernel trace records (`--trace`), so `explain` can
  attribute its spikes -- and tracing itself costs latency;
- `emulated`: the CPU was emulated (the runs column `emulated`, else the stored sysinfo's
  `virtualization` naming TCG or an emulator): figures describe the emulator;
- `simulated`: `--simulate`, synthetic latencies, no measurement.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rtbench.analysis.verdict import short_run_text
from rtbench.bundle import sysinfo_emulated

__all__ = ["is_emulated", "is_traced", "run_markers", "scale_text", "short_run_text"]



def _get(run: Any, name: str) -> Any:
    """run[name] of a mapping (a JSON run), else the attribute (None when absent)."""
    if isinstance(run, Mapping):
        return run.get(name)
    return getattr(run, name, None)


def scale_text(scale: float) -> str:
    """A scale factor as a percentage: 0.1 -> '10 %', 0.125 -> '12.5 %'."""
    return f"{scale * 100:.3g} %"


def is_emulated(run: Any) -> bool:
    """Whether run ran under CPU emulation: its `emulated` field where it has one set,
    else its sysinfo's virtualization (tcg or an emulator)."""
    emulated = _get(run, "emulated")
    if emulated is not None:
        return bool(emulated)
    return sysinfo_emulated(_get(run, "sysinfo"))


def is_traced(run: Any) -> bool:
    """Whether a measurement of run holds trace records (a `traced` field, or a run
    detail's measurements)."""
    traced = _get(run, "traced")
    if traced is not None:
        return bool(traced)
    for scenario in _get(run, "scenarios") or ():
        for m in _get(scenario, "measurements") or ():
            if _get(m, "traces") or _get(m, "trace_info"):
                return True
    return False


def run_markers(run: Any) -> list[str]:
    """The markers of a run (RunSummary, RunDetail or its JSON mapping), in a fixed
    order: SHORT RUN (N % of the suite's length), traced, emulated, simulated; [] for a
    plain full run."""
    out: list[str] = []
    scale = _get(run, "scale")
    if isinstance(scale, (int, float)) and not isinstance(scale, bool):
        short = short_run_text(float(scale))
        if short is not None:
            out.append(short)
    if is_traced(run):
        out.append("traced")
    if is_emulated(run):
        out.append("emulated")
    if _get(run, "simulated"):
        out.append("simulated")
    return out
