#!/usr/bin/env python3
"""Time `rtbench import` of files of growing size, for every import format: is it linear?

`--formats all` (or a list): for each import format, a file of about --mib MiB each
(default 1,4,16) made with a fixed seed in that tool's layout (the parts that grow with a
run: cyclictest -v samples and -h histogram rows, oslat and rtla histogram rows, JSON
histogram maps, samples.raw records, rtla top screens, hackbench runs, stress-ng's
distribution, lmbench result lines, rtla timerlat -a analyses, trace events of a timer-woken
thread, rtbench's own JSON of an lmbench and of a cyclictest -h import), timed
through the importer
alone (`Importer.read`).  Printed: seconds, seconds per MiB and the ratio of each time to
the first size's; a linear importer gives a ratio near the size ratio (16 for 16 MiB
against 1 MiB).  Formats whose output does not grow with a run (ltp-realtime prints one
summary) are left out.  The default mode is the lmbench import below.

Files of lmbench result lines (latency and bandwidth lines, as lat_pipe, lat_unix and
bw_pipe print them) of --sizes KiB each, made with a fixed seed.  Timed per file: the
importer alone (parse into a run) and the whole import (parse and store into a fresh
SQLite database, as `rtbench import` does).  The peer, timed in the same run: rtbench's
own JSON import of the same run (`export --format json` of what was stored), which stores
exactly the same measurements.  Printed: seconds and seconds per MiB for each size; a
linear importer keeps seconds per MiB flat as the size grows.

    python3 bench/import_scaling.py [--sizes 256,512,1024,2048] [--repeat 3]
    python3 bench/import_scaling.py --formats all [--mib 1,4,16] [--repeat 1]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import struct
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from rtbench.interop.base import importers  # noqa: E402
from rtbench.interop.lmbench import LmbenchImporter  # noqa: E402
from rtbench.interop.runjson import dumps, loads  # noqa: E402
from rtbench.store import Store  # noqa: E402


def lmbench_text(size_bytes: int, seed: int = 7) -> bytes:
    """lmbench result lines adding up to about size_bytes."""
    rng = random.Random(seed)
    lines: list[str] = []
    total = 0
    while total < size_bytes:
        for line in (f"Pipe latency: {rng.uniform(1, 20):.4f} microseconds",
                     f"AF_UNIX sock stream latency: {rng.uniform(1, 20):.4f} microseconds",
                     f"Pipe bandwidth: {rng.uniform(100, 2000):.2f} MB/sec"):
            lines.append(line)
            total += len(line) + 1
    return ("\n".join(lines) + "\n").encode()


REAL = ROOT / "tests" / "host" / "data" / "interop" / "real"
FIXTURES = REAL.parent


def _lines_until(size_bytes: int, head: list[str], row: Any, tail: list[str]) -> bytes:
    """head, then row(i) for i = 0, 1, ... until about size_bytes, then tail, as text."""
    lines = list(head)
    total = sum(len(line) + 1 for line in lines)
    index = 0
    while total < size_bytes:
        line = row(index)
        lines.append(line)
        total += len(line) + 1
        index += 1
    return ("\n".join([*lines, *tail]) + "\n").encode()


def cyclictest_v(size_bytes: int) -> bytes:
    """cyclictest -v: one thread's `thread: cycle: latency` lines."""
    rng = random.Random(7)
    return _lines_until(size_bytes, ["Max CPUs = 2", "Online CPUs = 2",
                                     "Thread 0 Interval: 1000"],
                        lambda i: f"{0:8d}:{i:8d}:{rng.randint(5, 90):8d}", [])


def cyclictest_h(size_bytes: int) -> bytes:
    """cyclictest -h N -q: the histogram block of one thread, N grown to the size."""
    rows: list[int] = []
    text = _lines_until(size_bytes, ["# /dev/cpu_dma_latency set to 0us", "# Histogram"],
                        lambda i: rows.append(i % 3) or f"{i:06d} {i % 3:06d}", [])
    total = sum(rows)
    closing = [f"# Total: {total:09d}", "# Min Latencies: 00001", "# Avg Latencies: 00002",
               f"# Max Latencies: {len(rows) - 1:05d}", "# Histogram Overflows: 00000",
               "# Histogram Overflow at cycle number:", "# Thread 0:",
               f"T: 0 ( 1234) P: 1 I:1000 C:{total:7d} Min:      1 Act:    2 Avg:    2 "
               f"Max:  {len(rows) - 1:5d}"]
    return text + ("\n".join(closing) + "\n").encode()


