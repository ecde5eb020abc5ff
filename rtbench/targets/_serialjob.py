"""Loads on a serial board: background jobs of the board's shell.

A serial line carries one foreground process (the test); a load runs next to it as a job
started with `setsid` in its own session and process group, writing its output to files
in a job directory on the board (remote_dir/job-TOKEN): `out` (rtprobe's NDJSON), `err`,
`rc` (its exit code, once it ended) and `pgid`.  While the test holds the line nothing is
read; when the line is free the job is checked (did it end by itself?), and when the
scenario ends it gets SIGINT (rtprobe load writes its result record), its output is
collected, its whole group is killed and its directory removed.  Every round trip costs
up to a second on a slow board, so the instances of one shell-command load (50 `find`)
are one job, started with one command, and a scenario's shell-command jobs are killed
together with one command (stop_jobs).

A job cannot die with the connection as an ssh session does (a serial line has no
hang-up), so each one carries a watchdog: after the time the runner said the scenario
lasts (Target.expect_loads_for), plus a margin, the group kills itself.
"""

from __future__ import annotations

import secrets
import shlex
import time
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Protocol

from rtbench.targets.base import CommandResult, ProbeProcess, TargetError

# Seconds a job lives past the time the runner expects the scenario to take.
WATCHDOG_MARGIN_S = 300.0
# Used when the runner said nothing (a job started outside a run).
DEFAULT_LIFETIME_S = 3600.0
# Lines of a load's output collected: its start record and the last ones (the result
# record holds the achieved mean; the rate records are one per second).
KEEP_LINES = 200
# Seconds a load gets to write its result after SIGINT.
INTERRUPT_WAIT_S = 3.0
# Seconds a job's start may take on the board (a slow emulated board: several).
JOB_START_TIMEOUT_S = 60.0
# A running job is checked at most this often (each check is a round trip on the line).
CHECK_PERIOD_S = 2.0

# $1 job directory, $2 watchdog seconds, $3... the command (rtprobe and its arguments).
PROBE_JOB = (
    'd=$1; w=$2; shift 2; echo $$ > "$d/pgid"; '
    '( sleep "$w"; kill -KILL 0 ) </dev/null >/dev/null 2>&1 & '
    '"$@" </dev/null >"$d/out" 2>"$d/err" & p=$!; echo $p > "$d/pid"; '
    'wait $p; echo $? > "$d/rc"'
)
# $1 job directory, $2 watchdog seconds, $3 instances, $4 the shell command: that many
# copies of it, each restarted when it ends, all in the job's one process group (one
# start and one kill on the line whatever the count).
COMMAND_JOB = (
    'd=$1; w=$2; n=$3; echo $$ > "$d/pgid"; '
    '( sleep "$w"; kill -KILL 0 ) </dev/null >/dev/null 2>&1 & '
    'echo $$ > "$d/pid"; i=0; while [ "$i" -lt "$n" ]; do '
    '( while :; do /bin/sh -c "$4" </dev/null >/dev/null 2>&1; sleep 1; done ) '
    '</dev/null >/dev/null 2>&1 & i=$((i+1)); done; wait'
)
# Characters of job directories named in one stop command (a serial line takes 1000).
STOP_LINE_CHARS = 500


class LineOwner(Protocol):
    """What a job needs from its serial target."""

    @property
    def name(self) -> str:
        """The target's name."""
        ...

    def run(self, command: str, timeout_s: float = 30.0) -> CommandResult:
        """Run a short command on the board."""
        ...

    def line_busy(self) -> bool:
        """True while a foreground process holds the line."""
        ...

    def doing(self, what: str) -> AbstractContextManager[None]:
        """Name what the commands of the block do (said if the board stops answering)."""
        ...

    def level_prefix(self) -> list[str]:
        """Words that run a command back at the board's own nice level (none when the
        console's shell was not raised)."""
        ...


