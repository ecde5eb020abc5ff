"""Put tracefs back as a dead rtprobe left it: its state file, read and undone by rtbench.

`rtprobe --trace` writes what it changes in tracefs (docs/rtprobe.md, "State file and
restore") to `rtprobe-trace.state` before it changes anything, and removes the file when
it has put tracefs back.  When it died without doing so (SIGKILL, the OOM killer, a crash),
the kernel keeps tracing.  rtbench then restores that state itself, on this machine:
when it reaps a local probe, and whenever a command opens the results database (`ls`, the
next `run`, ...).  The file is found where rtprobe writes it ($RTPROBE_STATE_DIR, else
/run when writable, else $TMPDIR, else /tmp); a file whose rtprobe still runs is left
alone.  Like rtbench.run.util.owner, this module imports nothing of rtbench.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
from pathlib import Path

STATE_NAME = "rtprobe-trace.state"
MNT_DETACH = 2
# the keys of a state file whose value is written back to the tracefs file of that name
_FILES = ("trace_clock", "buffer_size_kb", "current_tracer", "tracing_on")


def state_path() -> Path:
    """Where rtprobe writes its state file (tracefs_state_path() in probe/src/lib)."""
    directory = os.environ.get("RTPROBE_STATE_DIR") or ""
    if not directory:
        directory = "/run" if os.access("/run", os.W_OK) else os.environ.get("TMPDIR", "")
    return Path(directory or "/tmp") / STATE_NAME


def parse_state(text: str) -> dict[str, object] | None:
    """The state file's fields (events as a list); None when it is not rtprobe's."""
    state: dict[str, object] = {"events": []}
    magic = False
    for line in text.splitlines():
        key, _, value = line.partition(" ")
        if key == "rtprobe-trace-state":
            magic = value == "1"
        elif key == "event" and ".." not in value and value:
            events = state["events"]
            assert isinstance(events, list)
            events.append(value)
        elif key in ("pid", "mounted", "dir", *_FILES):
            state[key] = value
    pid = str(state.get("pid", ""))
    if not magic or not pid.isdigit() or int(pid) <= 0 or \
            not str(state.get("dir", "")).startswith("/sys/"):
        return None
    return state


def _alive(pid: int) -> bool:
    """Whether a process of that pid exists (one we may not signal counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _kb(text: str) -> int:
    """The size a buffer_size_kb text stands for ('7 (expanded: 1408)' is 1408)."""
    word = text.split("expanded: ")[-1].rstrip(")").split()
    return int(word[0]) if word and word[0].isdigit() else 0


def _unchanged(path: Path, value: str) -> bool:
    """Whether buffer_size_kb or current_tracer already holds value (others: False)."""
    if path.name == "buffer_size_kb":
        return _kb(path.read_text()) == int(value)
    if path.name == "current_tracer":
        return path.read_text().strip() == value
    return False


def _write(path: Path, value: str) -> None:
    """Write value to a tracefs file (OSError as open and write raise it)."""
    with open(path, "w", encoding="ascii") as handle:
        handle.write(value)


def _unmount(directory: str) -> None:
    """Unmount tracefs where rtprobe mounted it; lazily when something still holds it."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.umount2(directory.encode(), 0) == 0:
        return
    code = ctypes.get_errno()
    if code == errno.EBUSY and libc.umount2(directory.encode(), MNT_DETACH) == 0:
        return
    raise OSError(code, os.strerror(code), directory)


def restore(state: dict[str, object]) -> None:
    """Put tracefs back as the state says (events off, clock, buffer size, tracer,
    tracing_on, unmount); OSError naming the first file that could not be written."""
    directory = Path(str(state["dir"]))
    failed: OSError | None = None
    events = state.get("events", [])
    assert isinstance(events, list)
    steps: list[tuple[Path, str]] = [(directory / "events" / str(e) / "enable", "0")
                                     for e in events]
    for name in _FILES:
        value = str(state.get(name, ""))
        if name == "buffer_size_kb":
            value = str(_kb(value)) if _kb(value) else ""
        if value:
            steps.append((directory / name, value))
    for path, value in steps:
        try:
            if _unchanged(path, value):
                continue  # as it was: writing the tracer or the size again is costly
            _write(path, value)
        except OSError as exc:
            failed = failed or exc
    if state.get("mounted") == "1":
        try:
            _unmount(str(directory))
        except OSError as exc:
            failed = failed or exc
    if failed is not None:
        raise failed


def restore_dead_probe() -> str | None:
    """Restore the state a dead local rtprobe left and remove its file; the one line
    saying what was done (None when there was nothing to do).  The file of a live rtprobe
    and a file that is not rtprobe's are left alone."""
    path = state_path()
    try:
        text = path.read_text(encoding="utf-8", errors="replace")[:65536]
    except OSError:
        return None
    state = parse_state(text)
    if state is None or _alive(int(str(state["pid"]))):
        return None
    try:
        restore(state)
    except OSError as exc:
        return (f"cannot restore the tracefs state left by rtprobe pid {state['pid']} "
                f"(it died): {exc.filename or state['dir']}: {exc.strerror}; {path} stays")
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    return f"restored the tracefs state left by rtprobe pid {state['pid']} (it died)"
