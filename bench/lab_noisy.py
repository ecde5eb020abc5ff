#!/usr/bin/env python3
"""A lab with a real lab's noise and planted regressions of every size of issue 33: the
one generator of bench/lab_decisions.py (decided in memory) and bench/lab_truth.py
(written and decided through the store, SQLite and PostgreSQL).  Every run is drawn from
its own seeded generator (seed, board, suite, night, cell), so a run is the same
wherever it is made: in memory, in a store, or again when a bench ingests it.

The lab:
- boards x suites x nights, one run per board and suite each night; board b runs
  kernel k from night k x nights_per_kernel plus an offset of its own (rollouts are
  staggered: never every board the same night);
- per run two cells (scenarios idle and load, one cyclic thread each), WINDOWS windows
  of SAMPLES_PER_WINDOW samples (per-window histograms: 1 kHz, 1 s windows); a board's
  body latency is 4-20 us (x 1.3 under load);
- noise: each board x kernel a step of +-3 % (uniform), each run's body +-4 %, each
  run's spike sizes +-25 %; spikes 0.4 per window (Poisson) of 3-6x the body, bursts (a
  window in 40 holds 5-20 spikes more), host stalls (a window in 100 holds one sample of
  0.3-3 ms);
- planted regressions on a board, suite and cell for one kernel (the next kernel brings
  them back), one of each kind per four boards: 3x (every sample), +50 % (every sample),
  +20 % on p99 (the body), tail-only (spikes of 30x the baseline's max, one per 400 ms).
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

import numpy as np
import numpy.typing as npt

from rtbench.bundle import MeasurementDetail, RunDetail, ScenarioDetail, SeriesDetail
from rtbench.rtprobe import loglin7
from rtbench.rtprobe.records import WindowRecord

WINDOWS = 20
SAMPLES_PER_WINDOW = 1000
CELLS = ("idle", "load")
KINDS = ("3x", "+50%", "+20% p99", "tail-only")
NIGHTS_PER_MONTH = 30
SUITES = ("nightly", "stress", "soak", "boot")
THRESHOLD_NS = 100_000
# the largest sample the unregressed process can give: a host stall (spikes stay below
# 1.3 x 6 x 1.25 x 20 us); the tail-only regression's spikes are 30x that
BASE_MAX_NS = 3_000_000.0
START = datetime(2026, 1, 1, tzinfo=timezone.utc)
I64 = npt.NDArray[np.int64]


@dataclass(frozen=True)
class Plant:
    """A planted regression: board, suite and cell, on one kernel."""

    board: int
    suite: int
    cell: str
    kernel: int
    kind: str


@dataclass
class Lab:
    """The shape of a generated lab and its planted regressions."""

    boards: int
    suites: int
    nights: int
    kernels: int
    seed: int
    plants: list[Plant] = field(default_factory=list)

    @property
    def nights_per_kernel(self) -> int:
        """Nights between two kernels on one board."""
        return max(1, self.nights // self.kernels)

    def kernel_of(self, board: int, night: int) -> int:
        """The kernel board runs on night (staggered per board)."""
        offset = (board * 7) % max(1, self.nights_per_kernel // 2)
        return max(0, min(self.kernels - 1, (night - offset) // self.nights_per_kernel))

    def first_night(self, board: int, kernel: int) -> int:
        """The first night board runs kernel."""
        return next(n for n in range(self.nights) if self.kernel_of(board, n) == kernel)

    def plant_at(self, board: int, suite: int, cell: str, kernel: int) -> Plant | None:
        """The regression planted there (None: none)."""
        return self._plants().get((board, suite, cell, kernel))

    def _plants(self) -> dict[tuple[int, int, str, int], Plant]:
        """The plants by where they are."""
        return {(p.board, p.suite, p.cell, p.kernel): p for p in self.plants}

    def board_name(self, board: int) -> str:
        """The name of board number board."""
        return f"board-{board:04d}"

    def suite_name(self, suite: int) -> str:
        """The name of suite number suite."""
        return SUITES[suite] if suite < len(SUITES) else f"suite-{suite}"

    def kernel_name(self, kernel: int) -> str:
        """Kernel number kernel (version order differs from text order: 6.10 > 6.9)."""
        return f"6.{kernel + 1}.0-rt{kernel + 3}"

    @property
    def planted_board(self) -> str:
        """The board of the first planted 3x regression (the board pages show)."""
        return self.board_name(next(p.board for p in self.plants if p.kind == "3x"))


def plan(boards: int, suites: int, nights: int, kernels: int, seed: int) -> Lab:
    """A lab with one planted regression of each kind per four boards (kernels 1..)."""
    if boards < 1 or suites < 1 or kernels < 2 or nights < kernels:
        raise ValueError("a lab needs a board, a suite, 2 kernels and a night per kernel")
    lab = Lab(boards, suites, nights, kernels, seed)
    rng = np.random.default_rng(seed)
    for b in range(0, boards, 4):
        for n, kind in enumerate(KINDS):
            board = (b + n) % boards
            lab.plants.append(Plant(board, int(rng.integers(suites)),
                                    CELLS[int(rng.integers(len(CELLS)))],
                                    1 + int(rng.integers(max(1, kernels - 1))), kind))
    return lab


def lab_order(lab: Lab) -> list[tuple[int, int, int]]:
    """Every (board, suite, night) of the lab in the order it ran: night by night."""
    return [(b, s, n) for n in range(lab.nights) for b in range(lab.boards)
            for s in range(lab.suites)]


@dataclass
class CellWindows:
    """One cell of one run as generated: each window's histogram and largest sample."""

    idx: list[I64]
    cnt: list[I64]
    tops: list[int]
    mins: list[int]
    sum_ns: int
    min_ns: int
    above: int  # samples above THRESHOLD_NS


