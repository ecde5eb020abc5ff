"""cyclictest's command line mapped onto rtprobe cyclic, and cyclictest's output printed.

The pure half of `rtbench cyclictest` (rtbench/commands/cyclictest.py runs it; it
holds no command of its own):
parse rt-tests 2.x cyclictest options as getopt_long would, refuse by name what
rtprobe cannot do, build the rtprobe arguments, and format the T: summary lines,
the -h/-H histogram block, -v samples and the --json document.
"""


from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, cast

from rtbench import __version__
from rtbench.analysis.frontend import series_mean_ns
from rtbench.interop.rttestsjson import document, thread_entry

# flags that take no value: option -> what it sets
_FLAGS = {"-m": "mlock", "--mlockall": "mlock", "-n": "nanosleep", "--nanosleep": "nanosleep",
          "-N": "nsecs", "--nsecs": "nsecs", "-q": "quiet", "--quiet": "quiet",
          "-r": "relative", "--relative": "relative", "-v": "verbose", "--verbose": "verbose",
          "-x": "posix_timers", "--posix_timers": "posix_timers", "-S": "smp", "--smp": "smp",
          "-M": "refresh_on_max", "--refresh_on_max": "refresh_on_max",
          "-u": "unbuffered", "--unbuffered": "unbuffered",
          "--default-system": "default_system", "--tracemark": "tracemark"}
# options with a required value
_VALUED = {"-b": "breaktrace", "--breaktrace": "breaktrace", "-c": "clock", "--clock": "clock",
           "-d": "distance", "--distance": "distance", "-D": "duration",
           "--duration": "duration", "-h": "histogram", "--histogram": "histogram",
           "-H": "histofall", "--histofall": "histofall", "--histfile": "histfile",
           "-i": "interval", "--interval": "interval", "--json": "json",
           "--latency": "latency", "-l": "loops", "--loops": "loops", "-p": "priority",
           "--priority": "priority", "--policy": "policy"}
# options with an optional value (attached, or the next word when it fits)
_OPTIONAL = {"-a": "affinity", "--affinity": "affinity", "-t": "threads",
             "--threads": "threads"}
# options cyclictest has and rtbench cannot honour, with the reason
_REFUSED = {
    "-A": "aligned wake-ups", "--aligned": "aligned wake-ups",
    "--secaligned": "second-aligned wake-ups", "-F": "the stats fifo", "--fifo": "the stats fifo",
    "--laptop": "laptop mode", "--mainaffinity": "main-thread affinity",
    "-o": "oscilloscope mode", "--oscope": "oscilloscope mode", "--priospread": "priority spread",
    "-R": "clock resolution checks", "--resolution": "clock resolution checks",
    "-s": "sys_nanosleep/setitimer", "--system": "sys_nanosleep/setitimer",
    "--smi": "SMI counting", "--spike": "spike recording (use --threshold in a suite)",
    "--spike-nodes": "spike recording", "--dbg_cyclictest": "cyclictest debugging output",
    "-e": "the latency target (use --latency)", "-w": "wakeup tracing", "-W": "wakeup tracing",
    "-T": "tracing", "-P": "preemptoff tracing", "-I": "irqsoff tracing", "-B": "tracing",
    "-C": "context switch tracing", "-E": "event tracing", "-f": "ftrace",
}
_CPULIST = re.compile(r"^\d+(-\d+)?(,\d+(-\d+)?)*$")
_DURATION = re.compile(r"^\d+[smhd]?$")
_UNIT_S = {"s": 1, "m": 60, "h": 3600, "d": 86400}
NOTE = ("rtbench cyclictest: measured by rtprobe cyclic: each thread pinned to one CPU, "
        "equal intervals, skipped periods counted as overruns (cyclictest does not count "
        "them), nanoseconds internally; Act: is the last sample with -h/-v, else the mean "
        "of the last second")


class CyclictestUsage(ValueError):
    """A cyclictest command line rtbench cannot run; one line naming the option."""


