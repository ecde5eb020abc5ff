"""The serial target against a shell on a pseudo-terminal (socat joins two ptys, as a
UART joins a board's console to the host)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from rtbench.targets._serialjob import SerialJob
from rtbench.targets.base import (
    ProbeProcess,
    TargetError,
    TargetLost,
    TargetUsageError,
    open_target,
)
from rtbench.targets.progress import Progress
from rtbench.targets.serial import SerialLink, SerialTarget, _split_console
from tests.host.board_helpers import (
    board_probes,
    cli_db,
    cli_env,
    rtbench,
    serial_probe_args,
    stored_runs,
    wait_for_output,
)
from tests.parts import import_part, needs_part

import_part("serial")
# board_tty_of finds the board's shell among all the machine's processes and the probe is
# found with pgrep: one worker runs this module's and test_target_labgrid's consoles.
pytestmark = [needs_part("socat", shutil.which("socat") is None, "needs socat"),
              pytest.mark.xdist_group("serial-consoles")]

# Like getty + login: asks again after an empty name, ignores ^C.
LOGIN_SCRIPT = ("trap '' INT; while :; do printf 'board login: '; read u; [ -n \"$u\" ] && break; "
                "done; printf 'Password: '; stty -echo; read p; stty echo; echo; "
                "if [ \"$u\" = rtb ] && [ \"$p\" = secret ]; then trap - INT; exec sh -i; fi; "
                "echo 'Login incorrect'; sleep 30")

Board = Callable[[str], Path]
# The socat process of each console a test started, by its tty path.
CONSOLES: dict[Path, subprocess.Popen[bytes]] = {}


@pytest.fixture()
def board(tmp_path: Path) -> Iterator[Board]:
    """board(shell command) -> the tty path of a console running it; all stopped after."""
    procs: list[subprocess.Popen[bytes]] = []

    def start(command: str) -> Path:
        tty = tmp_path / f"tty{len(procs)}"
        script = tmp_path / f"board{len(procs)}.sh"
        script.write_text(command + "\n")
        exec_part = f"EXEC:sh {script}"
        proc = subprocess.Popen(
            ["socat", f"PTY,link={tty},raw,echo=0", f"{exec_part},pty,setsid,ctty,stderr,sane"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        procs.append(proc)
        CONSOLES[tty] = proc
        deadline = time.monotonic() + 10
        while not tty.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert tty.exists(), "socat did not make the pty"
        wait_for_output(tty)
        return tty

    yield start
    for proc in procs:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def drain(proc: ProbeProcess, timeout_s: float = 60) -> tuple[bytes, bytes]:
    """All output of proc until its end marker."""
    out, err = b"", b""
    deadline = time.monotonic() + timeout_s
    while not proc.at_eof() and time.monotonic() < deadline:
        o, e = proc.read_available()
        out, err = out + o, err + e
        time.sleep(0.02)
    return out, err


def board_shell_of(console: Path) -> tuple[int, str]:
    """The board's shell on console: its pid and its terminal (the pts it has as
    stdin); the child of that console's socat (its board script execs the shell)."""
    socat = CONSOLES[console].pid
    out = subprocess.run(["ps", "-eo", "pid,ppid,tty,args"], capture_output=True,
                         text=True, check=True).stdout
    for line in out.splitlines():
        words = line.split(None, 3)
        if len(words) == 4 and words[1] == str(socat) and words[2].startswith("pts/") \
                and "sh -i" in words[3]:
            return int(words[0]), "/dev/" + words[2]
    raise AssertionError(f"no board shell found for {console}")


def board_tty_of(console: Path) -> str:
    """The board side's terminal (the pts the shell has as stdin)."""
    return board_shell_of(console)[1]


