"""A board shared through labgrid: `labgrid:PLACE` (a coordinator's place) or
`labgrid-env:FILE.yaml[:TARGET]` (a labgrid environment file, no coordinator).

labgrid (Pengutronix, `pip install 'rtbench[labgrid]'`) is the engine many embedded
labs share their boards with: a coordinator knows every place, reservations keep people
and CI from colliding, exporters announce each board's resources, and drivers give a
shell on it.  rtbench lets labgrid do all of that and then measures exactly as its own
ssh and serial targets do:

- **where the board is**: for `labgrid:PLACE` rtbench reserves the place (a reservation
  whose filter is the place name: it waits in the coordinator's queue, see `?wait=`),
  acquires it, and builds a labgrid `Target` from the resources the place's exporters
  announce (as `labgrid-client env` shows them).  For `labgrid-env:` the environment file
  gives the `Target` (role `main` unless `:TARGET` names another), resources and drivers
  as configured there.
- **the shell**: a `NetworkService` is reached with labgrid's `SSHDriver` (its keyfile,
  username, password and proxying through the exporter apply); once it is active,
  rtbench's ssh transport (rtbench.targets.ssh) sends every command through the
  driver's own control master.  Otherwise a serial console is opened by labgrid's
  `SerialDriver` (a local `SerialPort`/`RawSerialPort`, or a `NetworkSerialPort` that an
  exporter serves over ser2net in raw mode); a `ShellDriver` configured in the
  environment logs in first, then rtbench's serial transport (rtbench.targets.serial)
  frames its commands on that same port.  A board with both is measured over ssh, where
  loads can run next to a test.
- **power**: `--power-cycle` cycles the board with labgrid's `PowerProtocol` driver (one
  configured in the environment, or the driver for a place's power resource) after the
  place is held and before rtbench connects; never implicitly.

Probe push, streaming, the board's run lock and loss handling are the ssh and serial
targets' own, unchanged (the ssh link counts as lost when labgrid's control master does:
labgrid keeps it alive with ServerAliveInterval=15).  The place is released (and the
reservation dropped) when the target closes, after a failed open included.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import select
import socket
import struct
import subprocess
import termios
import time
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import parse_qs, unquote

from rtbench.rtprobe.provider import ProbeProvider
from rtbench.targets._labgrid_place import (
    Coordinator,
    HeldPlace,
    coordinator_address,
    reserve_place,
)
from rtbench.targets._shell import DEFAULT_REMOTE_DIR
from rtbench.targets.base import (
    CommandResult,
    ProbeProcess,
    Target,
    TargetError,
    TargetUsageError,
)
from rtbench.targets.progress import Progress
from rtbench.targets.serial import SerialTarget
from rtbench.targets.ssh import ALIVE_COUNT, ALIVE_INTERVAL_S, CONNECT_TIMEOUT_S, SshTarget

# A place's power resource -> the labgrid driver that switches it.
PLACE_POWER_DRIVERS = {
    "NetworkPowerPort": "NetworkPowerDriver",
    "PDUDaemonPort": "PDUDaemonDriver",
    "NetworkUSBPowerPort": "USBPowerDriver",
    "NetworkSiSPMPowerPort": "SiSPMPowerDriver",
    "TasmotaPowerPort": "TasmotaPowerDriver",
    "NetworkYKUSHPowerPort": "YKUSHPowerDriver",
}


def _need_labgrid(where: str) -> None:
    """TargetError naming the extra to install unless labgrid can be imported."""
    try:
        import labgrid  # noqa: F401
    except ImportError as exc:
        raise TargetError(f"{where}: labgrid targets need labgrid: pip install "
                          "'rtbench[labgrid]'") from exc


def _one_line(exc: BaseException) -> str:
    """The first line of an exception's text (labgrid's can be long)."""
    text = str(getattr(exc, "msg", "") or exc)
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return lines[0][:200] if lines else type(exc).__name__


class LabgridTarget(Target):
    """A board whose resources and drivers come from labgrid."""

    schemes: ClassVar[tuple[str, ...]] = ("labgrid", "labgrid-env")
    uri_forms: ClassVar[tuple[str, ...]] = ("labgrid:PLACE", "labgrid-env:FILE.yaml[:TARGET]")
    help_order: ClassVar[int] = 30
    # power_cycle = true: cycle its power before the run (the fleet reads it itself)
    inventory_keys: ClassVar[tuple[str, ...]] = ("power_cycle",)

    @classmethod
    def board_of_uri(cls, uri: str) -> str | None:
        """labgrid:PLACE: the place (a labgrid-env: file names no board)."""
        if not uri.startswith("labgrid:"):
            return None
        return uri[len("labgrid:"):] or None

    def __init__(self, *, place: str | None = None, env_file: Path | None = None,
                 role: str = "main", coordinator: str | None = None, wait_s: float = 0.0,
                 provider: ProbeProvider | None = None,
                 remote_dir: str = DEFAULT_REMOTE_DIR) -> None:
        self.place = place
        self.env_file = env_file
        self.role = role
        self.coordinator = coordinator_address(coordinator) if place else None
        self.wait_s = wait_s
        self.provider = provider
        self.remote_dir = remote_dir
        self._held: HeldPlace | None = None
        self._release_on_close = False
        self._power_cycle = False
        self._lg: Any = None
        self._board: SshTarget | SerialTarget | None = None
        self._progress: Progress | None = None

    def progress(self) -> Progress:
        """The live lines of this board's slow steps (reserving, building, pushing)."""
        if self._progress is None:
            self._progress = Progress(self.name)
        return self._progress

    def set_progress(self, progress: Progress) -> None:
        """Show this board's slow steps through progress instead (a fleet, a test)."""
        self._progress = progress

    @classmethod
    def from_uri(cls, uri: str, *, provider: ProbeProvider | None = None,
                 options: dict[str, Any] | None = None) -> Target:
        """labgrid:PLACE[?coordinator=HOST:PORT&wait=S&dir=PATH] or
        labgrid-env:FILE.yaml[:TARGET][?dir=PATH]."""
        scheme, rest = uri.split(":", 1)
        body, _, query_text = rest.partition("?")
        query = parse_qs(query_text, keep_blank_values=True)
        known = {"dir"} | ({"coordinator", "wait"} if scheme == "labgrid" else set())
        unknown = sorted(set(query) - known)
        if unknown:
            raise TargetUsageError(f"target {uri!r}: unknown option {unknown[0]!r} "
                                   f"(known: {', '.join(sorted(known))})")
        remote_dir = query.get("dir", [DEFAULT_REMOTE_DIR])[-1]
        if not remote_dir.startswith("/"):
            raise TargetUsageError(f"target {uri!r}: dir must be an absolute path")
        body = unquote(body)
        if scheme == "labgrid":
            if not body or "/" in body:
                raise TargetUsageError(f"target {uri!r}: expected labgrid:PLACE (a place name "
                                       "as `labgrid-client places` lists it)")
            wait_text = query.get("wait", ["0"])[-1]
            try:
                wait_s = float(wait_text)
            except ValueError:
                wait_s = -1.0
            if not 0 <= wait_s < 1e7:
                raise TargetUsageError(f"target {uri!r}: wait must be a number of seconds")
            return cls(place=body, coordinator=query.get("coordinator", [""])[-1] or None,
                       wait_s=wait_s, provider=provider, remote_dir=remote_dir)
        path, role = body, "main"
        head, sep, tail = body.rpartition(":")
        if sep and head and tail and "/" not in tail:
            path, role = head, tail
        if not path:
            raise TargetUsageError(f"target {uri!r}: expected labgrid-env:FILE.yaml[:TARGET]")
        return cls(env_file=Path(path).expanduser(), role=role, provider=provider,
                   remote_dir=remote_dir)

    @property
    def name(self) -> str:
        """labgrid:PLACE or labgrid-env:FILE:TARGET."""
        if self.place is not None:
            return f"labgrid:{self.place}"
        return f"labgrid-env:{self.env_file}:{self.role}"

    # --- reservation --------------------------------------------------------------

    def reserve(self, wait_s: float = 0.0) -> None:
        """Reserve and acquire the place (waiting up to wait_s while another user has
        it); an environment file has nothing to reserve."""
        if self.place is None or self._held is not None:
            return
        _need_labgrid(self.name)
        assert self.coordinator is not None
        self._held = reserve_place(self.coordinator, self.name, self.place, wait_s,
                                   self.progress())

    def release(self) -> None:
        """Release the place and its reservation (nothing when none is held)."""
        held, self._held = self._held, None
        if held is None:
            return
        with Coordinator(held.coordinator, self.name) as coordinator:
            coordinator.release(held)

    def enable_power_cycle(self) -> None:
        """Cycle the board's power (labgrid's power driver) when opened."""
        self._power_cycle = True

    # --- open / close --------------------------------------------------------------

    def open(self) -> None:
        """Hold the place, build labgrid's Target, cycle power if asked, connect."""
        _need_labgrid(self.name)
        if self.place is not None and self._held is None:
            self.reserve(self.wait_s)
            self._release_on_close = True
        try:
            self._lg = self._labgrid_target()
            if self._power_cycle:
                self._cycle_power()
            self._board = self._transport()
            self._board.set_progress(self.progress())
            self._board.open()
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        """Close the shell, deactivate labgrid's drivers, release what open() held."""
        try:
            if self._board is not None:
                board, self._board = self._board, None
                board.close()
        finally:
            if self._lg is not None:
                lg, self._lg = self._lg, None
                # a driver that fails to stop is gone anyway
                with contextlib.suppress(Exception):
                    lg.deactivate_all_drivers()
            if self._release_on_close:
                self._release_on_close = False
                self.release()

    def _labgrid_target(self) -> Any:
        """labgrid's Target: from the environment file, or from the held place."""
        from labgrid.exceptions import InvalidConfigError

        if self.place is None:
            from labgrid import Environment

            assert self.env_file is not None
            if not self.env_file.is_file():
                raise TargetUsageError(f"{self.name}: no environment file {self.env_file}")
            try:
                env = Environment(config_file=str(self.env_file))
                roles = sorted(env.config.get_targets())
                target = env.get_target(self.role)
            except (InvalidConfigError, OSError, ValueError, TypeError, KeyError) as exc:
                raise TargetUsageError(f"{self.name}: bad labgrid environment "
                                       f"({_one_line(exc)})") from exc
            if target is None:
                raise TargetUsageError(f"{self.name}: no target {self.role!r} in "
                                       f"{self.env_file} (targets: {', '.join(roles) or 'none'})")
            return target
        from labgrid import Target as LabgridTarget_

        assert self._held is not None
        target = LabgridTarget_(self.place)
        with Coordinator(self._held.coordinator, self.name) as coordinator:
            try:
                coordinator.resources(self._held, target)
            except InvalidConfigError as exc:
                raise TargetError(f"{self.name}: {_one_line(exc)}") from exc
        return target

    def _driver(self, protocol: str, classes: dict[str, str]) -> Any:
        """An active-capable driver for protocol: the one configured, else a new one of
        the class mapped from the first resource that has one; None when neither."""
        from labgrid.exceptions import NoDriverFoundError
        from labgrid.factory import target_factory

        try:
            return self._lg.get_driver(protocol, activate=False)
        except NoDriverFoundError:
            pass
        for resource in self._lg.resources:
            name = classes.get(type(resource).__name__)
            if name is not None:
                return target_factory.class_from_string(name)(self._lg, name=None)
        return None

    def _configured(self, name: str) -> Any:
        """The driver of that class configured in the environment, or None."""
        for driver in getattr(self._lg, "drivers", []):
            if type(driver).__name__ == name:
                return driver
        return None

    def _cycle_power(self) -> None:
        """Power-cycle the board through labgrid; TargetUsageError without a driver."""
        driver = self._driver("PowerProtocol", PLACE_POWER_DRIVERS)
        if driver is None:
            where = "place" if self.place else "environment target"
            raise TargetUsageError(f"{self.name}: --power-cycle needs a power driver, and "
                                   f"this {where} has none; leave --power-cycle out or add "
                                   "a power resource/driver")
        try:
            self._lg.activate(driver)
            driver.cycle()
        except Exception as exc:
            raise TargetError(f"{self.name}: power cycle failed ({_one_line(exc)})") from exc

    def _transport(self) -> SshTarget | SerialTarget:
        """rtbench's ssh or serial transport on top of labgrid's driver."""
        ssh = self._driver("SSHDriver", {"NetworkService": "SSHDriver"})
        if ssh is not None:
            return _LabgridSsh(ssh, self.name, provider=self.provider,
                               remote_dir=self.remote_dir)
        qemu = self._configured("QEMUDriver")
        if qemu is not None:
            return _LabgridQemu(qemu, self.name, provider=self.provider,
                                remote_dir=self.remote_dir)
        console = self._driver("SerialDriver", {"SerialPort": "SerialDriver",
                                                "RawSerialPort": "SerialDriver",
                                                "NetworkSerialPort": "SerialDriver"})
        if console is not None:
            return _LabgridSerial(console, self.name, provider=self.provider,
                                  remote_dir=self.remote_dir)
        kinds = ", ".join(sorted({type(r).__name__ for r in self._lg.resources})) or "none"
        raise TargetError(f"{self.name}: no way to a shell: rtbench needs a NetworkService "
                          f"(ssh), a serial port among the resources or a QEMUDriver "
                          f"(has: {kinds})")

    def _open_board(self) -> SshTarget | SerialTarget:
        """The connected transport, else TargetError."""
        if self._board is None:
            raise TargetError(f"{self.name}: not opened")
        return self._board

    # --- Target, through the transport -----------------------------------------------

    def hostname(self) -> str:
        """The board's host name."""
        return self._open_board().hostname()

    def address(self) -> str | None:
        """The board's address as the host reaches it (ssh only)."""
        return self._open_board().address()

    def arch(self) -> str:
        """The board's `uname -m`."""
        return self._open_board().arch()

    def loads_unsupported(self) -> str | None:
        """What the transport says about loads next to a test."""
        return self._open_board().loads_unsupported()

    def expect_loads_for(self, seconds: float) -> None:
        """Passed on to the transport (a serial console's jobs carry a watchdog)."""
        self._open_board().expect_loads_for(seconds)

    def probe_arch(self) -> str:
        """The probe arch of the board."""
        return self._open_board().probe_arch()

    def read_file(self, path: str) -> str:
        """A text file of the board."""
        return self._open_board().read_file(path)

    def run(self, command: str, timeout_s: float = 30.0) -> CommandResult:
        """A short /bin/sh command on the board."""
        return self._open_board().run(command, timeout_s=timeout_s)

    def put_file(self, local: Path, remote: str, mode: int = 0o755) -> None:
        """Copy a host file onto the board."""
        self._open_board().put_file(local, remote, mode)

    def run_probe(self, args: list[str], timeout_s: float = 30.0) -> CommandResult:
        """Run rtprobe on the board to completion."""
        return self._open_board().run_probe(args, timeout_s=timeout_s)

    def start_probe(self, args: list[str], cpus: str | None = None) -> ProbeProcess:
        """Start rtprobe on the board, streaming."""
        return self._open_board().start_probe(args, cpus)

    def start_command(self, command: str, cpus: str | None = None) -> ProbeProcess:
        """Start a shell-command load on the board."""
        return self._open_board().start_command(command, cpus)

    def start_commands(self, command: str, cpus: str | None = None,
                       instances: int = 1) -> list[ProbeProcess]:
        """Start a shell-command load's instances on the board (its transport's way)."""
        return self._open_board().start_commands(command, cpus, instances)

    def stop_commands(self, procs: list[ProbeProcess]) -> None:
        """Stop command loads on the board (its transport's way: together on serial)."""
        self._open_board().stop_commands(procs)

    def probe_version(self) -> str:
        """The version of rtprobe on the board."""
        return self._open_board().probe_version()

    def sysinfo(self) -> dict[str, Any]:
        """The board's facts as its transport gives them (a serial console says so)."""
        return self._open_board().sysinfo()

    def probe_path(self) -> str:
        """Where rtprobe is on the board."""
        return self._board.probe_path() if self._board is not None else "rtprobe"


