"""The packaged copy of the in-tree rtprobe's test kinds (`describe --json`, each test's
`host` object), for runs that recorded none: runs stored by earlier rtbench versions,
imported runs of other tools (their tests are named after rtprobe's kinds), and runs made
by a probe older than `host`.

tests/host/test_kinds.py fails when it differs from what the in-tree probe describes:
change the probe's `struct test_host` first, then this copy (a new kind does not need
to be here: its runs record its traits, rtbench/kinds/__init__.py `recorded_kinds()`).
"""

from __future__ import annotations

from typing import Any

KNOWN_HOST: dict[str, dict[str, Any]] = {
    "cyclic": {
        "rt_only": False, "own_cpus": True, "busy_loop": None, "runs_per": None,
        "figures": [], "table_keys": [],
        "layouts": ["loongson2f", "arm-preemptrt", "celleb", "lrtai"],
    },
    "periodic": {
        "rt_only": False, "own_cpus": True, "busy_loop": "busy", "runs_per": None,
        "figures": ["failed_iterations", "missed_periods", "threads"], "table_keys": [],
        "layouts": ["celleb"],
    },
    "clock": {
        "rt_only": False, "own_cpus": True, "busy_loop": None, "runs_per": None,
        "figures": ["read_cost_ns", "clock_source"], "table_keys": [],
        "layouts": ["celleb"],
    },
    "wakeup": {
        "rt_only": False, "own_cpus": False, "busy_loop": None, "runs_per": "mechanism",
        "figures": ["mechanisms"], "table_keys": [], "layouts": ["arm-preemptrt", "celleb"],
    },
    "noise": {
        "rt_only": False, "own_cpus": True, "busy_loop": "always", "runs_per": None,
        "figures": ["cpus"], "table_keys": [], "layouts": [],
    },
    "ctx": {
        "rt_only": False, "own_cpus": False, "busy_loop": None, "runs_per": None,
        "figures": ["cells", "overheads"], "table_keys": ["cells", "overheads"],
        "layouts": ["s3c24a0"],
    },
    "ipc": {
        "rt_only": False, "own_cpus": False, "busy_loop": None, "runs_per": None,
        "figures": ["bandwidth", "transport"], "table_keys": [], "layouts": ["s3c24a0"],
    },
    "event": {
        "rt_only": False, "own_cpus": False, "busy_loop": None, "runs_per": None,
        "figures": ["handled", "missed", "kind"], "table_keys": [],
        "layouts": ["arm-preemptrt"],
    },
    "pi": {
        "rt_only": True, "own_cpus": False, "busy_loop": None, "runs_per": None,
        "figures": ["max_excess_ns", "mean_excess_ns", "limit_ns", "pi"], "table_keys": [],
        "layouts": [],
    },
    "hackbench": {
        "rt_only": False, "own_cpus": False, "busy_loop": None, "runs_per": None,
        "figures": ["elapsed_ns", "messages_per_s"], "table_keys": [], "layouts": [],
    },
}