@pytest.mark.parametrize("shell", ["exec busybox sh -i", "exec sh -i"])
def test_commands_push_and_stream(board: Board, shell: str) -> None:
    tty = board(shell)
    with open_target(f"serial://{tty}?baud=115200", provider=board_probes()) as target:
        assert isinstance(target, SerialTarget)
        done = target.run("echo out; echo err >&2; exit 3")
        assert done == type(done)(3, "out\n", "err\n")
        assert "cpu " in target.read_file("/proc/stat")
        with pytest.raises(TargetError, match="cannot read /nonexistent"):
            target.read_file("/nonexistent")
        assert target.probe_arch() == "x86_64"
        assert target.probe_version() != "unknown"
        proc = target.start_probe(["cyclic", "--simulate", "2", "--loops", "3000"])
        out, _ = drain(proc)
        assert proc.poll() == 0
        records = [json.loads(line) for line in out.splitlines()]
        assert records[0]["type"] == "start" and records[-1]["status"] == "ok"
        assert sum(r["type"] == "window" for r in records) >= 3
        # The line is free again.
        assert target.run("echo again").stdout == "again\n"
    # A second open finds the pushed probe and the shell as it was left.
    with open_target(f"serial://{tty}", provider=board_probes()) as again:
        assert again.run("echo back").stdout == "back\n"


def nice_of(pid: int | str) -> int:
    """The nice value of process pid (field 19 of /proc/PID/stat)."""
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[16])


@pytest.mark.parametrize("shell", ["exec busybox sh -i", "exec sh -i"])
def test_the_console_shell_runs_above_the_loads(board: Board, shell: str) -> None:
    """Issue 34: under loongson2f's heaviest mix an emulated arm64 PREEMPT_RT board's
    shell waited among 50 `find` loops for 22-29 s a round trip, then over 30 s, and
    the run ended lost with the board alive.  The console's shell is raised 10 nice levels
    while rtbench holds the line; rtprobe and the loads run at the board's own level, as
    on a local target; the shell gets its level back when the line is closed."""
    own = os.nice(0)  # the board's shell starts at this process's level
    tty = board(shell)
    with open_target(f"serial://{tty}", provider=board_probes()) as target:
        shell_pid, shell_tty = board_shell_of(tty)
        assert nice_of(shell_pid) == max(-20, own - 10)
        job = target.start_command("sleep 60")
        assert isinstance(job, SerialJob)
        children = subprocess.run(["pgrep", "-s", job.pid], capture_output=True, text=True,
                                  check=False).stdout.split()
        assert children and {nice_of(pid) for pid in children} == {own}, children
        target.stop_commands([job])
        # a real run that lasts and writes little (a simulated one is done in a moment,
        # and its 11 MB of records take the line seconds to carry)
        proc = target.start_probe(["cyclic", "--duration", "60s", "--interval", "10ms",
                                   "--threads", "1", "--warmup", "0", "--policy", "other",
                                   "--no-mlock", "--no-pmqos"])
        try:
            # its start record: rtprobe runs (the shell that put it at its level has
            # exec'd it) and is the line's foreground job, which ^C reaches
            out = b""
            deadline = time.monotonic() + 60
            while b'"type":"start"' not in out.replace(b" ", b"") and \
                    time.monotonic() < deadline:
                out += proc.read_available()[0]
                time.sleep(0.05)
            # this board's rtprobe: the one on its terminal (other tests' boards run theirs)
            probe_pid = subprocess.run(["pgrep", "-n", "-t", shell_tty.removeprefix("/dev/"),
                                        "-f", "^/.*/rtprobe-[0-9a-f]+ cyclic"],
                                       capture_output=True, text=True,
                                       check=False).stdout.strip()
            assert probe_pid and nice_of(probe_pid) == own, (probe_pid, out[-300:])
        finally:
            proc.interrupt()
            drain(proc, 30)
        assert target.run("echo free").stdout == "free\n"
    assert nice_of(shell_pid) == own


