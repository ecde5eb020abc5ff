"""Published reference results as read-only runs (pure: text in, objects out).

The CSVs of rtbench/reference/data quote five published evaluations.  Each file
becomes one or more *reference runs* (one per system/kernel column), each with
cells keyed like our measurements (scenario, test, parameters) so that compare,
plot and report can put them beside a measured run.  Only the figures the paper
prints are kept (in nanoseconds); everything else is absent, never invented.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Callable
from dataclasses import dataclass, field

PUBLISHED_LABEL = "published, not measured here"


@dataclass(frozen=True)
class ReferenceCell:
    """One published result: the figures a paper printed for one test and condition."""

    scenario: str  # the load condition, e.g. "idle", "ping+x+find"
    test: str  # the rtbench test that measures the same thing (cyclic, periodic ...)
    params: dict[str, object]  # parameters the paper states, as rtprobe records them
    label: str  # the paper's own name for it, e.g. "cyclictest" or "lat_ctx 16k x 4"
    figures_ns: dict[str, float]  # only published ones: min, mean, max, stddev
    other: dict[str, str] = field(default_factory=dict)  # further figures, with units
    hist: list[tuple[float, int]] = field(default_factory=list)  # (class lower ns, count)
    hist_width_ns: float = 0.0  # width of each published histogram class


@dataclass(frozen=True)
class ReferenceRun:
    """A published experiment on one system, as a read-only run."""

    name: str  # used as ref:NAME
    title: str  # one line: what was measured where
    file: str  # the CSV it comes from
    platform: str
    kernel: str
    conditions: list[str]  # the CSV's comment lines: workload, method, caveats
    cells: list[ReferenceCell]
    label: str = PUBLISHED_LABEL


def read_csv(text: str) -> tuple[list[str], list[dict[str, str]]]:
    """Comment lines ('# ...', anywhere) and rows as dicts of the header's columns."""
    comments: list[str] = []
    data: list[str] = []
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("#"):
            comments.append(stripped.lstrip("#").strip())
        elif stripped:
            data.append(line)
    rows = list(csv.DictReader(data))
    return comments, [{k: (v or "").strip() for k, v in r.items() if k} for r in rows]


def _us(text: str) -> float | None:
    """A figure in microseconds as nanoseconds (None when empty)."""
    return float(text) * 1000.0 if text not in ("", None) else None


def _figures(**values: float | None) -> dict[str, float]:
    """Only the figures that were printed."""
    return {k: v for k, v in values.items() if v is not None}


def loongson(text: str) -> list[ReferenceRun]:
    """loongson2f_cyclictest.csv: one run, one cyclic cell per load."""
    comments, rows = read_csv(text)
    cells = [ReferenceCell(
        scenario=r["load"], test="cyclic", params={}, label="cyclictest (7 intervals pooled)",
        figures_ns=_figures(max=_us(r["max_us"]), mean=_us(r["avg_us"]),
                            stddev=_us(r["stddev_us"])))
        for r in rows]
    return [ReferenceRun(
        name="loongson2f", title="PREEMPT_RT on a Loongson 2F mini PC: cyclictest under 7 loads",
        file="loongson2f_cyclictest.csv",
        platform="Lemote FuLoong(2F), Loongson 2F (MIPS64-compatible, 1 core, 800 MHz-1 GHz)",
        kernel="2.6.29 family PREEMPT_RT", conditions=comments, cells=cells)]


