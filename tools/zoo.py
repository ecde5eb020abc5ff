#!/usr/bin/env python3
"""The board zoo: one emulated board per CPU family of the studies, from Debian's packages.

    tools/zoo.py [BOARD ...] [--dir DIR] [--cpus N] [--add FILE ...] [--list]

For each board (all of them when none is named) this downloads Debian's kernel and
busybox-static for the board's Debian architecture (`dpkg --add-architecture A`,
`apt-get update`, `apt-get download`), unpacks them with `dpkg-deb -x`, and writes
into DIR/BOARD/ (default: $XDG_CACHE_HOME/rtbench/zoo, i.e. ~/.cache/rtbench/zoo):

- `kernel`: the kernel image as Debian ships it;
- `initramfs.cpio`: busybox-static, an /init that mounts /proc, /sys and /dev, makes the
  writable directories a real board has (/tmp, /var/tmp, /run, /dev/shm) and keeps a
  shell on the serial console, and each `--add FILE` in /bin (a program for the board);
- `labgrid.yaml`: a labgrid environment file whose QEMUDriver boots that kernel and
  initramfs under qemu's CPU emulation (TCG) with --cpus vCPUs (default 2; mipsel's
  4kc-malta kernel runs one), for `rtbench run --target labgrid-env:DIR/BOARD/labgrid.yaml`;
- `qemu.sh`: the same qemu command line, its console on stdio, for a look by hand.

Adding an architecture and downloading need root (run it with sudo once); later runs
reuse what is there: the .debs are kept in DIR/debs and used without asking apt again
(a foreign index of a mirror mid-sync does not matter then).  When it must download, an
`apt-get update` that fails is tried again, then said in one line and gone past (apt
keeps the indexes it had); a download goes through a private folder, so one cut short
is never taken for a cached .deb.  The qemu binaries come from Debian's qemu-system-arm
(arm, aarch64), qemu-system-mips, qemu-system-ppc and qemu-system-x86.
tests/host/qemu_board.py boots the same boards for `make test-boards` (docs/targets.md,
"Try it without a board").
"""

from __future__ import annotations

import argparse
import fcntl
import glob
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Board:
    """One emulated board: Debian's kernel package for an arch and the qemu that runs it."""

    name: str
    debian_arch: str
    kernel_package: str  # Debian's metapackage; its dependency is the versioned image
    qemu: str
    machine: str
    cpu: str
    console: str
    probe_arch: str  # rtbench's probe arch for the board (rtbench probe build --arch)
    summary: str
    timer_irq: str  # the name of the arch's own timer interrupt in /proc/interrupts
    max_cpus: int = 8  # vCPUs the machine model and the kernel run (malta's 4kc: one)


BOARDS: dict[str, Board] = {b.name: b for b in (
    Board("amd64", "amd64", "linux-image-amd64", "qemu-system-x86_64", "pc", "qemu64",
          "ttyS0", "x86_64", "x86-64, Debian's generic kernel", "timer"),
    Board("amd64-rt", "amd64", "linux-image-rt-amd64", "qemu-system-x86_64", "pc", "qemu64",
          "ttyS0", "x86_64", "x86-64, Debian's PREEMPT_RT kernel", "timer"),
    Board("arm64", "arm64", "linux-image-arm64", "qemu-system-aarch64", "virt",
          "cortex-a53", "ttyAMA0", "aarch64", "64-bit ARM, Debian's generic kernel",
          "arch_timer"),
    Board("arm64-rt", "arm64", "linux-image-rt-arm64", "qemu-system-aarch64", "virt",
          "cortex-a53", "ttyAMA0", "aarch64", "64-bit ARM, Debian's PREEMPT_RT kernel",
          "arch_timer"),
    Board("armhf-rt", "armhf", "linux-image-rt-armmp", "qemu-system-arm", "virt",
          "cortex-a15", "ttyAMA0", "armhf", "32-bit ARMv7, Debian's PREEMPT_RT armmp kernel",
          "arch_timer"),
    Board("i386-rt", "i386", "linux-image-rt-686-pae", "qemu-system-i386", "pc",
          "qemu32", "ttyS0", "i386", "IA-32, Debian's PREEMPT_RT 686-pae kernel",
          "timer"),
    Board("mipsel", "mipsel", "linux-image-4kc-malta", "qemu-system-mipsel", "malta",
          "24Kf", "ttyS0", "mipsel", "MIPS32 little-endian, Debian's 4kc-malta kernel",
          "timer", max_cpus=1),
    Board("ppc64el", "ppc64el", "linux-image-powerpc64le", "qemu-system-ppc64", "pseries",
          "power9", "hvc0", "ppc64le", "64-bit POWER little-endian, Debian's powerpc64le "
          "kernel", "decrementer"),
)}