class _LabgridSsh(SshTarget):
    """rtbench's ssh transport through the control master of labgrid's SSHDriver."""

    schemes: ClassVar[tuple[str, ...]] = ()

    def __init__(self, driver: Any, shown: str, *, provider: ProbeProvider | None,
                 remote_dir: str) -> None:
        service = driver.networkservice
        user = driver.username or service.username
        super().__init__(str(service.address).split("%", 1)[0], user=user or None,
                         port=int(service.port), provider=provider, remote_dir=remote_dir)
        self.driver = driver
        self.shown = shown

    @property
    def name(self) -> str:
        """The labgrid target's name."""
        return self.shown

    def _start_master(self) -> None:
        """Activate labgrid's SSHDriver: it connects (retrying while the board boots)."""
        target = self.driver.target
        try:
            target.activate(self.driver)
        except Exception as exc:
            where = f"{self.host}:{self.port}"
            raise TargetError(f"{self.name}: labgrid's SSHDriver cannot connect to {where} "
                              f"({_one_line(exc)})") from exc
        if not getattr(self.driver, "control", None):
            raise TargetError(f"{self.name}: labgrid's SSHDriver made no control master")

    def _ssh(self, *extra: str) -> list[str]:
        """ssh through labgrid's control socket, with labgrid's own options."""
        argv = [str(getattr(self.driver, "_ssh", "ssh")), *self.driver.ssh_prefix,
                "-o", "BatchMode=yes", "-o", f"ConnectTimeout={CONNECT_TIMEOUT_S}",
                "-o", f"ServerAliveInterval={ALIVE_INTERVAL_S}",
                "-o", f"ServerAliveCountMax={ALIVE_COUNT}"]
        if self.port:
            argv += ["-p", str(self.port)]
        if self.user:
            argv += ["-l", self.user]
        return [*argv, *extra]

    def _master_alive(self) -> bool:
        """True while labgrid's control master answers."""
        if self._dir is None or not getattr(self.driver, "control", None):
            return False
        done = subprocess.run(self._ssh("-O", "check", "--", self.host), stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, timeout=10, check=False)
        return done.returncode == 0