@dataclass
class CyclictestOptions:
    """What a cyclictest command line asks for."""

    values: dict[str, str] = field(default_factory=dict)
    flags: set[str] = field(default_factory=set)
    optional: dict[str, str | None] = field(default_factory=dict)

    def int_of(self, key: str, default: int, minimum: int = 0) -> int:
        """An integer option (named in the error as cyclictest spells it)."""
        value = self.values.get(key)
        if value is None:
            return default
        if not value.isdigit() or int(value) < minimum:
            raise CyclictestUsage(f"--{key} {value!r}: expected an integer >= {minimum}")
        return int(value)


def parse_cyclictest_args(argv: list[str]) -> CyclictestOptions:
    """Parse cyclictest options as getopt_long would (attached values too)."""
    opts = CyclictestOptions()
    i = 0
    while i < len(argv):
        arg = argv[i]
        i += 1
        name, value = arg, None
        if arg.startswith("--") and "=" in arg:
            name, value = arg.split("=", 1)
        elif arg.startswith("-") and not arg.startswith("--") and len(arg) > 2:
            name, value = arg[:2], arg[2:]
        if name in _REFUSED:
            raise CyclictestUsage(f"{name}: {_REFUSED[name]} is not supported by rtbench "
                                  "cyclictest; remove the option")
        if name in _FLAGS:
            if value is not None:
                # clustered short flags, e.g. -mq
                rest = [f"-{ch}" for ch in value]
                argv = argv[:i] + rest + argv[i:]
            opts.flags.add(_FLAGS[name])
        elif name in _VALUED:
            if value is None:
                if i >= len(argv):
                    raise CyclictestUsage(f"{name}: needs a value")
                value = argv[i]
                i += 1
            opts.values[_VALUED[name]] = value
        elif name in _OPTIONAL:
            key = _OPTIONAL[name]
            if value is None and i < len(argv) and (
                    argv[i].isdigit() or (key == "affinity" and _CPULIST.match(argv[i]))):
                value = argv[i]
                i += 1
            opts.optional[key] = value
        else:
            raise CyclictestUsage(f"{arg}: not a cyclictest option rtbench knows")
    return opts


@dataclass
class ProbePlan:
    """The rtprobe cyclic arguments for a cyclictest command line, and how to print."""

    args: list[str]
    threads: int
    priority: int
    interval_us: int
    nsecs: bool
    quiet: bool
    verbose: bool
    hist_buckets: int | None
    histofall: bool
    histfile: str | None
    json_file: str | None
    need_raw: bool
    expected_ns: int = 0  # how long the measurement should take (loops x interval, -D)


