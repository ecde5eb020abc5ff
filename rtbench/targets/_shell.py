"""What board targets share: shell quoting, arch detection, the probe's place and checksum.

Everything here works through a target's `run()` with nothing but /bin/sh and the usual
busybox applets (uname, head, od, sha256sum or md5sum, mkdir, rm).
"""

from __future__ import annotations

import hashlib
import shlex
from collections.abc import Callable
from pathlib import Path

from rtbench.targets.base import CommandResult, TargetError

# Where the probe and the lock live on a board unless the URI says ?dir=...
DEFAULT_REMOTE_DIR = "/tmp/rtbench"
# The lifeline: rtbench writes a line to a board process's stdin every LIFELINE_PERIOD_S;
# the board ends the process when its stdin closes or stays silent LIFELINE_TICKS seconds
# (a cut link: the board's sshd may keep the session, and its pipes, open for many minutes).
LIFELINE_PERIOD_S = 1.0
LIFELINE_TICKS = 10

RunFn = Callable[[str], CommandResult]


def quote(words: list[str]) -> str:
    """A /bin/sh command line running words literally."""
    return " ".join(shlex.quote(w) for w in words)


def arch_from_facts(machine: str, elf_header: bytes, cpu_features: str) -> str:
    """The probe arch for a target from `uname -m`, the ELF header of /bin/sh and the
    /proc/cpuinfo Features line; TargetError when rtbench has no probe for it.

    32-bit ARM gets the hard-float ARMv7 build only when the CPU is ARMv7 or newer and
    has VFPv3; every other ARM gets the soft-float ARMv5TE build, which runs on any.
    MIPS reports the same `uname -m` for both byte orders, so /bin/sh's ELF decides.
    """
    m = machine.strip()
    little = len(elf_header) > 5 and elf_header[5] == 1
    big = len(elf_header) > 5 and elf_header[5] == 2
    if m == "x86_64":
        return "x86_64"
    if m in ("i386", "i486", "i586", "i686"):
        return "i386"
    if m in ("aarch64", "arm64"):
        return "aarch64"
    if m.startswith("arm"):
        return _arm32(m, cpu_features, big)
    if m in ("mips", "mips64"):
        if big:
            return "mips"
        if little:
            return "mipsel"
        raise TargetError(f"target arch {m}: cannot tell the byte order (no ELF /bin/sh)")
    if m in ("ppc", "powerpc", "ppc64"):
        return "powerpc"
    if m == "ppc64le":
        return "ppc64le"
    if m == "riscv64":
        return "riscv64"
    raise TargetError(f"target arch {m!r}: rtbench has no probe for it; build one with "
                      "CROSS_COMPILE (docs/cross-compiling.md) and pass --probe")


def _arm32(machine: str, cpu_features: str, big_endian: bool) -> str:
    """armhf or armel for a 32-bit ARM userland (see arch_from_facts)."""
    if big_endian:
        raise TargetError(f"target arch {machine} big-endian: rtbench has no probe for it")
    version = "".join(ch for ch in machine[3:6] if ch.isdigit())
    features = set(cpu_features.split())
    if version and int(version) >= 7 and features & {"vfpv3", "vfpv3d16", "vfpv4", "vfpd32"}:
        return "armhf"
    return "armel"


# One shell command printing the three facts, each behind a tag.
FACTS_COMMAND = (
    "echo \"machine=$(uname -m)\"; "
    "echo \"elf=$(head -c 6 /bin/sh 2>/dev/null | od -An -tx1 | tr -d ' \\n')\"; "
    "echo \"features=$(grep -m1 -i '^features' /proc/cpuinfo 2>/dev/null | cut -d: -f2)\""
)


def detect_arch(run: RunFn) -> str:
    """The probe arch of the target that `run` reaches (see arch_from_facts)."""
    done = run(FACTS_COMMAND)
    facts: dict[str, str] = {}
    for line in done.stdout.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            facts[key.strip()] = value.strip()
    machine = facts.get("machine", "")
    if done.returncode != 0 or not machine:
        raise TargetError(f"cannot tell the target's arch (uname -m printed "
                          f"{machine!r}, exit {done.returncode})")
    try:
        header = bytes.fromhex(facts.get("elf", ""))
    except ValueError:
        header = b""
    return arch_from_facts(machine, header, facts.get("features", ""))


def checksum_command(path: str) -> str:
    """Shell printing 'sha256 HEX' or 'md5 HEX' of path (busybox may lack one of them)."""
    q = shlex.quote(path)
    return (f"if command -v sha256sum >/dev/null 2>&1; then "
            f"echo sha256 $(sha256sum {q} 2>/dev/null | cut -d' ' -f1); "
            f"elif command -v md5sum >/dev/null 2>&1; then "
            f"echo md5 $(md5sum {q} 2>/dev/null | cut -d' ' -f1); "
            f"else echo none; fi")


