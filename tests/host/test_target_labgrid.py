"""labgrid targets with real parts: an environment file driving a serial pty with a shell
and the ssh fixture (no coordinator), and labgrid's own coordinator and exporter on
loopback exporting the ssh fixture as a place (reserve, run, release).

Each end-to-end run goes through the CLI once, in the test's process
(tests/cli_inprocess.py: its start-up is not what these tests test) but for the run that
must hold a place while another is refused, which is a process of its own; the slow
parts (sshd, coordinator) are started once per module.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from rtbench.targets.base import TargetError, TargetUsageError, open_target
from tests.cli_inprocess import run_in_process
from tests.conftest import REPO
from tests.host.board_helpers import (
    cli_db,
    serial_probe_args,
    stored_runs,
    wait_for_output,
)
from tests.host.board_helpers import cli_env as board_cli_env
from tests.host.sshd_fixture import SshBoard, free_port, start_board
from tests.parts import import_part, needs_part, require_part

import_part("labgrid")
import_part("serial")
# Its serial board's shell would confuse test_target_serial's search for its own, and it
# checks that no labgrid ssh process is left: one worker runs both modules.
pytestmark = pytest.mark.xdist_group("serial-consoles")

BIN = Path(sys.executable).parent
HAS_SSHD = Path("/usr/sbin/sshd").exists() and shutil.which("ssh") is not None
needs_sshd = needs_part("sshd", not HAS_SSHD or os.geteuid() != 0,
                        "needs openssh-server/-client and root (sshd fixture)")

SHORT_SUITE = """
[suite]
name = "short"
description = "one short cyclic"

[defaults]
duration = "{duration}"
warmup = "0s"
settle = "0s"

[[scenarios]]
name = "idle"

[[tests]]
name = "cyclic-1ms"
test = "cyclic"
params = {{ interval = "1ms" }}
"""

# A board console like getty + login; its shell finds a harmless `dmesg` first, since
# labgrid's ShellDriver runs `dmesg -n 1` after logging in (this "board" is the host).
LOGIN_BOARD = """
mkdir -p {bin}; printf '#!/bin/sh\\n:\\n' > {bin}/dmesg; chmod +x {bin}/dmesg
trap '' INT; while :; do printf 'board login: '; read u; [ -n "$u" ] && break; done
printf 'Password: '; stty -echo; read p; stty echo; echo
if [ "$u" = rtb ] && [ "$p" = secret ]; then trap - INT; PATH={bin}:$PATH exec sh -i; fi
echo 'Login incorrect'; sleep 30
"""


def cli_env(tmp_path: Path) -> dict[str, str]:
    """Environment for the CLI: a private data directory, no labgrid settings from outside."""
    env = board_cli_env(tmp_path)
    for name in ("LG_COORDINATOR", "LG_TOKEN", "LG_PLACE"):
        env.pop(name, None)
    return env


def rtbench(args: list[str], env: dict[str, str], timeout_s: float = 240,
            ) -> subprocess.CompletedProcess[str]:
    """`rtbench ARGS` with env in this process (tests/cli_inprocess.py): exit status,
    stdout and stderr as a `python -m rtbench` child gives them, without its start-up."""
    return run_in_process(args, env, REPO, timeout=timeout_s)


def suite_file(tmp_path: Path, duration: str = "2s") -> Path:
    """A one-test suite of the given length."""
    path = tmp_path / f"short-{duration}.toml"
    path.write_text(SHORT_SUITE.format(duration=duration))
    return path


def check_stored_like_a_direct_run(run: Any, target: str, remote_dir: str) -> None:
    """The run holds the board's own facts and windows, under the labgrid target name."""
    assert run.status == "ok" and run.target == target
    assert run.sysinfo["uname"]["nodename"] == run.hostname
    measurements = [m for s in run.scenarios for m in s.measurements]
    assert measurements and all(m.command[0].startswith(f"{remote_dir}/rtprobe-")
                                for m in measurements)
    assert sum(len(m.windows) for m in measurements) > 0


def one_line(done: subprocess.CompletedProcess[str], code: int, text: str) -> None:
    """The command failed with code and exactly one stderr line containing text."""
    lines = done.stderr.strip().splitlines()
    assert done.returncode == code, done.stderr + done.stdout
    assert len(lines) == 1 and text in lines[0], done.stderr


