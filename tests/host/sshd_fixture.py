"""A real OpenSSH server to measure over: Debian's sshd in a network namespace of its own.

The namespace is joined to the host by a veth pair with addresses in a private /30
(10.213.N.0/30, N the first number whose namespace name rtb-boards-N is free, so that
parallel test workers never share one).  Host key, user key, known_hosts and an ssh_config
are generated in a temp directory; rtbench reaches the board as ssh://root@ADDRESS with
RTBENCH_SSH_CONFIG pointing at that ssh_config.  Where namespaces are impossible the
server listens on loopback on a free port instead.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

SSHD = "/usr/sbin/sshd"


def sh(*argv: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run a command, text output captured."""
    return subprocess.run(list(argv), capture_output=True, text=True, check=check, timeout=30)


def free_port() -> int:
    """A TCP port free on loopback right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class SshBoard:
    """One sshd (plus namespace) started by a test; stop() removes everything."""

    home: Path
    netns: str | None = None
    host_if: str | None = None
    address: str = "127.0.0.1"
    host_address: str = "127.0.0.1"
    port: int = 22
    procs: list[subprocess.Popen[str]] = field(default_factory=list)

    @property
    def remote_dir(self) -> str:
        """The board's probe directory (private to this fixture: runs never collide)."""
        return f"{self.home}/remote"

    @property
    def uri(self) -> str:
        """The --target URI of the board."""
        port = f":{self.port}" if self.port != 22 else ""
        return f"ssh://root@{self.address}{port}?dir={self.remote_dir}"

    @property
    def config(self) -> Path:
        """The ssh_config file rtbench must use (RTBENCH_SSH_CONFIG)."""
        return self.home / "ssh_config"

    def env(self) -> dict[str, str]:
        """Environment for an rtbench process that reaches this board."""
        return {**os.environ, "RTBENCH_SSH_CONFIG": str(self.config)}

    def start_sshd(self, extra: str = "") -> subprocess.Popen[str]:
        """Start an sshd for this board (extra config lines appended) and wait for it."""
        config = self.home / f"sshd_config.{len(self.procs)}"
        config.write_text(
            f"Port {self.port}\nListenAddress {self.address}\n"
            f"HostKey {self.home}/host_key\nPidFile {self.home}/sshd.{len(self.procs)}.pid\n"
            f"AuthorizedKeysFile {self.home}/authorized_keys\n"
            "PermitRootLogin prohibit-password\nPasswordAuthentication no\n"
            "KbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\n"
            "ClientAliveInterval 1\nClientAliveCountMax 3\nLogLevel ERROR\n" + extra)
        prefix = ["ip", "netns", "exec", self.netns] if self.netns else []
        Path("/run/sshd").mkdir(exist_ok=True)
        proc = subprocess.Popen([*prefix, SSHD, "-D", "-e", "-f", str(config)],
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True)
        self.procs.append(proc)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise RuntimeError(f"sshd ended: {proc.stderr.read() if proc.stderr else ''}")
            probe = sh(*prefix, "sh", "-c", f"ss -ltn | grep -q '{self.address}:{self.port} '",
                       check=False)
            if probe.returncode == 0:
                return proc
            time.sleep(0.1)
        raise RuntimeError("sshd did not start listening in 10 s")

    def stop_sshd(self, proc: subprocess.Popen[str]) -> None:
        """Stop one sshd started by start_sshd."""
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if proc.stderr:
            proc.stderr.close()

    def link(self, up: bool) -> None:
        """Bring the host's side of the veth pair up or down (cut the board's network)."""
        assert self.host_if is not None
        sh("ip", "link", "set", self.host_if, "up" if up else "down")

    def processes(self, name: str) -> list[str]:
        """Command lines of the processes in the board's namespace whose name contains name."""
        if self.netns:
            pids = sh("ip", "netns", "pids", self.netns, check=False).stdout.split()
        else:
            pids = [p for p in os.listdir("/proc") if p.isdigit()]
        found = []
        for pid in pids:
            with contextlib.suppress(OSError):
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
                text = cmdline.decode(errors="replace")
                if name in text.split(" ", 1)[0]:
                    found.append(text)
        return found

    def stop(self) -> None:
        """Stop every sshd, remove the namespace, the veth pair and the files."""
        for proc in self.procs:
            self.stop_sshd(proc)
        if self.netns:
            for pid in sh("ip", "netns", "pids", self.netns, check=False).stdout.split():
                with contextlib.suppress(ProcessLookupError, ValueError):
                    os.kill(int(pid), 9)
            sh("ip", "netns", "del", self.netns, check=False)
            shutil.rmtree(Path("/etc/netns") / self.netns, ignore_errors=True)
        if self.host_if:
            sh("ip", "link", "del", self.host_if, check=False)
        shutil.rmtree(self.home, ignore_errors=True)