def arm_boards(text: str) -> list[ReferenceRun]:
    """arm9_arm11_preemptrt.csv: one run per board."""
    comments, rows = read_csv(text)
    runs = []
    scenario = "hackbench+ping-flood"
    for r in rows:
        name = "at91sam9263" if "AT91" in r["board"] else "imx31"
        cells = [
            ReferenceCell(scenario, "event", {"source": "gpio"}, "IRQ latency (GPIO in -> pin)",
                          _figures(max=_us(r["irq_latency_max_us"]))),
            ReferenceCell(scenario, "event", {"source": "uio"}, "UIO wakeup (IRQ -> user task)",
                          _figures(max=_us(r["uio_wakeup_max_us"])),
                          other={"missed events": r["missed_events"]}),
            ReferenceCell(scenario, "cyclic", {"interval_ns": 1_000_000}, "cyclictest 1 ms FIFO 80",
                          _figures(max=_us(r["cyclictest_max_us"]),
                                   mean=_us(r["cyclictest_avg_us"]))),
        ]
        runs.append(ReferenceRun(
            name=name, title=f"PREEMPT_RT on {r['board']}: worst-case IRQ, UIO and timer latency",
            file="arm9_arm11_preemptrt.csv",
            platform=f"{r['board']}, {r['cpu']}, {r['core']}, {r['mhz']} MHz, {r['ram_mb']} MB",
            kernel="PREEMPT_RT", conditions=comments, cells=cells))
    return runs


_CELLEB_TESTS: dict[str, tuple[str, dict[str, object]]] = {
    "cyclictest": ("cyclic", {}),
    "gtod_latency": ("clock", {}),
    "sched_latency": ("periodic", {"period_ns": 5_000_000}),
    "async_handler": ("wakeup", {}),
}


def _celleb_name(system: str, kernel: str) -> str:
    """ref name of one Celleb/x86 column: celleb-rt, celleb-vanilla, x86-rt, x86-vanilla."""
    return f"{system}-{'rt' if '-rt' in kernel else 'vanilla'}"


def celleb(text: str, hist_text: str) -> list[ReferenceRun]:
    """celleb_x86_rt.csv (+ the gtod histogram of celleb_gtod_histogram.csv)."""
    comments, rows = read_csv(text)
    _, hist_rows = read_csv(hist_text)
    runs: dict[str, ReferenceRun] = {}
    for r in rows:
        name = _celleb_name(r["system"], r["kernel"])
        if name not in runs:
            platform = ("Toshiba Cell Reference Set (Cell/B.E. PPU, PowerPC64)"
                        if r["system"] == "celleb" else "x86 (as quoted from an OLS 2007 paper)")
            runs[name] = ReferenceRun(
                name=name, title=f"{r['system']} {r['kernel']}: rt-tests and LTP realtime "
                                 "tests under a kernel-compile load",
                file="celleb_x86_rt.csv", platform=platform, kernel=r["kernel"],
                conditions=list(comments), cells=[])
        test, params = _CELLEB_TESTS[r["test"]]
        other = {"verdict": r["extra"]} if r.get("extra") else {}
        runs[name].cells.append(ReferenceCell(
            scenario="kernel-compile", test=test, params=dict(params), label=r["test"],
            figures_ns=_figures(min=_us(r["min_us"]), mean=_us(r["avg_us"]),
                                max=_us(r["max_us"]), stddev=_us(r["stddev_us"])),
            other=other))
    for column, name, scenario in (("vanilla_idle", "celleb-vanilla", "idle"),
                                   ("vanilla_load", "celleb-vanilla", "kernel-compile"),
                                   ("rt1_idle", "celleb-rt", "idle"),
                                   ("rt1_load", "celleb-rt", "kernel-compile")):
        hist = [(float(h["latency_us"]) * 1000.0, int(h[column])) for h in hist_rows
                if int(h[column])]
        runs[name].cells.append(ReferenceCell(
            scenario=scenario, test="clock", params={},
            label="gtod_latency histogram (1 µs classes)", figures_ns={},
            hist=hist, hist_width_ns=1000.0))
    return list(runs.values())