def plan_probe(opts: CyclictestOptions, cpus_allowed: list[int]) -> ProbePlan:
    """Map cyclictest options onto rtprobe cyclic; CyclictestUsage when impossible."""
    args = ["cyclic", "--warmup", "0"]
    interval = opts.int_of("interval", 1000, 1)
    args += ["--interval", f"{interval}us"]
    priority = opts.int_of("priority", 0)
    policy = opts.values.get("policy")
    if policy is None:
        policy = "fifo" if priority > 0 else "other"
    policy = {"normal": "other"}.get(policy, policy)
    if policy not in ("fifo", "rr", "other"):
        raise CyclictestUsage(f"--policy {policy}: rtbench cyclictest runs fifo, rr, other")
    if policy in ("fifo", "rr"):
        if not 1 <= priority <= 99:
            raise CyclictestUsage(f"-p {priority}: {policy} needs a priority of 1..99")
        args += ["--policy", policy, "--priority", str(priority)]
    else:
        args += ["--policy", "other"]
    threads_opt = opts.optional.get("threads", "1") if "threads" in opts.optional else "1"
    affinity = opts.optional.get("affinity")
    cpus = cpus_allowed
    if affinity:
        from rtbench.util.cpulist import parse_cpulist

        try:
            cpus = sorted(parse_cpulist(affinity))
        except ValueError:
            raise CyclictestUsage(f"-a {affinity}: not a CPU list like 0-3,6") from None
        if not set(cpus) <= set(cpus_allowed):
            raise CyclictestUsage(f"-a {affinity}: CPUs this process may not use")
    if threads_opt is None or "smp" in opts.flags:
        threads = len(cpus)
    else:
        if not threads_opt.isdigit() or int(threads_opt) < 1:
            raise CyclictestUsage(f"-t {threads_opt}: expected a thread count >= 1")
        threads = int(threads_opt)
    if threads > len(cpus):
        raise CyclictestUsage(f"-t {threads}: rtprobe runs one thread per CPU and "
                              f"{len(cpus)} CPU(s) are available; use -t {len(cpus)}")
    args += ["--cpus", ",".join(str(c) for c in cpus[:threads])]
    distance = opts.int_of("distance", 500)
    if distance and threads > 1 and "distance" in opts.values:
        raise CyclictestUsage(f"-d {distance}: rtprobe gives every thread the same interval; "
                              "use -d 0")
    if "loops" in opts.values and opts.int_of("loops", 0) > 0:
        loops = opts.int_of("loops", 0, 1)
        args += ["--loops", str(loops)]
        expected_ns = loops * interval * 1000
    elif "duration" in opts.values:
        duration = opts.values["duration"]
        if not _DURATION.match(duration) or int(duration.rstrip("smhd")) == 0:
            raise CyclictestUsage(f"-D {duration}: expected a time like 60, 10m, 2h or 1d")
        args += ["--duration", duration if duration[-1] in "smhd" else f"{duration}s"]
        expected_ns = int(duration.rstrip("smhd")) * _UNIT_S[duration[-1]
                                                            if duration[-1] in "smhd"
                                                            else "s"] * 10**9
    else:
        args += ["--duration", "3650d"]  # cyclictest runs until interrupted
        expected_ns = 3650 * _UNIT_S["d"] * 10**9
    if "breaktrace" in opts.values:
        args += ["--break-on", f"{opts.int_of('breaktrace', 0, 1)}us"]
    clock = opts.values.get("clock", "0")
    if clock not in ("0", "1"):
        raise CyclictestUsage(f"-c {clock}: 0 (CLOCK_MONOTONIC) or 1 (CLOCK_REALTIME)")
    if clock == "1":
        args += ["--clock", "realtime"]
    if "relative" in opts.flags and "posix_timers" in opts.flags:
        raise CyclictestUsage("-r with -x: choose relative sleeps or POSIX timers")
    if "relative" in opts.flags:
        args += ["--mode", "rel"]
    elif "posix_timers" in opts.flags:
        args += ["--mode", "itimer"]
    if "default_system" in opts.flags:
        args += ["--no-pmqos"]
    elif "latency" in opts.values:
        args += ["--pmqos-us", str(opts.int_of("latency", 0))]
    hist = opts.values.get("histogram") or opts.values.get("histofall")
    buckets = None
    if hist is not None:
        if not hist.isdigit() or not 1 <= int(hist) <= 1_000_000:
            raise CyclictestUsage(f"-h {hist}: expected a bucket count 1..1000000")
        buckets = int(hist)
    verbose = "verbose" in opts.flags
    return ProbePlan(args=args, threads=threads, priority=priority, interval_us=interval,
                     nsecs="nsecs" in opts.flags, quiet="quiet" in opts.flags,
                     verbose=verbose, hist_buckets=buckets,
                     histofall="histofall" in opts.values,
                     histfile=opts.values.get("histfile"), json_file=opts.values.get("json"),
                     need_raw=buckets is not None or verbose, expected_ns=expected_ns)


def unit(ns: float, nsecs: bool) -> int:
    """A latency as cyclictest prints it: whole us (truncated) or ns."""
    return int(ns) if nsecs else int(ns) // 1000


def summary_lines(plan: ProbePlan, series: list[dict[str, Any]], act: dict[int, float],
                  pids: dict[int, int]) -> list[str]:
    """The `T:` lines cyclictest prints at the end (pids: each series' thread id; as
    cyclictest, a value with no sample behind it prints as 0)."""
    lines = []
    for s in series:
        index = int(s["index"])
        count = int(s.get("count") or 0)
        lo = unit(s["min_ns"], plan.nsecs) if s.get("min_ns") is not None else 0
        hi = unit(s["max_ns"], plan.nsecs) if s.get("max_ns") is not None else 0
        avg = unit(series_mean_ns(s) or 0, plan.nsecs)
        lines.append(f"T:{index:2d} ({pids.get(index, 0):5d}) P:{plan.priority:2d} "
                     f"I:{plan.interval_us} C:{count:7d} Min:{lo:7d} "
                     f"Act:{unit(act.get(index, 0), plan.nsecs):5d} Avg:{avg:5d} "
                     f"Max:{hi:8d}")
    return lines


