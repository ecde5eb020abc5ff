"""Run independent report tasks (figures, fits) in forked worker processes.

The tasks are closures over data already in memory; the workers are forked after the
list is set, so they read it from their copy of the parent's memory and only the
results travel back (pickled).  Without fork, with one usable CPU, with few tasks or
with other threads running (fork would copy their locks), or if the pool breaks, the
tasks run in turn here; the results are the same either way.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from rtbench.util._pdeath import die_with_parent

MIN_TASKS = 4
_TASKS: list[Callable[[], Any]] = []


def _run(i: int) -> Any:
    """Run task i of the list the parent set before forking."""
    return _TASKS[i]()


def run_all(tasks: list[Callable[[], Any]]) -> list[Any]:
    """The result of every task, in order."""
    global _TASKS
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1
    workers = min(cpus, len(tasks))
    if (workers < 2 or len(tasks) < MIN_TASKS
            or "fork" not in multiprocessing.get_all_start_methods()
            or threading.active_count() > 1 or _TASKS):
        return [task() for task in tasks]
    _TASKS = tasks
    try:
        with ProcessPoolExecutor(max_workers=workers,
                                 mp_context=multiprocessing.get_context("fork"),
                                 initializer=die_with_parent,
                                 initargs=(int(signal.SIGKILL), os.getpid())) as pool:
            return list(pool.map(_run, range(len(tasks)),
                                 chunksize=max(1, len(tasks) // (4 * workers))))
    except (OSError, BrokenProcessPool):
        return [task() for task in tasks]
    finally:
        _TASKS = []
