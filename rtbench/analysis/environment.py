"""Environment facts of a run, from its stored sysinfo: shown, not judged (no I/O)."""

from __future__ import annotations

from rtbench.bundle import RunDetail
from rtbench.core.valuetext import value_text

ENV_KEYS = (
    ("kernel", ("uname", "release")), ("preempt", ("preempt_model",)),
    ("PREEMPT_RT", ("preempt_rt",)), ("cpu model", ("cpu_model",)),
    ("cpus online", ("cpus_online",)), ("isolated", ("cpus_isolated",)),
    ("clocksource", ("clocksource",)), ("idle driver", ("idle_driver",)),
    ("SMT active", ("smt_active",)), ("RT runtime µs", ("rt_runtime_us",)),
    ("THP", ("thp_enabled",)), ("virtualization", ("virtualization",)),
    ("memory KiB", ("mem_total_kib",)), ("cmdline", ("cmdline",)),
)


def environment_rows(run: RunDetail) -> list[tuple[str, str]]:
    """Key environment facts from the stored sysinfo (shown, not judged)."""
    rows = []
    for label, path in ENV_KEYS:
        value: object = run.sysinfo
        for key in path:
            value = value.get(key) if isinstance(value, dict) else None
        rows.append((label, "none" if value == "" else value_text(value)))
    governors = run.sysinfo.get("governors")
    if isinstance(governors, dict) and governors:
        rows.append(("governors", ", ".join(sorted(set(
            str(g) for g in governors.values())))))
    return rows
