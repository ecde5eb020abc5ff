"""A board to reach over a serial line: Debian's kernel in qemu-system-x86_64 with a tiny
initramfs of busybox-static, its console on a pty (tests/host/test_qemu_serial.py); or a
board of the zoo (tools/zoo.py: Debian's kernel for another CPU, under TCG), booted the
same way (tests/boards/test_zoo.py)."""

from __future__ import annotations

import contextlib
import glob
import os
import shlex
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from rtbench.targets._shell import DEFAULT_REMOTE_DIR, probe_remote_path
from tools.zoo import Board, populate_root, qemu_argv, write_cpio

BUSYBOX = Path("/bin/busybox")
QEMU = "qemu-system-x86_64"
# Seconds a booting guest may take from the kernel's first line to its shell's prompt
# (an emulated PREEMPT_RT guest on a loaded 2-vCPU host: about a minute seen).
SHELL_WAIT_S = 600.0
# The xdist group of the tests using the shared PREEMPT_RT guest (tests/host/conftest.py,
# rt_guest): one worker runs them all, so it boots once (emulated: a minute or more).
RT_GUEST_GROUP = "rt-guest"
# Where the host's KVM verdict is kept for this boot of the host (see kvm_verdict).
KVM_VERDICT = Path(tempfile.gettempdir()) / "rtbench-test-locks" / "qemu-kvm-verdict"

class KernelSilent(RuntimeError):
    """The guest printed no kernel line in time (a KVM that cannot run it hangs it)."""


def boot_id() -> str:
    """This boot of the host (a KVM verdict holds until it reboots)."""
    return Path("/proc/sys/kernel/random/boot_id").read_text().strip()


def kvm_verdict() -> str | None:
    """"tcg" when a guest of this boot of the host already hung under KVM, else None."""
    try:
        said, verdict = KVM_VERDICT.read_text().split()
    except (OSError, ValueError):
        return None
    return verdict if said == boot_id() else None


def remember_kvm_verdict(verdict: str) -> None:
    """Keep verdict for this boot of the host (written whole: a temp name, renamed)."""
    KVM_VERDICT.parent.mkdir(mode=0o777, exist_ok=True)
    temp = KVM_VERDICT.with_name(f"{KVM_VERDICT.name}.{os.getpid()}")
    temp.write_text(f"{boot_id()} {verdict}\n")
    temp.replace(KVM_VERDICT)


def kernels() -> dict[str, Path]:
    """Debian's installed kernels: {"generic": vmlinuz-*-amd64, "rt": vmlinuz-*-rt-amd64}."""
    found: dict[str, Path] = {}
    for path in sorted(glob.glob("/boot/vmlinuz-*-amd64")):
        kind = "rt" if path.endswith("-rt-amd64") else "generic"
        if os.access(path, os.R_OK):
            found[kind] = Path(path)
    return found


def missing() -> str | None:
    """Why the qemu board cannot run here, or None."""
    if shutil.which(QEMU) is None:
        return "qemu-system-x86_64 missing (apt-get install qemu-system-x86)"
    if not BUSYBOX.is_file():
        return "busybox-static missing"
    if shutil.which("cpio") is None:
        return "cpio missing"
    if set(kernels()) != {"generic", "rt"}:
        return "needs linux-image-amd64 and linux-image-rt-amd64 readable in /boot"
    return None


def build_initramfs(workdir: Path, extra_bin: tuple[Path, ...] = (),
                    probes: tuple[Path, ...] = ()) -> Path:
    """An uncompressed newc cpio holding busybox, the zoo's /init (tools/zoo.py: the same
    guest) and the programs of extra_bin (static ones: the guest has no libc) in /bin;
    the probes (static rtprobes) where a serial target looks for them
    (/tmp/rtbench/rtprobe-DIGEST, a directory of mode 0700), so it finds them by their
    checksum instead of pushing them over the console."""
    root = workdir / "root"
    populate_root(root, BUSYBOX, extra_bin)
    for probe in probes:
        remote = Path(probe_remote_path(DEFAULT_REMOTE_DIR, probe))
        where = root / remote.relative_to("/")
        where.parent.mkdir(mode=0o700, exist_ok=True)
        where.parent.chmod(0o700)
        shutil.copy(probe, where)
        where.chmod(0o755)
    image = workdir / "initramfs.cpio"
    write_cpio(root, image)
    return image


