"""A board on a serial console: `serial:///dev/ttyUSB0?baud=115200[&dir=PATH]` (pyserial).

rtbench finds the board's shell (logging in when a prompt asks, with RTBENCH_SERIAL_USER
and RTBENCH_SERIAL_PASSWORD from the environment; nothing is stored), turns echo and the
prompt off and frames every command with markers the shell computes (`$((K+1))`), so
neither an echo nor a stray prompt is ever taken for output.  One process runs at a
time in the foreground of the line (the test); loads run next to it as background jobs
of the board's shell (rtbench.targets._serialjob).  Lines that are not rtprobe's NDJSON
(kernel console messages) are kept as the board's log lines, never parse errors.
"""

from __future__ import annotations

import base64
import contextlib
import gzip
import os
import random
import re
import shlex
import termios
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import parse_qs, urlsplit

from rtbench.core.boundedrun import COMMAND_OUTPUT_MAX_BYTES
from rtbench.rtprobe.provider import ProbeProvider
from rtbench.targets._board import BoardTarget
from rtbench.targets._serialjob import (
    COMMAND_JOB,
    DEFAULT_LIFETIME_S,
    PROBE_JOB,
    WATCHDOG_MARGIN_S,
    SerialJob,
    stale_jobs_command,
    stop_jobs,
)
from rtbench.targets._serialnice import (
    level_script,
    parse_raise,
    raise_command,
    restore_command,
)
from rtbench.targets._shell import DEFAULT_REMOTE_DIR
from rtbench.targets.base import (
    CommandResult,
    ProbeProcess,
    Target,
    TargetError,
    TargetLost,
    TargetUsageError,
)

DEFAULT_BAUD = 115200
# Seconds to find a shell (a board may still be booting).
SHELL_TIMEOUT_S = 60.0
# Longest command line sent (busybox's line editor keeps 1024 characters).
MAX_LINE = 1000
# Bytes of the probe per pushed line (base64 grows it by 4/3: 640 characters).
PUSH_CHUNK = 480
# Files for a command's stderr and exit code, named once per session in shell variables
# (set with the sync line), which keeps every framed line short.
ERR_FILE = "$RTBE"
RC_FILE = "$RTBR"
# They live in a private directory of the session (mktemp -d: mode 0700, a new name), not
# as pid-named files in /tmp that another user could plant as symlinks; without mktemp, a
# directory made with mkdir -m 700 (which fails on a name that exists); without either,
# a command's stderr is not kept.  close() removes the directory.
SESSION_VARS = ("{ [ -n \"$RTBD\" ] && [ -d \"$RTBD\" ]; } || RTBD=$(mktemp -d 2>/dev/null) "
                "|| { RTBD=${TMPDIR:-/tmp}/.rtbench.$$; "
                "mkdir -m 700 \"$RTBD\" 2>/dev/null || RTBD=; }; "
                "if [ -n \"$RTBD\" ]; then RTBE=$RTBD/err; RTBR=$RTBD/rc; "
                "else RTBE=/dev/null; RTBR=/dev/null; fi")
# (never `rm -f /dev/null`: only files in the session's own directory are removed)
CLEAR_FILES = "[ -z \"$RTBD\" ] || rm -f $RTBE $RTBR"
SESSION_CLEANUP = "[ -z \"$RTBD\" ] || rm -rf \"$RTBD\"; RTBD="
# A kernel console message: "[   12.345678] text".
KERNEL_LINE = re.compile(rb"\[\s*\d+\.\d+\]")

