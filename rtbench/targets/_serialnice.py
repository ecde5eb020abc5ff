"""The console's shell above the loads: a serial target raises the priority of the board's
shell it talks to, and runs rtprobe and every load back at the board's own level.

On a slow board under a heavy scenario (an emulated arm64 PREEMPT_RT guest with 50 `find`
loops, the net and mem loads: a guest load average of 36-45) the shell that answers
rtbench's commands waited its turn among the load processes for 22-29 s a round trip,
then more than 30 s, and the run ended lost while the board was alive.  Raised 10 nice
levels (root only; a board that refuses keeps its level), the shell gets its commands
done between the loads' turns; rtprobe (whose measuring threads have their own policy
anyway) and the loads start back at the shell's former level, so what is measured is
what a local run measures.  Nothing here needs `nice`, which busybox often lacks:
`renice` on a pid, checked through /proc (busybox's renice -n is relative, util-linux's
absolute: both are tried where they differ), and a script kept on the board
(`/bin/sh DIR/level.sh command...`) rather than the same words on every command line of
a 1000-character line.
"""

from __future__ import annotations

# How far the console's shell is raised above the board's default level.
SHELL_RAISE = 10

# The nice value of process $$ (field 19 of /proc/PID/stat; a shell's comm has no space).
_NICE_OF = "cut -d' ' -f19 /proc/$$/stat"


def raise_command() -> str:
    """Shell that raises the console's shell (the `$$` of a command it runs) SHELL_RAISE
    levels (to -20 at most) and prints its nice value before and after."""
    return (f"n0=$({_NICE_OF}); t=$((n0-{SHELL_RAISE})); [ $t -lt -20 ] && t=-20; "
            f"{{ renice -n -{SHELL_RAISE} -p $$;[ \"$({_NICE_OF})\" = $t ]||"
            f"renice -n $t -p $$;}} >/dev/null 2>&1; echo $n0 $({_NICE_OF})")


def parse_raise(stdout: str) -> tuple[int, int] | None:
    """(level before, levels raised) from raise_command's output; None when the shell
    was not raised (not root, no renice, no /proc)."""
    words = stdout.split()
    if len(words) < 2:
        return None
    try:
        before, after = int(words[-2]), int(words[-1])
    except ValueError:
        return None
    return (before, before - after) if after < before else None


def _set_level(pid: str, level: int, back: int) -> str:
    """Shell that puts process pid back at nice level (from back levels above it),
    silently (util-linux's renice prints the change)."""
    return (f"{{ renice -n {back} -p {pid};[ \"$(cut -d\\  -f19 /proc/{pid}/stat)\" = "
            f"{level} ]||renice -n {level} -p {pid};}} >/dev/null 2>&1")


def level_script(level: int, back: int) -> str:
    """A shell script (kept on the board) that puts itself back at the board's own nice
    level and then execs its arguments (same pid): `/bin/sh SCRIPT command args...`."""
    return f"{_set_level('$$', level, back)};exec \"$@\""


def restore_command(level: int, back: int) -> str:
    """Shell that puts the console's shell back at its own level."""
    return _set_level("$$", level, back)