@pytest.mark.usefixtures("realtime")  # its rtprobe measures at an RT priority here
def test_interrupt_and_console_messages(board: Board) -> None:
    tty = board("exec busybox sh -i")
    with open_target(f"serial://{tty}", provider=board_probes()) as target:
        proc = target.start_probe(["cyclic", "--duration", "60s", "--interval", "1ms"])
        out, err = b"", b""
        deadline = time.monotonic() + 60
        while out.count(b'"window"') < 1 and time.monotonic() < deadline:
            o, e = proc.read_available()
            out, err = out + o, err + e
            time.sleep(0.05)
        # A kernel message on the board's console, between records.
        with open(board_tty_of(tty), "w") as console:
            console.write("[   42.123456] usb 1-1: new device\n")
        # wait for the message itself (a loaded machine delays the pty), not a fixed time
        deadline = time.monotonic() + 60
        while b"usb 1-1: new device" not in err and time.monotonic() < deadline:
            o, e = proc.read_available()
            out, err = out + o, err + e
            time.sleep(0.05)
        proc.interrupt()
        o, e = drain(proc, 20)
        out, err = out + o, err + e
        records = [json.loads(line) for line in out.splitlines()]
        assert records[-1]["status"] == "interrupted"
        assert b"usb 1-1: new device" in err
        assert any("usb 1-1" in line for line in target.link.log)  # type: ignore[union-attr]


def test_login_from_the_environment(board: Board, monkeypatch: pytest.MonkeyPatch) -> None:
    tty = board(LOGIN_SCRIPT)
    monkeypatch.setenv("RTBENCH_SERIAL_USER", "rtb")
    monkeypatch.setenv("RTBENCH_SERIAL_PASSWORD", "secret")
    with open_target(f"serial://{tty}", provider=board_probes()) as target:
        assert target.run("echo in").stdout == "in\n"


def test_login_refused(board: Board, monkeypatch: pytest.MonkeyPatch) -> None:
    tty = board(LOGIN_SCRIPT)
    monkeypatch.setenv("RTBENCH_SERIAL_USER", "rtb")
    monkeypatch.setenv("RTBENCH_SERIAL_PASSWORD", "wrong")
    with pytest.raises(TargetError, match="login refused"):
        open_target(f"serial://{tty}", provider=board_probes()).open()


def test_boot_chatter_saying_denied_is_no_login_refusal(board: Board) -> None:
    """Issue 34: a zoo guest's boot log held "denied", which was taken for a refused
    login although no login had been sent."""
    tty = board("echo 'mount: /proc/bus/usb: Permission denied'; exec busybox sh -i")
    with open_target(f"serial://{tty}", provider=board_probes()) as target:
        assert target.run("echo ok").stdout == "ok\n"


def test_login_without_credentials(board: Board, monkeypatch: pytest.MonkeyPatch) -> None:
    tty = board(LOGIN_SCRIPT)
    monkeypatch.delenv("RTBENCH_SERIAL_USER", raising=False)
    with pytest.raises(TargetError, match="set RTBENCH_SERIAL_USER"):
        open_target(f"serial://{tty}", provider=board_probes()).open()


def test_garbage_on_the_line(board: Board) -> None:
    tty = board("trap '' INT; while :; do head -c 200 /dev/urandom; sleep 0.05; done")
    target = open_target(f"serial://{tty}?baud=9600", provider=board_probes())
    assert isinstance(target, SerialTarget)
    target.shell_timeout_s = 6
    with pytest.raises(TargetError, match="garbage on the line; is the baud rate"):
        target.open()


class DropsBytesOfTheFirstSync:
    """A port whose first sync line loses two bytes on its way, an opening quote among
    them (as a PREEMPT_RT guest booting under TCG dropped them from its console's input,
    tests/host/test_qemu_serial.py)."""

    def __init__(self, port: object) -> None:
        self.port = port
        self.dropped = False

    def write(self, data: bytes) -> int | None:
        if not self.dropped and b'"$RTBD" ]' in data:
            self.dropped = True
            data = data.replace(b'"$RTBD" ]', b'RTBD" ]', 1)
        return self.port.write(data)  # type: ignore[attr-defined, no-any-return]

    def __getattr__(self, name: str) -> object:
        return getattr(self.port, name)