# The boards `make test-boards` tests (tests/boards/): all of them, or those this names.
BOARDS_VARIABLE = "RTBENCH_ZOO_BOARDS"


def listed_boards(text: str | None) -> list[str]:
    """The boards of a comma list ("arm64,ppc64el"); every board when text is None or
    blank.  ValueError, one line, for a name that is no board."""
    names = [n.strip() for n in (text or "").split(",") if n.strip()]
    unknown = [n for n in names if n not in BOARDS]
    if unknown:
        raise ValueError(f"{BOARDS_VARIABLE}: no board {unknown[0]!r} "
                         f"(boards: {', '.join(BOARDS)})")
    return list(dict.fromkeys(names)) or list(BOARDS)


# The Debian package of each qemu binary.
QEMU_PACKAGES = {"qemu-system-x86_64": "qemu-system-x86", "qemu-system-i386": "qemu-system-x86",
                 "qemu-system-aarch64": "qemu-system-arm", "qemu-system-arm": "qemu-system-arm",
                 "qemu-system-mipsel": "qemu-system-mips", "qemu-system-ppc64": "qemu-system-ppc"}

# The guest's /init (also the test guests' of tests/host/qemu_board.py): busybox's
# applets, the kernel's filesystems, the writable directories a real board has (/tmp and
# /var/tmp for everyone, /run, /dev/shm: the io and build loads write in /var/tmp), a
# shell on the console again and again (a shell that exits is replaced).
INIT = """#!/bin/busybox sh
/bin/busybox --install -s
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mkdir -p /dev/shm /run /tmp /var/tmp
mount -t tmpfs -o mode=1777 shm /dev/shm
mount -t tmpfs -o mode=0755 run /run
chmod 1777 /tmp /var/tmp
hostname rtbench-guest
ip link set lo up 2>/dev/null
while :; do setsid cttyhack sh -i; done
"""
# The directories of the initramfs's root (the rest are made by /init).
ROOT_DIRS = ("bin", "sbin", "usr/bin", "usr/sbin", "proc", "sys", "dev", "etc", "tmp",
             "var/tmp", "run")
MEMORY = "256M"
# vCPUs of a zoo guest: two where the machine model and Debian's kernel run SMP (noise
# and pi need a CPU besides the one they fill), else one (Board.max_cpus).
DEFAULT_CPUS = 2


def default_dir() -> Path:
    """$XDG_CACHE_HOME/rtbench/zoo (~/.cache/rtbench/zoo)."""
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "rtbench" / "zoo"


def boot_args(board: Board) -> str:
    """The kernel command line: the serial console, the initramfs's /init, no reboot.

    noirqdebug: an emulated UART on a busy host raises interrupts its handler finds nothing
    left to do for (up to 99 % of a traced run's console interrupts); after enough of them
    the kernel disables the IRQ as stuck and the console, rtbench's only link, falls silent.
    """
    return f"console={board.console} loglevel=6 panic=-1 rdinit=/init noirqdebug"


def guest_cpus(board: Board, wanted: int) -> int:
    """The vCPUs a guest of board gets when `wanted` are asked: at most its max_cpus."""
    return max(1, min(wanted, board.max_cpus))


def vcpus(count: int) -> str:
    """'1 vCPU', '2 vCPUs'."""
    return f"{count} vCPU" + ("" if count == 1 else "s")


def qemu_argv(board: Board, kernel: Path, initramfs: Path, cpus: int = DEFAULT_CPUS
              ) -> list[str]:
    """qemu under TCG with `cpus` vCPUs (as many as the board runs), its serial console
    on stdio."""
    return [board.qemu, "-accel", "tcg", "-M", board.machine, "-cpu", board.cpu,
            "-m", MEMORY, "-smp", str(guest_cpus(board, cpus)), "-nodefaults",
            "-display", "none", "-no-reboot",
            "-chardev", "stdio,id=con,signal=off", "-serial", "chardev:con",
            "-kernel", str(kernel), "-initrd", str(initramfs), "-append", boot_args(board)]


