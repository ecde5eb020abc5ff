#!/usr/bin/env python3
"""A lab's results, generated: N boards x K kernels x R runs written through the Store,
with one planted regression (one board, from one kernel on, max 22 us -> 180 us in every
window of its first thread: a worse tail, not one sample).

Each run: suite "nightly", one scenario "idle", one cyclic measurement "cyclic" with
two series (cpu0, cpu1) of 100 000 samples in 20 windows each and a 100 us threshold,
SCHED_FIFO, not simulated.  Runs start one hour apart per board, kernel after kernel, so
each board's history shows every kernel change.  Importable by tests (small sizes) and used by
bench/lab_scale.py (1,000 x 5 x 10).  A fixture with exact figures, not a lab's noise: the
correctness of the regression board is measured on bench/lab_noisy.py's lab
(bench/lab_decisions.py, bench/lab_truth.py).

    python3 bench/lab_data.py --db sqlite:////tmp/lab.db [--boards 20 --kernels 4 --runs 3]
"""

from __future__ import annotations

import argparse
import random
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from rtbench.bundle import MeasurementDetail, RunDetail, ScenarioDetail, SeriesDetail
from rtbench.rtprobe import loglin7
from rtbench.rtprobe.records import WindowRecord
from rtbench.store import Store

# version order differs from string order on purpose (6.12 < 6.6 as text)
KERNELS = ("6.1.0-rt5", "6.6.0-rt15", "6.12.0-rt3", "6.13.0-rt1", "6.18.0-rt2")
SUITE = "nightly"
THRESHOLD_NS = 100_000
SAMPLES = 100_000
WINDOWS = 20  # per-window histograms per thread (the decision model needs windows)
BASE_MAX_NS = 22_000
REGRESSED_MAX_NS = 180_000
START = datetime(2026, 1, 1, tzinfo=timezone.utc)


@dataclass(frozen=True)
class Lab:
    """The shape of a generated lab and where its regression is planted."""

    boards: int
    kernels: int
    runs: int
    regressed_board: int  # index of the board that regresses
    regressed_from: int  # index of the first kernel it regresses on

    def board_name(self, index: int) -> str:
        """The name of board number index."""
        return f"board-{index:04d}"

    @property
    def kernel_names(self) -> tuple[str, ...]:
        """The kernels in the order the lab ran them."""
        return KERNELS[:self.kernels]

    @property
    def planted_board(self) -> str:
        """The regressed board's name."""
        return self.board_name(self.regressed_board)

    @property
    def planted_kernel(self) -> str:
        """The first kernel the regression shows on."""
        return KERNELS[self.regressed_from]


