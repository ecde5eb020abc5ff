#!/usr/bin/env python3
"""Cyclic hot loop of every rtprobe build and of cyclictest, one run: instructions per sample.

Builds measured (issue 15 item 2):
  glibc     `make -C probe` (dynamic glibc, -O2; what the host runs)
  musl-gcc  `make -C probe musl` (static musl 1.2 from musl-tools, -Os with -O2 hot files)
  board     `rtbench probe build --arch x86_64`: Zig's clang and musl, the board flags of
            rtbench/rtprobe/build/__init__.py, stripped (the binary copied to boards)
  cyclictest  rt-tests' cyclictest (the peer), same CPU, priority and interval
plus any NAME=PATH given on the command line (e.g. the builds of an older commit).

How: callgrind with --separate-threads=yes counts each thread's user-space instructions;
(count(hi loops) - count(lo loops)) / (hi - lo), so start-up cancels out.  rtprobe runs
with --warmup 0: a warm-up is a time, and how many samples fit in it varies with the load
under valgrind, which would skew the difference; with none, both programs take exactly
the loops they are given.  The
measuring thread is the thread whose count grows with the loops (rtprobe's cyclic thread,
cyclictest's timer thread); "whole process" adds the other threads (rtprobe's collector and
its once-a-second window records, cyclictest's main loop).  Builds are measured in turn,
`--tries` times each, and the median is shown.  Callgrind runs no vDSO code: every build's
clock_gettime is counted on its system-call fallback (glibc about 10 instructions, musl
about 27); on a real run the vDSO replaces that in all of them alike.

`--breakdown` also builds the board flags with -g (symbols; same code) into a temporary
directory and prints where each build's measuring-thread instructions go, per function.

Usage: python3 bench/cyclic_hot_loop_builds.py [--tries 3] [--breakdown] [NAME=PATH ...]
Run as root (SCHED_FIFO 80 on CPU 1, as bench/cyclic_vs_cyclictest.py).
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from rtbench.rtprobe import build as probebuild  # noqa: E402


def rtprobe_cmd(binary: Path, loops: int, cpu: int) -> list[str]:
    """One FIFO 80 cyclic thread on cpu, 1 ms, `loops` samples (no warm-up, as the peer)."""
    return [str(binary), "cyclic", "--threads", "1", "--cpus", str(cpu), "--priority", "80",
            "--interval", "1000us", "--warmup", "0", "--loops", str(loops)]


def peer_cmd(loops: int, cpu: int) -> list[str]:
    """cyclictest with the same settings."""
    return ["cyclictest", "-m", "-p80", "-t1", "-i1000", "-a", str(cpu), "-q", "-l", str(loops)]


def thread_files(cmd: list[str], tmp: Path) -> list[Path]:
    """Run cmd under callgrind, one output file per thread (in creation order)."""
    out = tmp / "cg.out"
    for old in tmp.glob("cg.out*"):
        old.unlink()
    subprocess.run(["valgrind", "--tool=callgrind", "--separate-threads=yes",
                    f"--callgrind-out-file={out}", *cmd],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    files = sorted(tmp.glob("cg.out-*"))
    if not files:
        raise RuntimeError(f"no callgrind output for {cmd[0]}")
    return files


def total(path: Path) -> int:
    """The instruction total of one callgrind output file."""
    for line in path.read_text().splitlines():
        if line.startswith(("totals:", "summary:")):
            return int(line.split()[1])
    raise RuntimeError(f"{path}: no totals")


def per_function(path: Path) -> dict[str, int]:
    """Self instructions per function of one callgrind output file."""
    res = subprocess.run(["callgrind_annotate", "--inclusive=no", "--auto=no",
                          "--threshold=100", str(path)], capture_output=True, text=True,
                         check=True)
    funcs: dict[str, int] = {}
    for line in res.stdout.splitlines():
        match = re.match(r"\s*([\d,]+) \([^)]*\)\s+(.*)$", line)
        if match and "PROGRAM TOTALS" not in match.group(2):
            name = re.sub(r"^.*/", "", match.group(2).split(" [")[0])
            funcs[name] = funcs.get(name, 0) + int(match.group(1).replace(",", ""))
    return funcs


def measure(cmd_of: dict[int, list[str]], lo: int, hi: int,
            breakdown: bool) -> tuple[float, float, dict[str, float]]:
    """(measuring thread, whole process, per-function of the measuring thread) per sample."""
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        counts: dict[int, list[int]] = {}
        funcs: dict[int, list[dict[str, int]]] = {}
        for loops in (lo, hi):
            files = thread_files(cmd_of[loops], tmp)
            counts[loops] = [total(f) for f in files]
            if breakdown:
                funcs[loops] = [per_function(f) for f in files]
    n = hi - lo
    if len(counts[lo]) != len(counts[hi]):
        raise RuntimeError(f"{cmd_of[lo][0]}: thread count differs between runs")
    growth = [(high - low) / n for low, high in zip(counts[lo], counts[hi], strict=True)]
    thread = max(range(len(growth)), key=lambda i: growth[i])
    per_func: dict[str, float] = {}
    if breakdown:
        lo_f, hi_f = funcs[lo][thread], funcs[hi][thread]
        for name in set(lo_f) | set(hi_f):
            value = (hi_f.get(name, 0) - lo_f.get(name, 0)) / n
            if abs(value) >= 0.5:
                per_func[name] = value
    return growth[thread], sum(growth), per_func


def build_glibc() -> Path:
    """`make -C probe`: the host's dynamic glibc build."""
    subprocess.run(["make", "-s", "-C", str(REPO / "probe")], check=True)
    return REPO / "probe/build/rtprobe"