def job_start_command(job_dir: str, lifetime_s: float, script: str,
                      words: list[str], prefix: Sequence[str] = ()) -> str:
    """Shell that starts script as a job in its own session, waits until it wrote its
    pid, and prints it.  prefix: words that run the job's shell (the console's shell
    raised above the loads: they put the job back at the board's own level)."""
    d = shlex.quote(job_dir)
    argv = " ".join(shlex.quote(w) for w in [job_dir, f"{lifetime_s:.0f}", *words])
    first = "".join(f"{shlex.quote(w)} " for w in prefix)
    return (f"mkdir -p {d} && ( setsid {first}/bin/sh -c {shlex.quote(script)} rtbench-job "
            f"{argv} </dev/null >/dev/null 2>&1 & ); i=0; "
            f"while [ ! -s {d}/pid ] && [ $i -lt 50 ]; do "
            f"sleep 0.1 2>/dev/null || sleep 1; i=$((i+1)); done; cat {d}/pid")


# the loop body of both: kill the job's whole group, remove its directory.  `kill -KILL
# -PGID`, no `--`: dash's kill (Debian's /bin/sh) refuses `--` after -KILL, and the job
# ran on until its watchdog
_KILL_DIR = ('g=$(cat "$d/pgid" 2>/dev/null); '
             '[ -n "$g" ] && kill -KILL -$g 2>/dev/null; rm -rf "$d"; done; true')


def stale_jobs_command(remote_dir: str) -> str:
    """Shell that kills the jobs a former session left in remote_dir and removes them."""
    q = shlex.quote(remote_dir.rstrip("/"))
    return f"for d in {q}/job-*; do [ -d \"$d\" ] || continue; {_KILL_DIR}"


def kill_jobs_command(job_dirs: list[str]) -> str:
    """Shell that kills the whole group of each job and removes its directory."""
    dirs = " ".join(shlex.quote(d) for d in job_dirs)
    return f"for d in {dirs}; do {_KILL_DIR}"


def stop_jobs(owner: LineOwner, jobs: list[SerialJob]) -> None:
    """Stop jobs together: a built-in load is interrupted and its output collected
    (job by job), then every job's group is killed and its directory removed with as
    few commands as the line's length allows (one for a scenario's shell-command loads,
    whatever their instances)."""
    left = []
    for job in dict.fromkeys(jobs):  # a job shared by several instances, once
        if job._removed:
            continue
        if job.builtin:
            job.stop()
        else:
            left.append(job)
    batch: list[SerialJob] = []
    for job in left:
        if batch and sum(len(j.job_dir) + 3 for j in batch + [job]) > STOP_LINE_CHARS:
            _kill_batch(owner, batch)
            batch = []
        batch.append(job)
    if batch:
        _kill_batch(owner, batch)


def _kill_batch(owner: LineOwner, jobs: list[SerialJob]) -> None:
    """Kill these jobs and remove their directories (one round trip)."""
    owner.run(kill_jobs_command([job.job_dir for job in jobs]))
    for job in jobs:
        job._removed = job._collected = True


def new_job_dir(remote_dir: str) -> str:
    """A fresh job directory name under remote_dir."""
    return f"{remote_dir.rstrip('/')}/job-{secrets.token_hex(6)}"