def local_digest(path: Path, kind: str) -> str:
    """The hex sha256 or md5 of a host file."""
    data = path.read_bytes()
    return hashlib.sha256(data).hexdigest() if kind == "sha256" else hashlib.md5(data).hexdigest()


def remote_matches(run: RunFn, remote: str, local: Path) -> bool:
    """True when the target's file at remote has the same checksum as local."""
    done = run(checksum_command(remote))
    words = done.stdout.split()
    if len(words) != 2 or words[0] not in ("sha256", "md5"):
        if words[:1] == ["none"]:
            raise TargetError("the target has neither sha256sum nor md5sum; cannot verify "
                              "the probe")
        return False
    return words[1] == local_digest(local, words[0])


def probe_remote_path(remote_dir: str, local: Path) -> str:
    """Where a probe binary lives on the target: named by its content, so a changed
    probe is a new file and an unchanged one is reused."""
    digest = hashlib.sha256(local.read_bytes()).hexdigest()[:16]
    return f"{remote_dir.rstrip('/')}/rtprobe-{digest}"


def private_dir_command(path: str) -> str:
    """Shell that makes path a directory only this user can enter (mode 0700), creating
    it when absent; exit 1 with a reason when it is a symlink, not a directory, or owned
    by someone else (who could swap the probe between its check and its start)."""
    # the path is named once (a serial line keeps about 1000 characters)
    q = shlex.quote(path)
    return (f"rtb_d={q}; "
            "[ -e \"$rtb_d\" ] || [ -L \"$rtb_d\" ] || mkdir -p -m 700 \"$rtb_d\" || exit 1; "
            "if [ -L \"$rtb_d\" ] || [ ! -d \"$rtb_d\" ]; then echo 'is not a directory'; "
            "exit 1; fi; "
            "set -- $(ls -ldn \"$rtb_d\"); me=$(id -u 2>/dev/null); "
            "if [ -z \"$me\" ] || [ \"$3\" != \"$me\" ]; then "
            "echo \"belongs to uid $3, not to this user (uid ${me:-unknown})\"; exit 1; fi; "
            "case $1 in d???------*) ;; *) chmod 700 \"$rtb_d\" || exit 1;; esac")


def private_dir_error(done: CommandResult) -> str:
    """Why private_dir_command failed, in a few words."""
    said = (done.stdout.strip().splitlines() or [""])[-1]
    return said or done.stderr.strip()[:160] or f"exit {done.returncode}"


def lifeline_watch(then: str) -> str:
    """A pipeline that reads the lifeline on fd 3 and runs the shell words `then` when it
    closes or stays silent for LIFELINE_TICKS seconds (POSIX sh: no `read -t`, so a
    ticker and the reader feed one counting loop)."""
    return ("( ( while sleep 1; do echo t; done ) & "
            "while read -r l <&3; do echo b; done; echo e ) 2>/dev/null | "
            "( n=0; while read -r w; do case $w in b) n=0;; "
            f"t) n=$((n+1)); [ $n -lt {LIFELINE_TICKS} ] || break;; *) break;; esac; done; "
            f"{then} )")


def under_lifeline(command: str) -> str:
    """Shell that prints its pid, guards its process group with the lifeline (stdin),
    then runs command (which should exec) with stdin from /dev/null.  When the lifeline
    ends the group gets SIGTERM first (an rtprobe then puts tracefs back), SIGKILL 2 s
    later; the watcher ignores the SIGTERM it sends its own group."""
    watch = lifeline_watch("trap '' TERM; kill -TERM -$$ 2>/dev/null; sleep 2; "
                           "kill -KILL -$$ 2>/dev/null")
    return (f"echo RTBENCH-PID $$; exec 3<&0; {{ {watch}; }} </dev/null >/dev/null 2>&1 & "
            f"exec 3<&- </dev/null; {command}")


def lock_command(lock_dir: str) -> str:
    """Shell that takes the target's run lock (a directory holding the keeper's pid),
    clearing a stale one, then holds it while its stdin (the lifeline) lives; exit 75
    when busy."""
    q = shlex.quote(lock_dir)
    return (f"if ! mkdir {q} 2>/dev/null; then "
            f"old=$(cat {q}/pid 2>/dev/null); "
            f"if [ -n \"$old\" ] && kill -0 \"$old\" 2>/dev/null; then "
            f"echo \"busy $old\"; exit 75; fi; "
            f"rm -rf {q}; mkdir {q} || exit 75; fi; "
            f"echo $$ > {q}/pid; echo locked; "
            f"exec 3<&0; {lifeline_watch(f'rm -rf {q}; kill -KILL -$$ 2>/dev/null')}")
