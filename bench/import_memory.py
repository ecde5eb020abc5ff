#!/usr/bin/env python3
"""Peak memory and time of `rtbench import` for every import format, files of 1-64 MiB.

For each format (the generators of bench/import_scaling.py: the parts of each tool's
output that grow with a run) and each size in --mib, a file is written once and imported
by a child Python: the file read by its importer as `rtbench import` reads it
(`read_file_runs`: whole, or a chunk at a time for rtbench's own JSON; parse only,
`--what parse`) or the whole `rtbench import FILE --db fresh.db` (parse and store,
`--what import`).  Measured per child: its peak resident set (VmHWM of
/proc/self/status at its exit, which counts only the child's own memory; ru_maxrss would
start at this script's size, inherited through fork), its wall time and its CPU time
(user + system: a loaded machine inflates it far less).  Printed: the size, the times,
the peak RSS, the base (the peak of the same command on a 4 KiB file of the format:
Python, rtbench's modules, and for `import` the database's) and (peak - base) / file.
Then each format's fit: peak <= base + constant + slope x file, the slope being the
memory held per byte of file between the two largest files and the constant the largest
residual (peak - base - slope x file) of any size, printed for each size so that whether
it stays constant can be read.  Issue 36 asks for a constant plus at most twice the
file: a slope above --limit (2) is marked OVER, listed at the end, and the exit status
is 1 (so is a failed import).  --out appends each measurement as a JSON line; --table
prints the markdown table of BENCHMARKS.md from such files.

    python3 bench/import_memory.py [--formats all|trace-cmd,cyclictest,trace-cmd-overlap]
                                   [--mib 4,16,64] [--what parse|import] [--limit 2]
                                   [--out FILE.jsonl]
    python3 bench/import_memory.py --table FILE.jsonl...
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from import_scaling import GENERATORS, trace_cmd  # noqa: E402


def in_time_order(text: bytes) -> bytes:
    """A generated text trace with its event lines in time order, as trace-cmd report and
    tracefs' trace file merge the CPUs (import_scaling's generator writes each wake-up's
    lines together, so a late switch-in comes after the next wake-up's timer)."""
    import re

    lines = text.decode().split("\n")
    head = [ln for ln in lines if ln.startswith("#")]
    body = [ln for ln in lines if ln and not ln.startswith("#")]
    stamp = re.compile(r"\]\s+\S+\s+(\d+)\.(\d+):")

    def when(line: str) -> int:
        """The line's time in microseconds."""
        m = stamp.search(line)
        return int(m.group(1)) * 10**6 + int(m.group(2)) if m else 0
    body.sort(key=when)
    return ("\n".join(head + body) + "\n").encode()


def trace_cmd_sorted(size_bytes: int) -> bytes:
    """import_scaling's text trace, in time order."""
    return in_time_order(trace_cmd(size_bytes))


def trace_cmd_overlap(size_bytes: int) -> bytes:
    """tracefs text whose timers all name one early expiry (a timer clock the trace does
    not share): every wake-up is a spike whose window reaches back to the trace's start,
    so the windows overlap; an importer that copies each window is quadratic here."""
    import re

    text = trace_cmd_sorted(size_bytes).decode()
    return re.sub(r"expires=\d+", "expires=9000000000", text).encode()


