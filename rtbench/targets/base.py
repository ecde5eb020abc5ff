"""The target interface: where rtprobe, its loads and short shell commands run.

The runner, preflight and the /proc sampler talk only to this interface, so a board
reached over ssh or a serial console is measured exactly like the local machine.  A
target needs nothing but `/bin/sh` and (once pushed) the `rtprobe` binary: everything
here is expressed as rtprobe invocations, shell commands and file reads.

Adding a kind of target is adding one module to rtbench/targets/ that defines a
`Target` subclass with its URI `schemes`; `open_target()` finds it by scheme.  Processes
start through the /bin/sh launchers of rtbench.targets.shell (pin, then open the gate;
EOF on stdin kills the group), which is what makes them die with rtbench anywhere.
"""

from __future__ import annotations

import importlib
import pkgutil
from abc import ABC, abstractmethod
from collections.abc import Mapping
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import urlsplit

from rtbench.rtprobe.provider import ProbeProvider
from rtbench.rtprobe.sysinfo import SYSINFO_ARGS, ProbeAnswerError, sysinfo_of


class TargetError(Exception):
    """The target cannot do what was asked; the message is one line (exit 3)."""


class TargetUsageError(TargetError):
    """The target was named wrongly (bad URI, unknown scheme): exit 2."""


class TargetLost(TargetError):
    """The connection to the target went away (exit 3, run status 'lost')."""


@dataclass(frozen=True)
class CommandResult:
    """What a short command on the target printed and how it ended."""

    returncode: int
    stdout: str
    stderr: str


class ProbeProcess(ABC):
    """A process running on a target (rtprobe, a load, a shell-command load).

    Output arrives through `read_available()`, which never blocks; `fds()` gives the
    descriptors to select() on so that one loop can watch several processes.  `lost`
    turns true when the target connection broke (the process may still be running
    there; a well-behaved target makes it end when its stdin/stdout close).
    """

    @abstractmethod
    def fds(self) -> list[int]:
        """Descriptors that become readable when output (or EOF) is pending."""

    @abstractmethod
    def read_available(self) -> tuple[bytes, bytes]:
        """(stdout, stderr) bytes that arrived since the last call; never blocks."""

    @abstractmethod
    def at_eof(self) -> bool:
        """True once stdout and stderr are both closed."""

    @abstractmethod
    def poll(self) -> int | None:
        """The exit code once the process ended, else None."""

    @abstractmethod
    def interrupt(self) -> None:
        """Ask it to stop cleanly (SIGINT: rtprobe then writes its result)."""

    @abstractmethod
    def stop(self, grace_s: float = 2.0) -> None:
        """End it and everything it started: SIGTERM, then SIGKILL after grace_s."""

    @property
    def lost(self) -> bool:
        """True when the connection to the target broke while it ran."""
        return False

    @property
    def lost_why(self) -> str | None:
        """What the target said of the loss, when lost and it said something."""
        return None


