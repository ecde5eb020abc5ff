"""A board reached with the system's OpenSSH client: `ssh://[user@]host[:port][?dir=PATH]`.

One control master (its socket in a private temp directory) carries every command, so
the user's ~/.ssh/config, keys, agent and ProxyJump apply and the connection is made
once.  BatchMode: ssh never asks a question; a missing key, a refused login or a changed
host key is an error line.  RTBENCH_SSH_CONFIG names an ssh_config file to use instead
of ~/.ssh/config.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import subprocess
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import parse_qs, unquote, urlsplit

from rtbench.core.boundedrun import CommandTimeout, OutputTooLarge, run_bounded
from rtbench.rtprobe.provider import ProbeProvider
from rtbench.targets._board import BoardTarget
from rtbench.targets._shell import DEFAULT_REMOTE_DIR, LIFELINE_PERIOD_S, lock_command
from rtbench.targets._stream import Heartbeat, RemoteProcess
from rtbench.targets.base import (
    CommandResult,
    ProbeProcess,
    Target,
    TargetError,
    TargetLost,
    TargetUsageError,
)

CONNECT_TIMEOUT_S = 10
# The client declares the connection lost after this many seconds without an answer.
ALIVE_INTERVAL_S = 2
ALIVE_COUNT = 3
# ssh's own exit status for "the connection failed" (anything else is the command's).
SSH_FAILED = 255


def ssh_failure(stderr: str, where: str) -> str:
    """One line saying why ssh could not connect, from what it printed."""
    text = stderr.strip()
    lower = text.lower()
    if "remote host identification has changed" in lower or \
            "host key verification failed" in lower:
        if "changed" in lower:
            return (f"{where}: the host key has CHANGED since it was recorded in known_hosts; "
                    "if the board was reinstalled, remove the old key with ssh-keygen -R")
        return (f"{where}: the host key is not known; connect once with `ssh` to accept it "
                "(rtbench never accepts host keys itself)")
    if "permission denied" in lower:
        return (f"{where}: login refused (no key accepted); check the user and that your key "
                "is in the board's authorized_keys (or loaded in ssh-agent)")
    for needle, why in (("could not resolve hostname", "unknown host name"),
                        ("connection refused", "connection refused (is sshd running?)"),
                        ("no route to host", "no route to host"),
                        ("network is unreachable", "network unreachable"),
                        ("timed out", "no answer (connection timed out)")):
        if needle in lower:
            return f"{where}: unreachable: {why}"
    last = [ln for ln in text.splitlines() if ln.strip()]
    return f"{where}: ssh failed: {last[-1][:200] if last else 'no message'}"


def check_ssh_word(where: str, what: str, value: str) -> None:
    """TargetUsageError when a host or user name could reach ssh as an option (a leading
    '-', as in ssh://root@-oProxyCommand=...) or holds white space or control characters."""
    if value.startswith("-") or any(ch.isspace() or ord(ch) < 32 or ord(ch) == 127
                                    for ch in value):
        raise TargetUsageError(f"target {where!r}: the {what} {value[:60]!r} is not a "
                               f"{what} name (it starts with '-' or holds white space or "
                               "control characters)")


class SshTarget(BoardTarget):
    """A board reached over OpenSSH through one control master."""

    # docs/targets.md: a cut link is noticed within about 6 s; a /proc read must not
    # hold the measurement loop longer than that
    read_timeout_s = float(ALIVE_INTERVAL_S * ALIVE_COUNT)

    schemes: ClassVar[tuple[str, ...]] = ("ssh",)
    uri_forms: ClassVar[tuple[str, ...]] = ("ssh://[user@]host[:port]",)
    help_order: ClassVar[int] = 10
    inventory_keys: ClassVar[tuple[str, ...]] = ("ssh_config",)

    def __init__(self, host: str, *, user: str | None = None, port: int | None = None,
                 provider: ProbeProvider | None = None, remote_dir: str = DEFAULT_REMOTE_DIR,
                 ssh_config: str | None = None) -> None:
        super().__init__(provider=provider, remote_dir=remote_dir)
        check_ssh_word(host, "host", host)
        check_ssh_word(host, "user", user or "")
        self.host = host
        self.user = user
        self.port = port
        self.ssh_config = ssh_config or os.environ.get("RTBENCH_SSH_CONFIG") or None
        self._dir: str | None = None
        self._master: subprocess.Popen[bytes] | None = None
        self._keeper: subprocess.Popen[bytes] | None = None
        self._keeper_beat: Heartbeat | None = None
        self._address: str | None = None

    @classmethod
    def board_of_uri(cls, uri: str) -> str | None:
        """ssh://[user@]host[:port]: the host ([v6-address] without its brackets)."""
        if not uri.startswith("ssh://"):
            return None
        host = uri[len("ssh://"):].split("/", 1)[0].rpartition("@")[2]
        # [v6-address]:port or name:port
        host = host[1:].partition("]")[0] if host.startswith("[") else host.partition(":")[0]
        return host or None

    @classmethod
    def inventory_options(cls, entry: Mapping[str, Any], base_dir: Path,
                          env: Mapping[str, str]) -> dict[str, Any]:
        """ssh_config = "FILE": an ssh_config file for this board (relative to the
        inventory's directory)."""
        options: dict[str, Any] = {}
        if "ssh_config" in entry:
            value = entry["ssh_config"]
            if not isinstance(value, str) or not value:
                raise TargetUsageError("ssh_config: write a file path as a string")
            config = Path(value).expanduser()
            if not config.is_absolute():
                config = base_dir / config
            if not config.is_file():
                raise TargetUsageError(f"ssh_config: {config} is not a file")
            options["ssh_config"] = str(config)
        return options

    @classmethod
    def from_uri(cls, uri: str, *, provider: ProbeProvider | None = None,
                 options: dict[str, Any] | None = None) -> Target:
        """ssh://[user@]host[:port][?dir=/remote/dir]."""
        parts = urlsplit(uri)
        if parts.scheme != "ssh" or not parts.hostname:
            raise TargetUsageError(f"target {uri!r}: expected ssh://[user@]host[:port]")
        try:
            port = parts.port
        except ValueError as exc:
            raise TargetUsageError(f"target {uri!r}: bad port ({exc})") from exc
        if parts.path not in ("", "/"):
            raise TargetUsageError(f"target {uri!r}: no path expected; put the board's "
                                   "probe directory in ?dir=PATH")
        query = parse_qs(parts.query)
        unknown = sorted(set(query) - {"dir"})
        if unknown:
            raise TargetUsageError(f"target {uri!r}: unknown option {unknown[0]!r} "
                                   "(known: dir)")
        remote_dir = query.get("dir", [DEFAULT_REMOTE_DIR])[-1]
        if not remote_dir.startswith("/"):
            raise TargetUsageError(f"target {uri!r}: dir must be an absolute path")
        for what, value in (("host", parts.hostname), ("user", parts.username or "")):
            check_ssh_word(uri, what, unquote(value))
        opts = options or {}
        return cls(parts.hostname, user=unquote(parts.username) if parts.username else None,
                   port=port, provider=provider, remote_dir=remote_dir,
                   ssh_config=opts.get("ssh_config"))

    @property
    def name(self) -> str:
        """ssh://user@host:port as given."""
        who = f"{self.user}@" if self.user else ""
        where = f":{self.port}" if self.port else ""
        return f"ssh://{who}{self.host}{where}"

    # --- the ssh command lines -----------------------------------------------------

    def _ssh(self, *extra: str) -> list[str]:
        """ssh with rtbench's options, through the control socket, then extra words."""
        assert self._dir is not None
        argv = ["ssh"]
        if self.ssh_config:
            argv += ["-F", self.ssh_config]
        argv += ["-o", "BatchMode=yes", "-o", f"ControlPath={self._dir}/cm",
                 "-o", f"ConnectTimeout={CONNECT_TIMEOUT_S}",
                 "-o", f"ServerAliveInterval={ALIVE_INTERVAL_S}",
                 "-o", f"ServerAliveCountMax={ALIVE_COUNT}",
                 "-o", "LogLevel=ERROR"]
        if self.port:
            argv += ["-p", str(self.port)]
        if self.user:
            argv += ["-l", self.user]
        return [*argv, *extra]

    def _remote(self, command: str) -> list[str]:
        """ssh running command with /bin/sh on the target (whatever the login shell)."""
        return self._ssh("-o", "ControlMaster=no", "-T", "--", self.host,
                         f"exec /bin/sh -c {shlex.quote(command)}")

    # --- open / close --------------------------------------------------------------

    def open(self) -> None:
        """Start the control master, check /bin/sh, take the board's lock, push the probe."""
        self._dir = tempfile.mkdtemp(prefix="rtbench-ssh-")
        try:
            self._start_master()
            self._check_shell()
            self._take_lock()
            self._install_probe()
        except BaseException:
            self.progress().done("failed")  # a live line ends before the error's
            self.close()
            raise

    def _start_master(self) -> None:
        """Connect once; the master then carries every other command."""
        argv = self._ssh("-M", "-N", "-o", "ControlMaster=yes", "-o", "ControlPersist=no",
                         "--", self.host)
        try:
            self._master = subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                            start_new_session=True)
        except OSError as exc:
            raise TargetError(f"{self.name}: cannot run ssh ({exc.strerror}); install the "
                              "OpenSSH client") from exc
        deadline = time.monotonic() + CONNECT_TIMEOUT_S + 20
        while time.monotonic() < deadline:
            if self._master.poll() is not None:
                err = self._master.stderr.read(1 << 16).decode(errors="replace") \
                    if self._master.stderr else ""
                raise TargetError(ssh_failure(err, self.name))
            if self._master_alive():
                return
            time.sleep(0.1)
        raise TargetError(f"{self.name}: unreachable: no answer in "
                          f"{CONNECT_TIMEOUT_S + 20} s")

    def _master_alive(self) -> bool:
        """True while the control master answers."""
        if self._master is None or self._master.poll() is not None:
            return False
        done = subprocess.run(self._ssh("-O", "check", "--", self.host), stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, timeout=10, check=False)
        return done.returncode == 0

    def _take_lock(self) -> None:
        """Hold the board's run lock for as long as this target is open."""
        lock = f"{self.remote_dir}/lock"
        self._private_dir()
        self._keeper = subprocess.Popen(self._remote(lock_command(lock)),
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, start_new_session=True)
        assert self._keeper.stdout is not None
        line = self._keeper.stdout.readline().decode(errors="replace").strip()
        if line != "locked":
            self._keeper.wait(timeout=10)
            self._keeper = None
            holder = line.split()[-1] if line.startswith("busy") else "?"
            raise TargetError(f"{self.name}: another rtbench run is using this board "
                              f"(lock {lock} held by pid {holder}); wait for it to end")
        assert self._keeper.stdin is not None
        self._keeper_beat = Heartbeat(self._keeper.stdin, LIFELINE_PERIOD_S)

    def close(self) -> None:
        """Release the lock, stop the master, remove the control directory."""
        if self._keeper is not None:
            if self._keeper_beat is not None:
                self._keeper_beat.stop()
                self._keeper_beat = None
            with contextlib.suppress(OSError):
                if self._keeper.stdin:
                    self._keeper.stdin.close()
            try:
                self._keeper.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._keeper.kill()
                self._keeper.wait()
            self._keeper = None
        if self._master is not None:
            if self._master.poll() is None:
                with contextlib.suppress(subprocess.TimeoutExpired, OSError):
                    subprocess.run(self._ssh("-O", "exit", "--", self.host),
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                   timeout=5, check=False)
                try:
                    self._master.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    self._master.kill()
                    self._master.wait()
            if self._master.stderr:
                self._master.stderr.close()
            self._master = None
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None

    # --- transport -----------------------------------------------------------------

    def run(self, command: str, timeout_s: float = 30.0) -> CommandResult:
        """Run a /bin/sh command on the board to completion."""
        if self._dir is None:
            raise TargetError(f"{self.name}: not opened")
        if self._master is not None and self._master.poll() is not None:
            # the master gave up on the link: a new connection would only wait out
            # ConnectTimeout (10 s) for every command of the clean-up
            raise TargetLost(f"{self.name}: connection lost")
        try:
            code, out, err = run_bounded(self._remote(command), timeout_s,
                                         f"{self.name}: `{command[:60]}`")
        except OSError as exc:
            raise TargetError(f"{self.name}: cannot run ssh ({exc.strerror})") from exc
        except OutputTooLarge as exc:
            raise TargetError(str(exc)) from exc
        except CommandTimeout as exc:
            if self._master is not None and self._master.poll() is not None:
                raise TargetLost(f"{self.name}: connection lost") from exc
            raise TargetError(f"{self.name}: `{command[:60]}` gave no answer in "
                              f"{timeout_s:g} s") from exc
        if code == SSH_FAILED and not self._master_alive():
            raise TargetLost(f"{self.name}: connection lost")
        return CommandResult(code, out.decode(errors="replace"), err.decode(errors="replace"))

    def _send_file(self, data: bytes, remote: str) -> None:
        """Stream data into `cat > remote` on the board."""
        if self._dir is None:
            raise TargetError(f"{self.name}: not opened")
        # stderr goes to a file and only its start is read: a board cannot flood memory
        with tempfile.TemporaryFile() as errors:
            try:
                done = subprocess.run(self._remote(f"cat > {shlex.quote(remote)}"),
                                      input=data, stdout=subprocess.DEVNULL, stderr=errors,
                                      timeout=300, check=False)
            except subprocess.TimeoutExpired as exc:
                raise TargetError(f"{self.name}: copying to {remote} took over 300 s") from exc
            errors.seek(0)
            said = errors.read(4096).decode(errors="replace")
        if done.returncode != 0:
            raise TargetError(f"{self.name}: cannot write {remote} ({said.strip()[:160]})")

    def _start_remote(self, command: str) -> ProbeProcess:
        """Start command on the board; its output streams through the master."""
        try:
            client = subprocess.Popen(self._remote(command), stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      start_new_session=True)
        except OSError as exc:
            raise TargetError(f"{self.name}: cannot run ssh ({exc.strerror})") from exc
        return RemoteProcess(client, self._signal, lambda: not self._master_alive(),
                             heartbeat_s=LIFELINE_PERIOD_S)

    def _signal(self, pid: int, signame: str, group: bool) -> None:
        """Send SIGname to pid (and its process group when group) on the board."""
        target = f"-{pid}" if group else str(pid)
        # no `--`: dash's kill (Debian's /bin/sh) refuses it after -SIGNAME
        command = f"kill -{signame} {target} 2>/dev/null || kill -{signame} {pid}"
        with contextlib.suppress(TargetError):
            self.run(command, timeout_s=10.0)

    def address(self) -> str | None:
        """The board's address on the connection rtbench made (from SSH_CONNECTION)."""
        if self._address is None:
            words = self.run('echo "$SSH_CONNECTION"').stdout.split()
            self._address = words[2] if len(words) >= 3 else None
        return self._address