class QemuBoard:
    """One guest; `tty` is the host end of its serial console.

    qemu's console is its stdio, which socat joins to a pty (as a USB-serial adapter
    would): a pty chardev of qemu's own drops what the guest prints while nobody has it
    open, socat keeps it."""

    def __init__(self, kernel: Path, workdir: Path, initramfs: Path,
                 board: Board | None = None, append: str = "", cpus: int = 1) -> None:
        self.workdir = workdir
        self.board = board
        self.cpus = cpus  # a zoo board's vCPUs (at most what it runs)
        self.append = append  # more kernel command line (amd64 guests)
        if board is not None:
            # a zoo board: another CPU, emulated (its kernel line can take a minute)
            self.accel = "tcg"
            self._start(kernel, initramfs, 600.0)
            return
        kvm = os.access("/dev/kvm", os.R_OK | os.W_OK) and kvm_verdict() != "tcg"
        self.accel = "kvm" if kvm else "tcg"
        try:
            self._start(kernel, initramfs, 15.0 if kvm else 300.0)
        except KernelSilent:
            if self.accel != "kvm":
                raise
            # A KVM that cannot run this guest (nested, CPU features hidden) hangs it
            # before the kernel's first line: emulate instead, here and in the later
            # guests of this boot of the host (no 15 s lost on each)
            remember_kvm_verdict("tcg")
            self.accel = "tcg"
            self._start(kernel, initramfs, 300.0)

    def _start(self, kernel: Path, initramfs: Path, wait_s: float) -> None:
        """Start qemu under socat and wait for the kernel's first line."""
        self.tty = str(self.workdir / f"console-{self.accel}")
        if self.board is not None:
            qemu = shlex.join(qemu_argv(self.board, kernel, initramfs, self.cpus))
        else:
            qemu = (f"{QEMU} -accel {self.accel} -m 256 -smp 2 -nodefaults -display none "
                    f"-no-reboot -chardev stdio,id=con,signal=off -serial chardev:con "
                    f"-kernel {kernel} -initrd {initramfs} -append "
                    f"'console=ttyS0 earlyprintk=ttyS0 loglevel=6 panic=-1 rdinit=/init "
                    f"{self.append}'")
        script = self.workdir / f"qemu-{self.accel}.sh"
        script.write_text(f"exec {qemu}\n")
        self.proc = subprocess.Popen(
            ["socat", f"PTY,link={self.tty},raw,echo=0", f"EXEC:sh {script}"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True)
        deadline = time.monotonic() + 10
        while not os.path.exists(self.tty) and time.monotonic() < deadline:
            time.sleep(0.05)
        try:
            self._wait_for_shell(wait_s)
        except BaseException:
            self.stop()
            raise

    def _wait_for_shell(self, first_line_s: float) -> None:
        """Wait for the kernel's first line (KernelSilent after first_line_s), then for
        its shell's prompt (RuntimeError after SHELL_WAIT_S); what came is dropped.

        Until the prompt nothing is typed: an emulated boot on a busy host can take
        minutes, longer than a serial target waits for a shell, and a PREEMPT_RT guest
        under TCG dropped bytes of a line typed while it booted."""
        fd = os.open(self.tty, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
        seen = b""
        try:
            deadline = time.monotonic() + first_line_s
            booted = False
            while time.monotonic() < deadline and self.proc.poll() is None:
                try:
                    seen = (seen + os.read(fd, 4096))[-8192:]
                except BlockingIOError:
                    time.sleep(0.05)
                    continue
                if not booted and b"Linux version" in seen:
                    booted, deadline = True, time.monotonic() + SHELL_WAIT_S
                # busybox asks for the cursor position after its prompt (a kernel line
                # may follow it)
                prompt = seen.replace(b"\x1b[6n", b"").rstrip()
                if booted and (prompt.endswith(b"#") or b"# \x1b[6n" in seen):
                    return
            if not booted:
                raise KernelSilent(f"qemu ({self.accel}): no kernel line in "
                                   f"{first_line_s:g} s")
            raise RuntimeError(f"qemu ({self.accel}): the kernel started but no shell "
                               f"prompt came in {SHELL_WAIT_S:g} s")
        finally:
            os.close(fd)

    def stop(self) -> None:
        """Power the guest off (socat and qemu: their own process group)."""
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
