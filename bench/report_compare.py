#!/usr/bin/env python3
"""Time the multi-run comparison report (issue 11: "a 10-run comparison report in <= 10 s").

Builds, in a temporary SQLite store, --runs synthetic runs of the same suite with
bench/report_49.py's generator (each --scenarios x --tests cells, 2 series x --windows
one-second windows at 1 kHz, a lognormal body and a heavy tail), then times what
`rtbench report RUN... -o out.html` does: reading the runs back, the comparison
(bootstrap intervals of p50/p99/p99.9 against the first run for every cell), the
advisor (a GEV fit per cell) and the figures, written as one HTML file.  Best and
median of --repeat tries.

    python3 bench/report_compare.py [--runs 10] [--scenarios 7] [--tests 1]
        [--windows 60] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from report_49 import build_run  # noqa: E402

from rtbench.analysis.compare import compare, view_of_run  # noqa: E402
from rtbench.report import compare_html  # noqa: E402
from rtbench.store import Store  # noqa: E402


def cpu_seconds() -> float:
    """CPU time of this process and of its reaped children (the report's workers)."""
    own = time.process_time()
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own + kids.ru_utime + kids.ru_stime


def main(argv: list[str]) -> int:
    """Build the runs, time the report, print a Markdown table."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--scenarios", type=int, default=7)
    p.add_argument("--tests", type=int, default=1)
    p.add_argument("--windows", type=int, default=60)
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args(argv)
    for opt in ("runs", "scenarios", "tests", "windows", "repeat"):
        if getattr(args, opt) < 1:
            p.error(f"--{opt}: give at least 1")
    with tempfile.TemporaryDirectory(prefix="rtbench-reportcmp-") as tmp:
        store = Store.open(f"sqlite:///{tmp}/results.db")
        t = time.perf_counter()
        ids = [build_run(store, args.scenarios, args.tests, 2, args.windows)
               for _ in range(args.runs)]
        build_s = time.perf_counter() - t
        out = Path(tmp) / "compare.html"
        steps: dict[str, list[float]] = {"read": [], "compare": [], "html": [], "total": []}
        cpu: dict[str, list[float]] = {k: [] for k in steps}
        load = []
        for _ in range(args.repeat):
            t0, c0 = time.perf_counter(), cpu_seconds()
            views = [view_of_run(store.get_run(i)) for i in ids]
            t1, c1 = time.perf_counter(), cpu_seconds()
            comp = compare(views)
            t2, c2 = time.perf_counter(), cpu_seconds()
            compare_html.write(comp, out)
            t3, c3 = time.perf_counter(), cpu_seconds()
            load.append(os.getloadavg()[0])
            for key, value, used in (("read", t1 - t0, c1 - c0), ("compare", t2 - t1, c2 - c1),
                                     ("html", t3 - t2, c3 - c2), ("total", t3 - t0, c3 - c0)):
                steps[key].append(value)
                cpu[key].append(used)
        size = out.stat().st_size
        store.close()

    def fig(key: str) -> str:
        """best / median wall seconds | median CPU seconds."""
        s = sorted(steps[key])
        c = sorted(cpu[key])
        return f"{s[0]:.2f} / {s[len(s) // 2]:.2f} | {c[len(c) // 2]:.2f}"

    cells = args.scenarios * args.tests
    print(f"Comparison report of {args.runs} runs x {cells} cells: `python3 "
          f"bench/report_compare.py --runs {args.runs} --scenarios {args.scenarios} --tests "
          f"{args.tests} --windows {args.windows} --repeat {args.repeat}` (runs built with "
          f"bench/report_49.py's generator, 2 series x {args.windows} windows x 1000 "
          f"samples per cell; building not timed: {build_s:.1f} s). Python "
          f"{platform.python_version()}, {os.cpu_count()} CPUs, 1-minute load average "
          f"{min(load):.1f}-{max(load):.1f} while timing; wall best / median of "
          f"{args.repeat} and median CPU seconds (this process and its workers):\n")
    print("| step | wall s | CPU s |\n|---|---:|---:|")
    print(f"| read the runs back and index their windows | {fig('read')} |")
    print(f"| compare: bootstrap intervals, {cells} cells x {args.runs - 1} runs x 3 "
          f"percentiles | {fig('compare')} |")
    print(f"| HTML: advisor ({cells * args.runs} GEV fits) and figures, "
          f"{size / 1e6:.1f} MB | {fig('html')} |")
    print(f"| total (`rtbench report` of {args.runs} runs) | {fig('total')} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
