"""Build a static rtprobe for another CPU with Zig's C compiler, cached per arch and version.

`rtbench probe build --arch A` and the board targets use this: the `ziglang` package
from PyPI brings clang plus musl for every arch below, so no system cross-compiler is
needed.  The probe's own Makefile does the build (BOARD=1: the native sources with what a
board does not need left out and the help texts packed; CC, CFLAGS, LDFLAGS, STATIC, BUILD),
into a cache directory per probe version and digest of every input, one subdirectory per arch.
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib.util
import os
import re
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

from rtbench.core.boundedrun import CommandTimeout, OutputTooLarge, run_bounded
from rtbench.rtprobe.util.elftrim import ElfLayoutError, trim_unloaded
from rtbench.rtprobe.util.locate import PACKAGE_DIR


def _probe_source() -> Path:
    """probe/ of a source checkout, else the sources an installed wheel carries."""
    checkout = PACKAGE_DIR.parent / "probe"
    if (checkout / "Makefile").is_file() and (checkout / "src").is_dir():
        return checkout
    return PACKAGE_DIR / "_probe"


PROBE_SOURCE = _probe_source()
# Size bound of one stripped static board probe (bytes); `probe build` reports any arch over
# its bound.  MIPS32 and 32-bit PowerPC have fixed 4-byte instructions and no compressed
# instruction set on the cores rtbench targets: their code is 1.6 times x86_64's, so their
# bound is BIG_CODE_SIZE_LIMIT.
SIZE_LIMIT = 210 * 1024
BIG_CODE_SIZE_LIMIT = 285 * 1024
# Small code everywhere (zig cc turns -Oz into -Os; -Xclang -Oz gives clang's real -Oz,
# about 5 % smaller); unused sections dropped; no unwind tables (C, no exceptions).
SMALL_CFLAGS = ("-Os -Xclang -Oz -fno-unwind-tables -fno-asynchronous-unwind-tables "
                "-ffunction-sections -fdata-sections -fno-stack-protector")
SMALL_LDFLAGS = "-Wl,--gc-sections -s"
# What makes the probe Makefile build the board variant: RTPROBE_BOARD (no --simulate, so
# no simulation code) and byte-pair packed help texts.
BOARD_MAKE_ARGS = ("BOARD=1", "STATIC=1")
# The Python code that builds and trims a probe: part of what the cache key hashes.
BUILD_CODE: tuple[Path, ...] = (Path(__file__), Path(__file__).parents[1] / "util" / "elftrim.py",
                                 Path(__file__).with_name("ltolink.py"))
# One build per arch at a time: the boards of a fleet open in parallel threads, and other
# processes (a second rtbench, parallel test workers) share the cache, and would otherwise
# build the same arch into the same directory at once.  Threads of this process wait on
# the arch's lock here; processes wait on a file lock in the arch's cache directory.
_BUILD_LOCKS: dict[str, threading.Lock] = {}
_LOCKS_GUARD = threading.Lock()


class ProbeBuildError(Exception):
    """A probe could not be built; the message is one line (exit 3, or 2 for a bad arch)."""


class UnknownArch(ProbeBuildError):
    """An arch name rtbench has no probe for (exit 2)."""


@dataclass(frozen=True)
class ProbeArch:
    """One arch rtbench builds rtprobe for: Zig target, CPU baseline, qemu-user runner."""

    name: str
    zig_target: str
    cpu: str | None
    qemu: str
    summary: str
    cflags: str = ""
    # C files of probe/port/ linked in (what the CPU lacks, e.g. ARMv5's atomics)
    port: tuple[str, ...] = ()
    # Zig target of the link (and of the C library), when rtprobe's own code is
    # compiled for another instruction set of the same CPU; None: zig_target
    link_target: str | None = None
    # the most bytes its stripped static probe may have
    size_limit: int = SIZE_LIMIT
    # Link-time optimisation (-flto, compiling and linking): the whole probe optimised as
    # one program, each function keeping its -Oz size attribute; 2-5 % smaller
    # (BENCHMARKS.md, "Board probe sizes after --trace").
    lto: bool = True
    # LLVM options for the code generation of the LTO link (Zig's cc passes none there):
    # the link runs through ltolink.py, which redoes Zig's ld.lld command with them
    lto_llvm_options: tuple[str, ...] = ()

    def cc(self) -> str:
        """The CC value for the probe Makefile (Zig's clang through this Python)."""
        return self._zig_cc(self.zig_target)

    def link_cc(self) -> str:
        """The LINK_CC value for the probe Makefile: what links rtprobe and its C library."""
        link = self._zig_cc(self.link_target or self.zig_target)
        if not (self.lto and self.lto_llvm_options):
            return link
        options = " ".join(self.lto_llvm_options)
        return f"{sys.executable} -m rtbench.rtprobe.build.ltolink {options} -- {link}"

    def _zig_cc(self, target: str) -> str:
        """Zig's C compiler for target with this arch's CPU and flags."""
        parts = [sys.executable, "-m", "ziglang", "cc", "-target", target]
        if self.lto:
            parts.append("-flto")
        if self.cpu:
            parts.append(f"-mcpu={self.cpu}")
        if self.cflags:
            parts.append(self.cflags)
        return " ".join(parts)


# Soft-float builds (armel, mips, mipsel, powerpc) run on cores with or without an FPU.
ARCHES: dict[str, ProbeArch] = {a.name: a for a in (
    # Zig keeps frame pointers; without them x86_64 code is 2 % smaller (the other
    # arches gain nothing, i386 even grows).
    ProbeArch("x86_64", "x86_64-linux-musl", "x86_64", "qemu-x86_64-static", "64-bit PC",
              "-fomit-frame-pointer"),
    ProbeArch("i386", "x86-linux-musl", "i686", "qemu-i386-static", "32-bit PC, i686 and up"),
    ProbeArch("aarch64", "aarch64-linux-musl", "generic", "qemu-aarch64-static", "64-bit ARM"),
    # Zig picks the instruction set from the target (`-mthumb` is ignored): thumb-* builds
    # Thumb-2 code, about a quarter smaller than ARM code.
    ProbeArch("armhf", "thumb-linux-musleabihf", "generic+v7a+vfp3d16", "qemu-arm-static",
              "ARMv7 with VFPv3 (hard float), Thumb-2 code"),
    # ARMv5TE has Thumb-1 only, and musl's ARM assembly has no Thumb-1 form: rtprobe's
    # own code is Thumb (about a fifth smaller), the C library ARM; ARMv5T calls
    # between the two with BLX (interworking).  No link-time optimisation: its code
    # generation calls __sync_synchronize, which armv5_atomics.c defines, after the
    # link has already dropped that definition (undefined symbol).
    ProbeArch("armel", "thumb-linux-musleabi", "arm926ej_s", "qemu-arm-static",
              "ARMv5TE and up, soft float (ARM926 class), Thumb code",
              "-Wno-atomic-alignment", ("armv5_atomics.c",),
              link_target="arm-linux-musleabi", lto=False),
    ProbeArch("mips", "mips-linux-musleabi", "mips32", "qemu-mips-static",
              "MIPS32 big-endian, soft float", size_limit=BIG_CODE_SIZE_LIMIT),
    ProbeArch("mipsel", "mipsel-linux-musleabi", "mips32", "qemu-mipsel-static",
              "MIPS32 little-endian, soft float", size_limit=BIG_CODE_SIZE_LIMIT),
    # clang's global merging puts the string literals into one .data.rel.ro block on
    # PowerPC, where the linker can neither share nor drop them.  With link-time
    # optimisation that merging happens in the link, which gets no -mllvm option from
    # Zig, so ltolink.py redoes Zig's ld.lld command with it: 9 KiB smaller
    # (BENCHMARKS.md, "Board probe sizes after --trace").
    # The soft-float comparisons come from probe/port/: the runtime's own keep a
    # merged 26 KiB block of its constants linked (see softfloat_compare.c).
    ProbeArch("powerpc", "powerpc-linux-musleabi", "ppc", "qemu-ppc-static",
              "32-bit PowerPC big-endian, soft float", port=("softfloat_compare.c",),
              size_limit=BIG_CODE_SIZE_LIMIT,
              lto_llvm_options=("-enable-global-merge=false",)),
    # POWER8 and later, little-endian, 64-bit (ELFv2): the ppc64el of Debian, IBM's
    # POWER servers and qemu's pseries machine.  Fixed 4-byte instructions, as 32-bit
    # PowerPC, but 64-bit registers for the nanosecond arithmetic.
    ProbeArch("ppc64le", "powerpc64le-linux-musl", "pwr8", "qemu-ppc64le-static",
              "64-bit POWER little-endian (POWER8 and up)", size_limit=BIG_CODE_SIZE_LIMIT),
    # Zig compiles RISC-V without linker relaxation (-mno-relax): every call is then an
    # auipc+jalr pair.  Its linker (LLD) relaxes, so -mrelax turns most calls into one
    # jal: about 8 % smaller.
    ProbeArch("riscv64", "riscv64-linux-musl", "baseline_rv64", "qemu-riscv64-static",
              "64-bit RISC-V (RV64GC)", "-mrelax"),
)}


def arch_names() -> list[str]:
    """The arch names `rtbench probe build --arch` accepts."""
    return list(ARCHES)


def get_arch(name: str) -> ProbeArch:
    """The ProbeArch called name; UnknownArch lists the known ones."""
    arch = ARCHES.get(name)
    if arch is None:
        raise UnknownArch(f"arch {name!r}: no probe build for it; use one of "
                          f"{', '.join(ARCHES)}")
    return arch


def probe_version(source: Path = PROBE_SOURCE) -> str:
    """RTPROBE_VERSION from the probe sources."""
    header = source / "src" / "rtprobe.h"
    match = re.search(r'#define\s+RTPROBE_VERSION\s+"([^"]+)"', _read(header))
    if match is None:
        raise ProbeBuildError(f"{header}: no RTPROBE_VERSION; is this rtbench's probe source?")
    return match.group(1)


def build_inputs(source: Path = PROBE_SOURCE) -> list[Path]:
    """Every file a board build reads: the probe sources, headers, help texts, generator,
    Makefile and port files, and the Python code that builds and trims it."""
    probe_files = [path for folder in ("src", "tools", "port")
                   for path in (source / folder).rglob("*") if path.is_file()
                   and "__pycache__" not in path.parts]
    return sorted(probe_files) + [source / "Makefile", *BUILD_CODE]


def source_digest(source: Path = PROBE_SOURCE) -> str:
    """A short digest of every build input and the build flags (any change: a new build)."""
    digest = hashlib.sha256()
    for path in build_inputs(source):
        name = path.relative_to(source) if path.is_relative_to(source) else path.name
        digest.update(str(name).encode() + b"\0" + path.read_bytes() + b"\0")
    digest.update("\0".join((SMALL_CFLAGS, SMALL_LDFLAGS, *BOARD_MAKE_ARGS)).encode())
    return digest.hexdigest()[:12]


def arch_digest(spec: ProbeArch, source: Path = PROBE_SOURCE) -> str:
    """A short digest of how one arch is built (target, CPU, flags, port files)."""
    digest = hashlib.sha256(repr(spec).encode())
    for name in spec.port:
        digest.update((source / "port" / name).read_bytes())
    return digest.hexdigest()[:8]


def cache_root() -> Path:
    """$XDG_CACHE_HOME/rtbench/probes (default ~/.cache/rtbench/probes)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "rtbench" / "probes"


def cached_path(arch: str, source: Path = PROBE_SOURCE, *, simulation: bool = False) -> Path:
    """Where the probe for arch is (or will be) cached for the current sources; simulation:
    the full build, with --simulate (see build_probe)."""
    spec = get_arch(arch)
    key = f"{probe_version(source)}-{source_digest(source)}"
    variant = "-simulation" if simulation else ""
    return cache_root() / key / f"{arch}-{arch_digest(spec, source)}{variant}" / "rtprobe"


def zig_available() -> bool:
    """True when the ziglang package is installed in this Python."""
    return importlib.util.find_spec("ziglang") is not None


# make's own line about a failed recipe ("make[1]: *** [Makefile:97: x] Error 1")
MAKE_FAILURE = re.compile(r"make(\[\d+\])?: \*\*\* ")


def build_probe(arch: str, *, source: Path = PROBE_SOURCE, force: bool = False,
                jobs: int | None = None, timeout_s: float = 900.0,
                simulation: bool = False) -> Path:
    """The cached static stripped board rtprobe for arch, building it first when needed.
    simulation: the full build instead (the native build's features, --simulate included;
    not held to the size bound), which board targets push for simulated runs only."""
    spec = get_arch(arch)
    if not (source / "Makefile").is_file():
        raise ProbeBuildError(f"{source}: no probe sources here (this rtbench was installed "
                              "without them); reinstall it: pip install --force-reinstall "
                              "rtbench")
    target = cached_path(arch, source, simulation=simulation)
    if target.is_file() and not force:
        return target
    with _arch_lock(arch):
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            lock = (target.parent / ".lock").open("a")
        except OSError as exc:
            raise ProbeBuildError(f"probe build for {arch}: cannot lock the cache directory "
                                  f"{target.parent} ({exc.strerror})") from exc
        with lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if target.is_file() and not force:
                return target  # built by another thread or process while this one waited
            make_args = ("STATIC=1",) if simulation else BOARD_MAKE_ARGS
            return _build(spec, arch, source, target, jobs, timeout_s, make_args)


def first_cause(stderr: str) -> str:
    """The line of a failed build's output that says why: the first compiler, linker or
    ltolink error, not make's own `*** ... Error 1` that follows it."""
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    causes = [ln for ln in lines if not MAKE_FAILURE.match(ln)
              and ("error" in ln.lower() or ln.startswith("ltolink:"))]
    return (causes or lines or ["no message"])[0]


def _arch_lock(arch: str) -> threading.Lock:
    """This process's lock for building arch (made on first use)."""
    with _LOCKS_GUARD:
        return _BUILD_LOCKS.setdefault(arch, threading.Lock())


def _build(spec: ProbeArch, arch: str, source: Path, target: Path, jobs: int | None,
           timeout_s: float, make_args: tuple[str, ...]) -> Path:
    """Build the probe for arch with Zig into its cache place target."""
    if not zig_available():
        raise ProbeBuildError(f"building a probe for {arch} needs Zig's C compiler: "
                              "pip install 'rtbench[cross]'")
    build_dir = target.parent / "build"
    build_dir.mkdir(parents=True, exist_ok=True)
    command = ["make", "-C", str(source), f"-j{jobs or os.cpu_count() or 1}",
               *make_args, f"PYTHON={sys.executable}",
               f"CC={spec.cc()}", f"LINK_CC={spec.link_cc()}", f"BUILD={build_dir}",
               f"CFLAGS={SMALL_CFLAGS}", f"LDFLAGS={SMALL_LDFLAGS}",
               "LDLIBS=" + " ".join(["-lpthread -lm -lrt",
                                     *(str(source / "port" / f) for f in spec.port)]),
               f"{build_dir}/rtprobe"]
    try:
        code, _, err_bytes = run_bounded(command, timeout_s, f"probe build for {arch}")
    except CommandTimeout as exc:
        raise ProbeBuildError(f"probe build for {arch}: no result in {timeout_s:g} s") from exc
    except OutputTooLarge as exc:
        raise ProbeBuildError(str(exc)) from exc
    except OSError as exc:
        raise ProbeBuildError(f"probe build for {arch}: cannot run make ({exc.strerror})") \
            from exc
    if code != 0:
        stderr = err_bytes.decode("utf-8", errors="replace")
        log = build_dir / "build-error.log"
        try:
            log.write_text(stderr)
            where = f" (make's whole output: {log})"
        except OSError:
            where = ""
        raise ProbeBuildError(f"probe build for {arch} failed: {first_cause(stderr)}{where}")
    built = build_dir / "rtprobe"
    try:
        trim_unloaded(built)
    except ElfLayoutError as exc:
        raise ProbeBuildError(f"probe build for {arch}: cannot trim {built} ({exc})") from exc
    temp = target.with_name(f".rtprobe.{os.getpid()}")
    temp.write_bytes(built.read_bytes())
    temp.chmod(0o755)
    temp.replace(target)
    return target


def file_sha256(path: Path) -> str:
    """The hex sha256 of a file."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _read(path: Path) -> str:
    """A text file, or ProbeBuildError naming it."""
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ProbeBuildError(f"{path}: cannot read ({exc.strerror})") from exc
