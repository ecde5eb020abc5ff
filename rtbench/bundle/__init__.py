"""The run bundle: one run in memory, typed, with everything the store keeps.

The store returns these (no SQLAlchemy objects leak out) and takes them whole
(`Store.add_bundle`); importers build them from other tools' files, the upload API
from JSON (rtbench.interop.runjson), and exporters read them.  An `id` of 0 means
"not stored yet"; `uid` names a run across databases (an import's or upload's
identity), so storing the same run twice stores it once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    # numpy and the record classes are only named here: listing runs (`rtbench ls`)
    # needs the summaries alone and does not pay for numpy
    import numpy as np
    import numpy.typing as npt

    from rtbench.rtprobe.wire.records import SpikeRecord, WindowRecord


@dataclass
class RunSummary:
    """One line of `rtbench ls`."""

    id: int
    started_at: datetime
    hostname: str
    kernel: str
    suite: str
    status: str
    worst_max_ns: int | None
    simulated: bool
    tags: dict[str, str] = field(default_factory=dict)
    # where it ran: "local", "ssh://user@host", "serial:///dev/ttyX?baud=N", "labgrid:PLACE"
    target: str = ""
    # its measurements, and those with a threshold or criterion (None: not counted)
    measurement_count: int | None = None
    checked_count: int | None = None
    # the board it ran on (--board, the fleet inventory name, else the target's host)
    board: str = ""
    # what the lists mark (rtbench/report/run_markers.py): the suite's duration factor
    # (below 1: a short run), whether a measurement holds trace records, whether the CPU
    # was emulated
    scale: float = 1.0
    traced: bool = False
    emulated: bool = False
    # how many ways its scenarios did not happen as defined (stored `not_as_defined`)
    not_as_defined: int = 0


@dataclass
class SeriesDetail:
    """Per-thread facts of one measurement, with its measured histogram."""

    index: int
    label: str
    cpu: int | None
    count: int
    min_ns: int | None
    max_ns: int | None
    sum_ns: int
    overruns: int
    early: int
    exceed: list[tuple[int, int]]  # (threshold_ns, count)
    worst: list[tuple[int, int]]  # (t_ns, latency_ns), largest first
    warmup: dict[str, Any]
    hist: list[tuple[int, int]]  # sparse (bucket index, count), increasing
    spikes_dropped: int = 0
    raw_dropped: int = 0
    error: str | None = None
    # samples the histogram holds only as "at or above its last bucket" (an imported
    # tool's overflow count): percentiles among them are unknown
    beyond_hist: int = 0

    def hist_arrays(self) -> tuple[npt.NDArray[np.int64],
                                   npt.NDArray[np.int64]]:
        """The histogram as (indices, counts) numpy arrays."""
        from rtbench.rtprobe.wire import loglin7

        return loglin7.to_arrays(self.hist)

# the status of a measurement that never ran (the run was lost before it could start)
NOT_STARTED = "not started"
# the status of a measurement the board cannot make however it is asked (too few CPUs
# for the test, no C compiler for its scenario's build load): no samples, never a pass;
# `reason` says why in one line
INCONCLUSIVE = "inconclusive"


@dataclass
class MeasurementDetail:
    """One rtprobe invocation inside a scenario."""

    id: int
    name: str
    test: str
    params: dict[str, Any]
    command: list[str]
    status: str
    exit_code: int | None
    reason: str | None
    thresholds_ns: list[int]
    simulated: bool
    probe_version: str
    t0_unix_ns: int | None
    measured_ns: int | None
    elapsed_ns: int | None
    verdicts: list[dict[str, Any]]
    data: dict[str, Any]
    start: dict[str, Any]  # the start record minus sysinfo (rt, common ...)
    series: list[SeriesDetail] = field(default_factory=list)
    windows: list[WindowRecord] = field(default_factory=list)
    spikes: list[SpikeRecord] = field(default_factory=list)
    # `trace` records of this measurement (docs/schema.md), as parsed dicts (an import of
    # many may give a sequence that reads each when asked: rtla-timerlat-auto)
    traces: Sequence[dict[str, Any]] = field(default_factory=list)
    # the `trace_summary` record: events enabled/missing, spikes traced/untraced
    trace_info: dict[str, Any] | None = None


@dataclass
class ScenarioDetail:
    """A load recipe and the measurements taken under it."""

    id: int
    name: str
    loads: list[dict[str, Any]]
    load_cpus: str | None
    measure_cpus: str | None
    intensity: dict[str, Any] | None
    measurements: list[MeasurementDetail] = field(default_factory=list)


@dataclass
class RunDetail:
    """Everything stored about one run."""

    id: int
    suite: str
    suite_source: str
    scale: float
    status: str
    started_at: datetime
    finished_at: datetime | None
    hostname: str
    target: str
    kernel: str
    arch: str
    sysinfo: dict[str, Any]
    preflight: list[dict[str, Any]]
    tool_versions: dict[str, Any]
    command_line: list[str]
    simulated: bool
    scenarios: list[ScenarioDetail] = field(default_factory=list)
    # k=v labels (`rtbench tag`, `--tag`, fleet ids)
    tags: dict[str, str] = field(default_factory=dict)
    # where the run came from: {"tool": "rtbench"} for a run measured here, else the
    # importer's facts (tool, tool_version, command_line, file, sha256, format)
    source: dict[str, Any] = field(default_factory=dict)
    # stable identity across databases ("" until stored; the store then assigns one)
    uid: str = ""
    # why the run holds no evidence (a fleet board unreachable or failed); None otherwise
    reason: str | None = None
    # the board it ran on ("" until stored: the store then derives it with board_of())
    board: str = ""
    # measured under CPU emulation (QEMU TCG; sysinfo "emulated"): its figures describe
    # the emulator, not a board
    emulated: bool = False

    def __post_init__(self) -> None:
        """A run whose target said its CPU was emulated is emulated, however it was made."""
        self.emulated = bool(self.emulated) or sysinfo_emulated(self.sysinfo)


# how a sysinfo `virtualization` value names an emulated CPU (prefixes; imported runs
# and probes older than the `emulated` field say it only there)
EMULATED_VIRTUALIZATION = ("tcg", "qemu-tcg", "emulat")


def sysinfo_emulated(sysinfo: dict[str, Any] | None) -> bool:
    """Whether a target's sysinfo says its CPU was emulated (rtprobe sysinfo `emulated`,
    or a `virtualization` naming TCG or an emulator)."""
    if not isinstance(sysinfo, dict):
        return False
    virt = sysinfo.get("virtualization")
    return sysinfo.get("emulated") is True or (
        isinstance(virt, str) and virt.lower().startswith(EMULATED_VIRTUALIZATION))


# host names that name no host: Linux's default nodename, and none at all
NO_HOSTNAME = ("", "(none)", "unknown")


def _target_name(target: str) -> str:
    """A board name from a target without a host name: 'serial-ttyUSB0' for
    serial:///dev/ttyUSB0?baud=N, 'local' for local; never a '/' (names go in URLs)."""
    bare = target.partition("?")[0]
    scheme, _, rest = bare.partition(":")
    last = rest.rstrip("/").rpartition("/")[2]
    name = f"{scheme}-{last}" if last else scheme
    return "".join(ch if ch.isprintable() and ch != "/" else "_" for ch in name)