def make_lab(boards: int, kernels: int, runs: int) -> Lab:
    """A lab of that size; the regression sits on the middle board from the middle
    kernel on (the last kernel of two)."""
    if not 2 <= kernels <= len(KERNELS):
        raise ValueError(f"kernels must be 2 to {len(KERNELS)}")
    if boards < 1 or runs < 1:
        raise ValueError("boards and runs must be at least 1")
    return Lab(boards=boards, kernels=kernels, runs=runs, regressed_board=boards // 2,
               regressed_from=max(1, kernels // 2))


def _window(series: int, index: int, hist: dict[int, int], max_ns: int) -> WindowRecord:
    """One second of one thread (its histogram as given)."""
    count = sum(hist.values())
    return WindowRecord(
        series=series, index=index, warmup=False, start_ns=index * 10**9,
        end_ns=(index + 1) * 10**9, count=count, min_ns=5_000, max_ns=max_ns,
        sum_ns=6_000 * count, overruns=0, exceed=[],
        hist_json="[" + ",".join(f"[{b},{c}]" for b, c in sorted(hist.items())) + "]")


def _series(index: int, rng: random.Random, max_ns: int, regressed: bool
            ) -> tuple[SeriesDetail, list[WindowRecord]]:
    """One thread's summary, histogram and WINDOWS windows: SAMPLES around 5-9 us, a few
    up to max_ns (in one window; in every window when regressed: a worse tail)."""
    tail = [max_ns] * (WINDOWS if regressed else 1) \
        + [rng.randint(12_000, 18_000) for _ in range(9)]
    per_window = (SAMPLES - len(tail)) // WINDOWS
    hists: list[dict[int, int]] = []
    tops = []
    for w in range(WINDOWS):
        body = per_window if w < WINDOWS - 1 else SAMPLES - len(tail) - per_window * w
        hist: dict[int, int] = {}
        for k, share in enumerate((0.5, 0.3, 0.15, 0.05)):
            bucket = loglin7.index_one(5_000 + 1_000 * k)
            hist[bucket] = hist.get(bucket, 0) + int(body * share)
        first = loglin7.index_one(5_000)
        hist[first] += body - sum(hist.values())
        hists.append(hist)
        tops.append(8_000)
    for n, value in enumerate(tail):
        w = n % WINDOWS if regressed else rng.randrange(WINDOWS)
        bucket = loglin7.index_one(value)
        hists[w][bucket] = hists[w].get(bucket, 0) + 1
        tops[w] = max(tops[w], value)
    total: dict[int, int] = {}
    for hist in hists:
        for bucket, count in hist.items():
            total[bucket] = total.get(bucket, 0) + count
    above = sum(1 for v in tail if v > THRESHOLD_NS)
    return SeriesDetail(
        index=index, label=f"cpu{index}", cpu=index, count=SAMPLES, min_ns=5_000,
        max_ns=max_ns, sum_ns=6_000 * SAMPLES, overruns=0, early=0,
        exceed=[(THRESHOLD_NS, above)], worst=[(1_000_000, max_ns)], warmup={},
        hist=sorted(total.items())), [_window(index, w, h, tops[w])
                                      for w, h in enumerate(hists)]


def make_run(lab: Lab, board: int, kernel: int, run: int, *, simulated: bool = False,
             policy: str = "fifo") -> RunDetail:
    """One generated run of board on kernel (the run-th of that pair)."""
    rng = random.Random(board * 1_000_003 + kernel * 1_009 + run)
    regressed = board == lab.regressed_board and kernel >= lab.regressed_from
    name = lab.board_name(board)
    started = START + timedelta(hours=kernel * lab.runs + run)
    made = [_series(i, rng, REGRESSED_MAX_NS if regressed and i == 0
                    else BASE_MAX_NS - rng.randint(0, 2_000), regressed and i == 0)
            for i in range(2)]
    series = [s for s, _ in made]
    windows = [w for _, ws in made for w in ws]
    m = MeasurementDetail(
        id=0, name="cyclic", test="cyclic", params={"interval_ns": 1_000_000},
        command=["rtprobe", "cyclic"], status="ok", exit_code=0, reason=None,
        thresholds_ns=[THRESHOLD_NS], simulated=simulated, probe_version="lab",
        t0_unix_ns=None, measured_ns=100 * 10**9, elapsed_ns=100 * 10**9, verdicts=[],
        data={}, start={"rt": {"policy": policy, "priority": 80}}, series=series,
        windows=windows)
    kernel_name = KERNELS[kernel]
    return RunDetail(
        id=0, suite=SUITE, suite_source="", scale=1.0, status="ok",
        started_at=started, finished_at=started + timedelta(minutes=2), hostname=name,
        target=f"ssh://root@{name}", kernel=kernel_name, arch="aarch64",
        sysinfo={"uname": {"release": kernel_name, "machine": "aarch64"},
                 "cpu_model": "lab board"},
        preflight=[], tool_versions={"rtbench": "lab_data"}, command_line=["lab_data"],
        simulated=simulated, scenarios=[ScenarioDetail(
            id=0, name="idle", loads=[], load_cpus=None, measure_cpus=None, intensity=None,
            measurements=[m])],
        uid=uuid.UUID(int=rng.getrandbits(128)).hex, board=name)


def write_lab(store: Store, lab: Lab, batch: int = 2_000) -> int:
    """Write every run of lab into store (batch runs a transaction); how many."""
    pending: list[RunDetail] = []
    written = 0
    for kernel in range(lab.kernels):
        for run in range(lab.runs):
            for board in range(lab.boards):
                pending.append(make_run(lab, board, kernel, run))
                if len(pending) >= batch:
                    written += len(store.add_bundles(pending))
                    pending = []
    if pending:
        written += len(store.add_bundles(pending))
    return written


def main() -> None:
    """Generate a lab into --db."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", required=True, help="database URL or SQLite file")
    ap.add_argument("--boards", type=int, default=20)
    ap.add_argument("--kernels", type=int, default=4)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    lab = make_lab(args.boards, args.kernels, args.runs)
    with Store.open(args.db) as store:
        n = write_lab(store, lab)
    print(f"{n} runs; regression planted on {lab.planted_board} from "
          f"{lab.planted_kernel} on")


if __name__ == "__main__":
    main()
