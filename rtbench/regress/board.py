"""Check stored runs against their board's baseline and store the outcome (the glue of
analysis/boardcheck.py and store/regressions.py, called wherever a run is stored: the
runner, `rtbench import`, the server's uploads, and `rtbench tag` of a baseline)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence

from rtbench.analysis.boardcheck import (
    BASELINE_TAG,
    MAX_BASELINE_RUNS,
    Candidate,
    baselines,
    check_series,
    choose_baseline,
    previous_kernel,
    run_cells,
    series_of,
)
from rtbench.analysis.runmodel import MAX_SERIES, BaselineCells, CellRun
from rtbench.bundle import RunDetail
from rtbench.store import RunNotFound, Store
from rtbench.store.evidence import Connection, read_evidence
from rtbench.store.regressions import (
    EVIDENCE_STATUSES,
    RegressionRow,
    read_board_kernels,
    read_board_runs,
    replace_checks,
    run_ids,
)

CACHE_RUNS = 64  # runs kept in memory while many runs are rechecked
# runs' cells (as the model reads them) and baselines (with their fitted tails) kept in
# memory: enough for every board x suite of a lab (each needs its baseline's runs and
# its kernel's newest runs), so that a night of uploads in any order refits nothing
CACHE_CELLS = 4096
BASELINES = 512


class RunCache:
    """Stored runs read once while a batch of runs is checked (the server keeps one for
    all its uploads)."""

    def __init__(self, store: Store, size: int = CACHE_RUNS) -> None:
        self.store = store
        self.size = size
        self._runs: OrderedDict[int, RunDetail] = OrderedDict()
        self._cells: OrderedDict[tuple[int, bool], dict[str, CellRun]] = OrderedDict()
        self._baselines: OrderedDict[tuple[int, ...], dict[str, BaselineCells]] = \
            OrderedDict()

    def forget(self, run_id: int) -> None:
        """Drop run_id from memory (read it anew next time)."""
        self._runs.pop(run_id, None)
        for key in [k for k in self._cells if k[0] == run_id]:
            del self._cells[key]
        for ids in [ids for ids in self._baselines if run_id in ids]:
            del self._baselines[ids]

    def load(self, conn: Connection, run_ids: Sequence[int], within: bool) -> None:
        """Read the runs among run_ids whose cells are not in memory, all at once in
        conn (a fixed number of queries, not a handful per run)."""
        missing = [i for i in dict.fromkeys(run_ids)
                   if (i, within) not in self._cells and i not in self._runs]
        for run_id, run in read_evidence(conn, missing).items():
            self._remember(run_id, run)

    def cells(self, run_id: int, within: bool = False) -> dict[str, CellRun]:
        """The run's cells as the model reads them, from memory when read lately."""
        key = (run_id, within)
        cells = self._cells.pop(key, None)
        if cells is None:
            cells = run_cells(self.get(run_id), within=within)
        self._cells[key] = cells
        while len(self._cells) > CACHE_CELLS:
            self._cells.popitem(last=False)
        return cells

    def baseline(self, run_ids: tuple[int, ...]) -> dict[str, BaselineCells]:
        """The baseline runs run_ids per cell, from memory when used lately (a board's
        next runs share their baseline, and its fitted tails)."""
        within = len(run_ids) == 1
        found = self._baselines.pop(run_ids, None) or baselines(
            [self.cells(i, within) for i in run_ids])
        self._baselines[run_ids] = found
        while len(self._baselines) > BASELINES:
            self._baselines.popitem(last=False)
        return found

    def put(self, run: RunDetail) -> None:
        """Keep run (a stored run, its id set) as if it had just been read."""
        assert run.id is not None
        self.forget(run.id)
        self._remember(run.id, run)

    def get(self, run_id: int, conn: Connection | None = None) -> RunDetail:
        """The run, from memory when read lately (else read in conn, or in a
        transaction of its own); RunNotFound when it is not stored."""
        run = self._runs.pop(run_id, None)
        if run is None:
            if conn is None:
                with self.store.transaction(f"read run {run_id}") as own:
                    run = read_evidence(own, [run_id]).get(run_id)
            else:
                run = read_evidence(conn, [run_id]).get(run_id)
        if run is None:
            raise RunNotFound(f"run {run_id} is not in {self.store.url}; "
                              "'rtbench ls' lists the stored runs")
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


