#!/usr/bin/env python3
"""How long the default `quick` suite takes and how many windows each cell gets.

Runs `rtbench run quick` (real measurement: root or --policy other; pass --simulate SEED
to use rtprobe's synthetic source, which still runs the suite's loads for their real
durations) into a temporary database, timed with a monotonic clock from start to exit,
then prints, per cell, the measured windows and whether compare's intervals (10 windows)
and advise's extreme-value fit (30 block maxima) are possible.  --peer FILE.toml runs a
second suite the same way right after (e.g. the previous quick suite, from
`git show REV:suites/quick.toml`) and prints the ratio of the wall times.  The figures in
BENCHMARKS.md came from this script.

    python3 bench/quick_suite.py [--simulate SEED] [--policy other] [--scale F]
                                 [--peer FILE.toml]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from rtbench.analysis.advise import block_maxima  # noqa: E402
from rtbench.analysis.bootstrap import MIN_WINDOWS  # noqa: E402
from rtbench.analysis.compare import view_of_run  # noqa: E402
from rtbench.analysis.evt import MIN_BLOCKS  # noqa: E402
from rtbench.store import Store  # noqa: E402
from rtbench.suites.parse import load_suite  # noqa: E402


def run_suite(suite: str, args: argparse.Namespace) -> tuple[float, int, list[str]]:
    """Run suite once: (wall seconds, exit code, one line per cell)."""
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{tmp}/bench.db"
        cmd = [sys.executable, "-m", "rtbench", "run", suite, "--db", url, "--no-report",
               "--scale", args.scale]
        cmd += ["--simulate", args.simulate] if args.simulate else []
        cmd += ["--policy", args.policy] if args.policy else []
        env = dict(os.environ, XDG_DATA_HOME=tmp, PYTHONPATH=str(ROOT))
        t0 = time.monotonic()
        done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True,
                              check=False)
        wall_s = time.monotonic() - t0
        if done.returncode not in (0, 1):
            print(done.stderr[-2000:], file=sys.stderr)
            return wall_s, done.returncode, []
        with Store.open(url) as store:
            run = store.get_run(store.list_runs()[0].id)
    lines = [f"command: {' '.join(cmd[2:])}",
             f"suite estimate: {load_suite(suite, float(args.scale)).estimated_seconds():.0f}"
             f" s; measured wall time {wall_s:.1f} s (exit {done.returncode})",
             f"{'cell':44} {'windows':>7} {'interval':>8} {'fit':>4}"]
    for cell in view_of_run(run).cells:
        assert cell.measurement is not None and cell.matrix is not None
        blocks, block_s = block_maxima(cell.measurement)
        lines.append(f"{cell.key.label():44} {cell.matrix.windows:7d} "
                     f"{'yes' if cell.matrix.windows >= MIN_WINDOWS else 'no':>8} "
                     f"{'yes' if len(blocks) >= MIN_BLOCKS else 'no':>4}  "
                     f"({block_s:g} s windows)")
    return wall_s, done.returncode, lines


def main() -> int:
    """Run the suite (and the peer), print wall times and the windows of every cell."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--simulate", metavar="SEED")
    ap.add_argument("--policy", choices=["other"])
    ap.add_argument("--scale", default="1")
    ap.add_argument("--peer", metavar="FILE.toml")
    args = ap.parse_args()
    print(f"machine: {os.cpu_count()} CPUs, {os.uname().release}")
    wall_s, rc, lines = run_suite("quick", args)
    print("\n".join(lines))
    if rc not in (0, 1):
        return rc
    if args.peer:
        peer_s, peer_rc, peer_lines = run_suite(args.peer, args)
        print("peer: " + "\n".join(peer_lines))
        if peer_rc not in (0, 1):
            return peer_rc
        print(f"wall time quick / peer: {wall_s:.1f} s / {peer_s:.1f} s = "
              f"{wall_s / peer_s:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