def stop(proc: subprocess.Popen[Any]) -> None:
    """End a process this test started: SIGTERM, then SIGKILL."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="module")
def board() -> Iterator[SshBoard]:
    """One sshd board for the whole module."""
    if not HAS_SSHD or os.geteuid() != 0:
        require_part("sshd", "needs openssh-server/-client and root (sshd fixture)")
    found = start_board()
    try:
        yield found
    finally:
        found.stop()


def ssh_env_file(path: Path, board: SshBoard, power_log: Path | None = None) -> Path:
    """A labgrid environment whose target `board` is the ssh fixture as a NetworkService
    (with an external power switch that logs its cycles to power_log when given)."""
    power = ""
    if power_log is not None:
        power = ("      ExternalPowerDriver:\n"
                 f"        cmd_on: sh -c 'echo on >> {power_log}'\n"
                 f"        cmd_off: sh -c 'echo off >> {power_log}'\n"
                 f"        cmd_cycle: sh -c 'echo cycle >> {power_log}'\n")
    path.write_text(
        "targets:\n  board:\n    resources:\n      NetworkService:\n"
        f"        address: '{board.address}'\n        port: {board.port}\n"
        "        username: root\n    drivers:\n      SSHDriver:\n"
        f"        keyfile: {board.home}/user_key\n" + power)
    return path


# --- without a coordinator: environment files ------------------------------------------

@needs_sshd
def test_env_file_over_ssh_runs_a_suite_with_power_cycle(board: SshBoard,
                                                         tmp_path: Path) -> None:
    power_log = tmp_path / "power.log"
    env_file = ssh_env_file(tmp_path / "lab.yaml", board, power_log)
    env = cli_env(tmp_path)
    uri = f"labgrid-env:{env_file}:board?dir={board.remote_dir}"
    done = rtbench(["run", str(suite_file(tmp_path)), "--target", uri, "--simulate", "7",
                    "--no-report", "--power-cycle"], env)
    assert done.returncode == 0, done.stderr + done.stdout
    assert power_log.read_text() == "cycle\n"
    (run,) = stored_runs(cli_db(tmp_path))
    check_stored_like_a_direct_run(run, f"labgrid-env:{env_file}:board", board.remote_dir)
    # labgrid's control master went away with the target
    assert not subprocess.run(["pgrep", "-f", "lg-ssh-"], capture_output=True,
                              check=False).stdout


def test_env_file_over_a_serial_console_with_labgrid_login(tmp_path: Path) -> None:
    if shutil.which("socat") is None:
        require_part("socat", "needs socat")
    tty = tmp_path / "tty0"
    script = tmp_path / "board.sh"
    script.write_text(LOGIN_BOARD.format(bin=tmp_path / "bin"))
    socat = subprocess.Popen(
        ["socat", f"PTY,link={tty},raw,echo=0", f"EXEC:sh {script},pty,setsid,ctty,stderr,sane"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        while not tty.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        wait_for_output(tty)
        env_file = tmp_path / "serial.yaml"
        env_file.write_text(
            "targets:\n  main:\n    resources:\n      RawSerialPort:\n"
            f"        port: {tty}\n        speed: 115200\n    drivers:\n"
            "      SerialDriver: {}\n      ShellDriver:\n        prompt: '[#$] '\n"
            "        login_prompt: 'login: '\n        username: rtb\n"
            "        password: secret\n")
        env = cli_env(tmp_path)
        env.pop("RTBENCH_SERIAL_USER", None)
        env.pop("RTBENCH_SERIAL_PASSWORD", None)
        remote_dir = str(tmp_path / "remote")
        uri = f"labgrid-env:{env_file}?dir={remote_dir}"
        # No power driver in this environment: one line, nothing stored.
        refused = rtbench(["run", "--target", uri, "--power-cycle"], env, timeout_s=60)
        one_line(refused, 2, "--power-cycle needs a power driver")
        assert stored_runs(cli_db(tmp_path)) == []
        done = rtbench(["run", str(suite_file(tmp_path)), "--target", uri, "--simulate", "3",
                        "--no-report", *serial_probe_args()], env)
        assert done.returncode == 0, done.stderr + done.stdout
        (run,) = stored_runs(cli_db(tmp_path))
        check_stored_like_a_direct_run(run, f"labgrid-env:{env_file}:main", remote_dir)
    finally:
        stop(socat)


def test_env_file_faults_are_one_line(tmp_path: Path) -> None:
    env = cli_env(tmp_path)
    bad_yaml = tmp_path / "bad.yaml"
    bad_yaml.write_text("targets: [unclosed\n")
    empty = tmp_path / "empty.yaml"
    empty.write_text("targets:\n  main:\n    resources: {}\n")
    for uri, code, text in (
            (f"labgrid-env:{tmp_path}/none.yaml", 2, "no environment file"),
            (f"labgrid-env:{bad_yaml}", 2, "bad labgrid environment"),
            (f"labgrid-env:{empty}:other", 2, "no target 'other'"),
            (f"labgrid-env:{empty}", 3, "no way to a shell"),
            ("ssh://root@127.0.0.1:1", 2, "--power-cycle needs a labgrid target")):
        args = ["run", "--target", uri, "--no-report"]
        if uri.startswith("ssh:"):
            args.append("--power-cycle")
        one_line(rtbench(args, env, timeout_s=60), code, text)
    assert stored_runs(cli_db(tmp_path)) == []


def test_uri_forms() -> None:
    target = open_target("labgrid-env:/lab/env.yaml:rpi?dir=/data/rtb")
    assert target.name == "labgrid-env:/lab/env.yaml:rpi"
    assert open_target("labgrid-env:lab.yaml").name == "labgrid-env:lab.yaml:main"
    place = open_target("labgrid:rpi-3?coordinator=lab:20408&wait=60")
    assert place.name == "labgrid:rpi-3"
    assert place.coordinator == "lab:20408" and place.wait_s == 60.0  # type: ignore[attr-defined]
    for uri, text in (("labgrid:", "expected labgrid:PLACE"),
                      ("labgrid:board?bogus=1", "unknown option 'bogus'"),
                      ("labgrid:board?wait=soon", "wait must be a number"),
                      ("labgrid-env:lab.yaml?wait=5", "unknown option 'wait'"),
                      ("labgrid:rpi-3?dir=tmp", "dir must be an absolute path")):
        with pytest.raises(TargetUsageError, match=text):
            open_target(uri)


# --- with a coordinator: labgrid-coordinator + labgrid-exporter on loopback ------------

class PowerSwitch(BaseHTTPRequestHandler):
    """A network power switch with labgrid's `simplerest` interface: GET
    /relay/INDEX/VALUE switches; the paths asked for are kept in the server's `switched`."""

    def do_GET(self) -> None:  # the name http.server calls
        """Record the switching and answer 200."""
        self.server.switched.append(self.path)  # type: ignore[attr-defined]
        self.send_response(200)
        self.send_header("Content-Length", "1")
        self.end_headers()
        self.wfile.write(b"1")

    def log_message(self, *args: Any) -> None:
        """Quiet."""