def labgrid_env(board: Board, kernel: Path, initramfs: Path, cpus: int = DEFAULT_CPUS
                ) -> str:
    """A labgrid environment file whose QEMUDriver boots the board (target `main`)."""
    qemu = shutil.which(board.qemu) or f"/usr/bin/{board.qemu}"
    return (f"# {board.summary}, emulated (qemu TCG): written by tools/zoo.py\n"
            "targets:\n"
            "  main:\n"
            "    drivers:\n"
            "      QEMUDriver:\n"
            "        qemu_bin: qemu\n"
            f"        machine: {board.machine}\n"
            f"        cpu: {board.cpu}\n"
            f"        memory: {MEMORY}\n"
            "        kernel: kernel\n"
            f"        extra_args: '-accel tcg -smp {guest_cpus(board, cpus)} -nodefaults "
            "-no-reboot "
            f"-initrd {initramfs}'\n"
            f"        boot_args: '{boot_args(board)}'\n"
            "        display: none\n"
            "tools:\n"
            f"  qemu: {qemu}\n"
            "images:\n"
            f"  kernel: {kernel}\n")


def _run(argv: list[str], cwd: Path | None = None) -> str:
    """Run a command; its stdout, or SystemExit with its stderr's last line."""
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        why = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise SystemExit(f"zoo: {' '.join(argv[:3])} ... failed: {why}")
    return done.stdout


def _image_package(meta: str, arch: str) -> str | None:
    """The versioned kernel package the metapackage depends on (linux-image-6.1.0-N-...),
    or None when apt's index does not know the metapackage."""
    shown = subprocess.run(["apt-cache", "depends", f"{meta}:{arch}"], capture_output=True,
                           text=True, check=False)
    for line in shown.stdout.splitlines():
        word = line.strip().removeprefix("Depends:").strip()
        if line.strip().startswith("Depends:") and word.startswith("linux-image-"):
            return word.split(":")[0]
    return None


def cached_kernel_deb(meta: str, arch: str, debs: Path) -> Path | None:
    """The newest kernel .deb of the metapackage's flavour already in debs (no apt index
    needed): linux-image-rt-arm64 -> linux-image-6.1.0-N-rt-arm64_*_arm64.deb."""
    flavour = re.escape(meta.removeprefix("linux-image-"))
    shape = re.compile(rf"linux-image-\d+\.\d+\.\d+-\d+-{flavour}_[^_]+_{re.escape(arch)}\.deb")
    found = [p for p in debs.glob("linux-image-*.deb") if shape.fullmatch(p.name)]
    return max(found, key=lambda p: p.stat().st_mtime) if found else None


def cached_deb(package: str, arch: str, debs: Path) -> Path | None:
    """The newest PACKAGE_*_ARCH.deb already in debs, or None."""
    found = sorted(debs.glob(f"{package}_*_{arch}.deb"), key=lambda p: p.stat().st_mtime)
    return found[-1] if found else None


def update_index(attempts: int = 2, pause_s: float = 10.0) -> str | None:
    """apt-get update, tried `attempts` times; None once it succeeded, else its first
    error in one line.  A failure is not fatal: a foreign index of a mirror mid-sync
    fails while the rest updates, and apt keeps what it had."""
    why = None
    for attempt in range(attempts):
        if attempt:
            time.sleep(pause_s)
        done = subprocess.run(["apt-get", "update"], capture_output=True, text=True,
                              check=False)
        if done.returncode == 0:
            return None
        why = first_apt_error(done.stdout + "\n" + done.stderr)
    return why


def first_apt_error(output: str) -> str:
    """apt's first "E:" line (a URL shortened to its last two parts), or its first line."""
    lines = [ln.strip() for ln in output.splitlines() if ln.strip()]
    errors = [ln for ln in lines if ln.startswith("E:")]
    line = (errors or lines or ["no message"])[0]
    return re.sub(r"https?://\S+", lambda url: "/".join(url.group().split("/")[-2:]), line)


def ensure_arch(arch: str) -> None:
    """Make apt know the Debian architecture (dpkg --add-architecture, apt-get update)."""
    native = _run(["dpkg", "--print-architecture"]).strip()
    known = _run(["dpkg", "--print-foreign-architectures"]).split()
    if arch == native or arch in known:
        return
    if os.geteuid() != 0:
        raise SystemExit(f"zoo: Debian architecture {arch} is not added: run as root once "
                         f"(dpkg --add-architecture {arch}; apt-get update)")
    _run(["dpkg", "--add-architecture", arch])
    refresh_index()


def refresh_index() -> None:
    """apt-get update; a failure (retried once) is said in one line and tolerated."""
    why = update_index()
    if why is not None:
        print(f"zoo: apt-get update failed twice ({why}); going on with the indexes "
              "apt has", file=sys.stderr)


