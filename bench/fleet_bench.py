#!/usr/bin/env python3
"""Wall time of `rtbench fleet` over N boards against one board's `rtbench run` (issue 17:
the fleet of 8 should take at most 1.25 x one board's time).

The boards are the ssh fixture of the tests (tests/host/sshd_fixture.py: Debian's sshd in
a network namespace of its own), N inventory entries with N probe directories, so that
each has its own board lock.  The suite: two idle scenarios (1 s settle each), one cyclic
test (1 ms, one thread) of --duration seconds in each.  Measured for real by default;
--simulate makes rtprobe's samples synthetic (the measurements then take no time and the
runs are all connection and bookkeeping).  One untimed fleet first pushes the probe into
every directory; then peer and fleet alternate --repeat times; the ratio is of medians.
Beside wall time it reports CPU seconds on each side: rtbench with its ssh clients (the
host's share) and the board's sshd sessions with what they ran (the boards' share, which
here is the same machine's CPUs).  Needs root (the fixture's namespace and sshd).

    sudo python3 bench/fleet_bench.py [--boards 8] [--duration 10] [--repeat 3] [--simulate]
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.host.sshd_fixture import SshBoard, start_board  # noqa: E402

SUITE = """
[suite]
name = "fleet-bench"
description = "two idle scenarios, one cyclic test each"

[defaults]
duration = "{duration}s"
warmup = "0s"
settle = "1s"

[[scenarios]]
name = "idle-a"

[[scenarios]]
name = "idle-b"

[[tests]]
name = "cyclic-1ms"
test = "cyclic"
params = {{ interval = "1ms", threads = 1 }}
"""


def board_uri(board: SshBoard, i: int) -> str:
    """The URI of inventory entry i: the fixture's sshd, probe directory b{i}."""
    port = f":{board.port}" if board.port != 22 else ""
    return f"ssh://root@{board.address}{port}?dir={board.home}/b{i}"


def write_inventory(board: SshBoard, boards: int, path: Path) -> None:
    """An inventory of `boards` entries, all the fixture's sshd."""
    path.write_text("\n".join(f'[[targets]]\nname = "b{i}"\nuri = "{board_uri(board, i)}"\n'
                              for i in range(1, boards + 1)))


def board_cpu(board: SshBoard) -> float:
    """CPU seconds of the finished sessions of the board's sshd (and what they ran)."""
    fields = Path(f"/proc/{board.procs[0].pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[13]) + int(fields[14])) / os.sysconf("SC_CLK_TCK")


def timed(argv: list[str], env: dict[str, str], board: SshBoard) -> tuple[float, float, float]:
    """Run `rtbench ARGV` (it must exit 0): wall seconds, CPU seconds of rtbench with its
    ssh clients, CPU seconds on the board side."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    board_before = board_cpu(board)
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "rtbench", *argv], env=env,
                          capture_output=True, text=True, check=False)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"rtbench {' '.join(argv[:2])} failed ({done.returncode}): "
                 f"{done.stderr.strip()[-500:]}")
    host = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return wall, host, board_cpu(board) - board_before


def main() -> int:
    """Measure, print the table, exit 1 when the ratio is over --max-ratio."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--boards", type=int, default=8)
    parser.add_argument("--duration", type=float, default=10.0,
                        help="seconds of each of the two cyclic measurements")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--simulate", action="store_true",
                        help="synthetic samples (rtprobe --simulate 7)")
    parser.add_argument("--max-ratio", type=float, default=1.25)
    args = parser.parse_args()
    board = start_board()
    try:
        with tempfile.TemporaryDirectory(prefix="rtbench-fleet-bench-") as tmp:
            work = Path(tmp)
            suite = work / "suite.toml"
            suite.write_text(SUITE.format(duration=f"{args.duration:g}"))
            inventory = work / "lab.toml"
            write_inventory(board, args.boards, inventory)
            env = {**board.env(), "XDG_DATA_HOME": str(work / "data"),
                   "PYTHONPATH": str(ROOT)}
            env.pop("RTBENCH_DB", None)
            env.pop("RTBENCH_PROBE", None)
            extra = ["--simulate", "7"] if args.simulate else []
            fleet = ["fleet", str(inventory), str(suite), "--no-report", *extra]
            single = ["run", str(suite), "--target", board_uri(board, 1), "--no-report",
                      *extra]
            timed([*fleet, "--db", str(work / "warm.db")], env, board)  # pushes every probe
            singles, fleets = [], []
            for k in range(args.repeat):
                singles.append(timed([*single, "--db", str(work / f"s{k}.db")], env, board))
                fleets.append(timed([*fleet, "--db", str(work / f"f{k}.db")], env, board))
    finally:
        board.stop()
    one = statistics.median(s[0] for s in singles)
    many = statistics.median(f[0] for f in fleets)
    ratio = many / one
    load = os.getloadavg()[0]
    print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs, load average {load:.1f}; "
          f"{'simulated' if args.simulate else 'real'} samples, 2 x {args.duration:g} s")
    for label, rows, median in (("one board (rtbench run)", singles, one),
                                (f"{args.boards} boards (rtbench fleet)", fleets, many)):
        print(f"{label:26} wall median {median:6.1f} s ({', '.join(f'{r[0]:.1f}' for r in rows)}); "
              f"CPU s per run: host {statistics.median(r[1] for r in rows):.1f}, "
              f"board side {statistics.median(r[2] for r in rows):.1f}")
    print(f"ratio fleet / one board: {ratio:.2f} (bar {args.max_ratio:g})")
    return 0 if ratio <= args.max_ratio else 1


if __name__ == "__main__":
    sys.exit(main())