def test_a_sync_line_that_lost_a_quote_does_not_wedge_the_shell(board: Board) -> None:
    """The shell took the rest of the garbled line as an open quote and every later sync
    line as more of it (PS2 prompts, no marker); rtbench waited out its shell timeout.
    ^C before each new sync line ends the continuation."""
    tty = board("exec busybox sh -i")
    target = SerialTarget(str(tty), provider=board_probes())
    port = DropsBytesOfTheFirstSync(target._open_port())
    target.link = SerialLink(port)
    target.shell_timeout_s = 20
    try:
        target._find_shell()
        assert port.dropped
        assert target.run("echo ok").stdout == "ok\n"
    finally:
        target.close()


def test_port_missing_busy_and_bad_uris(board: Board, tmp_path: Path) -> None:
    with pytest.raises(TargetError, match="no such device"):
        open_target(f"serial://{tmp_path}/ttyNONE", provider=board_probes()).open()
    tty = board("exec busybox sh -i")
    with open_target(f"serial://{tty}", provider=board_probes()), \
            pytest.raises(TargetError, match="busy"):
        open_target(f"serial://{tty}", provider=board_probes()).open()
    for uri, message in (("serial:///dev/ttyS0?baud=fast", "baud must be"),
                         ("serial:///dev/ttyS0?parity=odd", "unknown option 'parity'"),
                         ("serial://ttyS0", "expected serial:///dev/ttyX")):
        with pytest.raises(TargetUsageError, match=message):
            open_target(uri)


def test_console_lines_never_break_records() -> None:
    out: list[bytes] = []
    other: list[bytes] = []
    partial = _split_console(b'{"type":"window",[   3.5] eth0: link up', b"", out, other)
    partial = _split_console(b'"n":1}', partial, out, other)
    partial = _split_console(b"[   4.0] plain message", partial, out, other)
    partial = _split_console(b'{"type":"result"}', partial, out, other)
    assert partial == b""
    assert [json.loads(r) for r in out] == [{"type": "window", "n": 1}, {"type": "result"}]
    assert other == [b"[   3.5] eth0: link up", b"[   4.0] plain message"]
    assert os.sep == "/"


@pytest.mark.usefixtures("realtime")  # its rtprobe measures at an RT priority here
def test_silent_board_is_lost(board: Board) -> None:
    """The probe stops answering (as on a board that hung or rebooted): lost, not hung."""
    tty = board("exec busybox sh -i")
    with open_target(f"serial://{tty}", provider=board_probes()) as target:
        assert isinstance(target, SerialTarget)
        proc = target.start_probe(["cyclic", "--duration", "60s", "--interval", "1ms"])
        out = b""
        deadline = time.monotonic() + 20
        while b'"window"' not in out and time.monotonic() < deadline:
            out += proc.read_available()[0]
            time.sleep(0.05)
        pids = subprocess.run(["pgrep", "-f", f"^{target._probe_path()} cyclic"],
                              capture_output=True, text=True, check=False).stdout.split()
        assert pids
        for pid in pids:
            os.kill(int(pid), signal.SIGSTOP)
        try:
            proc.stop(grace_s=1.0)
            assert proc.lost and proc.at_eof()
        finally:
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(int(pid), signal.SIGKILL)
                    os.kill(int(pid), signal.SIGCONT)


@pytest.mark.usefixtures("realtime")  # its rtprobe measures at an RT priority here
def test_board_gone_mid_run_raises_lost(board: Board) -> None:
    tty = board("exec busybox sh -i")
    with open_target(f"serial://{tty}", provider=board_probes()) as target:
        proc = target.start_probe(["cyclic", "--duration", "60s", "--interval", "1ms"])
        time.sleep(1.0)
        console = CONSOLES[tty]
        console.terminate()
        console.wait(timeout=10)
        with pytest.raises(TargetLost):
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                proc.read_available()
                time.sleep(0.05)