class Target(ABC):
    """A machine that runs rtprobe.  Use as a context manager (open/close)."""

    # URI schemes this class handles ("local", "ssh", "serial", ...)
    schemes: ClassVar[tuple[str, ...]] = ()
    # how a user writes its URIs, as the --target help shows them (one per scheme)
    uri_forms: ClassVar[tuple[str, ...]] = ()
    # where those forms stand in the --target help: smaller first (the local machine 0;
    # a new transport after those rtbench ships, unless it says otherwise)
    help_order: ClassVar[int] = 100
    # the keys a fleet inventory entry of this kind of target may add to name, uri, tags
    # and arch (docs/fleet.md)
    inventory_keys: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def board_of_uri(cls, uri: str) -> str | None:
        """The board a target URI of this kind names, as a stored run's target string
        (None: it names none, and the run is named by its host; bundle.board_of)."""
        return None

    @classmethod
    def inventory_options(cls, entry: Mapping[str, Any], base_dir: Path,
                          env: Mapping[str, str]) -> dict[str, Any]:
        """The from_uri() options an inventory entry's own keys (inventory_keys) give,
        relative paths read from base_dir, secrets from env; TargetUsageError starts with
        the key that is wrong."""
        return {}

    @classmethod
    @abstractmethod
    def from_uri(cls, uri: str, *, provider: ProbeProvider | None = None,
                 options: dict[str, Any] | None = None) -> Target:
        """Make a target from its URI; TargetUsageError names what is wrong.  provider
        gives it its rtprobe (a board without one cannot be opened)."""

    @property
    @abstractmethod
    def name(self) -> str:
        """How the target is stored and shown: "local", "ssh://user@host:port", ..."""

    def open(self) -> None:
        """Connect (and push the probe when needed); a no-op for the local machine."""
        return None

    def close(self) -> None:
        """Release the connection; stop nothing the caller still owns."""
        return None

    def reserve(self, wait_s: float = 0.0) -> None:
        """Claim the board in a shared lab before open() (a labgrid reservation);
        waits up to wait_s when someone else holds it, then TargetError.  A no-op for
        targets no reservation system shares.  A fleet reserves every board first."""
        return None

    def release(self) -> None:
        """Give back what reserve() claimed; safe to call when nothing was claimed."""
        return None

    def enable_power_cycle(self) -> None:
        """Power-cycle the board when it is opened (`--power-cycle`); only targets with
        a power switch (labgrid) can, the others say so (exit 2)."""
        raise TargetUsageError(f"{self.name}: --power-cycle needs a labgrid target "
                               "(labgrid:PLACE or labgrid-env:FILE) with a power driver")

    def __enter__(self) -> Target:
        """Open the target."""
        self.open()
        return self

    def __exit__(self, *exc: object) -> None:
        """Close the target."""
        self.close()

    def loads_unsupported(self) -> str | None:
        """Why loads cannot run next to a test on this target (checked before a run
        starts), or None when they can."""
        return None

    def expect_loads_for(self, seconds: float) -> None:
        """Loads started from now on will be stopped within seconds: a target whose
        loads cannot die with the connection ends them by itself after that long."""
        return None

    @abstractmethod
    def hostname(self) -> str:
        """The target's host name (as it reports it)."""

    def address(self) -> str | None:
        """The target's network address as seen from the host (for host-side loads)."""
        return None

    @abstractmethod
    def arch(self) -> str:
        """The target's `uname -m` (e.g. x86_64, aarch64, armv7l, mips)."""

    @abstractmethod
    def read_file(self, path: str) -> str:
        """A text file of the target (e.g. /proc/stat); TargetError if unreadable."""

    def read_files(self, paths: list[str]) -> list[str]:
        """Several text files of the target, in order (a board reads them with one
        command, so the 1 s /proc sampling costs one session on the board, not three)."""
        return [self.read_file(path) for path in paths]

    @abstractmethod
    def run(self, command: str, timeout_s: float = 30.0) -> CommandResult:
        """Run a short /bin/sh command on the target to completion."""

    @abstractmethod
    def put_file(self, local: Path, remote: str, mode: int = 0o755) -> None:
        """Copy a host file onto the target (checksum verified)."""

    @abstractmethod
    def run_probe(self, args: list[str], timeout_s: float = 30.0) -> CommandResult:
        """Run `rtprobe ARGS` on the target to completion."""

    @abstractmethod
    def start_probe(self, args: list[str], cpus: str | None = None) -> ProbeProcess:
        """Start `rtprobe ARGS` (pinned to cpus when given), streaming its output, through
        shell.PROBE_LAUNCHER."""

    @abstractmethod
    def start_command(self, command: str, cpus: str | None = None) -> ProbeProcess:
        """Start a shell-command load: restarted when it ends, its whole process group
        killed with it; needs only /bin/sh on the target (shell.COMMAND_LAUNCHER)."""

    def start_commands(self, command: str, cpus: str | None = None,
                       instances: int = 1) -> list[ProbeProcess]:
        """Start instances copies of a shell-command load: one process per instance (a
        target may run them all as one process and hand it back for each); if one
        cannot start, those started are stopped before the error goes on."""
        started: list[ProbeProcess] = []
        try:
            for _ in range(max(1, instances)):
                started.append(self.start_command(command, cpus))
        except BaseException:
            with suppress(TargetError):
                self.stop_commands(started)
            raise
        return started

    def stop_commands(self, procs: list[ProbeProcess]) -> None:
        """Stop command loads this target started (a target may do it for all at once);
        one lost on the way leaves the others still to stop."""
        for proc in procs:
            with suppress(TargetError):
                proc.stop()

    @abstractmethod
    def probe_version(self) -> str:
        """The version rtprobe on the target reports."""

    def probe_path(self) -> str:
        """Where rtprobe is on the target (as stored command lines name it)."""
        return "rtprobe"

    def sysinfo(self) -> dict[str, Any]:
        """The target's facts from `rtprobe sysinfo`; TargetError when it cannot say."""
        try:
            return sysinfo_of(self.run_probe(SYSINFO_ARGS))
        except ProbeAnswerError as exc:
            raise TargetError(str(exc)) from exc


