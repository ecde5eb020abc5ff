"""How long a suite run takes on a target, from the line that prints it to the run's end:
its tests' own durations plus the fixed costs a run pays whatever its scale (pure).

The fixed costs are counted in command round trips over the target's transport
(starting and stopping rtprobe and each load instance, the scenario's /proc reads), the
bytes of rtprobe's records over a serial line, and the host's own end of a run (storing,
the regression check).  A round trip costs from ROUND_TRIP_S[transport][0] (a fast
board) to [1] (the slowest board measured: over serial, a two-vCPU TCG guest on a busy
host, 115200 baud, whose shell answers slowly while a scenario's loads run; BENCHMARKS.md
"Suite run estimates, second pass"), so the estimate is a range; a run falls within it
where its board is no slower than that one.  The counts were taken on a
serial board (a shell on a pty): a built-in load takes 8 round trips, a scenario 3, a
measurement up to 3.  A shell-command load is one board job on a serial line whatever
its `instances` (targets/serial.py `start_commands`): one round trip to start it, and one
to stop all of a scenario's command loads; ssh, labgrid and this machine start and stop
each instance (2 round trips an instance).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from rtbench.suites.model import Suite
from rtbench.suites.parse import parse_duration_ns

# seconds per command round trip: (fast, slow), by transport
ROUND_TRIP_S = {
    "local": (0.01, 0.2),
    "ssh": (0.05, 1.0),
    "labgrid": (0.05, 1.0),
    # the slow end holds all a run's time besides its tests, per round trip: 1126 s for
    # loongson2f --scale 0.01 (290 round trips, 132 s of tests) on the amd64-rt zoo
    # guest is 3.4 s a round trip; 3.5 leaves a margin
    "serial": (0.02, 3.5),
}
# the host's own part of a run, whatever the target: the run stored and closed, the
# regression check of its board (which loads the statistics modules): (fast, slow) s
RUN_FIXED_S = (0.5, 6.0)
# round trips of the run's start: sysinfo, preflight reads, the probe's version
RUN_ROUND_TRIPS = 12
# per scenario: its /proc reads at the start and the end, the network counters
SCENARIO_ROUND_TRIPS = 3
# per measurement: rtprobe started, stopped, its exit code and stderr read
MEASUREMENT_ROUND_TRIPS = 3
# a shell-command load instance started and killed on its own (ssh, labgrid, local);
# per built-in load instance: also interrupted, waited for and its output collected
COMMAND_LOAD_ROUND_TRIPS = 2
BUILTIN_LOAD_ROUND_TRIPS = 8
# on a serial line: a shell-command load's instances are one job, started in one round
# trip; a scenario's command loads are stopped together in one
SERIAL_COMMAND_LOAD_START_ROUND_TRIPS = 1
SERIAL_COMMAND_LOADS_STOP_ROUND_TRIPS = 1
# rtprobe's records: the start record, the result per series, one window record per
# series per window with its histogram delta (measured: `rtprobe cyclic --simulate 1
# --threads 2` writes a 2.2 KiB start, 2.9 KiB windows and a 7.9 KiB result)
START_RECORD_BYTES = 2300
RESULT_BYTES_PER_SERIES = 4000
WINDOW_BYTES_PER_SERIES = 3000
# a serial byte is 10 bits on the line (start, 8 data, stop)
BITS_PER_SERIAL_BYTE = 10


@dataclass(frozen=True)
class Estimate:
    """A run's expected wall time: the tests' own durations plus fixed costs (a range)."""

    nominal_s: float  # the tests' durations, warm-ups and settle times alone
    low_s: float  # with the fixed costs of a fast target
    high_s: float  # with those of the slowest board the tests run on this transport
    transport: str

    def text(self) -> str:
        """'about 6 min 47 s: 3 min 7 s to 10 min 27 s over serial' (one figure where
        the range is narrow)."""
        middle = (self.low_s + self.high_s) / 2
        if self.high_s - self.low_s < max(5.0, 0.2 * self.low_s):
            return f"about {seconds_text(middle)}"
        return (f"about {seconds_text(middle)}: {seconds_text(self.low_s)} to "
                f"{seconds_text(self.high_s)} {self.where()}")

    def where(self) -> str:
        """Where the range comes from, in words."""
        return "here" if self.transport == "local" else f"over {self.transport}"


def seconds_text(seconds: float) -> str:
    """An expected length: '45 s', '3 min 20 s'."""
    total = int(round(seconds))
    if total < 120:
        return f"{total} s"
    return f"{total // 60} min {total % 60} s" if total % 60 else f"{total // 60} min"


def transport_of(target_name: str) -> str:
    """The transport of a target by its name: local, ssh, serial or labgrid."""
    for scheme in ("ssh", "serial", "labgrid"):
        if target_name.startswith(scheme):
            return scheme
    return "local"


def series_of(params: Mapping[str, object], cpus: int) -> int:
    """How many series a test measures: its threads, else one per CPU."""
    threads = params.get("threads")
    if isinstance(threads, int) and not isinstance(threads, bool) and threads > 0:
        return threads
    return max(1, cpus)


def window_of(params: Mapping[str, object]) -> int:
    """The period of a test's window records in ns (its `window` param, else 1 s)."""
    window = params.get("window")
    if isinstance(window, str):
        try:
            return max(1, parse_duration_ns(window, "s"))
        except ValueError:
            pass
    return 10**9