def test_board_that_stops_answering_is_said_in_words(board: Board, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A board whose console goes silent while a load starts (issue 34: the only message
    was a cut internal shell command): lost, in words naming what was being done, and
    every later command on the line fails at once instead of waiting again."""
    from rtbench.targets import _serialjob

    stuck = tmp_path / "bin"
    stuck.mkdir()
    # the board hangs in the first command of a job's start
    (stuck / "mkdir").write_text('#!/bin/sh\ncase "$*" in *job-*) exec sleep 600;; esac\n'
                                 'exec /bin/mkdir "$@"\n')
    (stuck / "mkdir").chmod(0o755)
    tty = board(f"PATH={stuck}:$PATH; export PATH; exec sh -i")
    monkeypatch.setattr(_serialjob, "JOB_START_TIMEOUT_S", 3.0)
    with open_target(f"serial://{tty}", provider=board_probes()) as target:
        with pytest.raises(TargetLost) as caught:
            target.start_command("sleep 1")
        message = str(caught.value)
        assert ("the board stopped answering its console while starting the shell-command "
                "load `sleep 1`") in message, message
        assert message.endswith("it may have hung or rebooted"), message
        assert "mkdir" not in message and "\n" not in message
        began = time.monotonic()
        with pytest.raises(TargetLost, match="stopped answering"):
            target.run("true")
        assert time.monotonic() - began < 1.0


def test_a_board_silent_while_opening_names_the_step(board: Board, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The shell answered, then the board went silent in a step of the line's opening:
    the words name the step, not "running a command"."""
    stuck = tmp_path / "bin"
    stuck.mkdir()
    (stuck / "cat").write_text('#!/bin/sh\ncase "$*" in *printk*) exec sleep 600;; esac\n'
                               'exec /bin/cat "$@"\n')
    (stuck / "cat").chmod(0o755)
    tty = board(f"PATH={stuck}:$PATH; export PATH; exec sh -i")
    monkeypatch.setattr(SerialTarget.run, "__defaults__", (3.0,))
    with pytest.raises(TargetLost) as caught:
        open_target(f"serial://{tty}", provider=board_probes()).open()
    assert ("the board stopped answering its console while lowering the kernel's console "
            "log level (nothing for 3 s)") in str(caught.value), str(caught.value)


# A suite whose loads run next to the test as jobs of the board's shell: a built-in load
# and a shell-command load whose text is unique to this test (it is looked for after).
LOADS_SUITE = """
[suite]
name = "serial-loads"
description = "cyclic under a built-in and a shell-command load, over a serial line"

[defaults]
duration = "2s"
warmup = "1s"
settle = "1s"

[[scenarios]]
name = "idle"

[[scenarios]]
name = "cpu+shell"
loads = [{{ kind = "cpu", rate = 30 }}, {{ command = "while :; do :; done # {token}" }}]

[[tests]]
name = "cyclic-1ms"
test = "cyclic"
params = {{ interval = "1ms" }}
"""


@pytest.fixture()
def short_remote() -> Iterator[Path]:
    """A board directory with a short path (a pushed line must stay within a serial
    line's 1000 characters, and tmp_path is long), removed after the test."""
    remote = Path(tempfile.mkdtemp(prefix="rtbs-", dir="/tmp"))
    yield remote
    shutil.rmtree(remote, ignore_errors=True)


def board_processes(text: str) -> list[str]:
    """Command lines of the processes that contain text (the board shares this host)."""
    out = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True,
                         check=True).stdout
    return [line for line in out.splitlines() if text in line and "ps -eo" not in line]


