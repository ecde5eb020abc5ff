"""Link a probe with Zig's C compiler, then redo its LTO link with extra LLVM options.

`python -m rtbench.rtprobe.build.ltolink OPTION... -- ZIG_CC_COMMAND...`: Zig's `cc` passes
no `-mllvm` option to the link, where link-time optimisation generates the code, and it
refuses `-Wl,-mllvm,...`.  This runs the Zig link verbosely (`-v`, which prints its
`ld.lld` command line), then runs that `ld.lld` command again with `-mllvm OPTION` for
each OPTION, writing the same output file.  build.py uses it for powerpc, whose global
merging must be turned off in the link (BENCHMARKS.md, "Board probe sizes").
"""

from __future__ import annotations

import subprocess
import sys

LLD_PREFIX = "ld.lld "


class LinkError(Exception):
    """The link could not be redone; the message is one line."""


def split_command(argv: list[str]) -> tuple[list[str], list[str]]:
    """The LLVM options before `--` and the Zig cc command after it."""
    if "--" not in argv:
        raise LinkError("usage: python -m rtbench.rtprobe.build.ltolink OPTION... -- ZIG_CC...")
    cut = argv.index("--")
    options, command = argv[:cut], argv[cut + 1:]
    if not options or not command:
        raise LinkError("ltolink needs at least one LLVM option and a Zig cc command")
    return options, command


def output_of(command: list[str]) -> str | None:
    """The file a cc command writes (its `-o` argument), if it names one."""
    for k, word in enumerate(command[:-1]):
        if word == "-o":
            return command[k + 1]
    return None


def lld_arguments(verbose_output: str, options: list[str], output: str | None = None
                  ) -> list[str]:
    """The arguments of the `ld.lld` line in verbose_output that makes the program
    (writes output, when given, and is not a relocatable `-r` link: with a cold cache Zig
    first links its crt1.o that way), with `-mllvm OPTION` for each option put first."""
    found = []
    for line in verbose_output.splitlines():
        if not line.startswith(LLD_PREFIX):
            continue
        words = line[len(LLD_PREFIX):].split()
        if "-r" in words or (output is not None and output_of(words) != output):
            continue
        found.append(words)
    if len(found) != 1:
        raise LinkError(f"Zig's verbose link printed {len(found)} ld.lld command lines "
                        "for the program, expected 1; build this arch without ltolink")
    extra = [word for option in options for word in ("-mllvm", option)]
    return extra + found[0]


def zig_of(command: list[str]) -> list[str]:
    """The Zig part of a Zig cc command (what comes before `cc`)."""
    if "cc" not in command[1:]:
        raise LinkError(f"not a Zig cc command: {' '.join(command[:4])}; "
                        "give ltolink `zig cc ...` or `python -m ziglang cc ...`")
    return command[:command.index("cc", 1)]


def link(options: list[str], command: list[str]) -> int:
    """Run the Zig link with -v, then its ld.lld again with the LLVM options; exit code."""
    if any(any(ch.isspace() for ch in word) for word in command):
        raise LinkError("ltolink cannot redo a link whose arguments contain spaces; "
                        "use a build directory without spaces")
    first = subprocess.run([*command, "-v"], capture_output=True, text=True, check=False)
    printed = first.stdout + first.stderr
    if first.returncode != 0:
        sys.stderr.write(printed)
        return first.returncode
    arguments = lld_arguments(printed, options, output_of(command))
    second = subprocess.run([*zig_of(command), "ld.lld", *arguments], check=False)
    return second.returncode


def main(argv: list[str]) -> int:
    """Entry point: exit 0 when both links succeed, 1 with one line when ltolink fails."""
    try:
        options, command = split_command(argv)
        return link(options, command)
    except LinkError as exc:
        print(f"ltolink: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"ltolink: cannot run the link ({exc.strerror})", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