class Lab:
    """A coordinator, an exporter serving the ssh fixture and a network power switch as
    place `board1`, an ssh-agent holding the fixture's key (labgrid's SSHDriver of a place
    has no keyfile)."""

    def __init__(self, board: SshBoard, home: Path) -> None:
        self.board = board
        self.home = home
        self.address = f"127.0.0.1:{free_port()}"
        self.procs: list[subprocess.Popen[bytes]] = []
        self.env = {**os.environ, "LG_COORDINATOR": self.address}
        self.power = ThreadingHTTPServer(("127.0.0.1", 0), PowerSwitch)
        self.power.switched = []  # type: ignore[attr-defined]

    @property
    def switched(self) -> list[str]:
        """The power switch requests so far."""
        return list(self.power.switched)  # type: ignore[attr-defined]

    def start(self) -> None:
        """Coordinator, exporter, place and agent, each bounded in time."""
        threading.Thread(target=self.power.serve_forever, daemon=True).start()
        self.procs.append(self._spawn("coordinator", [str(BIN / "labgrid-coordinator"), "-l",
                                                       self.address]))
        exported = self.home / "exporter.yaml"
        switch = f"http://127.0.0.1:{self.power.server_address[1]}/relay/{{index}}/{{value}}"
        exported.write_text(f"rtb:\n  NetworkService:\n    address: '{self.board.address}'\n"
                            f"    port: {self.board.port}\n    username: root\n"
                            f"  NetworkPowerPort:\n    model: simplerest\n"
                            f"    host: '{switch}'\n    index: 0\n")
        self._until(lambda: self.client("places").returncode == 0, "the coordinator")
        self.procs.append(self._spawn("exporter", [
            str(BIN / "labgrid-exporter"), "-c", self.address, "-n", "exp1", "--hostname",
            "127.0.0.1", str(exported)]))
        self._until(lambda: "exp1/rtb/NetworkService" in self.client("resources").stdout,
                    "the exporter's resource")
        for args in (["-p", "board1", "create"], ["-p", "board1", "add-match", "exp1/rtb/*"]):
            done = self.client(*args)
            assert done.returncode == 0, done.stderr
        agent = subprocess.run(["ssh-agent", "-s"], capture_output=True, text=True,
                               check=True, timeout=10).stdout
        for part in agent.split(";"):
            name, _, value = part.strip().partition("=")
            if name in ("SSH_AUTH_SOCK", "SSH_AGENT_PID"):
                self.env[name] = value
        subprocess.run(["ssh-add", "-q", f"{self.board.home}/user_key"], env=self.env,
                       check=True, capture_output=True, timeout=10)

    def _spawn(self, name: str, argv: list[str]) -> subprocess.Popen[bytes]:
        """Start one labgrid daemon in the lab's directory, its output in a log file."""
        with open(self.home / f"{name}.log", "wb") as log:
            return subprocess.Popen(argv, cwd=self.home, stdin=subprocess.DEVNULL,
                                    stdout=log, stderr=subprocess.STDOUT, env=self.env)

    def _until(self, ready: Any, what: str, timeout_s: float = 30) -> None:
        """Wait for ready() (bounded), else fail naming what did not come up."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if ready():
                return
            time.sleep(0.3)
        logs = {p.name: p.read_text()[-400:] for p in self.home.glob("*.log")}
        raise AssertionError(f"{what} did not come up in {timeout_s:g} s: {logs}")

    def client(self, *args: str, user: str | None = None) -> subprocess.CompletedProcess[str]:
        """labgrid-client against this coordinator: as LG_USERNAME=user, another user's
        client, in a process of its own; else in this process (labgrid_client_here)."""
        if user is None:
            return labgrid_client_here(self.address, list(args))
        env = dict(self.env)
        env["LG_USERNAME"] = user
        return subprocess.run([str(BIN / "labgrid-client"), *args], env=env,
                              capture_output=True, text=True, timeout=30, check=False)

    def acquired_by(self) -> str:
        """Who holds board1 now ('None' when nobody)."""
        shown = self.client("-p", "board1", "show").stdout
        for line in shown.splitlines():
            if line.strip().startswith("acquired:"):
                return line.split(":", 1)[1].strip()
        raise AssertionError(f"no 'acquired:' in {shown!r}")

    def stop(self) -> None:
        """Stop the agent, the daemons and the power switch."""
        self.power.shutdown()
        self.power.server_close()
        pid = self.env.get("SSH_AGENT_PID")
        if pid:
            with contextlib.suppress(ProcessLookupError, ValueError):
                os.kill(int(pid), signal.SIGTERM)
        for proc in reversed(self.procs):
            stop(proc)


def labgrid_client_here(address: str, args: list[str]) -> subprocess.CompletedProcess[str]:
    """`labgrid-client -x ADDRESS ARGS` in this process, as its main() runs a command:
    labgrid's own parser, ClientSession and command function, stdout and stderr captured;
    exit 0, or 1 with the error when the session or the command fails.  A child cost half
    a CPU-second (labgrid's imports), and these tests ask the coordinator some twenty
    times."""
    import asyncio
    import inspect
    import io

    from labgrid.remote.client import ClientSession, ensure_event_loop, get_parser
    from labgrid.util.proxy import proxymanager

    parser = get_parser()
    parsed = parser.parse_args(["-x", address, *args])
    loop = ensure_event_loop()  # the one rtbench's labgrid target uses in this thread
    session = ClientSession(proxymanager.get_grpc_address(address, default_port=20408),
                            loop, prog=parser.prog, args=parsed)
    out, err = io.StringIO(), io.StringIO()
    code = 0
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            loop.run_until_complete(asyncio.wait_for(session.start(), 30))
            if inspect.iscoroutinefunction(parsed.func):
                loop.run_until_complete(parsed.func(session))
            else:
                parsed.func(session)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except Exception as exc:  # noqa: BLE001 - what labgrid-client says, and its exit 1
        err.write(f"{parser.prog}: {type(exc).__name__}: {exc}\n")
        code = 1
    finally:
        with contextlib.suppress(Exception):
            loop.run_until_complete(session.stop())
        with contextlib.suppress(Exception):
            loop.run_until_complete(session.close())
    return subprocess.CompletedProcess(["labgrid-client", "-x", address, *args], code,
                                       out.getvalue(), err.getvalue())


@pytest.fixture(scope="module")
def lab(board: SshBoard, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    """The coordinator lab for the module."""
    found = Lab(board, tmp_path_factory.mktemp("lab"))
    try:
        found.start()
        yield found
    finally:
        found.stop()


def lab_env(lab: Lab, tmp_path: Path) -> dict[str, str]:
    """CLI environment reaching the lab's coordinator and agent."""
    env = cli_env(tmp_path)
    env.update({k: v for k, v in lab.env.items() if k in ("LG_COORDINATOR", "SSH_AUTH_SOCK")})
    for name in ("http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"):
        env.pop(name, None)     # the power switch is on loopback
    return env


def test_place_is_reserved_for_the_run_and_released(lab: Lab, tmp_path: Path) -> None:
    env = lab_env(lab, tmp_path)
    uri = f"labgrid:board1?dir={lab.board.remote_dir}"
    # a simulated measurement is done at once: a settle of 10 s (beside a load that costs
    # nothing) keeps the place held while the second run starts, even on a busy machine
    suite = suite_file(tmp_path)
    suite.write_text(suite.read_text().replace(
        '[[scenarios]]\nname = "idle"\n',
        '[[scenarios]]\nname = "idle"\nsettle = "10s"\nloads = [{ command = "sleep 600" }]\n'))
    first = subprocess.Popen(
        [sys.executable, "-m", "rtbench", "run", str(suite), "--target",
         uri, "--simulate", "5", "--no-report", "--power-cycle"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # the run switches the place's power only once it holds the place: wait for that
        # (this process's switch) rather than asking the coordinator every 0.3 s
        deadline = time.monotonic() + 60
        while not lab.switched and first.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert lab.acquired_by() != "None"
        # A second run while the first holds the place: refused at once, one line.
        second = rtbench(["run", "--target", "labgrid:board1", "--no-report"], env,
                         timeout_s=60)
        one_line(second, 3, "place board1 is acquired by")
        assert first.poll() is None, "the refused attempt must not disturb the run"
        out, err = first.communicate(timeout=180)
    finally:
        stop(first)
    assert first.returncode == 0, err + out
    # labgrid's NetworkPowerDriver for the place's power port: off, then on
    assert lab.switched == ["/relay/0/0", "/relay/0/1"]
    (run,) = stored_runs(cli_db(tmp_path))
    check_stored_like_a_direct_run(run, "labgrid:board1", lab.board.remote_dir)
    assert lab.acquired_by() == "None"
    assert "Reservation" not in lab.client("reservations").stdout


def test_place_faults_are_one_line_and_store_nothing(lab: Lab, tmp_path: Path) -> None:
    env = lab_env(lab, tmp_path)
    one_line(rtbench(["run", "--target", "labgrid:nowhere"], env, timeout_s=60), 2,
             "no place 'nowhere'")
    taken = lab.client("-p", "board1", "acquire", user="alice")
    assert taken.returncode == 0, taken.stderr
    try:
        one_line(rtbench(["run", "--target", "labgrid:board1?wait=1"], env, timeout_s=60), 3,
                 "acquired by")
        assert "alice" in lab.acquired_by()
    finally:
        lab.client("-p", "board1", "release", user="alice")
    down = f"labgrid:board1?coordinator=127.0.0.1:{free_port()}"
    one_line(rtbench(["run", "--target", down], env, timeout_s=60), 3,
             "cannot reach the labgrid coordinator")
    assert stored_runs(cli_db(tmp_path)) == []
    assert lab.acquired_by() == "None"


def test_reserve_and_release_seam(lab: Lab, monkeypatch: pytest.MonkeyPatch) -> None:
    """What a fleet does: claim the place first, open later, give it back at the end."""
    monkeypatch.setenv("LG_COORDINATOR", lab.address)
    first = open_target("labgrid:board1")
    other = open_target("labgrid:board1")
    first.reserve(wait_s=5)
    try:
        assert lab.acquired_by() != "None"
        started = time.monotonic()
        with pytest.raises(TargetError, match=r"place board1 is acquired by .*waited 1 s"):
            other.reserve(wait_s=1)
        assert 1 <= time.monotonic() - started < 15
        first.reserve(wait_s=0)         # held already: nothing to do
    finally:
        first.release()
        other.release()                 # never held: nothing to do
    assert lab.acquired_by() == "None"
    assert "Reservation" not in lab.client("reservations").stdout


def test_a_fleet_reserves_places_from_threads(lab: Lab, monkeypatch: pytest.MonkeyPatch) -> None:
    """Targets of one process claim their places at the same time (one coordinator
    session at a time inside, which the coordinator needs)."""
    monkeypatch.setenv("LG_COORDINATOR", lab.address)
    assert lab.client("-p", "spare", "create").returncode == 0
    try:
        targets = [open_target("labgrid:board1"), open_target("labgrid:spare")]
        errors: list[BaseException] = []

        def claim(target: Any) -> None:
            """Reserve one place, keeping what went wrong."""
            try:
                target.reserve(wait_s=10)
            except BaseException as exc:  # reported by the assert below
                errors.append(exc)

        threads = [threading.Thread(target=claim, args=(t,)) for t in targets]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        try:
            assert errors == []
            who = lab.client("who").stdout
            assert "board1" in who and "spare" in who
        finally:
            for target in targets:
                target.release()
        assert "board1" not in lab.client("who").stdout
    finally:
        lab.client("-p", "spare", "delete")


def test_fleet_over_a_place_and_a_direct_board(lab: Lab, tmp_path: Path) -> None:
    """docs/fleet.md's mixed lab: one board by ssh, one through a labgrid place; the place
    is reserved before anything runs and given back after."""
    env = lab_env(lab, tmp_path)
    board = lab.board
    port = f":{board.port}" if board.port != 22 else ""
    inventory = tmp_path / "lab.toml"
    inventory.write_text(
        f'[[targets]]\nname = "direct"\nssh_config = "{board.config}"\n'
        f'uri = "ssh://root@{board.address}{port}?dir={board.home}/direct"\n'
        f'tags = {{ via = "ssh" }}\n\n'
        f'[[targets]]\nname = "placed"\nuri = "labgrid:board1?dir={board.home}/placed"\n'
        f'tags = {{ via = "labgrid" }}\npower_cycle = true\n')
    report = tmp_path / "fleet.html"
    switched = len(lab.switched)
    done = rtbench(["fleet", str(inventory), str(suite_file(tmp_path)), "--simulate", "5",
                    "--fleet-id", "mixed", "--report", str(report)], env, timeout_s=240)
    assert done.returncode == 0, done.stdout + done.stderr
    runs = stored_runs(cli_db(tmp_path))
    assert sorted(r.tags["board"] for r in runs) == ["direct", "placed"]
    assert {r.tags["fleet"] for r in runs} == {"mixed"}
    by_board = {r.tags["board"]: r for r in runs}
    check_stored_like_a_direct_run(by_board["placed"], "labgrid:board1", f"{board.home}/placed")
    check_stored_like_a_direct_run(by_board["direct"], by_board["direct"].target,
                                   f"{board.home}/direct")
    assert "<td>placed</td>" in report.read_text()
    assert lab.switched[switched:] == ["/relay/0/0", "/relay/0/1"]   # off, then on
    assert lab.acquired_by() == "None"
    assert "Reservation" not in lab.client("reservations").stdout