class SerialJob(ProbeProcess):
    """One load running as a background job of a serial board's shell."""

    def __init__(self, owner: LineOwner, job_dir: str, pid: str, builtin: bool,
                 label: str = "a load") -> None:
        self.owner = owner
        self.label = label
        self.job_dir = job_dir
        self.pid = pid
        self.builtin = builtin
        self.returncode: int | None = None
        self._collected = False
        self._pending: tuple[bytes, bytes] = (b"", b"")
        self._interrupted_at: float | None = None
        self._checked_at = time.monotonic()
        self._removed = False

    @classmethod
    def start(cls, owner: LineOwner, remote_dir: str, lifetime_s: float, script: str,
              words: list[str], builtin: bool, label: str = "a load") -> SerialJob:
        """Start a job on the board; TargetError when it does not come up."""
        job_dir = new_job_dir(remote_dir)
        done = owner.run(job_start_command(job_dir, lifetime_s, script, words,
                                           owner.level_prefix()),
                         timeout_s=JOB_START_TIMEOUT_S)
        pid = done.stdout.strip().splitlines()[-1:] if done.stdout.strip() else []
        if done.returncode != 0 or not pid or not pid[0].isdigit():
            owner.run(f"rm -rf {shlex.quote(job_dir)}")
            said = (done.stderr.strip().splitlines() or ["no pid"])[-1]
            raise TargetError(f"{owner.name}: cannot start a load as a background job "
                              f"({said[:160]})")
        return cls(owner, job_dir, pid[0], builtin, label)

    def fds(self) -> list[int]:
        """None: a job's output stays on the board until it is collected."""
        return []

    def read_available(self) -> tuple[bytes, bytes]:
        """What was collected (once); after SIGINT, collects when the job ended."""
        if self._interrupted_at is not None and not self._collected \
                and not self.owner.line_busy():
            ended = self._exit_code() is not None
            if ended or time.monotonic() - self._interrupted_at >= INTERRUPT_WAIT_S:
                self._collect()
        pending, self._pending = self._pending, (b"", b"")
        return pending

    def at_eof(self) -> bool:
        """True once the output was collected and handed on."""
        return self._collected and self._pending == (b"", b"")

    def poll(self) -> int | None:
        """The exit code once the job ended; a free line is checked every few seconds."""
        if self._collected or self._interrupted_at is not None or not self.builtin \
                or self.owner.line_busy():
            return self.returncode
        if time.monotonic() - self._checked_at >= CHECK_PERIOD_S:
            self._checked_at = time.monotonic()
            with self.owner.doing(f"checking {self.label}"):
                if self._exit_code() is not None:
                    self._collect()
        return self.returncode

    def interrupt(self) -> None:
        """SIGINT to the load (rtprobe then writes its result record)."""
        if self._interrupted_at is not None or self._collected or self.owner.line_busy():
            return
        self._interrupted_at = time.monotonic()
        if self.builtin:
            with self.owner.doing(f"stopping {self.label}"):
                self.owner.run(f"kill -INT {self.pid} 2>/dev/null; true")

    def stop(self, grace_s: float = 2.0) -> None:
        """Collect what is left, kill the job's whole group and remove its directory."""
        if self._removed:
            return
        with self.owner.doing(f"stopping {self.label}"):
            self._stop(grace_s)

    def _stop(self, grace_s: float) -> None:
        """stop(), its commands named."""
        if not self._collected and self.builtin:
            self.interrupt()
            deadline = time.monotonic() + grace_s
            while self._exit_code() is None and time.monotonic() < deadline:
                time.sleep(0.2)
            self._collect()
        self.owner.run(kill_jobs_command([self.job_dir]))
        self._removed = True
        self._collected = True

    def _exit_code(self) -> int | None:
        """The job's exit code when it ended, else None (one round trip)."""
        done = self.owner.run(f"cat {shlex.quote(self.job_dir)}/rc 2>/dev/null")
        text = done.stdout.strip()
        return int(text) if text.isdigit() else None

    def _collect(self) -> None:
        """Fetch the job's output (its first line and last KEEP_LINES) and exit code."""
        if self._collected:
            return
        d = shlex.quote(self.job_dir)
        out = self.owner.run(
            f"n=$(wc -l < {d}/out 2>/dev/null || echo 0); "
            f"if [ \"$n\" -gt {KEEP_LINES + 1} ]; then head -n 1 {d}/out; "
            f"tail -n {KEEP_LINES} {d}/out; else cat {d}/out 2>/dev/null; fi; true",
            timeout_s=120.0)
        err = self.owner.run(f"tail -n 5 {d}/err 2>/dev/null; true")
        self.returncode = self._exit_code()
        self._pending = (out.stdout.encode(), err.stdout.encode())
        self._collected = True