def record_bytes(suite: Suite, cpus: int) -> int:
    """The bytes of rtprobe records a run sends (every scenario x test)."""
    total = 0
    for test in suite.tests:
        series = series_of(test.params, cpus)
        window_ns = window_of(test.params)
        windows = max(1, int(test.duration_ns // max(1, window_ns)) + 1) * test.runs()
        total += (START_RECORD_BYTES + series * RESULT_BYTES_PER_SERIES
                  + windows * series * WINDOW_BYTES_PER_SERIES)
    return total * len(suite.scenarios)


def command_load_round_trips(suite: Suite, transport: str) -> int:
    """Round trips the suite's shell-command loads take to start and stop."""
    trips = 0
    for scenario in suite.scenarios:
        commands = [load for load in scenario.loads if load.command is not None]
        if transport == "serial":
            trips += len(commands) * SERIAL_COMMAND_LOAD_START_ROUND_TRIPS
            trips += SERIAL_COMMAND_LOADS_STOP_ROUND_TRIPS if commands else 0
        else:
            trips += sum(COMMAND_LOAD_ROUND_TRIPS * load.instances for load in commands)
    return trips


def round_trips(suite: Suite, transport: str) -> int:
    """Command round trips a run makes besides its records, over transport."""
    builtin = sum(BUILTIN_LOAD_ROUND_TRIPS * load.instances
                  for scenario in suite.scenarios for load in scenario.loads
                  if load.command is None)
    measurements = len(suite.scenarios) * len(suite.tests)
    return (RUN_ROUND_TRIPS + len(suite.scenarios) * SCENARIO_ROUND_TRIPS
            + measurements * MEASUREMENT_ROUND_TRIPS + builtin
            + command_load_round_trips(suite, transport))


def estimate_run(suite: Suite, target_name: str = "local", *, baud: int | None = None,
                 cpus: int = 1) -> Estimate:
    """The expected wall time of suite on a target (its name, a serial line's baud and
    CPU count when known)."""
    transport = transport_of(target_name)
    nominal = sum(s.settle_ns / 1e9 + sum(t.expected_seconds() for t in suite.tests)
                  for s in suite.scenarios)
    # a test of fixed work (ctx, pi, hackbench...) takes from nothing to its nominal
    # length: how long its work takes is the board's, and --scale does not change it
    untimed = len(suite.scenarios) * sum(t.expected_seconds() - t.warmup_ns / 1e9
                                         for t in suite.tests if not t.traits().timed)
    fast, slow = ROUND_TRIP_S[transport]
    trips = round_trips(suite, transport)
    line_s = 0.0
    if transport == "serial" and baud:
        # records queue while the tests run; what outlasts them is the line's rate
        line_s = max(0.0, record_bytes(suite, cpus) * BITS_PER_SERIAL_BYTE / baud
                     - nominal)
    return Estimate(nominal, nominal - untimed + RUN_FIXED_S[0] + trips * fast + line_s,
                    nominal + RUN_FIXED_S[1] + trips * slow + line_s, transport)
