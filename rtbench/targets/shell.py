"""The /bin/sh launchers every target starts rtprobe and command loads through.

They need nothing but a POSIX shell on the target (dash, busybox ash, bash), so they
work on a board without Python.  Both are started as `sh -c SCRIPT NAME ARGS...` at the
head of their own process group (a new session locally; ssh gives every remote command
its own session), with stdin a pipe from rtbench:

- The first line on stdin is a gate: the target pins the launcher to its CPUs (when
  asked) before it writes that line, so everything started after it inherits the CPU
  mask, and no code has to run between fork and exec on the host.  (Pinning this way
  needs neither a preexec_fn nor `taskset` on the target, and it pins command loads and
  tests without a CPU option, such as hackbench, which rtprobe's own --cpus cannot.)
- After the gate, stdin is the lifeline: when it reaches EOF (rtbench stopped the
  process, died, or the connection to the target broke) the launcher SIGKILLs its whole
  process group, so nothing it started outlives rtbench.

PROBE_LAUNCHER execs rtprobe in place (same pid, so signals and the exit code are
rtprobe's own), after forking the small watcher that guards the lifeline.  At the
lifeline's end the watcher sends SIGTERM first (rtprobe then ends its run and puts tracefs
back, docs/rtprobe.md), waits up to 3 s for it to exit, then SIGKILLs the group.
COMMAND_LAUNCHER keeps a shell-command load running: it restarts the command when it
ends (at most about twice a second) until the lifeline ends or the group is killed.  Each
end is one line on its stdout, `rtbench-load-ended RC T0 T1` (exit code, start and end
in whole seconds), so that rtbench can tell a load that cannot run from one that runs.
"""

from __future__ import annotations

# $@: the rtprobe binary and its arguments.
PROBE_LAUNCHER = """\
read gate || exit 125
exec 3<&0
( trap '' TERM; while read line <&3; do :; done; kill -s TERM 0; n=0
  while kill -0 $$ && [ $n -lt 30 ]; do sleep 0.1 || { sleep 1; n=$((n + 9)); }
    n=$((n + 1)); done; kill -s KILL 0 ) </dev/null >/dev/null 2>&1 &
exec "$@" </dev/null 3<&-
"""

# $1: the shell command of the load; its own output is discarded.
COMMAND_LAUNCHER = """\
read gate || exit 125
exec 3<&0
( while :; do
    t0=$(date +%s 2>/dev/null)
    /bin/sh -c "$1" </dev/null >/dev/null 2>&1 3<&-
    echo "rtbench-load-ended $? ${t0:-0} $(date +%s 2>/dev/null || echo 0)"
    sleep 0.5 2>/dev/null || sleep 1
  done ) </dev/null 2>/dev/null 3<&- &
while read line <&3; do :; done
kill -s KILL 0
"""
# What COMMAND_LAUNCHER (and a board's command loop) prints when the command ends.
LOAD_ENDED = "rtbench-load-ended"

# The line that opens the gate.
GATE = b"go\n"


def probe_argv(probe: str, args: list[str]) -> list[str]:
    """argv that runs `probe ARGS` through PROBE_LAUNCHER."""
    return ["/bin/sh", "-c", PROBE_LAUNCHER, "rtprobe-launch", probe, *args]


def command_argv(command: str) -> list[str]:
    """argv that keeps the shell command running through COMMAND_LAUNCHER."""
    return ["/bin/sh", "-c", COMMAND_LAUNCHER, "rtbench-load", command]


def quote(word: str) -> str:
    """word quoted for /bin/sh (single quotes; for targets that send a command line)."""
    return "'" + word.replace("'", "'\\''") + "'"