# an environment variable's name (password_env = "VAR" of a fleet inventory)
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class SerialLink:
    """The port: bytes in and out, complete lines (CR removed) as they arrive."""

    def __init__(self, port: Any) -> None:
        self.port = port
        self.buffer = b""
        self.log: list[str] = []

    def write(self, data: bytes) -> None:
        """Send data (blocking until written)."""
        try:
            self.port.write(data)
            self.port.flush()
        except (OSError, termios.error) as exc:
            raise TargetLost(f"serial line: write failed ({exc})") from exc

    def read(self) -> bytes:
        """Bytes waiting now (never blocks)."""
        try:
            waiting = self.port.in_waiting
            return bytes(self.port.read(waiting)) if waiting else b""
        except (OSError, termios.error) as exc:
            raise TargetLost(f"serial line: read failed ({exc})") from exc

    def fileno(self) -> int:
        """The port's descriptor (for select)."""
        return int(self.port.fileno())

    def lines(self, timeout_s: float) -> list[bytes]:
        """Complete lines that arrive within timeout_s (at least one unless it times out)."""
        deadline = time.monotonic() + timeout_s
        while True:
            self.buffer += self.read()
            if len(self.buffer) > COMMAND_OUTPUT_MAX_BYTES and b"\n" not in self.buffer:
                raise TargetError(f"serial line: a line longer than "
                                  f"{COMMAND_OUTPUT_MAX_BYTES >> 20} MiB arrived; the board "
                                  "prints without end (check its console)")
            if b"\n" in self.buffer:
                *done, self.buffer = self.buffer.split(b"\n")
                return [line.replace(b"\r", b"") for line in done]
            if time.monotonic() >= deadline:
                return []
            time.sleep(0.005)


def _marker(k: int, step: int, tag: str) -> tuple[str, bytes]:
    """(what the command line says, what the shell prints) for one marker."""
    return f"RTB$(({k}+{step})){tag}", f"RTB{k + step}{tag}".encode()


# sysinfo `transport` of a board rtbench reaches on its serial console
TRANSPORT_SERIAL = "serial console"