def build_musl_gcc() -> Path | None:
    """`make -C probe musl`, when musl-gcc is installed."""
    if not shutil.which("musl-gcc"):
        return None
    subprocess.run(["make", "-s", "-C", str(REPO / "probe"), "musl"], check=True)
    return REPO / "probe/build/musl/rtprobe"


def build_board_symbols(out: Path) -> Path:
    """The x86_64 board build's flags plus -g, not stripped: the same code, with names."""
    spec = probebuild.get_arch("x86_64")
    ldflags = " ".join(f for f in probebuild.SMALL_LDFLAGS.split() if f != "-s")
    subprocess.run(["make", "-s", "-C", str(REPO / "probe"), f"-j{os.cpu_count() or 1}",
                    *probebuild.BOARD_MAKE_ARGS, f"PYTHON={sys.executable}",
                    f"CC={spec.cc()}", f"BUILD={out}",
                    f"CFLAGS={probebuild.SMALL_CFLAGS} -g", f"LDFLAGS={ldflags}",
                    "LDLIBS=-lpthread -lm -lrt", f"{out}/rtprobe"], check=True)
    return out / "rtprobe"


def main() -> int:
    """Build, measure every build and the peer in turn, print a Markdown table."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("extra", nargs="*", metavar="NAME=PATH", help="more rtprobe binaries")
    ap.add_argument("--tries", type=int, default=3)
    ap.add_argument("--cpu", type=int, default=1 if (os.cpu_count() or 1) > 1 else 0)
    ap.add_argument("--loops", type=int, nargs=2, default=[1000, 3000])
    ap.add_argument("--breakdown", action="store_true",
                    help="per-function figures (builds the board flags with -g)")
    args = ap.parse_args()
    if os.geteuid() != 0:
        print("bench: run as root (SCHED_FIFO)", file=sys.stderr)
        return 3
    for tool in ("valgrind", "cyclictest"):
        if not shutil.which(tool):
            print(f"bench: {tool} not found (apt-get install valgrind rt-tests)",
                  file=sys.stderr)
            return 3
    lo, hi = args.loops
    builds: dict[str, Path] = {"glibc": build_glibc()}
    musl = build_musl_gcc()
    if musl:
        builds["musl-gcc"] = musl
    tmp_build = tempfile.TemporaryDirectory()
    if probebuild.zig_available():
        builds["board"] = probebuild.build_probe("x86_64")
        if args.breakdown:
            builds["board -g"] = build_board_symbols(Path(tmp_build.name))
    for item in args.extra:
        name, _, path = item.partition("=")
        builds[name] = Path(path)
    cmds = {name: {n: rtprobe_cmd(path, n, args.cpu) for n in (lo, hi)}
            for name, path in builds.items()}
    cmds["cyclictest"] = {n: peer_cmd(n, args.cpu) for n in (lo, hi)}

    thread: dict[str, list[float]] = {name: [] for name in cmds}
    whole: dict[str, list[float]] = {name: [] for name in cmds}
    funcs: dict[str, dict[str, float]] = {}
    for attempt in range(args.tries):
        for name, cmd_of in cmds.items():
            t, w, f = measure(cmd_of, lo, hi, args.breakdown and attempt == 0)
            thread[name].append(t)
            whole[name].append(w)
            if f:
                funcs[name] = f
    tmp_build.cleanup()

    def median(values: list[float]) -> float:
        return sorted(values)[len(values) // 2]

    peer_t, peer_w = median(thread["cyclictest"]), median(whole["cyclictest"])
    print(f"Machine: {platform.node()} {platform.machine()} {platform.release()} "
          f"({os.cpu_count()} CPUs); loops {lo} and {hi}, {args.tries} tries.\n")
    print("| build | measuring thread: tries | median | ratio to cyclictest "
          "| whole process: median | ratio |")
    print("|---|---|---:|---:|---:|---:|")
    for name in cmds:
        tries = ", ".join(f"{v:.1f}" for v in thread[name])
        print(f"| {name} | {tries} | {median(thread[name]):.1f} | "
              f"{median(thread[name]) / peer_t:.2f} | {median(whole[name]):.1f} | "
              f"{median(whole[name]) / peer_w:.2f} |")
    for name, per in funcs.items():
        if all(func.startswith("???:0x") for func in per):
            continue  # stripped: addresses only (its -g twin has the names)
        print(f"\n{name}, measuring thread, instructions per sample by function:\n")
        for func, value in sorted(per.items(), key=lambda kv: -kv[1]):
            print(f"    {value:7.1f}  {func}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
