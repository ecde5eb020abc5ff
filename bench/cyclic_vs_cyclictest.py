#!/usr/bin/env python3
"""Measure `rtprobe cyclic` against rt-tests' cyclictest on this machine, in one run.

Figures (docs/design.md, "Quality bars"; issue 2 item 6):
  - user-space instructions per sample (callgrind; difference between two loop counts,
    so start-up and warm-up cancel out),
  - syscalls per sample (strace -f -c; same difference),
  - peak RSS of a one-thread run (/usr/bin/time %M),
  - stripped static binary size,
  - medians of interleaved latency runs (same CPU, interval, priority).

Usage: python3 bench/cyclic_vs_cyclictest.py [--rounds 5] [--seconds 10] [--json out.json]
Run as root on a quiet machine.  Prints a Markdown section for BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PEER = ["cyclictest", "-m", "-p80", "-t1", "-i1000"]


def loglin7_lower(index: int) -> int:
    """Smallest value in ns of a loglin7 histogram bucket (probe/src/lib/hist.h)."""
    if index < 128:
        return index
    k = 7 + (index - 128) // 128
    sub = (index - 128) % 128
    return (128 + sub) << (k - 7)


def median_from_pairs(pairs: list[tuple[int, int]], width_ns: int | None = None) -> float:
    """Median (ns) of a histogram given as (bucket value in ns, count) pairs."""
    total = sum(c for _, c in pairs)
    need = (total + 1) // 2
    seen = 0
    for value, count in sorted(pairs):
        seen += count
        if seen >= need:
            return float(value) + (width_ns / 2 if width_ns else 0.0)
    raise ValueError("empty histogram")


def probe_binary(kind: str) -> Path | None:
    """Build rtprobe as `dynamic`, `static` (glibc, what the package ships) or `musl`."""
    probe = REPO / "probe"
    if kind == "dynamic":
        subprocess.run(["make", "-s", "-C", str(probe)], check=True)
        return probe / "build/rtprobe"
    if kind == "static":
        subprocess.run(["make", "-s", "-C", str(probe), "STATIC=1", "BUILD=build/static"],
                       check=True)
        return probe / "build/static/rtprobe"
    if not shutil.which("musl-gcc"):
        return None
    subprocess.run(["make", "-s", "-C", str(probe), "musl"], check=True)
    return probe / "build/musl/rtprobe"


def per_sample(count: Callable[[list[str]], int], cmd_lo: list[str], cmd_hi: list[str],
               n: int, repeat: int) -> float:
    """Median over `repeat` tries of (count(hi) - count(lo)) / n."""
    values = sorted((count(cmd_hi) - count(cmd_lo)) / n for _ in range(repeat))
    return values[len(values) // 2]


def rtprobe_cmd(probe: Path, loops: int | None = None, seconds: int | None = None,
                cpu: int = 0) -> list[str]:
    """rtprobe cyclic with the same settings as the peer: one FIFO 80 thread, 1 ms."""
    cmd = [str(probe), "cyclic", "--threads", "1", "--cpus", str(cpu),
           "--priority", "80", "--interval", "1000us"]
    if loops is not None:
        cmd += ["--loops", str(loops)]
    if seconds is not None:
        cmd += ["--duration", f"{seconds}s"]
    return cmd


def peer_cmd(loops: int | None = None, seconds: int | None = None, cpu: int = 0) -> list[str]:
    """cyclictest with the issue's arguments, pinned to the same CPU."""
    cmd = PEER + ["-a", str(cpu), "-q"]
    if loops is not None:
        cmd += ["-l", str(loops)]
    if seconds is not None:
        cmd += ["-D", f"{seconds}"]
    return cmd