def ltp_log(size_bytes: int) -> bytes:
    """An ltp realtime sched_latency log grown to the size by lines its importer skips
    (ltp prints a summary, not a line per sample: its output does not grow with a run)."""
    real = (ROOT / "tests" / "host" / "data" / "interop" / "ltp-sched_latency.txt").read_text()
    head, tail = real.split("Start:", 1)
    pad = "Periodic load duration: 1 ms\n"
    return (head + pad * max((size_bytes - len(real)) // len(pad), 0) + "Start:" + tail).encode()


# the formats measured: import_scaling's, the overlapping windows of a text trace, the
# formats read by the same reader in another unit, and ltp's log: every import format
FORMATS = {**GENERATORS, "trace-cmd": [("", trace_cmd_sorted), ("-unsorted", trace_cmd),
                                       ("-overlap", trace_cmd_overlap)],
           "cyclictest-us": GENERATORS["cyclictest"][1:],
           "cyclictest-ns": GENERATORS["cyclictest"][1:],
           "jitterdebugger-raw-ns": GENERATORS["jitterdebugger-raw"],
           "ltp-realtime": [("", ltp_log)]}

# the child: the importer's read() of one file as rtbench import calls it, or the whole
# command; then its peak RSS on stderr's last line
CHILD = """
import runpy, sys
what, path, fmt, db = sys.argv[1:5]
try:
    if what == "parse":
        from rtbench.commands.interop import read_file_runs
        read_file_runs(path, fmt, partial=True)
    else:
        sys.argv = ["rtbench", "import", path, "--format", fmt, "--partial", "--db", db]
        runpy.run_module("rtbench", run_name="__main__")
    code = 0
except SystemExit as exc:
    code = exc.code or 0
hwm = [ln for ln in open("/proc/self/status") if ln.startswith("VmHWM:")]
sys.stderr.write("\\nVmHWM " + hwm[0].split()[1] + " " + str(code) + "\\n")
"""


def child(args: list[str]) -> tuple[float, int, int, float]:
    """Run args; (wall seconds, peak RSS in bytes, exit status, CPU seconds: user and
    system, which a loaded machine inflates far less than the wall time)."""
    start = time.perf_counter()
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          env={**os.environ, "OPENBLAS_NUM_THREADS": "1"}, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - used.ru_utime - used.ru_stime
    last = done.stderr.decode(errors="replace").strip().splitlines()[-1].split()
    if last[:1] != ["VmHWM"]:
        return wall, -1, done.returncode or 1, cpu
    return wall, int(last[1]) * 1024, int(last[2]) if last[2].isdigit() else 1, cpu


def command(what: str, path: Path, fmt: str, db: Path) -> list[str]:
    """The child's command line: parse only, or the whole `rtbench import`."""
    return [sys.executable, "-c", CHILD, what, str(path), fmt, f"sqlite:///{db}"]


def record(path: str, row: dict[str, object]) -> None:
    """Append one measurement to path as a JSON line."""
    with open(path, "a") as out:
        out.write(json.dumps(row) + "\n")


def fit(points: list[tuple[int, int]], base: int) -> tuple[float, float, list[float]]:
    """Constant + slope of peak RSS over file size: the slope (bytes held per byte of
    file) between the two largest files, and each size's residual, peak - base -
    slope * size, in bytes; the constant is the largest residual, so peak <= base +
    constant + slope * size at every size measured.  (constant, slope, residuals)."""
    (small_size, small_peak), (big_size, big_peak) = sorted(points)[-2:]
    slope = (big_peak - small_peak) / (big_size - small_size) if big_size > small_size \
        else (big_peak - base) / big_size
    residuals = [peak - base - slope * size for size, peak in sorted(points)]
    return max(residuals), slope, residuals


def markdown(paths: list[str], limit: float) -> str:
    """A markdown table of --out files' measurements, a row per (what, format): (peak -
    base) / file and seconds per MiB at each size, and the fit (fit()); the first
    measurement of a (what, format, MiB) is kept."""
    rows: dict[tuple[str, str], dict[int, dict[str, Any]]] = {}
    for path in paths:
        for line in Path(path).read_text().splitlines():
            got = json.loads(line)
            if got["exit"] == 0:
                rows.setdefault((got["what"], got["format"]), {}).setdefault(got["mib"], got)
    out = ["| what | format | MiB | (peak − base) / file | s | s/MiB | base MB | "
           "constant MB | slope | residual MB at each size | CPU s/MiB | load |",
           "|---|---|---|---|---|---|---:|---:|---:|---|---|---|"]
    for (what, name), by_mib in sorted(rows.items()):
        got = [by_mib[m] for m in sorted(by_mib)]
        base = got[0]["base"]
        points = [(g["bytes"], g["peak"]) for g in got]
        constant, slope, residuals = fit(points, base) if len(points) >= 2 else (0.0, 0.0, [])
        mark = "**" if slope > limit else ""
        out.append(
            f"| {what} | {name} | " + " / ".join(f"{g['bytes'] / 2**20:.1f}" for g in got)
            + " | " + " / ".join(f"{(g['peak'] - base) / g['bytes']:.2f}" for g in got)
            + " | " + " / ".join(f"{g['seconds']:.0f}" for g in got)
            + " | " + " / ".join(f"{g['seconds'] / (g['bytes'] / 2**20):.2f}" for g in got)
            + f" | {base / 1e6:.0f} | {constant / 1e6:.1f} | {mark}{slope:.2f}{mark} | "
            + " / ".join(f"{r / 1e6:.1f}" for r in residuals) + " | "
            + " / ".join(f"{g['cpu_s'] / (g['bytes'] / 2**20):.2f}" if "cpu_s" in g else "—"
                         for g in got)
            + " | " + " / ".join(f"{g['load']:.0f}" for g in got) + " |")
    return "\n".join(out)


def main() -> None:
    """Measure each format at each size and print the table (and the fits)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--formats", default="all")
    parser.add_argument("--mib", default="4,16,64")
    parser.add_argument("--what", choices=("parse", "import"), default="parse")
    parser.add_argument("--limit", type=float, default=2.0,
                        help="the most the slope (bytes held per byte of file) may be "
                             "(exit 1 above it)")
    parser.add_argument("--out", help="also write each measurement as a JSON line here")
    parser.add_argument("--table", nargs="+", metavar="JSONL",
                        help="print the markdown table of the measurements in these "
                             "--out files (measure nothing)")
    opts = parser.parse_args()
    if opts.table:
        print(markdown(opts.table, opts.limit))
        return
    missed: list[str] = []
    fits: list[str] = []
    names = list(FORMATS) if opts.formats == "all" else opts.formats.split(",")
    # a format, or one file of it: its name and label (trace-cmd-overlap)
    chosen = [(name, label, make) for name, variants in FORMATS.items()
              for label, make in variants for wanted in names
              if wanted in (name, name + label)]
    sizes = [int(m) for m in opts.mib.split(",")]
    print(f"{'format':<24} {'MiB':>5} {'s':>7} {'s/MiB':>6} {'cpu s':>6} {'peak MB':>8} "
          f"{'base MB':>8} {'(peak-base)/file':>16}")
    with tempfile.TemporaryDirectory() as tmp:
        for name, label, make in chosen:
            small = Path(tmp) / "small.raw"
            small.write_bytes(make(4096))
            _, base, _, _ = child(command(opts.what, small, name, Path(tmp) / "b.db"))
            (Path(tmp) / "b.db").unlink(missing_ok=True)
            points: list[tuple[int, int]] = []
            for mib in sizes:
                path = Path(tmp) / f"{name}{label}-{mib}.raw"
                target = (mib << 20) - (64 << 10)  # 64 MiB: under the limit
                data = make(target)
                if len(data) > target:  # a generator that overshoots (the JSON ones)
                    data = make(target * target // len(data) - (64 << 10))
                path.write_bytes(data)
                del data
                db = Path(tmp) / f"{name}-{mib}.db"
                wall, peak, code, cpu = child(command(opts.what, path, name, db))
                size = path.stat().st_size
                ratio = (peak - base) / size
                flag = "" if code == 0 else f"  exit {code}"
                if code != 0:
                    missed.append(f"{name + label} at {mib} MiB:{flag}")
                else:
                    points.append((size, peak))
                print(f"{name + label:<24} {size / 2**20:>5.1f} {wall:>7.2f} "
                      f"{wall / (size / 2**20):>6.2f} {cpu:>6.1f} {peak / 1e6:>8.0f} "
                      f"{base / 1e6:>8.0f} {ratio:>16.2f}{flag}", flush=True)
                if opts.out:
                    record(opts.out, {
                        "what": opts.what, "format": name + label, "mib": mib,
                        "bytes": size, "seconds": round(wall, 2), "cpu_s": round(cpu, 2),
                        "peak": peak,
                        "base": base, "exit": code,
                        "load": os.getloadavg()[0]})
                path.unlink()
                db.unlink(missing_ok=True)
            if len(points) >= 2:
                constant, slope, residuals = fit(points, base)
                over = slope > opts.limit
                if over:
                    missed.append(f"{name + label}: slope {slope:.2f}")
                fits.append(f"{name + label:<24} {constant / 1e6:>8.1f} {slope:>6.2f} "
                            + " / ".join(f"{r / 1e6:.1f}" for r in residuals)
                            + ("  OVER" if over else ""))
    print(f"\npeak <= base + constant + slope x file (slope: between the two largest "
          f"files; residual: peak - base - slope x file, MB, at each size)\n"
          f"{'format':<24} {'const MB':>8} {'slope':>6} residuals MB")
    print("\n".join(fits))
    if missed:
        print(f"over {opts.limit:g} times the file or failed: " + "; ".join(missed))
        sys.exit(1)


if __name__ == "__main__":
    main()