class _LabgridSerial(SerialTarget):
    """rtbench's serial transport on the port that labgrid's SerialDriver opened."""

    schemes: ClassVar[tuple[str, ...]] = ()

    def __init__(self, driver: Any, shown: str, *, provider: ProbeProvider | None,
                 remote_dir: str) -> None:
        port = driver.port
        device = str(getattr(port, "port", "") or "")
        super().__init__(device, baud=int(getattr(port, "speed", 115200)), provider=provider,
                         remote_dir=remote_dir)
        self.driver = driver
        self.shown = shown

    @property
    def name(self) -> str:
        """The labgrid target's name."""
        return self.shown

    def _open_port(self) -> Any:
        """Activate labgrid's SerialDriver (and a configured ShellDriver, which logs in);
        their port is the one rtbench then talks on."""
        from labgrid.exceptions import NoDriverFoundError
        from labgrid.resource import NetworkSerialPort

        target = self.driver.target
        resource = self.driver.port
        if isinstance(resource, NetworkSerialPort):
            if resource.protocol != "raw":
                raise TargetError(f"{self.name}: the serial port is served as "
                                  f"{resource.protocol}; rtbench needs it in raw mode "
                                  "(ser2net raw, NetworkSerialPort protocol: raw)")
        else:
            if self.device and not os.path.exists(self.device):
                raise TargetError(f"{self.name}: no such device {self.device}")
            # the flock the serial target takes: one program on the port at a time
            self.driver.serial.exclusive = True
        try:
            target.activate(self.driver)
            try:
                shell = target.get_driver("ShellDriver", activate=False)
            except NoDriverFoundError:
                shell = None
            if shell is not None:
                target.activate(shell)
        except Exception as exc:
            why = _one_line(exc)
            if "lock" in why.lower() or "busy" in why.lower():
                raise TargetError(f"{self.name}: the port is busy (another program has it "
                                  "open)") from exc
            raise TargetError(f"{self.name}: labgrid could not open the console ({why})") \
                from exc
        return self.driver.serial


