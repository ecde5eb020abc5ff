"""CPU time of each test: a pytest plugin, and a summary of what it recorded.

The suite is timed on a machine shared with others, where wall times say more about the
neighbours than about the tests.  The plugin records, per test, the CPU time (user +
system) of the pytest process that ran it and of the children it waited for (the CLI
children, rtprobe, compilers), and the wall time, one JSON line per test in a file per
process:

    PYTHONPATH=bench PYTEST_CPU_OUT=/tmp/cpu/run PYTEST_ADDOPTS="-p pytest_cpu" make test-fast
    python3 bench/pytest_cpu.py /tmp/cpu/run            # totals, per module, heaviest tests
    python3 bench/pytest_cpu.py /tmp/cpu/run /tmp/cpu/other   # the tests both ran, compared
    python3 bench/pytest_cpu.py --timeline /tmp/cpu/run  # per xdist worker: busy, done at

Not counted: processes nobody waits for (daemons, double-forked loads, servers reaped at
the end of a module count towards the test that reaps them).
"""

from __future__ import annotations

import glob
import json
import os
import resource
import sys
import time
from collections import defaultdict
from collections.abc import Generator
from typing import Any

import pytest


def cpu_seconds() -> tuple[float, float]:
    """(this process, its waited-for children): user + system seconds so far."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None,
                            ) -> Generator[None, Any, None]:
    """Record the CPU and wall seconds of item's setup, call and teardown."""
    own_before, children_before = cpu_seconds()
    start = time.time()
    wall_before = time.monotonic()
    yield
    own_after, children_after = cpu_seconds()
    record = {"id": item.nodeid, "self": own_after - own_before,
              "child": children_after - children_before,
              "wall": time.monotonic() - wall_before, "start": start,
              "worker": os.environ.get("PYTEST_XDIST_WORKER", "")}
    prefix = os.environ.get("PYTEST_CPU_OUT", "pytest-cpu")
    with open(f"{prefix}.{os.getpid()}.jsonl", "a", encoding="utf-8") as out:
        out.write(json.dumps(record) + "\n")


def load(prefix: str) -> dict[str, dict[str, float]]:
    """The records written under prefix, by test id."""
    records: dict[str, dict[str, float]] = {}
    for path in sorted(glob.glob(f"{glob.escape(prefix)}.*.jsonl")):
        with open(path, encoding="utf-8") as lines:
            for line in lines:
                entry = json.loads(line)
                records[entry["id"]] = {"cpu": entry["self"] + entry["child"],
                                        "wall": entry["wall"]}
    return records


def summary(prefix: str) -> None:
    """Print totals, the modules by CPU seconds and the ten heaviest tests."""
    records = load(prefix)
    cpu_s = sum(r["cpu"] for r in records.values())
    wall_s = sum(r["wall"] for r in records.values())
    print(f"{len(records)} tests: {cpu_s:.1f} CPU s, {wall_s:.1f} s of test wall time")
    modules: dict[str, float] = defaultdict(float)
    for test_id, record in records.items():
        modules[test_id.split("::", 1)[0]] += record["cpu"]
    for module, seconds in sorted(modules.items(), key=lambda m: -m[1])[:15]:
        print(f"{seconds:8.1f}  {module}")
    for test_id, record in sorted(records.items(), key=lambda r: -r[1]["cpu"])[:10]:
        print(f"{record['cpu']:8.1f}  {test_id}")


def timeline(prefix: str) -> None:
    """Print, per xdist worker, its tests, the seconds they took and the span from the
    run's first test to the worker's last, then the run's span and its longest tests
    with when they started."""
    records: list[dict[str, Any]] = []
    for path in sorted(glob.glob(f"{glob.escape(prefix)}.*.jsonl")):
        with open(path, encoding="utf-8") as lines:
            records.extend(json.loads(line) for line in lines)
    timed = [r for r in records if "start" in r]
    if not timed:
        print("no start times recorded (a recording made before they were)")
        return
    first = min(r["start"] for r in timed)
    last = max(r["start"] + r["wall"] for r in timed)
    workers: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for record in timed:
        workers[record.get("worker") or "main"].append(record)
    for name, mine in sorted(workers.items()):
        busy_s = sum(r["wall"] for r in mine)
        end_s = max(r["start"] + r["wall"] for r in mine) - first
        cpu_s = sum(r["self"] + r["child"] for r in mine)
        print(f"{name}: {len(mine)} tests, {busy_s:.0f} s in tests, {cpu_s:.0f} CPU s, "
              f"done at {end_s:.0f} s")
    print(f"span {last - first:.0f} s from the first test's start to the last one's end")
    for record in sorted(timed, key=lambda r: -r["wall"])[:15]:
        print(f"{record['start'] - first:7.0f} +{record['wall']:6.1f} s "
              f"{record.get('worker', '')}  {record['id']}")


def compare(before_prefix: str, after_prefix: str) -> None:
    """Print the CPU seconds of the tests both runs recorded, per module and in all."""
    before, after = load(before_prefix), load(after_prefix)
    common = sorted(set(before) & set(after))
    modules: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
    for test_id in common:
        sums = modules[test_id.split("::", 1)[0]]
        sums[0] += before[test_id]["cpu"]
        sums[1] += after[test_id]["cpu"]
    cpu_before = sum(before[t]["cpu"] for t in common)
    cpu_after = sum(after[t]["cpu"] for t in common)
    print(f"{len(common)} tests in both: {cpu_before:.1f} CPU s before, "
          f"{cpu_after:.1f} after")
    for module, (was, now) in sorted(modules.items(), key=lambda m: m[1][1] - m[1][0])[:15]:
        print(f"{was:8.1f} {now:8.1f}  {module}")


def main(argv: list[str]) -> int:
    """Summarise one recording, or compare two."""
    if len(argv) == 2 and argv[0] == "--timeline":
        timeline(argv[1])
    elif len(argv) == 1:
        summary(argv[0])
    elif len(argv) == 2:
        compare(argv[0], argv[1])
    else:
        print("usage: pytest_cpu.py PREFIX [PREFIX_AFTER] | --timeline PREFIX",
              file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