class SerialTarget(BoardTarget):
    """A board reached on a serial console."""

    schemes: ClassVar[tuple[str, ...]] = ("serial",)
    uri_forms: ClassVar[tuple[str, ...]] = ("serial:///dev/ttyX?baud=115200",)
    help_order: ClassVar[int] = 20
    inventory_keys: ClassVar[tuple[str, ...]] = ("login", "password_env")
    push_reports_progress = True
    wants_small_probe = True

    def __init__(self, device: str, *, baud: int = DEFAULT_BAUD,
                 provider: ProbeProvider | None = None,
                 remote_dir: str = DEFAULT_REMOTE_DIR, login: str | None = None,
                 password: str | None = None) -> None:
        super().__init__(provider=provider, remote_dir=remote_dir)
        # this board's login (a fleet inventory gives one per board); else the environment
        self.login = login
        self.password = password
        self.device = device
        self.baud = baud
        self.link: SerialLink | None = None
        self._busy = False
        self.shell_timeout_s = SHELL_TIMEOUT_S
        self._console_level: str | None = None
        # (the console shell's own nice level, levels it was raised) while raised, and
        # the board's script that starts a command back at that level
        self._raised: tuple[int, int] | None = None
        self._level_path = ""
        self._taskset: bool | None = None
        self._job_lifetime_s = DEFAULT_LIFETIME_S
        # what rtbench is doing on the line, for the words of a board that stops answering
        self._doing = "running a command"
        # set once the board stopped answering: every later command fails at once with it
        self._silent: str | None = None

    @classmethod
    def inventory_options(cls, entry: Mapping[str, Any], base_dir: Path,
                          env: Mapping[str, str]) -> dict[str, Any]:
        """login = "NAME" and password_env = "VAR": the console login, and the
        environment variable that holds its password (never the password itself)."""
        options: dict[str, Any] = {}
        if "login" in entry:
            login = entry["login"]
            if not isinstance(login, str) or not login or not login.isprintable():
                raise TargetUsageError("login: write the login name as a string")
            options["login"] = login
        if "password_env" in entry:
            var = entry["password_env"]
            if not isinstance(var, str) or not ENV_NAME.match(var):
                raise TargetUsageError("password_env: name an environment variable "
                                       "(letters, digits, _)")
            if var not in env:
                raise TargetUsageError(f"password_env: the environment variable {var} is "
                                       "not set; export it before the fleet runs")
            options["password"] = env[var]
        return options

    @classmethod
    def from_uri(cls, uri: str, *, provider: ProbeProvider | None = None,
                 options: dict[str, Any] | None = None) -> Target:
        """serial:///dev/ttyX[?baud=N&dir=PATH]; options may give this board's `login`
        and `password` (else RTBENCH_SERIAL_USER and RTBENCH_SERIAL_PASSWORD)."""
        parts = urlsplit(uri)
        if parts.scheme != "serial" or parts.netloc or not parts.path.startswith("/"):
            raise TargetUsageError(f"target {uri!r}: expected serial:///dev/ttyX?baud=115200")
        query = parse_qs(parts.query)
        unknown = sorted(set(query) - {"baud", "dir"})
        if unknown:
            raise TargetUsageError(f"target {uri!r}: unknown option {unknown[0]!r} "
                                   "(known: baud, dir)")
        text = query.get("baud", [str(DEFAULT_BAUD)])[-1]
        if not text.isdigit() or int(text) <= 0:
            raise TargetUsageError(f"target {uri!r}: baud must be a positive number")
        remote_dir = query.get("dir", [DEFAULT_REMOTE_DIR])[-1]
        if not remote_dir.startswith("/"):
            raise TargetUsageError(f"target {uri!r}: dir must be an absolute path")
        opts = options or {}
        return cls(parts.path, baud=int(text), provider=provider, remote_dir=remote_dir,
                   login=opts.get("login"), password=opts.get("password"))

    def sysinfo(self) -> dict[str, Any]:
        """The board's facts, and that rtbench talks to it over its serial console
        (`transport`): the console's interrupts in a trace are rtbench's own traffic."""
        return {**super().sysinfo(), "transport": TRANSPORT_SERIAL}

    @property
    def name(self) -> str:
        """serial:///dev/ttyX?baud=N."""
        return f"serial://{self.device}?baud={self.baud}"

    # --- open / close ----------------------------------------------------------------

    def open(self) -> None:
        """Open the port, find the shell, quieten it, push the probe."""
        self.link = SerialLink(self._open_port())
        try:
            self._find_shell()
            with self.doing("checking its shell"):
                self._check_shell()
            with self.doing("lowering the kernel's console log level"):
                self._quiet_console()
            # the line is ours alone (opened exclusively): jobs found now are a former
            # session's, which would disturb this one's measurements
            with self.doing("ending the load jobs a former session left"):
                self.run(stale_jobs_command(self.remote_dir))
            with self.doing("installing the probe"):
                self._install_probe()
            with self.doing("raising its shell's priority above the loads"):
                self._raise_shell()
        except BaseException:
            self.progress().done("failed")  # a live line ends before the error's
            self.close()
            raise

    def _open_port(self) -> Any:
        """The pyserial port, opened exclusively (a labgrid target supplies its own)."""
        try:
            import serial
        except ImportError as exc:
            raise TargetError("serial targets need pyserial: pip install 'rtbench[serial]'") \
                from exc
        if not os.path.exists(self.device):
            raise TargetError(f"{self.name}: no such device {self.device}")
        try:
            port = serial.Serial(self.device, self.baud, timeout=0, exclusive=True)
        except (serial.SerialException, OSError, ValueError) as exc:
            why = str(exc)
            if "lock" in why.lower() or "busy" in why.lower() or "Resource" in why:
                raise TargetError(f"{self.name}: the port is busy (another program has it "
                                  "open)") from exc
            raise TargetError(f"{self.name}: cannot open ({why[:160]})") from exc
        return port

    def _find_shell(self) -> None:
        """Get to a shell prompt (logging in if asked), then echo and prompts off.

        The sync line is only sent while no login or password prompt is showing, so it
        is never taken for a user name."""
        link = self._link()
        link.write(b"\x03\n")
        k = random.randrange(10**6, 10**7)
        said, want = _marker(k, 1, "S")
        start = time.monotonic()
        deadline = start + self.shell_timeout_s
        next_sync = start + 1.0
        interrupt_at = next_sync + 1.0  # the first sync line follows the ^C above
        seen = b""
        sent_user = sent_password = False
        self.progress().start(f"waiting for the board's shell (booting?), up to "
                              f"{self.shell_timeout_s:g} s")
        while time.monotonic() < deadline:
            now = time.monotonic()
            chunk = link.read()
            seen = (seen + chunk)[-4096:]
            if want in seen:
                self._drain_after(want)
                self.progress().done(f"answered after {now - start:.0f} s")
                return
            self.progress().update(f"{now - start:.0f} s, {len(seen)} bytes seen")
            low = seen.lower()
            tail = low.rstrip()
            # only an answer to a login we sent: boot chatter ("Permission denied" of an
            # init script) on the console is not a refusal
            if (sent_user or sent_password) and (b"incorrect" in low or b"denied" in low):
                raise TargetError(f"{self.name}: login refused; check RTBENCH_SERIAL_USER "
                                  "and RTBENCH_SERIAL_PASSWORD")
            if tail.endswith(b"login:") and not sent_user:
                user = self.login or os.environ.get("RTBENCH_SERIAL_USER")
                if not user:
                    raise TargetError(f"{self.name}: the board asks for a login; set "
                                      "RTBENCH_SERIAL_USER (and RTBENCH_SERIAL_PASSWORD)")
                link.write(user.encode() + b"\n")
                sent_user, seen, next_sync = True, b"", now + 5.0
                interrupt_at = next_sync + 1.0  # no ^C while logging in
            elif tail.endswith(b"password:") and not sent_password:
                password = self.password if self.password is not None \
                    else os.environ.get("RTBENCH_SERIAL_PASSWORD", "")
                link.write(password.encode() + b"\n")
                sent_password, seen, next_sync = True, b"", now + 2.0
                interrupt_at = next_sync + 1.0
            elif now >= next_sync and not tail.endswith((b"login:", b"password:")):
                link.write(f"stty -echo 2>/dev/null; PS1=''; PS2=''; {SESSION_VARS}; "
                           f"echo {said}\n".encode())
                next_sync, interrupt_at = now + 3.0, now + 2.0
            elif now >= interrupt_at and not tail.endswith((b"login:", b"password:")):
                # ^C a second before each later sync line: a sync line that lost a byte
                # on its way (a booting board's UART drops input) can leave a quote
                # open, and the shell would read every later line as more of it (PS2
                # prompts, no marker).  On its own: a shell without line editing
                # flushes the input queued behind a ^C.
                link.write(b"\x03")
                interrupt_at = next_sync + 1.0
            if not chunk:
                time.sleep(0.02)
        self.progress().done("no answer")
        printable = sum(32 <= b < 127 or b in (9, 10, 13) for b in seen)
        if seen and printable < 0.8 * len(seen):
            raise TargetError(f"{self.name}: only garbage on the line; is the baud rate "
                              f"right (?baud=...)?")
        raise TargetError(f"{self.name}: no shell answered in {self.shell_timeout_s:g} s; "
                          "check that the board is powered and booted and that its console "
                          "is on this port")

    def _drain_after(self, want: bytes) -> None:
        """Drop what is left of the line holding want and anything right behind it."""
        link = self._link()
        time.sleep(0.2)
        link.buffer += link.read()
        link.buffer = b""

    def _raise_shell(self) -> None:
        """Raise the console's shell above the loads and keep the script that starts a
        command back at the board's own level (rtbench/targets/_serialnice.py); a board
        that refuses (not root, no renice) keeps its level and nothing changes."""
        raised = parse_raise(self.run(raise_command()).stdout)
        if raised is None:
            return
        path = f"{self.remote_dir.rstrip('/')}/level.sh"
        done = self.run(f"mkdir -p {shlex.quote(self.remote_dir)} && printf '%s\\n' "
                        f"{shlex.quote(level_script(*raised))} > {shlex.quote(path)}")
        if done.returncode != 0:
            self.run(restore_command(*raised))
            return
        self._raised, self._level_path = raised, path

    def _quiet_console(self) -> None:
        """Lower the kernel's console log level to errors while rtbench holds the line
        (restored on close), so boot chatter does not cut command frames; what still
        comes is kept as log lines.  Needs root on the board; skipped otherwise."""
        done = self.run("cat /proc/sys/kernel/printk")
        words = done.stdout.split()
        if done.returncode == 0 and words and words[0].isdigit() \
                and self.run("echo 3 > /proc/sys/kernel/printk").returncode == 0:
            self._console_level = words[0]

    def close(self) -> None:
        """Restore the console log level, turn echo back on and close the port (the
        shell stays logged in)."""
        if self.link is None:
            return
        try:
            if not self._busy and self._console_level is not None:
                self.run(f"echo {self._console_level} > /proc/sys/kernel/printk",
                         timeout_s=5.0)
                self._console_level = None
            if not self._busy and self._raised is not None:
                self.run(restore_command(*self._raised), timeout_s=5.0)
                self._raised = None
        except TargetError:
            pass
        try:
            if not self._busy:
                self.run(SESSION_CLEANUP, timeout_s=5.0)
        except TargetError:
            pass
        try:
            if not self._busy:
                self.link.write(b"stty echo 2>/dev/null\n")
        except TargetError:
            pass
        with contextlib.suppress(OSError):
            self.link.port.close()
        self.link = None

    @contextlib.contextmanager
    def doing(self, what: str) -> Iterator[None]:
        """Name what the commands of the block do ("starting load cpu"), for the words
        said when the board stops answering during it."""
        before, self._doing = self._doing, what
        try:
            yield
        finally:
            self._doing = before

    def _stopped_answering(self, timeout_s: float) -> TargetLost:
        """The board gave no answer: the run ends (lost) with these words, and every
        later command on the line fails at once with them (no minute-long waits on a
        dead console)."""
        self._silent = (f"{self.name}: the board stopped answering its console while "
                        f"{self._doing} (nothing for {timeout_s:g} s); it may have hung "
                        "or rebooted")
        return TargetLost(self._silent)

    def _link(self) -> SerialLink:
        """The open link, else TargetError."""
        if self.link is None:
            raise TargetError(f"{self.name}: not opened")
        return self.link

    # --- commands --------------------------------------------------------------------

    def _frame(self, body: str) -> tuple[str, bytes, bytes, bytes]:
        """The command line running body framed by markers, and the three markers."""
        k = random.randrange(10**6, 10**7)
        (b_said, b_want), (e_said, e_want), (f_said, f_want) = (
            _marker(k, 1, "B"), _marker(k, 2, "E"), _marker(k, 3, "F"))
        line = (f"echo {b_said}; {body}; echo {e_said} $rtb_rc; "
                f"cat {ERR_FILE} 2>/dev/null; {CLEAR_FILES}; echo {f_said}\n")
        return line, b_want, e_want, f_want

    def run(self, command: str, timeout_s: float = 30.0) -> CommandResult:
        """Run a short /bin/sh command on the board to completion."""
        link = self._link()
        if self._silent is not None:
            raise TargetLost(self._silent)
        if self._busy:
            raise TargetError(f"{self.name}: the line is busy with a running process")
        body = f"( {command} ) </dev/null 2>{ERR_FILE}; rtb_rc=$?"
        line, b_want, e_want, f_want = self._frame(body)
        if len(line) > MAX_LINE:
            raise TargetError(f"{self.name}: command too long for a serial line "
                              f"({len(line)} > {MAX_LINE} characters)")
        link.write(line.encode())
        out: list[bytes] = []
        err: list[bytes] = []
        state = "before"
        rc = -1
        deadline = time.monotonic() + timeout_s
        kept = 0
        while time.monotonic() < deadline:
            for raw in link.lines(0.2):
                if state != "before":
                    kept += len(raw) + 1
                    if kept > COMMAND_OUTPUT_MAX_BYTES:
                        raise TargetError(f"{self.name}: `{command[:60]}` printed more than "
                                          f"{COMMAND_OUTPUT_MAX_BYTES >> 20} MiB, the most "
                                          "rtbench keeps of a command")
                if state == "before":
                    if raw.endswith(b_want):
                        state = "out"
                elif state == "out":
                    if raw.startswith(e_want):
                        words = raw.split()
                        rc = int(words[1]) if len(words) > 1 and words[1].isdigit() else -1
                        state = "err"
                    else:
                        out.append(raw)
                elif state == "err":
                    if raw.startswith(f_want):
                        return CommandResult(rc, _text(out), _text(err))
                    err.append(raw)
        raise self._stopped_answering(timeout_s)

    def _send_file(self, data: bytes, remote: str) -> None:
        """Write data to remote in base64 lines, gzip-compressed where the board has
        gunzip (printf octal escapes where it lacks base64)."""
        with self.doing(f"pushing {remote} ({len(data) // 1024} KiB)"):
            self._send_file_now(data, remote)

    def _send_file_now(self, data: bytes, remote: str) -> None:
        """_send_file(), its commands named."""
        q = shlex.quote(remote)
        tools = self.run(f": > {q} && for t in base64 gunzip; do command -v $t >/dev/null "
                         f"&& echo $t; done")
        if tools.returncode != 0 and not tools.stdout:
            raise TargetError(f"{self.name}: cannot write {remote} "
                              f"({tools.stderr.strip()[:160]})")
        have = set(tools.stdout.split())
        use_b64 = "base64" in have
        packed = use_b64 and "gunzip" in have
        payload = gzip.compress(data, mtime=0) if packed else data
        into = shlex.quote(f"{remote}.gz") if packed else q
        if packed:
            self.run(f": > {into}")
        step = PUSH_CHUNK if use_b64 else PUSH_CHUNK // 4
        began = time.monotonic()
        for start in range(0, len(payload), step):
            elapsed = time.monotonic() - began
            rate = start / elapsed / 1024 if elapsed > 0 else 0.0
            self.progress().update(f"{start // 1024}/{len(payload) // 1024} KiB"
                                   f"{' gzip' if packed else ''}, {rate:.1f} KiB/s")
            chunk = payload[start:start + step]
            if use_b64:
                command = f"echo {base64.b64encode(chunk).decode()} | base64 -d >> {into}"
            else:
                text = "".join(f"\\{b:03o}" for b in chunk)
                command = f"printf '{text}' >> {into}"
            done = self.run(command)
            if done.returncode != 0:
                raise TargetError(f"{self.name}: writing {remote} failed "
                                  f"({done.stderr.strip()[:160]})")
        if packed:
            done = self.run(f"gunzip -c {into} > {q}; rc=$?; rm -f {into}; exit $rc")
            if done.returncode != 0:
                raise TargetError(f"{self.name}: unpacking {remote} failed "
                                  f"({done.stderr.strip()[:160]})")

    def _start_remote(self, command: str) -> ProbeProcess:
        """Start a command in the foreground of the board's shell (one at a time)."""
        link = self._link()
        if self._busy:
            raise TargetError(f"{self.name}: a serial line runs one foreground process at "
                              "a time, and one is running")
        # The group survives ^C (it traps INT/QUIT); the command gets them; cat, which
        # turns the terminal into a pipe for rtprobe's NDJSON, ignores them.
        body = (f"{{ trap : INT QUIT; {command} </dev/null 2>{ERR_FILE}; echo $? > {RC_FILE}; "
                f"}} | (trap '' INT QUIT; exec cat); rtb_rc=$(cat {RC_FILE} 2>/dev/null)")
        line, b_want, e_want, f_want = self._frame(body)
        self._busy = True
        link.write(line.encode())
        return SerialProcess(self, b_want, e_want, f_want)

    def start_probe(self, args: list[str], cpus: str | None = None) -> ProbeProcess:
        """Start rtprobe on the board (taskset when cpus is given and it exists); a load
        (`rtprobe load ...`) runs as a background job of the board's shell."""
        words = [self._probe_path(args), *args]
        if cpus and self._has_taskset():
            words = ["taskset", "-c", cpus, *words]
        if args[:1] == ["load"]:
            label = f"load {args[1]}" if len(args) > 1 else "a load"
            with self.doing(f"starting {label}"):
                return SerialJob.start(self, self.remote_dir, self._job_lifetime_s,
                                       PROBE_JOB, words, builtin=True, label=label)
        words = [*self.level_prefix(), *words]
        return self._start_remote(" ".join(shlex.quote(w) for w in words))

    def level_prefix(self) -> list[str]:
        """Words that run a command (rtprobe, a load's job) back at the board's own nice
        level, below the console's shell (none when the shell was not raised)."""
        return ["/bin/sh", self._level_path] if self._raised is not None else []

    def start_command(self, command: str, cpus: str | None = None) -> ProbeProcess:
        """Start a shell-command load as a background job of the board's shell,
        restarted when it ends (pinned with taskset when cpus is given and it exists)."""
        return self.start_commands(command, cpus, 1)[0]

    def start_commands(self, command: str, cpus: str | None = None,
                       instances: int = 1) -> list[ProbeProcess]:
        """Start instances copies of a shell-command load as ONE background job of the
        board's shell (one round trip on the line whatever the count); the job is
        handed back once per instance."""
        label = f"the shell-command load `{_shown(command)}`"
        if instances > 1:
            label += f" ({instances} instances)"
        if cpus and self._has_taskset():
            command = f"exec taskset -c {shlex.quote(cpus)} /bin/sh -c {shlex.quote(command)}"
        with self.doing(f"starting {label}"):
            job = SerialJob.start(self, self.remote_dir, self._job_lifetime_s, COMMAND_JOB,
                                  [str(max(1, instances)), command], builtin=False,
                                  label=label)
        return [job] * max(1, instances)

    def stop_commands(self, procs: list[ProbeProcess]) -> None:
        """Stop shell-command loads together: every job's group killed and its directory
        removed in one round trip (a few when their names outgrow a line)."""
        jobs = [proc for proc in procs if isinstance(proc, SerialJob)]
        with self.doing("stopping the shell-command loads"):
            stop_jobs(self, jobs)
        for proc in procs:
            if not isinstance(proc, SerialJob):
                proc.stop()

    def _has_taskset(self) -> bool:
        """True when the board has taskset (asked once)."""
        if self._taskset is None:
            self._taskset = self.run("command -v taskset").returncode == 0
        return self._taskset

    def line_busy(self) -> bool:
        """True while a foreground process holds the line."""
        return self._busy

    def loads_unsupported(self) -> str | None:
        """Loads run as jobs in their own session: the board needs setsid."""
        if self.run("command -v setsid").returncode != 0:
            return (f"{self.name}: the board has no setsid, which loads on a serial line "
                    "need (busybox setsid or util-linux); add it or use a suite without "
                    "loads")
        return None

    def expect_loads_for(self, seconds: float) -> None:
        """Loads started from now on kill themselves after seconds plus a margin."""
        self._job_lifetime_s = max(0.0, seconds) + WATCHDOG_MARGIN_S

    def _done(self) -> None:
        """The running process finished (its end marker came)."""
        self._busy = False