def _json_histogram(path: Path, key: str, size_bytes: int) -> bytes:
    """A real rt-tests JSON file whose first thread's histogram is grown to the size
    (count, min, max and avg made to agree with it)."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    first = doc[key]["0"]
    buckets = max(size_bytes // 16, 1)
    first["histogram"] = {str(v): 1 + v % 3 for v in range(1, buckets + 1)}
    total = sum(first["histogram"].values())
    for name in ("cycles", "count"):
        if name in first:
            first[name] = total
    first["min"], first["max"] = 1, buckets
    first["avg"] = sum(int(v) * c for v, c in first["histogram"].items()) / total
    return json.dumps(doc, indent=2).encode()


def oslat_text(size_bytes: int) -> bytes:
    """oslat's text: one core's histogram rows, grown to the size."""
    head = (REAL / "os.txt").read_text(encoding="utf-8").split("    001 (us):")[0]
    text = _lines_until(size_bytes, head.rstrip("\n").split("\n"),
                        lambda i: f"    {i + 1:03d} (us):\t {1 + i % 3}", [])
    rows = (size_bytes // 18) + 1
    closing = ["     Minimum:\t 1 (us)", "     Average:\t 2.000 (us)",
               f"     Maximum:\t {rows} (us)", f"     Max-Min:\t {rows - 1} (us)",
               "    Duration:\t 1.999 (sec)"]
    return text + ("\n".join(closing) + "\n").encode()


def rtla_hist(size_bytes: int) -> bytes:
    """rtla timerlat hist: IRQ and thread columns of CPU 0, rows grown to the size."""
    counts: list[int] = []
    text = _lines_until(size_bytes, ["# RTLA timerlat histogram", "# Time unit is "
                                     "microseconds (us)", "# Duration:   0 00:10:00",
                                     "Index   IRQ-000   Thr-000"],
                        lambda i: counts.append(1 + i % 3) or f"{i:<8d}{1 + i % 3:>8d}"
                                                              f"{1 + i % 3:>10d}", [])
    total = sum(counts)
    closing = ["over:         0         0", f"count: {total:>9d} {total:>9d}",
               "min:          0         0", "avg:          1         1",
               f"max: {len(counts) - 1:>11d} {len(counts) - 1:>9d}"]
    return text + ("\n".join(closing) + "\n").encode()


def rtla_top(size_bytes: int) -> bytes:
    """rtla timerlat top: the screen (with its ALL line) repeated, one a second."""
    screen = (FIXTURES / "rtla-timerlat-top-all.txt").read_bytes()
    return screen * max(size_bytes // len(screen), 1)


def jitterdebugger_raw(size_bytes: int) -> bytes:
    """samples.raw: 28-byte records (u32 CPU, u64 s, u64 ns, u64 latency)."""
    rng = random.Random(7)
    return b"".join(struct.pack("<IQQQ", i % 2, 1000 + i // 1000, (i % 1000) * 10**6,
                                rng.randint(5, 90)) for i in range(size_bytes // 28))


def hackbench_log(size_bytes: int) -> bytes:
    """hackbench run again and again: its three lines per run."""
    rng = random.Random(7)
    lines = (REAL / "hb.txt").read_text(encoding="utf-8").splitlines()[:2]
    return _lines_until(size_bytes, [], lambda i: lines[i % 3] if i % 3 < 2
                        else f"Time: {rng.uniform(0.2, 0.5):.3f}", [])


def stressng_log(size_bytes: int) -> bytes:
    """stress-ng --cyclic with --cyclic-dist: its distribution grown to the size."""
    real = (REAL / "sng.txt").read_text(encoding="utf-8").splitlines()
    prefix = "stress-ng: info:  [19737] cyclic: "
    head = [line for line in real if "percentiles" not in line and "%:" not in line
            and "Note:" not in line and "metrc" not in line
            and "successful" not in line]
    head.append(prefix + "latency distribution (1000 ns intervals):")
    head.append(prefix + "(for the first 10 buckets of 10)")
    done = [line for line in real if "successful run completed" in line]
    return _lines_until(size_bytes, head, lambda i: f"{prefix}{i * 1000:>10d} {1 + i % 3:>8d}",
                        done)


def timerlat_auto(size_bytes: int) -> bytes:
    """rtla timerlat -a: the top table, then one thread-latency analysis per CPU (a
    machine with as many CPUs as the size asks for), closed by `Saving trace to`."""
    text = (FIXTURES / "rtla-timerlat-auto-thread.txt").read_text(encoding="utf-8")
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("## CPU"))
    block = lines[start:]
    return _lines_until(size_bytes, lines[:start], lambda i: "\n".join(
        [f"## CPU {i} hit stop tracing, analyzing it ##", *block[1:]]),
        ["", "  Saving trace to timerlat_trace.txt"])


def trace_cmd(size_bytes: int) -> bytes:
    """tracefs text: a cyclictest thread woken each 100 us by its timer on two CPUs, late
    by 2 to 40 us and by 150 us one wake-up in 50 (a spike, traced)."""
    rng = random.Random(7)
    head = ["# tracer: nop", "#"]

    def cycle(i: int) -> str:
        """The six event lines of one wake-up."""
        cpu, pid = i % 2, 1000 + i % 2
        expires = 10_000_000_000 + i * 100_000
        late = 150_000 if i // 2 % 50 == 49 else rng.randint(2_000, 40_000)
        t_irq, t_run = expires + 1_000, expires + late

        def at(ns: int) -> str:
            """A text trace's microsecond time stamp."""
            return f"{ns // 10**9}.{ns % 10**9 // 1000:06d}"
        idle = f"          <idle>-0       [{cpu:03d}] d.h..  "
        mine = f"      cyclictest-{pid:<5d} [{cpu:03d}] d..2.  "
        return "\n".join((
            f"{idle}{at(t_irq)}: hrtimer_expire_entry: hrtimer=00000000 "
            f"function=hrtimer_wakeup now={t_irq}",
            f"{idle}{at(t_irq)}: sched_waking: comm=cyclictest pid={pid} prio=19 "
            f"target_cpu={cpu:03d}",
            f"{idle}{at(t_irq)}: hrtimer_expire_exit: hrtimer=00000000",
            f"{idle}{at(t_run)}: sched_switch: prev_comm=swapper prev_pid=0 prev_prio=120 "
            f"prev_state=R ==> next_comm=cyclictest next_pid={pid} next_prio=19",
            f"{mine}{at(t_run + 2_000)}: hrtimer_start: hrtimer=00000000 "
            f"function=hrtimer_wakeup expires={expires + 200_000} "
            f"softexpires={expires + 200_000} mode=ABS",
            f"{mine}{at(t_run + 3_000)}: sched_switch: prev_comm=cyclictest prev_pid={pid} "
            f"prev_prio=19 prev_state=S ==> next_comm=swapper next_pid=0 next_prio=120"))
    first = ["\n".join(f"      cyclictest-{1000 + c:<5d} [{c:03d}] d..2.  10.000000: "
                        f"hrtimer_start: hrtimer=00000000 function=hrtimer_wakeup "
                        f"expires={10_000_000_000 + c * 100_000} mode=ABS" for c in (0, 1))]
    return _lines_until(size_bytes, head + first, cycle, [])


