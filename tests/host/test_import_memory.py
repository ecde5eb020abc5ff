"""`rtbench import` memory: a text trace whose spike windows overlap is imported with
memory in proportion to the file, not to the file times its spikes (issue 36, item 1);
the whole import of a long tool histogram, of repeated results and of rtbench's own JSON
holds at most twice the file.

Each import runs in a child Python that reports its own peak RSS (VmHWM) at exit; the
base (Python, rtbench, SQLAlchemy and the migrated database) is the same command on a
small file of the same kind, measured alike.  The issue's bound is a constant plus at most
twice the file; the constant beyond the base (fixed-size buffers: 0.1-3 MB by
bench/import_memory.py's fit, BENCHMARKS.md "Import memory, sixth pass") is as large as
a 1 MiB file, so each file here is 3-8 MiB: large enough that the assertion, at most
twice the file above the base, judges what grows with the file, and small enough to keep
the test short.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

CHILD = """
import runpy, sys
sys.argv = ["rtbench", "import", sys.argv[1], "--db", sys.argv[2]]
try:
    runpy.run_module("rtbench", run_name="__main__")
except SystemExit as exc:
    code = exc.code
else:
    code = 0
hwm = [ln for ln in open("/proc/self/status") if ln.startswith("VmHWM:")]
sys.stderr.write("\\nVmHWM " + hwm[0].split()[1] + " exit " + str(code) + "\\n")
"""


def overlapping_trace(cycles: int) -> bytes:
    """tracefs text of a cyclictest thread on two CPUs whose timers all name one expiry
    before the trace starts: every wake-up is a spike whose window reaches back to the
    start of the trace (the windows overlap)."""
    lines = ["# tracer: nop", "#"]
    for c in (0, 1):
        lines.append(f"      cyclictest-{1000 + c:<5d} [{c:03d}] d..2.  10.000000: "
                     "hrtimer_start: hrtimer=00000000 function=hrtimer_wakeup "
                     "expires=9000000000 mode=ABS")
    for i in range(cycles):
        cpu, pid = i % 2, 1000 + i % 2
        t = 10_000_000_000 + (i + 1) * 100_000

        def at(ns: int) -> str:
            """A text trace's microsecond time stamp."""
            return f"{ns // 10**9}.{ns % 10**9 // 1000:06d}"
        idle = f"          <idle>-0       [{cpu:03d}] d.h..  "
        mine = f"      cyclictest-{pid:<5d} [{cpu:03d}] d..2.  "
        lines += [
            f"{idle}{at(t)}: hrtimer_expire_entry: hrtimer=00000000 "
            f"function=hrtimer_wakeup now={t}",
            f"{idle}{at(t)}: sched_waking: comm=cyclictest pid={pid} prio=19 "
            f"target_cpu={cpu:03d}",
            f"{idle}{at(t + 20_000)}: sched_switch: prev_comm=swapper prev_pid=0 "
            f"prev_prio=120 prev_state=R ==> next_comm=cyclictest next_pid={pid} next_prio=19",
            f"{mine}{at(t + 22_000)}: hrtimer_start: hrtimer=00000000 "
            "function=hrtimer_wakeup expires=9000000000 mode=ABS",
            f"{mine}{at(t + 23_000)}: sched_switch: prev_comm=cyclictest prev_pid={pid} "
            "prev_prio=19 prev_state=S ==> next_comm=swapper next_pid=0 next_prio=120"]
    return ("\n".join(lines) + "\n").encode()


# the child that only reads the file as `rtbench import` reads it (no database)
PARSE = """
import sys
from rtbench.commands.interop import read_file_runs
read_file_runs(sys.argv[1], None, partial=True)
hwm = [ln for ln in open("/proc/self/status") if ln.startswith("VmHWM:")]
sys.stderr.write("\\nVmHWM " + hwm[0].split()[1] + " exit 0\\n")
"""


def peak_rss(path: Path, db: Path, child: str = CHILD) -> int:
    """The peak RSS in bytes of `rtbench import path` in a child (or of child: PARSE);
    it must store (or read) the run."""
    done = subprocess.run([sys.executable, "-c", child, str(path), f"sqlite:///{db}"],
                          capture_output=True, text=True, timeout=600, check=False)
    found = re.search(r"VmHWM (\d+) exit (\S+)\s*$", done.stderr)
    assert found, done.stderr[-2000:]
    assert found.group(2) == "0", done.stderr[-2000:]
    return int(found.group(1)) * 1024


