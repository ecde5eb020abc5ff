"""The one label scheme and the metric families that /metrics and every export share.

Every series is labelled `board, kernel, suite, scenario, test, series` (test: the
measurement's name; series: the thread or CPU label), so one dashboard reads what
`GET /metrics` scrapes, what `--format openmetrics-history` backfills and what a run's
`openmetrics`/`prometheus` export pushes.  No run id is ever a label: the run id is the
value of `rtbench_cell_run_id` (a link target, /runs/ID), so a series keeps its name
from run to run and a metrics report can compare two runs figure by figure.
Exceedances add `threshold` (seconds); the per-cell verdict has no `series`.
Every family is a gauge: a value of one run, which may go down in the next one.
A figure the run could not give (p99.9 of too few samples) has no sample.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from rtbench.bundle import RunDetail, board_of
from rtbench.interop._cells import cells
from rtbench.interop._exposition import Family, labels_text
from rtbench.store.cells import CellRow

LABELS = ("board", "kernel", "suite", "scenario", "test", "series")
# percentile label of analysis/stats.py -> the part of its metric name
_PERCENTILE_NAMES = {"p50": "p50", "p90": "p90", "p99": "p99", "p99.9": "p999",
                     "p99.99": "p9999", "p99.999": "p99999"}


def series_labels(board: str, kernel: str, suite: str, scenario: str, test: str,
                  series: str | None) -> dict[str, str]:
    """The labels of one series (no series label for a per-cell figure)."""
    labels = {"board": board, "kernel": kernel, "suite": suite, "scenario": scenario,
              "test": test}
    if series is not None:
        labels["series"] = series
    return labels


def _latency(figure: str, what: str) -> Family:
    """A gauge family rtbench_cell_latency_<figure>_seconds."""
    return Family(f"rtbench_cell_latency_{figure}_seconds", "gauge",
                  f"{what} wake-up latency of the series in its run.", "seconds")


def _row_families() -> dict[str, Family]:
    """The families of the stored cell summaries, by short name, in output order."""
    return {
        "max": _latency("max", "Largest"),
        "p999": _latency("p999", "99.9th percentile"),
        "p99": _latency("p99", "99th percentile"),
        "exceed": Family("rtbench_cell_exceedances", "gauge",
                         "Samples above the threshold in the run."),
        "samples": Family("rtbench_cell_samples", "gauge",
                          "Latency samples of the series in the run."),
        "overruns": Family("rtbench_cell_overruns", "gauge",
                           "Periods skipped because a wake-up came too late, in the run."),
        "started": Family("rtbench_cell_run_timestamp_seconds", "gauge",
                          "Start of the run (Unix time).", "seconds"),
        "run_id": Family("rtbench_cell_run_id", "gauge",
                         "Id of the run on its server (/runs/ID)."),
    }


def row_labels(row: CellRow) -> dict[str, str]:
    """The labels of a stored cell summary."""
    return series_labels(row.board, row.kernel, row.suite, row.scenario, row.measurement,
                         row.series_label)


def _stamp(started_at: datetime) -> str:
    """A sample timestamp (Unix seconds, millisecond precision) as OpenMetrics text."""
    return f"{started_at.timestamp():.3f}"


def row_families(rows: Iterable[CellRow], stamped: bool = False) -> list[Family]:
    """The families of cell summaries: one sample per row and figure, each stamped with
    its run's start when stamped (history: rows oldest first, as history_rows gives
    them); a figure a row does not know is left out."""
    fams = _row_families()
    for row in rows:
        labels = row_labels(row)
        rendered = labels_text(labels)  # once per row, shared by its samples
        stamp = _stamp(row.started_at) if stamped else None
        for key, value in (("max", row.max_ns), ("p999", row.p999_ns), ("p99", row.p99_ns)):
            if value is not None:
                fams[key].add_rendered(rendered, value / 1e9, timestamp=stamp)
        for threshold_ns, above in row.exceed:
            # the row's labels plus threshold, without escaping them again
            fams["exceed"].add_rendered(
                f'{rendered[:-1]},threshold="{threshold_ns / 1e9!r}"}}', above,
                timestamp=stamp)
        fams["samples"].add_rendered(rendered, row.count, timestamp=stamp)
        fams["overruns"].add_rendered(rendered, row.overruns, timestamp=stamp)
        fams["started"].add_rendered(rendered, row.started_at.timestamp(), timestamp=stamp)
        fams["run_id"].add_rendered(rendered, row.run_id, timestamp=stamp)
    if stamped:
        # OpenMetrics keeps a series' samples together, oldest first: a stable sort by
        # labels keeps the time order of rows given oldest first
        for fam in fams.values():
            fam.samples.sort(key=lambda sample: (sample[0], sample[1]))
    return list(fams.values())


def history_rows(rows: Iterable[CellRow]) -> list[CellRow]:
    """rows (oldest first) without a second run of one series at the same millisecond
    (the later run id is kept, as /metrics keeps it): a TSDB takes one sample per
    series and timestamp."""
    kept: dict[tuple[tuple[str, ...], str], CellRow] = {}
    for row in rows:
        key = (tuple(row_labels(row).values()), _stamp(row.started_at))
        old = kept.get(key)
        if old is None or row.run_id > old.run_id:
            kept[key] = row
    return sorted(kept.values(), key=lambda r: (r.started_at, r.run_id))


def run_families(run: RunDetail) -> list[Family]:
    """The figure families of one run: per series min, mean, known percentiles, max,
    samples and overruns, and the verdict of each cell (1 every verdict held, else 0);
    one line per figure, no run id and no bucket lines (names that compare)."""
    board = run.board or board_of(run.target, run.hostname)
    fams: dict[str, Family] = {
        "min": _latency("min", "Smallest"), "mean": _latency("mean", "Mean")}
    for label, short in _PERCENTILE_NAMES.items():
        fams[label] = _latency(short, f"{label[1:]}th percentile")
    fams["max"] = _latency("max", "Largest")
    fams["samples"] = Family("rtbench_cell_samples", "gauge",
                             "Latency samples of the series in the run.")
    fams["overruns"] = Family("rtbench_cell_overruns", "gauge",
                              "Periods skipped because a wake-up came too late, in the run.")
    verdict = Family("rtbench_cell_verdict", "gauge",
                     "1 when every verdict of the cell held, else 0.")
    for cell in cells(run):
        name = cell.measurement.name
        verdict.add(series_labels(board, run.kernel, run.suite, cell.scenario.name, name,
                                  None), 1 if cell.passed else 0)
        for series, stats in cell.per_series:
            rendered = labels_text(series_labels(board, run.kernel, run.suite,
                                                 cell.scenario.name, name, series.label))
            values: list[tuple[str, float | int | None]] = [
                ("min", stats.min_ns), ("mean", stats.mean_ns),
                *((label, stats.percentiles.get(label)) for label in _PERCENTILE_NAMES),
                ("max", stats.max_ns)]
            for key, value in values:
                if value is not None:
                    fams[key].add_rendered(rendered, value / 1e9)
            fams["samples"].add_rendered(rendered, stats.samples)
            fams["overruns"].add_rendered(rendered, stats.overruns)
    return [fam for fam in fams.values() if fam.samples] + [verdict]
