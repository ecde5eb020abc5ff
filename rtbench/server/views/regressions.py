"""The regression board as the server shows it: stored checks grouped per board, cell,
metric and the kernel a regression started on; and the check of each uploaded run."""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from datetime import datetime
from typing import Any

from rtbench.analysis.openregs import OpenRegression, open_regressions
from rtbench.bundle import ScenarioDetail
from rtbench.regress.board import RunCache, checks_of
from rtbench.server.alerts import regression_events
from rtbench.server.webhooks import Dispatcher
from rtbench.server.writequeue import WriteQueue
from rtbench.store import Store, StoreError
from rtbench.store.regressions import (
    REGRESSION_STATES,
    RegressionRow,
    list_checks,
    open_checks,
    outcome_counts,
    replace_checks,
)

MAX_ROWS = 5000  # checks read per request (the newest first)
RUNS_LISTED = 10  # run ids listed per group


def grouped(rows: list[RegressionRow]) -> list[dict[str, Any]]:
    """Checks of the same board, suite, cell, metric and kernel as one entry: how many
    runs, the baseline's figure, the worst new one and each run's own (run_values; ns,
    exceedance rate per million), its state (confirmed when any run confirmed it, else
    suspected; None for other outcomes) and the first run listed (rows come newest
    first)."""
    groups: dict[tuple[str, str, str, str, str], list[RegressionRow]] = {}
    for row in rows:
        groups.setdefault((row.board, row.suite, row.cell, row.metric, row.kernel),
                          []).append(row)
    out = []
    for (board, suite, cell, metric, kernel), members in groups.items():
        worst = max(members, key=lambda r: (r.value is not None, r.value or 0.0))
        states = {r.outcome for r in members}
        state = next((o for o in REGRESSION_STATES if o in states), None)
        out.append({
            "board": board, "suite": suite, "cell": cell, "metric": metric,
            "kernel": kernel, "outcome": worst.outcome, "state": state,
            "first_run": members[-1].run_id, "reason": worst.reason,
            "baseline": {"kind": worst.baseline_kind, "kernel": worst.baseline_kernel,
                         "runs": worst.baseline_runs, "value": worst.baseline_value},
            "value": worst.value, "rel": worst.rel, "runs": len(members),
            "run_ids": [r.run_id for r in members][:RUNS_LISTED],
            # each run with its own figure: runs are never merged under one value
            "run_values": [{"run_id": r.run_id, "value": r.value}
                           for r in members][:RUNS_LISTED],
            "newest_started_at": members[0].started_at.isoformat()})
    return out


def regressions_json(store: Store, *, board: str | None, suite: str | None,
                     since: datetime | None, outcome: str) -> dict[str, Any]:
    """GET /api/v1/regressions: the grouped checks and the count of each outcome."""
    rows = list_checks(store, board=board, suite=suite, since=since, outcome=outcome,
                       limit=MAX_ROWS)
    return {"outcome": outcome, "counts": outcome_counts(store, board=board, suite=suite,
                                                         since=since),
            "truncated": len(rows) >= MAX_ROWS, "regressions": grouped(rows)}


def row_figures(row: RegressionRow) -> dict[str, Any]:
    """A check's figures as a regression event carries them."""
    return {"reason": row.reason,
            "baseline": {"kind": row.baseline_kind, "kernel": row.baseline_kernel,
                         "runs": row.baseline_runs, "value": row.baseline_value},
            "value": row.value, "rel": row.rel}


class UploadChecker:
    """Checks uploaded runs on a thread of its own (an upload never waits for it) and
    sends the regression alerts the run changed: the regressions open on its board
    before and after its checks (rtbench.server.alerts.regression_events)."""

    def __init__(self, store: Store, queue: WriteQueue, webhooks: Dispatcher) -> None:
        self.store = store
        self.queue = queue
        self.webhooks = webhooks
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="rtbench-regressions")
        # baseline runs read once for the uploads after them (used by the one thread)
        self._cache = RunCache(store)
        self.failures: list[str] = []

    def submit(self, run_id: int, scenarios: list[ScenarioDetail] | None = None
               ) -> Future[None]:
        """Check run_id later.  scenarios: the run's scenarios as just stored from an
        upload, so that the check reads only the run's own row back, not every
        measurement (the store keeps them as given)."""
        return self._pool.submit(self._check, run_id, scenarios)

    def _check(self, run_id: int, scenarios: list[ScenarioDetail] | None = None) -> None:
        """Check one run (a database failure is kept in failures, not raised)."""
        # the reads (the run, its board's runs and baseline) do not hold SQLite's write
        # queue: with them inside it, every upload waited for the last one's whole check
        try:
            if scenarios is None:
                self._cache.forget(run_id)  # the checked run itself is always read anew
            else:
                # the run's row as stored (its board, host, times), its scenarios as sent
                stored = self.store.get_run(run_id, parts={})
                self._cache.put(replace(stored, scenarios=scenarios))
            rows = checks_of(self.store, run_id, self._cache)
            before = self._open(rows)
            self.queue.run(lambda: replace_checks(self.store, run_id, rows))
            after = self._open(rows)
        except StoreError as exc:
            self.failures.append(f"run {run_id}: {exc}")
            return
        if not rows:
            return
        figures = {(r.board, r.suite, r.cell, r.metric): row_figures(r) for r in rows}
        for event, data in regression_events(before, after, run_id=run_id,
                                             kernel=rows[0].kernel,
                                             public_url=self.webhooks.public_url,
                                             figures=figures):
            self.webhooks.send(event, data)

    def _open(self, rows: list[RegressionRow]) -> list[OpenRegression]:
        """The regressions open on the board of rows (none when the run has no checks;
        the webhooks need them only when someone listens)."""
        if not rows or not self.webhooks.hooks:
            return []
        return open_regressions(open_checks(self.store, rows[0].board))

    def wait(self) -> None:
        """Wait until every submitted check is done (tests, shutdown)."""
        self._pool.submit(lambda: None).result()

    def close(self) -> None:
        """Finish the checks under way and stop the thread."""
        self._pool.shutdown(wait=True)
