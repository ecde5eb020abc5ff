"""Check stored runs against their board's baseline and store the outcome (the glue of
analysis/boardcheck.py and store/regressions.py, called wherever a run is stored: the
runner, `rtbench import`, the server's uploads, and `rtbench tag` of a baseline)."""

from __future__ import annotations

from collections import OrderedDict

from rtbench.analysis.boardcheck import (
    BASELINE_TAG,
    MAX_BASELINE_RUNS,
    Candidate,
    check_run,
    choose_baseline,
    pooled_view,
    previous_kernel,
)
from rtbench.analysis.compare import RunView
from rtbench.bundle import RunDetail
from rtbench.store import Store
from rtbench.store.regressions import (
    EVIDENCE_STATUSES,
    RegressionRow,
    board_kernels,
    board_runs,
    replace_checks,
    run_ids,
)

CACHE_RUNS = 64  # baseline runs kept in memory while many runs are rechecked
POOLED_VIEWS = 16  # pooled baselines kept in memory


class RunCache:
    """Stored runs read once while a batch of runs is checked."""

    def __init__(self, store: Store, size: int = CACHE_RUNS) -> None:
        self.store = store
        self.size = size
        self._runs: OrderedDict[int, RunDetail] = OrderedDict()
        self._pooled: OrderedDict[tuple[int, ...], RunView] = OrderedDict()

    def forget(self, run_id: int) -> None:
        """Drop run_id from memory (read it anew next time)."""
        self._runs.pop(run_id, None)
        for ids in [ids for ids in self._pooled if run_id in ids]:
            del self._pooled[ids]

    def pooled(self, run_ids: tuple[int, ...]) -> RunView:
        """The baseline runs run_ids pooled into one view, from memory when pooled
        lately (a board's next runs share their baseline)."""
        view = self._pooled.pop(run_ids, None) or pooled_view(
            [self.get(i) for i in run_ids], "baseline")
        self._pooled[run_ids] = view
        while len(self._pooled) > POOLED_VIEWS:
            self._pooled.popitem(last=False)
        return view

    def put(self, run: RunDetail) -> None:
        """Keep run (a stored run, its id set) as if it had just been read."""
        assert run.id is not None
        self.forget(run.id)
        self._remember(run.id, run)

    def get(self, run_id: int) -> RunDetail:
        """The run, from memory when read lately."""
        run = self._runs.pop(run_id, None) or self.store.get_run(run_id)
        self._remember(run_id, run)
        return run

    def _remember(self, run_id: int, run: RunDetail) -> None:
        """Keep run as the newest in memory, forgetting the oldest past size."""
        self._runs[run_id] = run
        while len(self._runs) > self.size:
            self._runs.popitem(last=False)


def check_stored_run(store: Store, run_id: int, cache: RunCache | None = None
                     ) -> list[RegressionRow]:
    """Check run_id against its board's baseline; store and return the checks (none
    when the run holds no evidence or its board has no baseline for it yet)."""
    rows = checks_of(store, run_id, cache)
    replace_checks(store, run_id, rows)
    return rows


def baseline_candidates(store: Store, run: RunDetail) -> list[Candidate]:
    """The runs among which choose_baseline picks run's baseline: its board's tagged
    baseline runs when there are any, else the newest runs of the kernel before run's;
    read as such, not as the board's whole history (which grows with every night)."""
    assert run.board is not None
    board, suite, simulated = run.board, run.suite, run.simulated
    rows = board_runs(store, board, suite, tag=BASELINE_TAG, simulated=simulated,
                      exclude=run.id)
    if not rows:
        previous = previous_kernel(run.kernel, board_kernels(
            store, board, suite, simulated=simulated, exclude=run.id))
        if previous is None:
            return []
        rows = board_runs(store, board, suite, kernel=previous, newest=MAX_BASELINE_RUNS,
                          simulated=simulated, exclude=run.id)
    return [Candidate(r.run_id, r.kernel, r.started_at, r.tags, r.simulated) for r in rows]


def checks_of(store: Store, run_id: int, cache: RunCache | None = None
              ) -> list[RegressionRow]:
    """The checks of run_id against its board's baseline, read but not stored (the
    server reads them outside SQLite's write queue and queues only replace_checks)."""
    runs = cache or RunCache(store)
    run = runs.get(run_id)
    rows: list[RegressionRow] = []
    if run.status in EVIDENCE_STATUSES and run.board:
        baseline = choose_baseline(run.kernel, run.simulated,
                                   baseline_candidates(store, run))
        if baseline is not None:
            ids = tuple(baseline.run_ids)
            checks = check_run(run, (), base=runs.pooled(ids))
            rows = [RegressionRow(
                run_id=run_id, board=run.board, suite=run.suite, kernel=run.kernel,
                cell=c.cell, metric=c.metric, outcome=c.outcome, reason=c.reason,
                baseline_kind=baseline.kind, baseline_kernel=baseline.kernel,
                baseline_runs=list(baseline.run_ids), baseline_value=c.baseline,
                value=c.value, rel=c.rel, started_at=run.started_at) for c in checks]
    return rows


def recheck(store: Store, *, board: str | None = None, suite: str | None = None) -> int:
    """Check every stored run of board and suite again (all when None); how many."""
    cache = RunCache(store)
    ids = run_ids(store, board=board, suite=suite)
    for run_id in ids:
        check_stored_run(store, run_id, cache)
    return len(ids)