class SerialProcess(ProbeProcess):
    """The process in the foreground of a serial board's shell."""

    def __init__(self, target: SerialTarget, b_want: bytes, e_want: bytes,
                 f_want: bytes) -> None:
        self.target = target
        self.link = target._link()
        self.wants = (b_want, e_want, f_want)
        self.state = "before"
        self.returncode: int | None = None
        self._lost = False
        self._partial = b""

    def fds(self) -> list[int]:
        """The port's descriptor while the process runs."""
        return [] if self.at_eof() else [self.link.fileno()]

    def read_available(self) -> tuple[bytes, bytes]:
        """(NDJSON lines, everything else) that arrived; never blocks."""
        out: list[bytes] = []
        other: list[bytes] = []
        b_want, e_want, f_want = self.wants
        if self.at_eof():
            return b"", b""
        for raw in self.link.lines(0.0):
            if self.state == "before":
                if raw.endswith(b_want):
                    self.state = "out"
                elif raw.strip():
                    other.append(raw)
            elif self.state == "out":
                if raw.startswith(e_want):
                    words = raw.split()
                    self.returncode = int(words[1]) if len(words) > 1 and \
                        words[1].isdigit() else 255
                    self.state = "err"
                else:
                    self._partial = _split_console(raw, self._partial, out, other)
            elif self.state == "err":
                if raw.startswith(f_want):
                    self.state = "done"
                    self.target._done()
                    break
                other.append(raw)
        self.link.log.extend(line.decode(errors="replace") for line in other)
        return (b"".join(line + b"\n" for line in out),
                b"".join(line + b"\n" for line in other))

    def at_eof(self) -> bool:
        """True once the end marker came (or the line was given up as lost)."""
        return self.state == "done" or self._lost

    def poll(self) -> int | None:
        """The exit code once the end marker came."""
        return self.returncode if self.state == "done" else (255 if self._lost else None)

    def interrupt(self) -> None:
        """^C on the line: SIGINT to the foreground process."""
        if not self.at_eof():
            self.link.write(b"\x03")

    def stop(self, grace_s: float = 2.0) -> None:
        """^C, then ^\\ (SIGQUIT); a line that then stays silent is lost."""
        for key, wait_s in ((b"\x03", grace_s), (b"\x1c", 3.0), (b"\x1c", 5.0)):
            if self.at_eof():
                return
            self.link.write(key)
            deadline = time.monotonic() + wait_s
            while not self.at_eof() and time.monotonic() < deadline:
                self.read_available()
                time.sleep(0.05)
        if not self.at_eof():
            self._lost = True

    @property
    def lost(self) -> bool:
        """True when the process never ended on the line (board gone or rebooted)."""
        return self._lost

    @property
    def lost_why(self) -> str | None:
        """The board's silence in words, once the process was given up as lost."""
        if not self._lost:
            return None
        return self.target._silent or (
            f"{self.target.name}: rtprobe gave no end mark on the console after ^C and "
            "^\\; the board may have hung or rebooted")


def _split_console(raw: bytes, partial: bytes, out: list[bytes],
                   other: list[bytes]) -> bytes:
    """Sort one line into NDJSON (out) or board log (other); returns the head of a record
    that a kernel console message cut in two, to be joined with the next line."""
    line = raw.strip()
    if partial:
        if line and not line.startswith(b"{") and line.endswith(b"}") \
                and not KERNEL_LINE.search(line):
            out.append(partial + line)
            return b""
        other.append(partial)
    if not line:
        return b""
    if line.startswith(b"{") and line.endswith(b"}"):
        out.append(line)
        return b""
    match = KERNEL_LINE.search(line)
    if match and line.startswith(b"{"):
        other.append(line[match.start():])
        return line[:match.start()]
    other.append(line)
    return b""


def _shown(command: str, width: int = 40) -> str:
    """A user's command as said in a message: control characters out, at most width
    characters (cut with an ellipsis)."""
    clean = "".join(ch if ch.isprintable() else " " for ch in command).strip()
    return clean if len(clean) <= width else clean[:width - 1] + "…"


def _text(lines: list[bytes]) -> str:
    """Lines joined back into text."""
    return "".join(line.decode(errors="replace") + "\n" for line in lines)