@pytest.mark.parametrize("shell", ["exec busybox sh -i", "exec sh -i"])
def test_a_stopped_command_load_leaves_nothing_whatever_the_shell(board: Board, shell: str,
                                                                   short_remote: Path) -> None:
    """The job's whole group is killed by the console's shell, busybox's or dash's:
    dash's kill refused the `--` rtbench gave it after -KILL, and on a board whose
    /bin/sh is dash (Debian's) the load ran on after the run until its watchdog."""
    tty = board(shell)
    token = f"rtbench-stop-{os.getpid()}-{time.monotonic_ns()}"
    with open_target(f"serial://{tty}?dir={short_remote}", provider=board_probes()) as target:
        job = target.start_command(f"sleep 60 & sleep 61; wait # {token}")
        deadline = time.monotonic() + 20
        while not board_processes(token) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert board_processes(token)
        target.stop_commands([job])
        deadline = time.monotonic() + 5
        while board_processes(token) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert board_processes(token) == []


def test_suite_with_loads_runs_over_serial_and_leaves_nothing(board: Board,
                                                               tmp_path: Path,
                                                               short_remote: Path) -> None:
    """Built-in and shell-command loads run as background jobs of the board's shell:
    both scenarios are measured, the achieved rate is collected, nothing is left."""
    tty = board("exec busybox sh -i")
    token = f"rtbench-serial-{os.getpid()}-{time.monotonic_ns()}"
    suite = tmp_path / "serial-loads.toml"
    suite.write_text(LOADS_SUITE.format(token=token))
    remote = short_remote
    done = rtbench(["run", str(suite), "--target", f"serial://{tty}?dir={remote}",
                    "--policy", "other", *serial_probe_args()], cli_env(tmp_path))
    assert done.returncode in (0, 1), done.stderr + done.stdout
    (run,) = stored_runs(cli_db(tmp_path))
    assert run.status in ("ok", "fail") and run.target.startswith("serial://")
    by_name = {s.name: s for s in run.scenarios}
    assert set(by_name) == {"idle", "cpu+shell"}
    assert all(len(s.measurements) == 1 for s in run.scenarios)
    loads = by_name["cpu+shell"].intensity["loads"]
    cpu = next(ld for ld in loads if ld.get("kind") == "cpu")
    assert cpu["rate_samples"] >= 1 and cpu["achieved"] is not None and cpu["unit"]
    assert any(token in str(ld.get("command")) for ld in loads)
    assert board_processes(token) == []
    assert board_processes(str(remote)) == []
    assert not list(remote.glob("job-*"))


def test_host_side_load_is_refused_before_anything_runs(board: Board,
                                                         tmp_path: Path,
                                                         short_remote: Path) -> None:
    tty = board("exec busybox sh -i")
    suite = tmp_path / "flood.toml"
    suite.write_text(LOADS_SUITE.format(token="x").replace(
        '{ kind = "cpu", rate = 30 }', '{ kind = "net", rate = 1000, on = "host" }'))
    done = rtbench(["run", str(suite), "--target", f"serial://{tty}?dir={short_remote}",
                    "--policy", "other", *serial_probe_args()], cli_env(tmp_path))
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert "scenario 'cpu+shell'" in lines[-1] and "has none" in lines[-1]
    assert "ssh" in lines[-1]
    assert stored_runs(cli_db(tmp_path)) == []


def test_shell_that_never_answers_is_one_line_after_the_deadline(board: Board) -> None:
    tty = board("trap '' INT; echo 'U-Boot 2024.01'; exec sleep 600")
    target = open_target(f"serial://{tty}", provider=board_probes())
    assert isinstance(target, SerialTarget)
    target.shell_timeout_s = 4
    shown = io.StringIO()
    target.set_progress(Progress(target.name, stream=shown, interactive=False))
    began = time.monotonic()
    with pytest.raises(TargetError, match=r"no shell answered in 4 s; check that the board"):
        target.open()
    assert time.monotonic() - began < 15
    lines = shown.getvalue().splitlines()
    assert len(lines) == 1 and "waiting for the board's shell" in lines[0]


