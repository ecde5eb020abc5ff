"""rtprobe's command lines: a test's or a built-in load's arguments, built from plain values.

Durations are written the way rtprobe reads them (a whole number and a unit).
"""

from __future__ import annotations

from collections.abc import Mapping

from rtbench.rtprobe.catalogue import TestKind
from rtbench.util.cpulist import parse_cpulist

UNIT_NS = {
    "ns": 1, "us": 1_000, "ms": 1_000_000, "s": 1_000_000_000,
    "m": 60_000_000_000, "h": 3_600_000_000_000, "d": 86_400_000_000_000,
}

ParamValue = str | int | float | bool | list[str | int | float]


def format_duration(ns: int) -> str:
    """Format ns with the largest unit that divides it exactly (what rtprobe accepts)."""
    for unit in ("d", "h", "m", "s", "ms", "us"):
        if ns and ns % UNIT_NS[unit] == 0:
            return f"{ns // UNIT_NS[unit]}{unit}"
    return f"{ns}ns"


def params_to_args(params: Mapping[str, ParamValue]) -> list[str]:
    """Turn a params table into --key value options (true: --key, false: omitted)."""
    args: list[str] = []
    for key, value in params.items():
        option = "--" + key.replace("_", "-")
        if value is True:
            args.append(option)
        elif value is False:
            continue
        elif isinstance(value, list):
            args += [option, ",".join(scalar_text(v) for v in value)]
        else:
            args += [option, scalar_text(value)]
    return args


def scalar_text(value: str | int | float) -> str:
    """Text of one parameter value."""
    return value if isinstance(value, str) else repr(value)


def measure_args(test: str, traits: TestKind, *, duration_ns: int, warmup_ns: int,
                 thresholds_ns: tuple[int, ...], params: Mapping[str, ParamValue],
                 measure_cpus: str | None, policy: str | None = None,
                 simulate: str | None = None) -> list[str]:
    """Return the rtprobe arguments (after the binary) of one measurement of test.

    traits are the test's as the catalogue (and its params) make them.  policy, when
    given, replaces the params' own policy and priority (rtprobe takes no priority with
    "other"); the caller gives it only to tests that take any policy.
    """
    if policy is not None:
        params = {k: v for k, v in params.items() if k not in ("policy", "priority")}
    args = [test]
    if traits.timed:
        args += ["--duration", format_duration(duration_ns)]
    if traits.warmup:
        args += ["--warmup", format_duration(warmup_ns)]
    if thresholds_ns and traits.thresholds:
        args += ["--threshold", ",".join(format_duration(t) for t in thresholds_ns)]
    if measure_cpus is not None:
        if traits.cpus == "--cpus":
            args += ["--cpus", measure_cpus]
        elif traits.cpus == "--cpu" and "cpu" not in params:
            args += ["--cpu", str(min(parse_cpulist(measure_cpus)))]
    args += params_to_args(params)
    if policy is not None:
        args += ["--policy", policy]
    if simulate is not None:
        args += ["--simulate", simulate]
    return args


def serial_trace_args(params: Mapping[str, ParamValue], baud: int | None) -> list[str]:
    """--trace-budget for a traced test on a serial line of baud (None: not serial).

    A trace record costs the line its bytes: at 115200 baud (about 11 KiB/s) the
    default 64 KiB per spike would hold the line for 6 s per spike.  The budget becomes
    about one second of the line (4 KiB to 64 KiB) unless params set one.
    """
    if baud is None or params.get("trace") not in ("on", "auto") or "trace_budget" in params:
        return []
    return ["--trace-budget", str(max(4096, min(65536, baud // 10)))]


def load_args(kind: str, rate: float | str, options: Mapping[str, ParamValue], *,
              cpus: str | None = None, flood_address: str | None = None,
              flood_port: int = 0) -> list[str]:
    """Return the arguments of `rtprobe load KIND --rate R` (rate "max": flat out).

    flood_address aims a net load run elsewhere at that address and port (it then
    takes no CPU list: the machine it runs on is not the one measured).
    """
    rate_text = rate if isinstance(rate, str) else f"{rate:g}"
    args = ["load", kind, "--rate", rate_text]
    if flood_address is not None:
        where = f"[{flood_address}]" if ":" in flood_address else flood_address
        args += ["--target", f"{where}:{flood_port}", "--allow-remote"]
    elif cpus is not None:
        args += ["--cpus", cpus]
    return args + params_to_args(options)