def kernel_deb(board: Board, debs: Path) -> Path:
    """The board's kernel .deb: the cached one, else downloaded (the index updated when
    it does not know the kernel, as after an update restricted to the native arch)."""
    cached = cached_kernel_deb(board.kernel_package, board.debian_arch, debs)
    if cached is not None:
        return cached
    ensure_arch(board.debian_arch)
    package = _image_package(board.kernel_package, board.debian_arch)
    if package is None:
        refresh_index()
        package = _image_package(board.kernel_package, board.debian_arch)
    if package is None:
        raise SystemExit(f"zoo: apt knows no {board.kernel_package}:{board.debian_arch} "
                         f"even after apt-get update: check /etc/apt/sources.list for "
                         f"{board.debian_arch}")
    return download(package, board.debian_arch, debs)


def busybox_deb(board: Board, debs: Path) -> Path:
    """busybox-static for the board's arch: the cached .deb, else downloaded."""
    cached = cached_deb("busybox-static", board.debian_arch, debs)
    if cached is not None:
        return cached
    ensure_arch(board.debian_arch)
    return download("busybox-static", board.debian_arch, debs)


def download(package: str, arch: str, into: Path) -> Path:
    """apt-get download PACKAGE:ARCH into `into` through a private folder (a download
    cut short is never taken for a cached .deb); the .deb's path.  A download apt's
    index cannot place is retried once after apt-get update."""
    into.mkdir(parents=True, exist_ok=True)
    why = ""
    for attempt in range(2):
        if attempt:
            refresh_index()
        with tempfile.TemporaryDirectory(dir=into, prefix=".download-") as tmp:
            done = subprocess.run(["apt-get", "download", f"{package}:{arch}"], cwd=tmp,
                                  capture_output=True, text=True, check=False)
            got = sorted(Path(tmp).glob(f"{package}_*_{arch}.deb"))
            if done.returncode == 0 and got:
                target = into / got[-1].name
                got[-1].replace(target)
                return target
            why = first_apt_error(done.stdout + "\n" + done.stderr)
    raise SystemExit(f"zoo: apt-get download {package}:{arch} failed: {why}")


def _unpack(deb: Path, into: Path, pattern: str) -> None:
    """The files of a .deb matching pattern, unpacked into `into` (dpkg-deb's archive
    through tar: a kernel package's 400 MB of modules are never written)."""
    tar = subprocess.Popen(["dpkg-deb", "--fsys-tarfile", str(deb)], stdout=subprocess.PIPE)
    _run_from(tar, ["tar", "-x", "-C", str(into), "--wildcards", pattern])


def _run_from(source: subprocess.Popen[bytes], argv: list[str]) -> None:
    """Run argv reading source's stdout; SystemExit when either fails."""
    done = subprocess.run(argv, stdin=source.stdout, capture_output=True, check=False)
    if source.stdout is not None:
        source.stdout.close()
    if source.wait() != 0 or done.returncode != 0:
        why = (done.stderr.decode(errors="replace").strip().splitlines() or ["no message"])[-1]
        raise SystemExit(f"zoo: unpacking failed: {why}")


def _write_text(path: Path, text: str) -> None:
    """Write a small file whole: a temp name, then renamed."""
    partial = path.with_name(path.name + ".part")
    partial.write_text(text)
    partial.replace(path)


def populate_root(root: Path, busybox: Path, extra: list[Path] | tuple[Path, ...] = ()
                  ) -> None:
    """A guest's root in root: busybox (and /bin/sh), /init, the standard directories,
    and the extra programs in /bin."""
    for sub in ROOT_DIRS:
        (root / sub).mkdir(parents=True, exist_ok=True)
    for sub in ("tmp", "var/tmp"):
        (root / sub).chmod(0o1777)
    shutil.copy(busybox, root / "bin" / "busybox")
    (root / "bin" / "busybox").chmod(0o755)
    (root / "bin" / "sh").symlink_to("busybox")
    (root / "init").write_text(INIT)
    (root / "init").chmod(0o755)
    for program in extra:
        shutil.copy(program, root / "bin" / program.name)
        (root / "bin" / program.name).chmod(0o755)


def write_cpio(root: Path, out: Path) -> None:
    """root as an uncompressed newc cpio at out (a temp name, then renamed)."""
    names = subprocess.run(["find", "."], cwd=root, capture_output=True, check=True).stdout
    partial = out.with_name(out.name + ".part")
    with partial.open("wb") as fh:
        subprocess.run(["cpio", "--quiet", "-o", "-H", "newc"], cwd=root, input=names,
                       stdout=fh, check=True)
    partial.replace(out)


