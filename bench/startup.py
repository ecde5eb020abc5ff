#!/usr/bin/env python3
"""Time how long `rtbench` takes to start: --help, --version and ls, against a bare
`python -c pass` measured in the same run.

Each command runs N times in turn (interleaved, so a burst of load elsewhere hits all
of them alike); the median and the best wall time of each are printed, with the ratio
of the median to python's own.  `ls` reads a fresh, migrated SQLite database of a
temporary data directory (an empty runs list: what is timed is the start, not the
query).  --before DIR also times the rtbench of another source tree (e.g. an export of
the commit before the lazy start-up) in the same rounds.

    python3 bench/startup.py [--repeat 21] [--before DIR]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BOUNDS_S = {"rtbench --help": 0.3, "rtbench --version": 0.3, "rtbench ls": 0.6}


def wall_s(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    """Wall seconds of one run of argv in cwd (it must succeed)."""
    start = time.perf_counter()
    subprocess.run(argv, env=env, capture_output=True, check=True, timeout=120, cwd=cwd)
    return time.perf_counter() - start


def main() -> None:
    """Run the commands, print one row per command."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=21, help="runs per command")
    parser.add_argument("--before", type=Path, metavar="DIR",
                        help="another source tree whose rtbench to time alongside")
    args = parser.parse_args()
    start_load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="rtbench-startup-") as tmp:
        env = dict(os.environ, XDG_DATA_HOME=tmp, COLUMNS="120")
        env.pop("RTBENCH_DB", None)
        db = str(Path(tmp) / "runs.db")
        rtbench = [sys.executable, "-m", "rtbench"]
        subprocess.run([*rtbench, "db", "migrate", "--db", db], env=env, check=True,
                       capture_output=True, timeout=120)
        commands = {"python -c pass": ([sys.executable, "-c", "pass"], env, ROOT),
                    "rtbench --help": ([*rtbench, "--help"], env, ROOT),
                    "rtbench --version": ([*rtbench, "--version"], env, ROOT),
                    "rtbench ls": ([*rtbench, "ls", "--db", db], env, ROOT)}
        if args.before is not None:
            # run from the other tree, so that `python -m rtbench` finds its package first
            tree = args.before.resolve()
            before = dict(env, PYTHONPATH=str(tree))
            for name in ("--help", "--version"):
                commands[f"before: rtbench {name}"] = ([*rtbench, name], before, tree)
            commands["before: rtbench ls"] = ([*rtbench, "ls", "--db", db], before, tree)
        times: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(args.repeat):
            for name, (argv, run_env, cwd) in commands.items():
                times[name].append(wall_s(argv, run_env, cwd))
    base = statistics.median(times["python -c pass"])
    load = os.getloadavg()[0]
    print(f"{args.repeat} runs each, interleaved; {os.cpu_count()} CPUs, load average "
          f"{start_load:.1f} at the start, {load:.1f} at the end; python "
          f"{sys.version.split()[0]}")
    print(f"{'command':28} {'median s':>9} {'best s':>8} {'x python':>9} {'bound s':>8}")
    for name, values in times.items():
        median = statistics.median(values)
        bound = BOUNDS_S.get(name)
        print(f"{name:28} {median:9.3f} {min(values):8.3f} {median / base:9.2f} "
              f"{'' if bound is None else f'{bound:.1f}':>8}")


if __name__ == "__main__":
    main()
