"""The runs as the server shows them, as plain data: run rows, comparisons, references.

The HTML pages and the JSON API both build on these, so a number on a page is
the number the API returns.  Statistics come from rtbench.analysis; the store
is only read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rtbench.analysis.compare import Comparison as AnalysedComparison
from rtbench.analysis.compare import compare as do_compare
from rtbench.analysis.compare import view_of_reference, view_of_run
from rtbench.analysis.reference import ReferenceRun, hist_quantile
from rtbench.analysis.stats import merged_stats
from rtbench.analysis.verdict import list_verdict
from rtbench.bundle import RunDetail, RunSummary
from rtbench.reference import reference_run, reference_runs
from rtbench.report.run_markers import run_markers
from rtbench.store import Store
from rtbench.store.queries import measurement_series

# the statistics each compared measurement or matrix cell shows (ns values)
STAT_KEYS = ("samples", "min_ns", "mean_ns", "p99_ns", "p99_9_ns", "max_ns", "overruns")
COMPARE_LIMIT = 100  # runs per comparison: a bound on one request's work


def run_verdict_label(run: RunSummary) -> str:
    """The runs list's outcome of run: PASS/FAIL only where thresholds decided."""
    return list_verdict(run.status, run.measurement_count, run.checked_count,
                        scale=run.scale, undefined=run.not_as_defined)


def summary_json(run: RunSummary, arch: str | None = None, uid: str | None = None
                 ) -> dict[str, Any]:
    """One runs-list row as JSON."""
    out: dict[str, Any] = {
        "id": run.id, "started_at": run.started_at.isoformat(), "hostname": run.hostname,
        "board": run.board, "kernel": run.kernel, "suite": run.suite, "status": run.status,
        "verdict": run_verdict_label(run),
        "worst_max_ns": run.worst_max_ns, "simulated": run.simulated, "tags": run.tags,
        "scale": run.scale, "traced": run.traced, "emulated": run.emulated,
        "markers": run_markers(run)}
    if arch is not None:
        out["arch"] = arch
    if uid is not None:
        out["uid"] = uid
    return out


def _stats(series: list[Any], measured_ns: int | None) -> dict[str, Any] | None:
    """The STAT_KEYS of merged series (None without latency series)."""
    s = merged_stats(series, measured_ns)
    if s is None or not s.samples:
        return None
    return {"samples": s.samples, "min_ns": s.min_ns,
            "mean_ns": None if s.mean_ns is None else round(s.mean_ns, 1),
            "p99_ns": s.pct("p99"), "p99_9_ns": s.pct("p99.9"), "max_ns": s.max_ns,
            "overruns": s.overruns}


@dataclass
class Comparison:
    """Runs side by side: facts per run, and statistics per measurement key."""

    runs: list[dict[str, Any]]
    # (scenario, measurement) -> per run (same order as runs): stats or None
    rows: list[tuple[str, str, list[dict[str, Any] | None]]] = field(default_factory=list)
    differing_facts: list[tuple[str, list[str]]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """The comparison as JSON."""
        return {"runs": self.runs,
                "measurements": [{"scenario": sc, "name": name, "stats": stats}
                                 for sc, name, stats in self.rows],
                "differing_facts": [{"fact": fact, "values": values}
                                    for fact, values in self.differing_facts]}


FACTS = (("host", lambda r: r.hostname), ("arch", lambda r: r.arch),
         ("kernel", lambda r: r.kernel), ("suite", lambda r: r.suite),
         ("scale", lambda r: str(r.scale)), ("status", lambda r: r.status),
         ("simulated", lambda r: "yes" if r.simulated else "no"),
         ("emulated", lambda r: "yes" if r.emulated else "no"),
         ("cpu model", lambda r: str(r.sysinfo.get("cpu_model", "-"))),
         ("preempt", lambda r: str(r.sysinfo.get("preempt_model", "-"))),
         ("cmdline", lambda r: str(r.sysinfo.get("cmdline", "-"))))


def compare_runs(store: Store, runs: list[RunDetail]) -> Comparison:
    """Statistics of the same measurements across runs, and the facts that differ."""
    per_measurement = measurement_series(store, [r.id for r in runs])
    keys: list[tuple[str, str]] = []
    table: dict[tuple[str, str], dict[int, dict[str, Any] | None]] = {}
    for m in per_measurement.values():
        key = (str(m["scenario"]), str(m["name"]))
        if key not in table:
            keys.append(key)
            table[key] = {}
        table[key].setdefault(m["run_id"], _stats(m["series"], m["measured_ns"]))
    facts = [(name, [get(r) for r in runs]) for name, get in FACTS]
    return Comparison(
        runs=[{"id": r.id, "hostname": r.hostname, "kernel": r.kernel, "suite": r.suite,
               "status": r.status, "started_at": r.started_at.isoformat(),
               "simulated": r.simulated, "emulated": r.emulated} for r in runs],
        rows=[(sc, name, [table[(sc, name)].get(r.id) for r in runs]) for sc, name in keys],
        differing_facts=[(name, values) for name, values in facts if len(set(values)) > 1])


# ---- the comparison analysis (as `rtbench compare`) and the reference runs ----

REF_NAME = r"^[a-z0-9][a-z0-9-]{0,63}$"


class CompareRefused(ValueError):
    """These runs cannot be compared (one line, for a 422)."""


def analysed_comparison(store: Store, run_ids: list[int], ref_names: list[str]
                        ) -> AnalysedComparison:
    """Stored runs and reference runs compared cell by cell, as `rtbench compare` does
    (first stored run the baseline): RunNotFound / LookupError / CompareRefused."""
    refs = []
    for name in ref_names:
        ref = reference_run(name)
        if ref is None:
            raise LookupError(f"no reference run {name[:64]!r}; the shipped ones are "
                              + ", ".join(r.name for r in reference_runs()))
        refs.append(ref)
    if not run_ids:
        raise CompareRefused("compare needs at least one stored run beside reference runs")
    runs = [store.get_run(run_id) for run_id in run_ids]  # an unknown id: RunNotFound
    if len(run_ids) + len(refs) < 2:
        raise CompareRefused("compare needs two runs or more (stored or reference)")
    chosen = [view_of_run(run) for run in runs]
    chosen += [view_of_reference(ref) for ref in refs]
    return do_compare(chosen)


def reference_summary_json(ref: ReferenceRun) -> dict[str, Any]:
    """One reference run in the list."""
    return {"name": ref.name, "title": ref.title, "platform": ref.platform,
            "kernel": ref.kernel, "source": f"reference/{ref.file}", "note": ref.label,
            "cells": len(ref.cells)}


def reference_json(ref: ReferenceRun) -> dict[str, Any]:
    """One reference run with its conditions and every published figure (ns)."""
    return {**reference_summary_json(ref), "conditions": ref.conditions,
            "cells": [{"scenario": c.scenario, "test": c.test, "params": c.params,
                       "label": c.label, "figures_ns": c.figures_ns, "other": c.other,
                       "p50_ns": hist_quantile(c, 0.5) if c.hist else None,
                       "p99_ns": hist_quantile(c, 0.99) if c.hist else None,
                       "hist_samples": sum(n for _, n in c.hist)} for c in ref.cells]}