def histogram_block(plan: ProbePlan, series: list[dict[str, Any]],
                    samples: dict[int, list[int]]) -> tuple[list[str], dict[int, dict[int, int]]]:
    """cyclictest's -h/-H block and the per-thread histograms (bucket -> count)."""
    assert plan.hist_buckets is not None
    size = plan.hist_buckets
    hists: dict[int, dict[int, int]] = {}
    overflow_at: dict[int, list[int]] = {}
    for s in series:
        index = int(s["index"])
        counts: dict[int, int] = {}
        over = []
        for cycle, latency_ns in enumerate(samples.get(index, [])):
            bucket = unit(latency_ns, plan.nsecs)
            if bucket >= size:
                over.append(cycle)
            else:
                counts[bucket] = counts.get(bucket, 0) + 1
        hists[index], overflow_at[index] = counts, over
    order = [int(s["index"]) for s in series]
    lines = ["# Histogram"]
    for bucket in range(size):
        row = [hists[i].get(bucket, 0) for i in order]
        cells = f"{bucket:06d} " + "\t".join(f"{c:06d}" for c in row)
        if plan.histofall and len(order) > 1:
            cells += f"\t{sum(row):06d}"
        lines.append(cells)
    every = plan.histofall and len(order) > 1  # -H: a column for all threads together
    totals = [sum(hists[i].values()) for i in order]
    lines.append("# Total:" + "".join(f" {v:09d}" for v in totals)
                 + (f" {sum(totals):09d}" if every else ""))
    for label, key in (("Min", "min_ns"), ("Avg", None), ("Max", "max_ns")):
        values = []
        for s in series:
            ns = (series_mean_ns(s) or 0.0) if key is None else float(s.get(key) or 0)
            values.append(unit(ns, plan.nsecs))
        extra = f" {max(values):05d}" if every and label == "Max" else ""
        lines.append(f"# {label} Latencies:" + "".join(f" {v:05d}" for v in values) + extra)
    overflows = [len(overflow_at[i]) for i in order]
    lines.append("# Histogram Overflows:" + "".join(f" {v:05d}" for v in overflows)
                 + (f" {sum(overflows):05d}" if every else ""))
    lines.append("# Histogram Overflow at cycle number:")
    for i in order:
        shown = overflow_at[i][:size]
        line = f"# Thread {i}:" + "".join(f" {c:05d}" for c in shown)
        if len(overflow_at[i]) > size:
            line += f" # {len(overflow_at[i]) - size:05d} others"
        lines.append(line)
    return lines, hists


def json_document(plan: ProbePlan, argv: list[str], series: list[dict[str, Any]],
                  hists: dict[int, dict[int, int]], sysinfo: dict[str, Any],
                  started: datetime, ended: datetime, code: int) -> dict[str, Any]:
    """The --json file as cyclictest 2.x writes it, laid out by
    rtbench/interop/rttestsjson.py (the one writer of that format)."""
    uname = sysinfo.get("uname") if isinstance(sysinfo.get("uname"), dict) else {}
    assert isinstance(uname, dict)
    threads = {}
    for s in series:
        index = int(s["index"])
        count = int(s.get("count") or 0)
        mean = series_mean_ns(s)
        threads[str(index)] = thread_entry(
            {str(k): v for k, v in sorted(hists.get(index, {}).items())}, count,
            unit(s.get("min_ns") or 0, plan.nsecs), unit(s.get("max_ns") or 0, plan.nsecs),
            round(mean / (1 if plan.nsecs else 1000), 2) if mean is not None else 0.0,
            cast(int, s["cpu"]) if s.get("cpu") is not None else -1)
    return document(cmdline=" ".join(["cyclictest", *argv]),
                    version=f"rtbench {__version__}", started=started, ended=ended,
                    return_code=code, uname=uname,
                    realtime="PREEMPT_RT" in str(uname.get("version", "")),
                    threads=threads, nanoseconds=plan.nsecs)