def build_initramfs(busybox: Path, out: Path, extra: list[Path]) -> None:
    """An uncompressed newc cpio: busybox, /init and the extra programs in /bin."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        populate_root(root, busybox, extra)
        write_cpio(root, out)


def assemble(board: Board, top: Path, extra: list[Path], cpus: int = DEFAULT_CPUS) -> Path:
    """DIR/BOARD/ with the kernel, the initramfs, labgrid.yaml and qemu.sh (for `cpus`
    vCPUs, at most the board's); the folder.  One assembly at a time in DIR (apt, the
    shared busybox of an arch): a lock file."""
    top.mkdir(parents=True, exist_ok=True)
    with (top / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _assemble(board, top, extra, cpus)


def _assemble(board: Board, top: Path, extra: list[Path], cpus: int) -> Path:
    """assemble(), under its lock."""
    where = top / board.name
    debs = top / "debs"
    kernel = where / "kernel"
    if not kernel.is_file():
        deb = kernel_deb(board, debs)
        with tempfile.TemporaryDirectory() as tmp:
            _unpack(deb, Path(tmp), "./boot/vmlinu[xz]-*")
            images = sorted(glob.glob(f"{tmp}/boot/vmlinu[xz]-*"))
            if not images:
                raise SystemExit(f"zoo: {deb.name} holds no /boot/vmlinu[xz]-*")
            where.mkdir(parents=True, exist_ok=True)
            _write_text(where / "release", Path(images[0]).name.split("-", 1)[1] + "\n")
            shutil.copy(images[0], where / "kernel.part")
            (where / "kernel.part").replace(kernel)
    busybox = top / "busybox" / board.debian_arch / "busybox"
    if not busybox.is_file():
        deb = busybox_deb(board, debs)
        with tempfile.TemporaryDirectory() as tmp:
            _unpack(deb, Path(tmp), "./bin/busybox")
            busybox.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(f"{tmp}/bin/busybox", busybox.with_name("busybox.part"))
            busybox.with_name("busybox.part").replace(busybox)
    initramfs = where / "initramfs.cpio"
    build_initramfs(busybox, initramfs, extra)
    _write_text(where / "labgrid.yaml", labgrid_env(board, kernel, initramfs, cpus))
    script = where / "qemu.sh"
    script.write_text("#!/bin/sh\n# Boot the board with its console here (Ctrl-A X quits).\n"
                      f"exec {shlex.join(qemu_argv(board, kernel, initramfs, cpus))}\n")
    script.chmod(0o755)
    return where


def main(argv: list[str] | None = None) -> int:
    """Assemble the boards named (all by default)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("boards", nargs="*", metavar="BOARD",
                        help=f"which boards ({', '.join(BOARDS)}); all when none is named")
    parser.add_argument("--dir", type=Path, default=default_dir(),
                        help="where the boards go (default: %(default)s)")
    parser.add_argument("--add", type=Path, action="append", default=[],
                        help="a program for the board, put in the initramfs's /bin")
    parser.add_argument("--cpus", type=int, default=DEFAULT_CPUS,
                        help="vCPUs of each guest, at most what its board runs (mipsel: "
                             "1); default %(default)s")
    parser.add_argument("--list", action="store_true", help="list the boards and stop")
    args = parser.parse_args(argv)
    if args.list:
        for board in BOARDS.values():
            print(f"{board.name:<9} {board.qemu} -M {board.machine}, up to "
                  f"{vcpus(board.max_cpus)}: {board.summary}")
        return 0
    if args.cpus < 1:
        print(f"zoo: --cpus {args.cpus}: give 1 or more", file=sys.stderr)
        return 2
    unknown = [b for b in args.boards if b not in BOARDS]
    if unknown:
        print(f"zoo: no board {unknown[0]!r} (boards: {', '.join(BOARDS)})", file=sys.stderr)
        return 2
    for name in args.boards or list(BOARDS):
        board = BOARDS[name]
        if shutil.which(board.qemu) is None:
            print(f"zoo: {name}: {board.qemu} missing (apt-get install "
                  f"{QEMU_PACKAGES[board.qemu]})", file=sys.stderr)
        where = assemble(board, args.dir, args.add, args.cpus)
        print(f"{name} ({vcpus(guest_cpus(board, args.cpus))}): {where}/labgrid.yaml")
    return 0


if __name__ == "__main__":
    sys.exit(main())