def test_overlapping_trace_windows_import_in_linear_memory(tmp_path: Path) -> None:
    """A 5.8 MiB trace of 8,600 spikes whose windows each reach back to its start: among
    the worst formats of the bench (bench/import_memory.py, BENCHMARKS.md,
    "Import memory, sixth pass").  Reading it and its whole import each hold at most
    twice the file above the constant, as issue 36 asks: 1.72 and 1.43 times this file
    (measured at 3 and 5.8 MiB: 0.8 MB (parse) and 2.1 MB (whole import) more than the
    4 KiB file's peak, plus 1.6 and 1.1 times the file; the file, read whole, is 1 of
    the parse's).  At 3 MiB the constant is still 0.25 (parse) and 0.7 (whole import)
    of the file (1.84 and 1.76 times there), so the file is this large for the bound to
    judge what grows with it, not the constant.  Before: 3.1 times (parse) when each
    window held its CPU's recent events until the budget was shared out after the pass,
    and 1,600 times (whole import) when every window copied the trace it overlapped
    (quadratic)."""
    small = tmp_path / "small.txt"
    small.write_bytes(overlapping_trace(40))
    big = tmp_path / "big.txt"
    big.write_bytes(overlapping_trace(8_600))
    size = big.stat().st_size
    assert 5 << 20 < size < 7 << 20
    base = peak_rss(small, tmp_path / "small.db", PARSE)
    peak = peak_rss(big, tmp_path / "big.db", PARSE)
    assert peak - base <= 2 * size, (peak - base) / size
    base = peak_rss(small, tmp_path / "small.db")
    peak = peak_rss(big, tmp_path / "big.db")
    assert peak - base <= 2 * size, (peak - base) / size


def test_a_long_histogram_imports_in_twice_the_file(tmp_path: Path) -> None:
    """A 3 MiB cyclictest -h file (a histogram of 200,000 rows): the whole import (read,
    store, check) holds at most twice the file above the constant: the rows as arrays
    and their stored text, now the counts from the first value (2 bytes a row, 0.14
    times the file), written once by Python and once by SQLite.  2.8 times with the
    [value, count] rows stored (8 bytes a row); 16.9 times before the check stopped
    reading the run back."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    from import_scaling import cyclictest_h

    small = tmp_path / "small.txt"
    small.write_bytes(cyclictest_h(4096))
    big = tmp_path / "big.txt"
    big.write_bytes(cyclictest_h(3 << 20))
    size = big.stat().st_size
    base = peak_rss(small, tmp_path / "small.db")
    peak = peak_rss(big, tmp_path / "big.db")
    assert peak - base <= 2 * size, (peak - base) / size


def test_repeated_results_import_in_twice_the_file(tmp_path: Path) -> None:
    """3 MiB of lmbench result lines and 8 MiB of rtla timerlat -a analyses: the whole
    import holds at most twice the file above the constant (a measurement per lmbench
    line held 50 times the file, a dict per rtla analysis 11 times).  The timerlat import
    holds ~3 MB more than the 4 KiB base whatever the file's size (2.0 times a 3 MiB file,
    1.2 times 16 MiB: BENCHMARKS.md), so its file is large enough for the bound to judge
    what grows with the file, not that constant."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    from import_scaling import lmbench_text, timerlat_auto

    for make, mib in ((lmbench_text, 3), (timerlat_auto, 8)):
        small = tmp_path / f"small-{make.__name__}.txt"
        small.write_bytes(make(4096))
        big = tmp_path / f"big-{make.__name__}.txt"
        big.write_bytes(make(mib << 20))
        size = big.stat().st_size
        base = peak_rss(small, tmp_path / f"small-{make.__name__}.db")
        peak = peak_rss(big, tmp_path / f"big-{make.__name__}.db")
        assert peak - base <= 2 * size, (make.__name__, (peak - base) / size)


@pytest.mark.parametrize(("generator", "mib"), [("rtbench_json_hist", 4), ("rtbench_json", 8)])
def test_rtbench_json_imports_in_twice_the_file(tmp_path: Path, generator: str,
                                                mib: int) -> None:
    """rtbench's own JSON of a run with a long tool histogram (3.6 MiB, its bulk the
    histogram's compact counts) and of a grouped lmbench run (6.6 MiB, its bulk the
    values as floats: the worst whole import of the bench, slope 1.08): the whole import
    holds at most twice the file above the base (about 1.0 and 1.3 times): the file is
    read a chunk at a time with the arrays cut out as columns, and each column is stored
    apart, 4,096 elements a row.  They held 4.3 and 4.0 times: the file beside the
    column, then the column's text as one database value, which Python and SQLite each
    copied.  The lmbench export is 6.6 MiB because its constant (1-2 MB, varying by 1
    MB from run to run) would be half a 3 MiB file's bound."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    import import_scaling

    make = getattr(import_scaling, generator)
    small = tmp_path / "small.json"
    small.write_bytes(make(4096))
    big = tmp_path / "big.json"
    big.write_bytes(make(mib << 20))
    size = big.stat().st_size
    assert size > 3 << 20
    base = peak_rss(small, tmp_path / "small.db")
    peak = peak_rss(big, tmp_path / "big.db")
    assert peak - base <= 2 * size, (peak - base) / size