def _board_passwd(netns: str) -> None:
    """Give root a plain /bin/sh inside the namespace, as on a board: `ip netns exec`
    mounts /etc/netns/NAME/passwd over /etc/passwd.  The host's root may log in to bash
    with a heavy ~/.bashrc (pyenv here), which every ssh command would run."""
    lines = []
    for line in Path("/etc/passwd").read_text().splitlines():
        fields = line.split(":")
        if len(fields) == 7 and fields[0] == "root":
            fields[6] = "/bin/sh"
        lines.append(":".join(fields))
    etc = Path("/etc/netns") / netns
    etc.mkdir(parents=True, exist_ok=True)
    (etc / "passwd").write_text("\n".join(lines) + "\n")


def _claim_netns() -> int | None:
    """Create a namespace rtb-boards-N for a free N in 1..250 and return N (None where no
    namespace can be made).  `ip netns add` fails on a name that exists, so the name claims
    N for this board alone, however many test workers start boards at once; N also names
    the veth pair and the /30."""
    first = os.getpid() % 250
    for step in range(250):
        n = (first + step) % 250 + 1
        if Path(f"/run/netns/rtb-boards-{n}").exists():
            continue
        if sh("ip", "netns", "add", f"rtb-boards-{n}", check=False).returncode == 0:
            return n
        if not Path(f"/run/netns/rtb-boards-{n}").exists():
            return None  # not taken by another worker: namespaces are impossible here
    return None


def _make_netns(board: SshBoard) -> bool:
    """Create the namespace and veth pair for board; False where that is impossible."""
    n = _claim_netns()
    if n is None:
        return False
    netns, host_if, ns_if = f"rtb-boards-{n}", f"rtbh{n}", f"rtbn{n}"
    board.netns, board.host_if = netns, host_if
    try:
        _board_passwd(netns)
        sh("ip", "link", "add", host_if, "type", "veth", "peer", "name", ns_if)
        sh("ip", "link", "set", ns_if, "netns", netns)
        sh("ip", "addr", "add", f"10.213.{n}.1/30", "dev", host_if)
        sh("ip", "link", "set", host_if, "up")
        sh("ip", "netns", "exec", netns, "ip", "addr", "add", f"10.213.{n}.2/30", "dev", ns_if)
        sh("ip", "netns", "exec", netns, "ip", "link", "set", ns_if, "up")
        sh("ip", "netns", "exec", netns, "ip", "link", "set", "lo", "up")
    except subprocess.CalledProcessError:
        board.stop()
        return False
    board.address, board.host_address, board.port = f"10.213.{n}.2", f"10.213.{n}.1", 22
    return True


def start_board() -> SshBoard:
    """Keys, namespace (or loopback) and a running sshd; the caller must stop() it."""
    home = Path(tempfile.mkdtemp(prefix="rtbench-sshd-"))
    home.chmod(0o700)
    board = SshBoard(home)
    sh("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(home / "host_key"))
    sh("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(home / "user_key"))
    shutil.copy(home / "user_key.pub", home / "authorized_keys")
    if not _make_netns(board):
        board.port = free_port()
    host_key = (home / "host_key.pub").read_text().split()
    where = board.address if board.port == 22 else f"[{board.address}]:{board.port}"
    (home / "known_hosts").write_text(f"{where} {host_key[0]} {host_key[1]}\n")
    board.config.write_text(
        "Host *\n"
        f"  IdentityFile {home}/user_key\n  IdentitiesOnly yes\n"
        f"  UserKnownHostsFile {home}/known_hosts\n  GlobalKnownHostsFile /dev/null\n"
        "  StrictHostKeyChecking yes\n  IdentityAgent none\n")
    try:
        board.start_sshd()
    except Exception:
        board.stop()
        raise
    return board