def test_interrupted_push_leaves_nothing_half_installed(board: Board, tmp_path: Path,
                                                        short_remote: Path,
                                                        monkeypatch: pytest.MonkeyPatch,
                                                        ) -> None:
    """The line breaks halfway through the push: no probe is installed under its final
    name; the next open pushes again and uses the probe only once its checksum matches."""
    tty = board("exec busybox sh -i")
    remote = short_remote
    uri = f"serial://{tty}?dir={remote}"
    real_send = SerialTarget._send_file

    def half_then_cut(self: SerialTarget, data: bytes, path: str) -> None:
        real_send(self, data[:len(data) // 2], path)
        raise TargetLost("serial line: write failed (cut for the test)")

    monkeypatch.setattr(SerialTarget, "_send_file", half_then_cut)
    with pytest.raises(TargetLost):
        open_target(uri, provider=board_probes()).open()
    assert not [p for p in remote.glob("rtprobe-*") if not p.name.endswith(".part")]
    monkeypatch.setattr(SerialTarget, "_send_file", real_send)
    with open_target(uri, provider=board_probes()) as target:
        installed = Path(target.probe_path())
        assert installed.parent == remote and installed.stat().st_size > 0
    # a damaged probe on the board is never used: the checksum differs, it is pushed again
    installed.write_bytes(installed.read_bytes()[:1000])
    with open_target(uri, provider=board_probes()) as again:
        assert again.run_probe(["--version"]).returncode == 0
    assert installed.stat().st_size > 1000


def test_jobs_a_former_session_left_are_ended_on_open(board: Board, tmp_path: Path,
                                                      short_remote: Path) -> None:
    """rtbench died with a load running on the board (its watchdog has not fired yet):
    the next session that opens the line kills it and removes its directory."""
    tty = board("exec busybox sh -i")
    remote = short_remote
    token = f"rtbench-orphan-{os.getpid()}-{time.monotonic_ns()}"
    with open_target(f"serial://{tty}?dir={remote}", provider=board_probes()) as target:
        assert isinstance(target, SerialTarget)
        target.expect_loads_for(600)
        target.start_command(f"while :; do sleep 1; done # {token}")
        assert board_processes(token) and list(remote.glob("job-*"))
        # closed without stopping the job, as a killed rtbench would leave it
    assert board_processes(token)
    with open_target(f"serial://{tty}?dir={remote}", provider=board_probes()):
        deadline = time.monotonic() + 10
        while board_processes(token) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert board_processes(token) == []
        assert not list(remote.glob("job-*"))


def test_interrupted_run_stops_the_board_jobs(board: Board, tmp_path: Path,
                                              short_remote: Path) -> None:
    """Ctrl-C while a scenario's loads run as jobs on the board: the run is stored as
    interrupted and the jobs are gone."""
    tty = board("exec busybox sh -i")
    token = f"rtbench-sigint-{os.getpid()}-{time.monotonic_ns()}"
    suite = tmp_path / "serial-loads.toml"
    # the loaded scenario alone, lasting: its jobs run within seconds of the start
    suite.write_text(LOADS_SUITE.format(token=token)
                     .replace('[[scenarios]]\nname = "idle"\n\n', "")
                     .replace('duration = "2s"', 'duration = "30s"'))
    remote = short_remote
    run = subprocess.Popen([sys.executable, "-m", "rtbench", "run", str(suite), "--target",
                            f"serial://{tty}?dir={remote}", "--policy", "other",
                            *serial_probe_args()],
                           env=cli_env(tmp_path), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while not board_processes(token) and run.poll() is None \
                and time.monotonic() < deadline:
            time.sleep(0.2)
        assert board_processes(token), "the shell-command load never started"
        run.send_signal(signal.SIGINT)
        out, err = run.communicate(timeout=60)
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
    assert run.returncode == 4, err + out
    (stored,) = stored_runs(cli_db(tmp_path))
    assert stored.status == "interrupted"
    assert board_processes(token) == [] and board_processes(str(remote)) == []
    assert not list(remote.glob("job-*"))


def counting_round_trips(target: SerialTarget,
                         monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The commands target sends on its line from now on (each one round trip)."""
    sent: list[str] = []
    real_run = SerialTarget.run

    def counted(self: SerialTarget, command: str, timeout_s: float = 30.0) -> Any:
        sent.append(command)
        return real_run(self, command, timeout_s)

    monkeypatch.setattr(SerialTarget, "run", counted)
    return sent


def started_instances(marks: Path) -> list[int]:
    """The pids of the shell-command load instances that marked their start in marks."""
    return sorted(int(p.name) for p in marks.iterdir()) if marks.exists() else []


def alive(pid: int) -> bool:
    """True while a process of that pid exists."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def test_a_50_instance_command_load_is_one_job_started_and_stopped_in_one_round_trip(
        board: Board, tmp_path: Path, short_remote: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """issue 34: each of a command load's 50 instances used to be its own board job,
    started and killed with its own round trips (300 of loongson2f's, minutes on a slow
    board): now the runner's load group starts them as one job (one round trip) and
    stops the scenario's command jobs in one; all 50 run, none is left after."""
    from rtbench.run.loads import LoadGroup
    from rtbench.run.pump import Pump
    from rtbench.suites.model import LoadSpec

    tty = board("exec busybox sh -i")
    marks = tmp_path / "marks"
    marks.mkdir()
    command = f"touch {marks}/$$; exec sleep 600"
    with open_target(f"serial://{tty}?dir={short_remote}", provider=board_probes()) as target:
        assert isinstance(target, SerialTarget)
        target.expect_loads_for(60)
        sent = counting_round_trips(target, monkeypatch)
        group = LoadGroup(target, Pump())
        group.start((LoadSpec(command=command, instances=50),
                     LoadSpec(command=f"touch {marks}/$$; exec sleep 601", instances=2)))
        assert len(sent) == 2, sent  # one start per command load, whatever its instances
        deadline = time.monotonic() + 60
        while len(started_instances(marks)) < 52 and time.monotonic() < deadline:
            time.sleep(0.1)
        pids = started_instances(marks)
        assert len(pids) == 52 and all(alive(pid) for pid in pids)
        assert len(group.summary()) == 52
        assert all(entry["instances"] == 1 for entry in group.summary())
        assert len(list(short_remote.glob("job-*"))) == 2
        del sent[:]
        group.stop()
        assert len(sent) == 1, sent  # both jobs killed and removed together
        deadline = time.monotonic() + 10
        while any(alive(pid) for pid in pids) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not any(alive(pid) for pid in pids)
        assert not list(short_remote.glob("job-*"))
        assert board_processes(str(short_remote)) == []
        assert target.run("echo free").stdout == "free\n"


def test_a_batched_command_job_still_ends_itself_at_its_watchdog(
        board: Board, tmp_path: Path, short_remote: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """rtbench gone without stopping them: every instance of a batched command job dies
    with the job's watchdog (the scenario's time plus the margin)."""
    from rtbench.targets import serial

    tty = board("exec busybox sh -i")
    marks = tmp_path / "marks"
    marks.mkdir()
    monkeypatch.setattr(serial, "WATCHDOG_MARGIN_S", 3.0)
    with open_target(f"serial://{tty}?dir={short_remote}", provider=board_probes()) as target:
        assert isinstance(target, SerialTarget)
        target.expect_loads_for(0)
        procs = target.start_commands(f"touch {marks}/$$; exec sleep 600", None, 5)
        assert len(procs) == 5 and len({id(p) for p in procs}) == 1
        deadline = time.monotonic() + 30
        while len(started_instances(marks)) < 5 and time.monotonic() < deadline:
            time.sleep(0.1)
        pids = started_instances(marks)
        assert len(pids) == 5
        deadline = time.monotonic() + 30
        while any(alive(pid) for pid in pids) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not any(alive(pid) for pid in pids)
        target.stop_commands(procs)
        assert not list(short_remote.glob("job-*"))
