"""A board to reach over a serial line: Debian's kernel in qemu-system-x86_64 with a tiny
initramfs of busybox-static, its console on a pty (tests/host/test_qemu_serial.py)."""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

BUSYBOX = Path("/bin/busybox")
QEMU = "qemu-system-x86_64"

INIT = """#!/bin/busybox sh
/bin/busybox --install -s
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
hostname rtbench-guest
while :; do setsid cttyhack sh -i; done
"""


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


def build_initramfs(workdir: Path) -> Path:
    """An uncompressed newc cpio holding busybox and /init."""
    root = workdir / "root"
    for sub in ("bin", "sbin", "usr/bin", "usr/sbin", "proc", "sys", "dev", "tmp", "etc"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    shutil.copy(BUSYBOX, root / "bin" / "busybox")
    (root / "init").write_text(INIT)
    (root / "init").chmod(0o755)
    (root / "bin" / "sh").symlink_to("busybox")
    image = workdir / "initramfs.cpio"
    names = subprocess.run(["find", "."], cwd=root, capture_output=True, check=True).stdout
    with image.open("wb") as out:
        subprocess.run(["cpio", "--quiet", "-o", "-H", "newc"], cwd=root, input=names,
                       stdout=out, check=True)
    return image


class QemuBoard:
    """One guest; `tty` is the host end of its serial console."""

    def __init__(self, kernel: Path, initramfs: Path) -> None:
        kvm = os.access("/dev/kvm", os.R_OK | os.W_OK)
        self.accel = "kvm" if kvm else "tcg"
        try:
            self._start(kernel, initramfs)
        except RuntimeError:
            if self.accel != "kvm":
                raise
            # KVM that cannot run a guest (nested, MSRs refused): emulate instead.
            self.accel = "tcg"
            self._start(kernel, initramfs)

    def _start(self, kernel: Path, initramfs: Path) -> None:
        """Start qemu and find its pty; RuntimeError when it ends at once."""
        accel = ["-accel", self.accel]
        self.proc = subprocess.Popen(
            [QEMU, *accel, "-m", "256", "-smp", "2", "-nodefaults", "-display", "none",
             "-no-reboot", "-serial", "pty", "-kernel", str(kernel), "-initrd", str(initramfs),
             "-append", "console=ttyS0 quiet panic=-1 rdinit=/init"],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True)
        self.tty = self._pty()
        time.sleep(1.0)
        if self.proc.poll() is not None:
            self.stop()
            raise RuntimeError(f"qemu ({self.accel}) ended at once")

    def _pty(self) -> str:
        """The pty qemu reports for the serial console."""
        assert self.proc.stdout is not None
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line and self.proc.poll() is not None:
                break
            match = re.search(r"(/dev/pts/\d+)", line)
            if match:
                return match.group(1)
        self.stop()
        raise RuntimeError("qemu did not report its serial pty")

    def stop(self) -> None:
        """Power the guest off."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc.stdout:
            self.proc.stdout.close()