def body_ns(lab: Lab, board: int, cell: str) -> float:
    """The body latency of board's cell (before the run's noise)."""
    rng = np.random.default_rng([lab.seed, 1, board])
    return float(rng.uniform(4_000, 20_000)) * (1.3 if cell == "load" else 1.0)


def step(lab: Lab, board: int, kernel: int) -> float:
    """Board x kernel's step (+-3 %)."""
    return float(np.random.default_rng([lab.seed, 2, board, kernel]).uniform(0.97, 1.03))


def cell_windows(lab: Lab, board: int, suite: int, night: int, cell: str) -> CellWindows:
    """One cell of one run: WINDOWS windows of noisy latencies (planted where planned)."""
    kernel = lab.kernel_of(board, night)
    plant = lab.plant_at(board, suite, cell, kernel)
    kind = plant.kind if plant else None
    rng = np.random.default_rng([lab.seed, 3, board, suite, night, CELLS.index(cell)])
    body = body_ns(lab, board, cell)
    run_body = step(lab, board, kernel) * rng.uniform(0.96, 1.04)
    spike_size = rng.uniform(0.75, 1.25)
    factor = {"3x": 3.0, "+50%": 1.5}.get(kind or "", 1.0)
    body_factor = 1.2 if kind == "+20% p99" else 1.0
    shape = (WINDOWS, SAMPLES_PER_WINDOW)
    lat = body * run_body * body_factor * (0.7 + rng.exponential(0.15, shape))
    spikes = rng.poisson(0.4, WINDOWS)
    bursts = rng.random(WINDOWS) < 1 / 40
    spikes[bursts] += rng.integers(5, 21, int(bursts.sum()))
    for w in np.flatnonzero(spikes):
        where = rng.choice(SAMPLES_PER_WINDOW, spikes[w], replace=False)
        lat[w, where] = body * run_body * spike_size * rng.uniform(3, 6, where.size)
    for w in np.flatnonzero(rng.random(WINDOWS) < 1 / 100):  # host stalls
        lat[w, rng.integers(SAMPLES_PER_WINDOW)] = rng.uniform(300_000, 3_000_000)
    if kind == "tail-only":  # one per 400 ms of a 1 s window
        for w, n in enumerate(rng.poisson(2.5, WINDOWS)):
            lat[w, rng.choice(SAMPLES_PER_WINDOW, n, replace=False)] = 30 * BASE_MAX_NS
    values = (lat * factor).astype(np.int64)
    where_w = np.arange(WINDOWS)[:, None] * loglin7.BUCKETS
    dense = np.bincount((loglin7.index(values.ravel()).reshape(shape) + where_w).ravel(),
                        minlength=WINDOWS * loglin7.BUCKETS).reshape(WINDOWS, -1)
    out = CellWindows([], [], values.max(axis=1).tolist(), values.min(axis=1).tolist(),
                      int(values.sum()), int(values.min()),
                      int((values > THRESHOLD_NS).sum()))
    for row in dense:
        nz = np.flatnonzero(row)
        out.idx.append(nz.astype(np.int64))
        out.cnt.append(row[nz].astype(np.int64))
    return out