def callgrind_ir(cmd: list[str]) -> int:
    """Total user-space instructions (Ir) of cmd under callgrind, all threads."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "cg.out"
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"] + cmd,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        for line in out.read_text().splitlines():
            if line.startswith("totals:") or line.startswith("summary:"):
                return int(line.split()[1])
    raise RuntimeError(f"no callgrind totals for {cmd}")


def strace_calls(cmd: list[str]) -> int:
    """Total syscalls made by cmd and its threads (strace -f -c)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "strace.txt"
        subprocess.run(["strace", "-f", "-c", "-o", str(out)] + cmd,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        for line in out.read_text().splitlines():
            if line.strip().endswith("total"):
                fields = line.split()
                # "100.00 0.001 1 1234 5 total": calls is the 4th column, errors optional
                return int(fields[3])
    raise RuntimeError(f"no strace summary for {cmd}")


def peak_rss_kib(cmd: list[str]) -> int:
    """Peak resident set size of cmd in KiB (GNU time %M)."""
    res = subprocess.run(["/usr/bin/time", "-f", "RSS_KIB=%M"] + cmd,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                         check=False)
    match = re.search(r"RSS_KIB=(\d+)", res.stderr)
    if not match:
        raise RuntimeError(f"no RSS for {cmd}: {res.stderr[-300:]}")
    return int(match.group(1))


def stripped_size(path: Path) -> int:
    """Size in bytes of a stripped copy of path."""
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "bin"
        shutil.copy(path, copy)
        subprocess.run(["strip", str(copy)], check=True)
        return copy.stat().st_size


def rtprobe_median_ns(probe: Path, seconds: int, cpu: int) -> float:
    """Median latency (ns) of one rtprobe run, from its result histogram."""
    res = subprocess.run(rtprobe_cmd(probe, seconds=seconds, cpu=cpu), capture_output=True,
                         text=True, check=False)
    for line in res.stdout.splitlines():
        rec = json.loads(line)
        if rec.get("type") == "result":
            pairs = [(loglin7_lower(i), c) for i, c in rec["series"][0]["hist"]]
            return median_from_pairs(pairs)
    raise RuntimeError(f"rtprobe gave no result: {res.stderr[-300:]}")


def peer_median_ns(seconds: int, cpu: int) -> float:
    """Median latency (ns) of one cyclictest run, from its 1 us histogram (-h)."""
    res = subprocess.run(peer_cmd(seconds=seconds, cpu=cpu) + ["-h", "100000"],
                         capture_output=True, text=True, check=False)
    pairs = []
    for line in res.stdout.splitlines():
        fields = line.split()
        if len(fields) == 2 and fields[0].isdigit() and fields[1].isdigit():
            pairs.append((int(fields[0]) * 1000, int(fields[1])))
    if not pairs:
        raise RuntimeError(f"cyclictest gave no histogram: {res.stderr[-300:]}")
    # A 1 us bucket's samples are spread over [v, v + 1 us): take its midpoint.
    return median_from_pairs([p for p in pairs if p[1]], width_ns=1000)


def main() -> int:
    """Run every measurement and print the Markdown section."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--loops", type=int, nargs=2, default=[1000, 3000])
    ap.add_argument("--repeat", type=int, default=3, help="callgrind tries (median)")
    ap.add_argument("--cpu", type=int, default=1 if (os.cpu_count() or 1) > 1 else 0)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    if os.geteuid() != 0:
        print("bench: run as root (SCHED_FIFO, mlockall)", file=sys.stderr)
        return 3
    if not shutil.which("cyclictest"):
        print("bench: cyclictest not found: apt-get install rt-tests", file=sys.stderr)
        return 3

    probe = probe_binary("dynamic")
    static_probe = probe_binary("static")
    musl_probe = probe_binary("musl")
    assert probe and static_probe
    lo, hi = args.loops
    n = hi - lo
    res: dict[str, object] = {"machine": f"{platform.node()} {platform.machine()} "
                              f"{platform.release()} ({os.cpu_count()} CPUs)"}

    # Instruction counts depend on how many histogram buckets each window touches (the
    # per-second window record lists them), which varies with the latencies seen under
    # valgrind: take the median of `repeat` tries.
    ir = {"rtprobe": per_sample(callgrind_ir, rtprobe_cmd(probe, lo, cpu=args.cpu),
                                rtprobe_cmd(probe, hi, cpu=args.cpu), n, args.repeat),
          "cyclictest": per_sample(callgrind_ir, peer_cmd(lo, cpu=args.cpu),
                                   peer_cmd(hi, cpu=args.cpu), n, args.repeat)}
    sc = {"rtprobe": per_sample(strace_calls, rtprobe_cmd(probe, lo, cpu=args.cpu),
                                rtprobe_cmd(probe, hi, cpu=args.cpu), n, 1),
          "cyclictest": per_sample(strace_calls, peer_cmd(lo, cpu=args.cpu),
                                   peer_cmd(hi, cpu=args.cpu), n, 1)}
    rss = {"rtprobe (static)": peak_rss_kib(rtprobe_cmd(static_probe, lo, cpu=args.cpu)),
           "rtprobe (dynamic)": peak_rss_kib(rtprobe_cmd(probe, lo, cpu=args.cpu)),
           "cyclictest": peak_rss_kib(peer_cmd(lo, cpu=args.cpu))}
    size = {"rtprobe (static, stripped)": stripped_size(static_probe),
            "rtprobe (dynamic, stripped)": stripped_size(probe),
            "cyclictest (dynamic, stripped)": stripped_size(Path(shutil.which("cyclictest")
                                                                 or "cyclictest"))}
    if musl_probe:
        rss["rtprobe (musl static)"] = peak_rss_kib(rtprobe_cmd(musl_probe, lo, cpu=args.cpu))
        size["rtprobe (musl static, stripped)"] = stripped_size(musl_probe)
    med: dict[str, list[float]] = {"rtprobe": [], "cyclictest": []}
    for _ in range(args.rounds):
        med["rtprobe"].append(rtprobe_median_ns(probe, args.seconds, args.cpu))
        med["cyclictest"].append(peer_median_ns(args.seconds, args.cpu))
    med_of = {k: sorted(v)[len(v) // 2] for k, v in med.items()}
    res.update(instructions_per_sample=ir, syscalls_per_sample=sc, peak_rss_kib=rss,
               binary_bytes=size, median_ns_rounds=med, median_ns=med_of)

    def ratio(d: dict[str, float], a: str = "rtprobe", b: str = "cyclictest") -> str:
        return f"{d[a] / d[b]:.2f}" if d[b] else "n/a"

    print(f"Machine: {res['machine']}.\n")
    print("| figure | rtprobe | cyclictest | ratio |")
    print("|---|---:|---:|---:|")
    print(f"| user instructions / sample (median of {args.repeat}) | {ir['rtprobe']:.0f} | "
          f"{ir['cyclictest']:.0f} | {ratio(ir)} |")
    print(f"| syscalls / sample | {sc['rtprobe']:.2f} | {sc['cyclictest']:.2f} | {ratio(sc)} |")
    for key in [k for k in rss if k.startswith("rtprobe")]:
        print(f"| peak RSS, 1 thread (KiB), {key} | {rss[key]} | {rss['cyclictest']} | "
              f"{rss[key] / rss['cyclictest']:.2f} |")
    for key in [k for k in size if k.startswith("rtprobe")]:
        print(f"| binary size (KiB), {key} | {size[key] / 1024:.0f} | "
              f"{size['cyclictest (dynamic, stripped)'] / 1024:.0f} (dynamic) | |")
    print(f"| median latency, {args.rounds} interleaved {args.seconds}s runs (us) | "
          f"{med_of['rtprobe'] / 1000:.1f} | {med_of['cyclictest'] / 1000:.1f} | "
          f"{ratio(med_of)} |")
    if args.json:
        args.json.write_text(json.dumps(res, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