def _target_classes() -> dict[str, type[Target]]:
    """Every Target subclass in rtbench.targets, by URI scheme."""
    # the directory of this module, not the package object: base must not import its
    # own package (whose __init__ imports base)
    found: dict[str, type[Target]] = {}
    for info in pkgutil.iter_modules([str(Path(__file__).resolve().parent)]):
        if info.name.startswith("_") or info.name == "base":
            continue
        module = importlib.import_module(f"rtbench.targets.{info.name}")
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, Target) \
                    and value is not Target and value.schemes:
                for scheme in value.schemes:
                    found[scheme] = value
    return found


def target_schemes() -> list[str]:
    """The URI schemes rtbench can reach."""
    return sorted(_target_classes())


def target_class(scheme: str) -> type[Target] | None:
    """The Target subclass that handles a URI scheme (None: no transport has it)."""
    return _target_classes().get(scheme.lower())


def board_from_uri(uri: str) -> str | None:
    """The board a stored target string names, by its transport's rule (None: no
    transport has its scheme, or the URI names no board)."""
    scheme = uri.partition(":")[0]
    cls = _target_classes().get(scheme) if scheme else None
    return cls.board_of_uri(uri) if cls is not None else None


def inventory_keys() -> dict[str, tuple[str, ...]]:
    """Per URI scheme, the inventory keys its kind of target adds (those that add any)."""
    return {scheme: cls.inventory_keys for scheme, cls in sorted(_target_classes().items())
            if cls.inventory_keys}


def target_help() -> str:
    """The --target help: every transport's URI forms, in their help_order."""
    classes = _target_classes()
    forms = [form for scheme in sorted(classes, key=lambda s: (classes[s].help_order, s))
             for form, form_scheme in zip(classes[scheme].uri_forms,
                                          classes[scheme].schemes, strict=True)
             if form_scheme == scheme]
    listed = ", ".join(forms[:-1]) + f" or {forms[-1]}" if len(forms) > 1 else "".join(forms)
    return f"Where to measure, as a URI: {listed} (docs/targets.md)."


def open_target(uri: str | None, *, provider: ProbeProvider | None = None,
                options: dict[str, Any] | None = None) -> Target:
    """The target named by uri ("local" when None); not opened yet.  provider gives it
    its rtprobe (rtbench.rtprobe.provider.Probes; the local target finds the host's
    without one, a board cannot be opened without one)."""
    text = uri or "local"
    try:
        urlsplit(text)
    except ValueError as exc:  # e.g. "ssh://[::1": an IPv6 address without its "]"
        raise TargetUsageError(f"target {text!r} is not a valid URI ({exc}); e.g. "
                               "ssh://user@[::1]:22") from None
    scheme = text.split(":", 1)[0] if ":" in text else text
    classes = _target_classes()
    cls = classes.get(scheme.lower())
    if cls is None:
        known = ", ".join(f"{s}:" if s != "local" else s for s in sorted(classes))
        raise TargetUsageError(f"target {text!r}: unknown scheme {scheme!r}; "
                               f"use one of {known}")
    if scheme != "local" and not urlsplit(text).scheme:
        raise TargetUsageError(f"target {text!r} is not a URI; e.g. ssh://user@host")
    return cls.from_uri(text, provider=provider, options=options)