# when the exported runs started (an import refuses a start before 2000)
EXPORTED_AT = datetime(2026, 11, 1, tzinfo=timezone.utc)


def rtbench_json(size_bytes: int) -> bytes:
    """rtbench's own JSON: the run an lmbench file imports as, whose three benchmarks were
    each printed about size_bytes / 27 times (their values in tool_values_us and
    tool_values_mb_s, 9 bytes a value)."""
    import numpy as np

    from rtbench.wire.histpairs import Floats

    rng = np.random.default_rng(7)
    count = max(size_bytes // 27, 2)
    run = LmbenchImporter().read(lmbench_text(200), "lm.txt")[0]
    for m in run.scenarios[0].measurements:
        bandwidth = "tool_values_mb_s" in m.data
        values = np.round(rng.uniform(100, 2000, count), 2) if bandwidth \
            else np.round(rng.uniform(1, 20, count), 4)
        if bandwidth:
            m.data["tool_values_mb_s"] = Floats(values)
            m.data["bandwidth_mb_s"] = float(values.mean())
            continue
        m.data["tool_values_us"] = Floats(values)
        m.data["tool_avg_ns"] = [float(values.mean()) * 1000]
        series = m.series[0]
        series.count, series.min_ns = count, int(round(float(values.min()) * 1000))
        series.max_ns = int(round(float(values.max()) * 1000))
        series.sum_ns = int(round(float(values.mean()) * 1000 * count))
    run.started_at = EXPORTED_AT
    return dumps(run).encode()


def rtbench_json_hist(size_bytes: int) -> bytes:
    """rtbench's own JSON: the run a cyclictest -h file of size_bytes / 2.2 rows imports
    as (its histogram in tool_hist, stored compactly: 2.2 bytes a row)."""
    import numpy as np

    from rtbench.interop._build import ToolSeries, tool_measurement, tool_run
    from rtbench.wire.histpairs import Pairs

    rows = max(size_bytes * 10 // 22, 2)
    counts = (np.arange(rows) % 3).astype(np.uint8)
    total = int(counts.sum(dtype=np.int64))
    series = ToolSeries(label="T0", cpu=0, count=total, min_ns=1000, max_ns=rows * 1000,
                        avg_ns=2000.0, hist=Pairs(np.arange(rows, dtype=np.uint32), counts))
    run = tool_run(tool="cyclictest", tool_version="", command_line=None, fmt="cyclictest",
                   measurements=[tool_measurement(name="cyclictest", test="cyclic",
                                                  series=[series], where="ct.txt")])
    run.started_at = EXPORTED_AT
    return dumps(run).encode()


GENERATORS: dict[str, Any] = {
    "cyclictest": [("-v", cyclictest_v), ("-h", cyclictest_h)],
    "cyclictest-json": [("", lambda n: _json_histogram(REAL / "ct-h.json", "thread", n))],
    "oslat": [("", oslat_text)],
    "oslat-json": [("", lambda n: _json_histogram(REAL / "os.json", "thread", n))],
    "jitterdebugger-json": [("", lambda n: _json_histogram(REAL / "jd-results.json", "cpu",
                                                           n))],
    "jitterdebugger-raw": [("", jitterdebugger_raw)],
    "rtla-hist": [("", rtla_hist)],
    "rtla-top": [("", rtla_top)],
    "hackbench": [("", hackbench_log)],
    "stress-ng-cyclic": [("", stressng_log)],
    "lmbench": [("", lmbench_text)],
    "rtla-timerlat-auto": [("", timerlat_auto)],
    "trace-cmd": [("", trace_cmd)],
    "json": [("", rtbench_json), ("-hist", rtbench_json_hist)],
}


def every_format(names: list[str], mib: list[int], repeat: int) -> None:
    """Time each format's importer at each size and print the table."""
    found = importers()
    print(f"{'format':<22} {'MiB':>5} {'parse s':>8} {'s/MiB':>6} {'time ratio':>10} "
          f"{'size ratio':>10}")
    for name in names:
        for variant, make in GENERATORS[name]:
            first: tuple[float, float] | None = None
            for size in mib:
                data = make(size << 20)
                real_mib = len(data) / (1 << 20)
                reader = found[name]
                seconds = timed(lambda d=data, r=reader: r.read(d, "bench.txt"), repeat)
                first = first or (seconds, real_mib)
                label = f"{name} {variant}".strip()
                print(f"{label:<22} {real_mib:>5.1f} {seconds:>8.2f} {seconds / real_mib:>6.2f} "
                      f"{seconds / first[0]:>10.1f} {real_mib / first[1]:>10.1f}", flush=True)


def timed(action: object, repeat: int) -> float:
    """The median wall time of repeat calls of action, in seconds."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()  # type: ignore[operator]
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def store_once(runs: list[object]) -> None:
    """Store runs into a fresh SQLite database."""
    with tempfile.TemporaryDirectory() as tmp, Store.open(f"sqlite:///{tmp}/b.db") as store:
        for run in runs:
            store.add_bundle(run)  # type: ignore[arg-type]


def main() -> None:
    """Time every size and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="256,512,1024,2048", help="file sizes in KiB")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--formats", default="",
                        help="'all' or import formats separated by commas: time each")
    parser.add_argument("--mib", default="1,4,16", help="file sizes in MiB (--formats)")
    args = parser.parse_args()
    if args.formats:
        names = list(GENERATORS) if args.formats == "all" else args.formats.split(",")
        every_format(names, [int(m) for m in args.mib.split(",")], args.repeat)
        return
    lmbench = LmbenchImporter()
    print(f"{'KiB':>6} {'measurements':>12} {'parse s':>8} {'s/MiB':>6} {'import s':>8} "
          f"{'s/MiB':>6} {'peer json import s':>18} {'ratio':>6}")
    for kib in (int(k) for k in args.sizes.split(",")):
        data = lmbench_text(kib * 1024)
        mib = len(data) / (1 << 20)
        parse_s = timed(lambda d=data: lmbench.read(d, "lm.txt"), args.repeat)
        runs = lmbench.read(data, "lm.txt")
        import_s = timed(lambda d=data: store_once(lmbench.read(d, "lm.txt")), args.repeat)
        as_json = dumps(runs[0]).encode()
        peer_s = timed(lambda d=as_json: store_once([loads(d)]), args.repeat)
        count = len(runs[0].scenarios[0].measurements)
        print(f"{kib:>6} {count:>12} {parse_s:>8.3f} {parse_s / mib:>6.2f} {import_s:>8.2f} "
              f"{import_s / mib:>6.2f} {peer_s:>18.2f} {import_s / peer_s:>6.2f}")


if __name__ == "__main__":
    main()