def baseline_candidates(conn: Connection, run: RunDetail) -> list[Candidate]:
    """The runs among which choose_baseline picks run's baseline: its board's tagged
    baseline runs when there are any, else the newest runs of the kernel before run's;
    read as such, not as the board's whole history (which grows with every night)."""
    assert run.board is not None
    board, suite, simulated = run.board, run.suite, run.simulated
    rows = read_board_runs(conn, board, suite, tag=BASELINE_TAG, simulated=simulated,
                           exclude=run.id)
    if not rows:
        previous = previous_kernel(run.kernel, read_board_kernels(
            conn, board, suite, simulated=simulated, exclude=run.id))
        if previous is None:
            return []
        rows = read_board_runs(conn, board, suite, kernel=previous,
                               newest=MAX_BASELINE_RUNS, simulated=simulated,
                               exclude=run.id)
    return [Candidate(r.run_id, r.kernel, r.started_at, r.tags, r.simulated) for r in rows]


def kernel_candidates(conn: Connection, run: RunDetail) -> list[Candidate]:
    """The newest runs of run's board, suite and kernel (its series' candidates)."""
    assert run.board is not None
    rows = read_board_runs(conn, run.board, run.suite, kernel=run.kernel,
                           simulated=run.simulated, exclude=run.id,
                           before=(run.started_at, run.id or 0), newest=2 * MAX_SERIES)
    return [Candidate(r.run_id, r.kernel, r.started_at, r.tags, r.simulated) for r in rows]


def checks_of(store: Store, run_id: int, cache: RunCache | None = None
              ) -> list[RegressionRow]:
    """The checks of run_id against its board's baseline, read but not stored (the
    server reads them outside SQLite's write queue and queues only replace_checks).
    Each row's outcome is the decision model's state where a regression is open
    ("confirmed" or "suspected"), else "no regression" or "inconclusive".

    Everything the check reads (the run, its board's candidate runs, the cells of the
    baseline and of the kernel's runs not in memory) is read in one transaction, in a
    fixed number of queries."""
    runs = cache or RunCache(store)
    with store.transaction(f"read run {run_id} and its board's baseline") as conn:
        run = runs.get(run_id, conn)
        if run.status not in EVIDENCE_STATUSES or not run.board:
            return []
        baseline = choose_baseline(run.kernel, run.simulated,
                                   baseline_candidates(conn, run))
        if baseline is None:
            return []
        ids = tuple(baseline.run_ids)
        series = series_of(run_id, run.kernel, run.started_at,
                           kernel_candidates(conn, run), baseline)
        within = len(ids) == 1
        runs.load(conn, [*ids, *series], within)
    base = runs.baseline(ids)
    decisions = check_series([runs.cells(i, within) for i in series], base)
    return [RegressionRow(
        run_id=run_id, board=run.board, suite=run.suite, kernel=run.kernel,
        cell=d.cell, metric=d.metric, outcome=d.state or d.outcome,
        reason=d.reason, baseline_kind=baseline.kind,
        baseline_kernel=baseline.kernel, baseline_runs=list(baseline.run_ids),
        baseline_value=d.baseline, value=d.value, rel=d.rel,
        started_at=run.started_at) for d in decisions]


def recheck(store: Store, *, board: str | None = None, suite: str | None = None) -> int:
    """Check every stored run of board and suite again (all when None); how many."""
    cache = RunCache(store)
    ids = run_ids(store, board=board, suite=suite)
    for run_id in ids:
        check_stored_run(store, run_id, cache)
    return len(ids)