def s3c24a0(text: str) -> list[ReferenceRun]:
    """s3c24a0_lmbench.csv: one run per kernel (uClinux 2.6, Linux 2.6, Linux 2.4)."""
    comments, rows = read_csv(text)
    kernels = (("uclinux_2_6_11_6", "s3c24a0-uclinux", "uClinux 2.6.11.6"),
               ("linux_2_6_11_6", "s3c24a0-linux26", "Linux 2.6.11.6"),
               ("linux_2_4_20_mvista", "s3c24a0-linux24", "Linux 2.4.20 (MontaVista)"))
    runs = []
    for column, name, kernel in kernels:
        cells = []
        for r in rows:
            test = r["test"]
            if test == "lat_ctx":
                cells.append(ReferenceCell(
                    "idle", "ctx", {"size": f"{r['size_k']}k", "processes": r["processes"]},
                    f"lat_ctx {r['size_k']}k x {r['processes']}", {},
                    other={"per-switch time": f"{r[column]} µs"}))
            elif test == "lat_ctx_ovr":
                cells.append(ReferenceCell(
                    "idle", "ctx", {"size": f"{r['size_k']}k", "overhead": "yes"},
                    f"lat_ctx overhead {r['size_k']}k", {},
                    other={"per-hop overhead": f"{r[column]} µs"}))
            elif test == "lat_fifo_us":
                cells.append(ReferenceCell("idle", "ipc", {"mechanism": "fifo"}, "lat_fifo", {},
                                           other={"latency": f"{r[column]} µs"}))
            elif test == "bw_pipe_MBps":
                cells.append(ReferenceCell("idle", "ipc", {"mechanism": "pipe-bandwidth"},
                                           "bw_pipe", {}, other={"bandwidth": f"{r[column]} MB/s"}))
        runs.append(ReferenceRun(
            name=name, title=f"{kernel} on a Samsung S3C24A0: lmbench context switch and IPC",
            file="s3c24a0_lmbench.csv", platform="Samsung S3C24A0 (ARM926EJ-S, 200 MHz), 64 MB",
            kernel=kernel, conditions=comments, cells=cells))
    return runs


def lrtai(text: str) -> list[ReferenceRun]:
    """lrtai_ia32.csv: Lightweight RTAI and Linux/RTAI on an AMD K6."""
    comments, rows = read_csv(text)
    runs = []
    for r in rows:
        name = "lrtai" if r["system"] == "LRTAI" else "linux-rtai"
        other = {"unit": f"printed as '{r['worst_case_latency']} {r['unit_as_printed']}'; "
                         "taken as microseconds (see the file's notes)"}
        if r.get("image_kib"):
            other["image"] = f"{r['image_kib']} KiB"
        if r.get("footprint_kib"):
            other["memory footprint"] = f"{r['footprint_kib']} KiB"
        runs.append(ReferenceRun(
            name=name, title=f"{r['system']} on an AMD K6 200 MHz: RTAI latency module, "
                             f"{r['timer_mode']} timer",
            file="lrtai_ia32.csv", platform="AMD K6 200 MHz, 128 MB",
            kernel="Linux 2.6.17 + ADEOS IPIPE 1.3-08 + RTAI 3.4", conditions=comments,
            cells=[ReferenceCell("cpu-load", "cyclic", {"interval_ns": 100_000},
                                 f"RTAI latency ({r['timer_mode']})",
                                 _figures(max=_us(r["worst_case_latency"])), other=other)]))
    return runs


# builders by the file(s) they read; the loader passes each file's text in this order
BUILDERS: dict[tuple[str, ...], Callable[..., list[ReferenceRun]]] = {
    ("loongson2f_cyclictest.csv",): loongson,
    ("arm9_arm11_preemptrt.csv",): arm_boards,
    ("celleb_x86_rt.csv", "celleb_gtod_histogram.csv"): celleb,
    ("s3c24a0_lmbench.csv",): s3c24a0,
    ("lrtai_ia32.csv",): lrtai,
}


def build_all(read: Callable[[str], str]) -> list[ReferenceRun]:
    """Every reference run, given a function that returns a data file's text."""
    runs: list[ReferenceRun] = []
    for files, builder in BUILDERS.items():
        runs.extend(builder(*(read(f) for f in files)))
    return runs


def hist_quantile(cell: ReferenceCell, q: float) -> float | None:
    """The q-quantile of a published histogram: lower bound of the class holding rank ceil(qn)."""
    n = sum(c for _, c in cell.hist)
    if not n:
        return None
    rank = max(1, math.ceil(q * n - 1e-9))
    seen = 0
    for lower, count in sorted(cell.hist):
        seen += count
        if seen >= rank:
            return lower
    return None