class _SocketPort:
    """The console socket of labgrid's QEMUDriver as the serial link's port."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        sock.settimeout(30.0)

    def write(self, data: bytes) -> None:
        """Send data (blocking up to 30 s)."""
        self.sock.sendall(data)

    def flush(self) -> None:
        """Nothing: a socket sends at once."""

    @property
    def in_waiting(self) -> int:
        """Bytes to read now; OSError once qemu closed the console (the guest is gone)."""
        raw = fcntl.ioctl(self.sock.fileno(), termios.FIONREAD, b"\0\0\0\0")
        waiting = int(struct.unpack("i", raw)[0])
        if waiting == 0:
            readable, _, _ = select.select([self.sock], [], [], 0)
            if readable and not self.sock.recv(1, socket.MSG_PEEK):
                raise OSError("qemu closed the console (the guest is gone)")
        return waiting

    def read(self, size: int) -> bytes:
        """Up to size bytes that are waiting."""
        return self.sock.recv(size)

    def fileno(self) -> int:
        """The socket's descriptor (for select)."""
        return self.sock.fileno()

    def close(self) -> None:
        """Nothing: the QEMUDriver closes its socket when deactivated."""


# Seconds of a quiet console after the kernel's first line that count as booted.
BOOT_QUIET_S = 5.0