def board_of(target: str, hostname: str) -> str:
    """The board a run without a given board name ran on: what the target's transport
    names from its URI (the host of an ssh:// target, the place of a labgrid: target:
    `board_of_uri()` in rtbench/targets/), else the target's host name; a target whose
    host has no name (Linux's "(none)") is named by its target (serial-ttyUSB0)."""
    if ":" in target:
        # only a URI with a scheme can have a transport: local and import runs never
        # load the transports
        from rtbench.targets.base import board_from_uri

        named = board_from_uri(target)
        if named:
            return named[:255]
    if hostname.strip() in NO_HOSTNAME and target.strip() and target != "import":
        return _target_name(target.strip())[:255]
    return (hostname or "unknown")[:255]


# the earliest start a stored run may have; the latest is now + START_SLACK
EARLIEST_START = datetime(2000, 1, 1, tzinfo=timezone.utc)
START_SLACK = timedelta(days=1)


def start_problem(started_at: datetime, now: datetime) -> str | None:
    """Why a run's start time cannot be true (before 2000-01-01, or more than a day after
    now: a board whose clock was never set, a file's bad time), or None when it can."""
    when = started_at if started_at.tzinfo else started_at.replace(tzinfo=timezone.utc)
    latest = now + START_SLACK
    if EARLIEST_START <= when <= latest:
        return None
    return (f"started {when.astimezone(timezone.utc):%Y-%m-%d %H:%M} UTC, outside "
            f"2000-01-01 .. {latest.astimezone(timezone.utc):%Y-%m-%d %H:%M} UTC (now + 1 "
            "day): set the clock of the machine that measured it (or the file's time) and "
            "send it again")


def mark_beyond_hist(m: MeasurementDetail) -> MeasurementDetail:
    """Set each series' beyond_hist from an import's stored overflow counts."""
    overflow = m.data.get("tool_overflow") if isinstance(m.data, dict) else None
    if isinstance(overflow, list):
        for s, n in zip(m.series, overflow, strict=False):
            if isinstance(n, int) and not isinstance(n, bool) and n > 0:
                s.beyond_hist = n
    return m