def _window(cw: CellWindows, w: int) -> WindowRecord:
    """Window w of the cell's thread as the store keeps it."""
    return WindowRecord(
        series=0, index=w, warmup=False, start_ns=w * 10**9, end_ns=(w + 1) * 10**9,
        count=SAMPLES_PER_WINDOW, min_ns=cw.mins[w], max_ns=cw.tops[w], sum_ns=0,
        overruns=0, exceed=[], hist_json=json.dumps(
            np.column_stack((cw.idx[w], cw.cnt[w])).tolist(), separators=(",", ":")))


def _measurement(cw: CellWindows) -> MeasurementDetail:
    """The cell's cyclic measurement: one thread, its windows and merged histogram."""
    idx, cnt = loglin7.merge(*zip(cw.idx, cw.cnt, strict=True))
    count = int(cnt.sum())
    top = max(cw.tops)
    series = SeriesDetail(
        index=0, label="cpu1", cpu=1, count=count, min_ns=cw.min_ns, max_ns=top,
        sum_ns=cw.sum_ns, overruns=0, early=0, exceed=[(THRESHOLD_NS, cw.above)],
        worst=[(0, top)], warmup={}, hist=list(zip(idx.tolist(), cnt.tolist(), strict=True)))
    return MeasurementDetail(
        id=0, name="cyclic", test="cyclic", params={"interval_ns": 1_000_000},
        command=["rtprobe", "cyclic"], status="ok", exit_code=0, reason=None,
        thresholds_ns=[THRESHOLD_NS], simulated=False, probe_version="lab",
        t0_unix_ns=None, measured_ns=WINDOWS * 10**9, elapsed_ns=WINDOWS * 10**9,
        verdicts=[], data={}, start={"rt": {"policy": "fifo", "priority": 80}},
        series=[series], windows=[_window(cw, w) for w in range(WINDOWS)])


def started_at(lab: Lab, board: int, suite: int, night: int) -> datetime:
    """When the run started: night after night, the boards' suites one after another."""
    return START + timedelta(days=night, minutes=board * lab.suites + suite)


def make_run(lab: Lab, board: int, suite: int, night: int) -> RunDetail:
    """One generated run of board and suite on night (its two cells)."""
    name = lab.board_name(board)
    kernel = lab.kernel_name(lab.kernel_of(board, night))
    start = started_at(lab, board, suite, night)
    scenarios = [ScenarioDetail(id=0, name=cell, loads=[], load_cpus=None,
                                measure_cpus=None, intensity=None,
                                measurements=[_measurement(cell_windows(
                                    lab, board, suite, night, cell))])
                 for cell in CELLS]
    uid = uuid.UUID(int=(lab.seed << 96) | (board << 64) | (suite << 32) | night)
    return RunDetail(
        id=0, suite=lab.suite_name(suite), suite_source="", scale=1.0, status="ok",
        started_at=start, finished_at=start + timedelta(seconds=2 * WINDOWS),
        hostname=name, target=f"ssh://root@{name}", kernel=kernel, arch="aarch64",
        sysinfo={"uname": {"release": kernel, "machine": "aarch64"},
                 "cpu_model": "lab board"},
        preflight=[], tool_versions={"rtbench": "lab_noisy"}, command_line=["lab_noisy"],
        simulated=False, scenarios=scenarios, uid=uid.hex, board=name)


def where_run(lab: Lab, board: str, suite: str, at: datetime) -> tuple[int, int, int]:
    """(board, suite, night) of a stored run of lab from its board, suite and start."""
    b = int(board.rsplit("-", 1)[1])
    s = next(i for i in range(lab.suites) if lab.suite_name(i) == suite)
    if at.tzinfo is None:
        at = at.replace(tzinfo=timezone.utc)
    return b, s, (at - START).days