class _LabgridQemu(SerialTarget):
    """A board emulated by labgrid's QEMUDriver (tools/zoo.py writes such environments):
    the driver starts qemu, rtbench's serial transport talks on its console socket.  The
    guest boots when the target opens and is switched off when labgrid's drivers are
    deactivated (the target closes)."""

    schemes: ClassVar[tuple[str, ...]] = ()
    # an emulated guest may take minutes to boot on a busy host
    boot_timeout_s = 300.0

    def __init__(self, driver: Any, shown: str, *, provider: ProbeProvider | None,
                 remote_dir: str) -> None:
        super().__init__(f"qemu:{driver.machine}", provider=provider, remote_dir=remote_dir)
        self.driver = driver
        self.shown = shown
        self.shell_timeout_s = self.boot_timeout_s

    @property
    def name(self) -> str:
        """The labgrid target's name."""
        return self.shown

    def _open_port(self) -> Any:
        """Activate the QEMUDriver and power the guest on; its console socket."""
        target = self.driver.target
        try:
            target.activate(self.driver)
            self.driver.on()
        except Exception as exc:
            raise TargetError(f"{self.name}: labgrid's QEMUDriver could not start the "
                              f"guest ({_one_line(exc)})") from exc
        sock = getattr(self.driver, "_clientsocket", None)
        if sock is None:
            raise TargetError(f"{self.name}: labgrid's QEMUDriver gave no console socket")
        port = _SocketPort(sock)
        self._await_kernel(port)
        return port

    def _await_kernel(self, port: _SocketPort) -> None:
        """Wait, sending nothing, until the guest booted: its kernel's first line came,
        then a prompt or 5 s of quiet.  Bytes sent to an emulated UART while the kernel
        sets it up (Ctrl-C, the shell's sync line) left its receive side stuck (Debian's
        arm64 kernel on qemu's pl011: nothing typed was ever read)."""
        self.progress().start(f"booting the guest, up to {self.boot_timeout_s:g} s")
        start = last = time.monotonic()
        seen = b""
        booted = False
        while time.monotonic() - start < self.boot_timeout_s:
            now = time.monotonic()
            waiting = port.in_waiting
            if waiting:
                seen, last = (seen + port.read(waiting))[-4096:], now
            booted = booted or b"Linux version" in seen
            tail = seen.replace(b"\x1b[6n", b"").rstrip()
            if booted and (tail.endswith((b"#", b"$", b">", b"login:"))
                           or now - last >= BOOT_QUIET_S):
                self.progress().done(f"booted in {now - start:.0f} s")
                return
            self.progress().update(f"{now - start:.0f} s")
            if not waiting:
                time.sleep(0.05)
        self.progress().done("no answer")
        raise TargetError(f"{self.name}: the guest did not boot in {self.boot_timeout_s:g} s "
                          "(check its kernel and console= in the environment file)")
