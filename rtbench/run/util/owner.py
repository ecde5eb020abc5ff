"""Who owns a run, and what a dead owner left behind.

A run is stored with its owner (process id, process start time, boot id, host name).
A later rtbench on the same machine can then tell whether that process is gone (another
boot, or no process with that id and start time) and clean up after it: the run is marked
`abandoned`, the load processes it started are killed (they carry RTBENCH_LOAD_OWNER in
their environment, which survives setsid and double forks), and the io load directories
it recorded are removed.  Used by the runner, the local target and the CLI; it sits below
those layers (like rtbench.util._pdeath).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import time
from pathlib import Path
from typing import Any

# Environment variable every command load (and all it starts) carries: "PID:START:N"
# (the owning rtbench's pid and start time, the load's number).
LOAD_OWNER_VAR = "RTBENCH_LOAD_OWNER"
# The prefix of the directories `rtprobe load io` works in.
IO_DIR_PREFIX = "rtprobe-io-"


def _start_time(pid: int) -> int | None:
    """Start time of process pid in clock ticks since boot, None if it does not exist."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[-1].split()
    try:
        return int(fields[19])
    except (IndexError, ValueError):
        return None


def _boot_id() -> str:
    """This boot's id (empty when the kernel does not say)."""
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text(encoding="ascii").strip()
    except OSError:
        return ""


def current_owner() -> dict[str, Any]:
    """This process as a run owner: pid, start time, boot id, host name."""
    pid = os.getpid()
    return {"pid": pid, "start": _start_time(pid), "boot_id": _boot_id(),
            "hostname": socket.gethostname()}


def owner_tag(owner: dict[str, Any], number: int) -> str:
    """The RTBENCH_LOAD_OWNER value of an owner's load number."""
    return f"{owner.get('pid')}:{owner.get('start')}:{number}"


def owner_dead(owner: object) -> bool:
    """True when owner is a process of this machine that no longer runs.

    False when it still runs, and when it cannot be told (another host, no facts).
    """
    if not isinstance(owner, dict):
        return False
    if owner.get("hostname") != socket.gethostname():
        return False
    boot = owner.get("boot_id")
    if boot and _boot_id() and boot != _boot_id():
        return True
    pid = owner.get("pid")
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return False
    start = _start_time(pid)
    return start is None or (owner.get("start") is not None and start != owner.get("start"))


def kill_tagged(*tags: str, rounds: int = 10) -> int:
    """SIGKILL every process whose environment has RTBENCH_LOAD_OWNER set to one of tags;
    return how many.  One pass over /proc serves every tag.

    Repeats (bounded) so that a process forked during the sweep goes too.
    """
    wanted = {f"{LOAD_OWNER_VAR}={tag}".encode() for tag in tags}
    killed = 0
    for _ in range(rounds):
        found = [pid for pid, env in _environments() if not wanted.isdisjoint(env)]
        if not found:
            break
        for pid in found:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
                killed += 1
        time.sleep(0.02)
    return killed


def _environments() -> list[tuple[int, list[bytes]]]:
    """(pid, environment entries) of every other process this user may read."""
    out = []
    me = os.getpid()
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == me:
            continue
        try:
            data = Path(f"/proc/{entry}/environ").read_bytes()
        except OSError:
            continue
        if LOAD_OWNER_VAR.encode() in data:
            out.append((int(entry), data.split(b"\0")))
    return out


def kill_orphaned_loads() -> int:
    """SIGKILL load processes whose owning rtbench is gone; return how many."""
    killed = 0
    prefix = f"{LOAD_OWNER_VAR}=".encode()
    tags = set()
    for _, env in _environments():
        for item in env:
            if item.startswith(prefix):
                tags.add(item[len(prefix):].decode(errors="replace"))
    for tag in tags:
        pid_text, _, rest = tag.partition(":")
        start_text = rest.partition(":")[0]
        if not pid_text.isdigit():
            continue
        start = int(start_text) if start_text.isdigit() else None
        if owner_dead({"pid": int(pid_text), "start": start,
                       "hostname": socket.gethostname()}):
            killed += kill_tagged(tag)
    return killed


class LoadDirRegistry:
    """The io load directories a running rtbench owns, kept in a small JSON file.

    The file (DIR/PID-START.json) lists the owner and the directories; a later rtbench
    removes the directories of an owner that is gone (clean_stale).
    """

    def __init__(self, directory: Path, owner: dict[str, Any]) -> None:
        self.path = directory / f"{owner['pid']}-{owner['start']}.json"
        self.owner = owner
        self.dirs: list[str] = []
        # only a registry that wrote the file removes it: the runners of a fleet share
        # one process (one file name), and only a local target ever writes it
        self._written = False

    def add(self, work_dir: str) -> None:
        """Remember a load's work directory (written at once, atomically)."""
        if Path(work_dir).name.startswith(IO_DIR_PREFIX) and work_dir not in self.dirs:
            self.dirs.append(work_dir)
            self._write()

    def _write(self) -> None:
        """Write the file via a temporary name."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_suffix(".tmp")
            tmp.write_text(json.dumps({"owner": self.owner, "dirs": self.dirs}),
                           encoding="utf-8")
            tmp.replace(self.path)
            self._written = True
        except OSError:
            pass  # best effort: the load removes its directory itself on a clean end

    def remove_dead(self, work_dir: str) -> None:
        """A load that ended: remove its directory if it left it, forget it."""
        _remove_io_dir(work_dir)
        if work_dir in self.dirs:
            self.dirs.remove(work_dir)
            self._write()

    def close(self) -> None:
        """The run ended: remove what is left and the file."""
        for work_dir in list(self.dirs):
            _remove_io_dir(work_dir)
        if self._written:
            with contextlib.suppress(OSError):
                self.path.unlink()


def _remove_io_dir(work_dir: str) -> None:
    """Remove an io load directory (only one named rtprobe-io-*)."""
    path = Path(work_dir)
    if path.name.startswith(IO_DIR_PREFIX) and path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)


def clean_stale_load_dirs(directory: Path) -> int:
    """Remove the io load directories of owners that are gone; return how many files."""
    cleaned = 0
    try:
        entries = sorted(directory.glob("*.json"))
    except OSError:
        return 0
    for entry in entries:
        try:
            record = json.loads(entry.read_text(encoding="utf-8"))
            owner, dirs = record["owner"], record["dirs"]
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if not owner_dead(owner) or not isinstance(dirs, list):
            continue
        for work_dir in dirs:
            if isinstance(work_dir, str):
                _remove_io_dir(work_dir)
        with contextlib.suppress(OSError):
            entry.unlink()
        cleaned += 1
    return cleaned
