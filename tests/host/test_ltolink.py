"""ltolink: the LTO link redone with LLVM options (powerpc's global merging off)."""

from __future__ import annotations

import sys

import pytest

from rtbench.rtprobe.build import first_cause, get_arch
from rtbench.rtprobe.build.ltolink import LinkError, lld_arguments, main, split_command, zig_of

VERBOSE = ("clang version 22.1.8\n"
           "ld.lld --error-limit=0 -mllvm -float-abi=soft --lto-O2 -o /b/rtprobe /b/main.o\n")


def test_options_and_command_are_split_at_the_double_dash() -> None:
    """LLVM options come before `--`, the Zig cc command after it."""
    options, command = split_command(["-a=1", "-b", "--", "zig", "cc", "-flto"])
    assert options == ["-a=1", "-b"]
    assert command == ["zig", "cc", "-flto"]


@pytest.mark.parametrize("argv", [["zig", "cc"], ["--", "zig", "cc"], ["-a", "--"]])
def test_incomplete_command_lines_are_refused(argv: list[str]) -> None:
    """No `--`, no option or no command: LinkError."""
    with pytest.raises(LinkError):
        split_command(argv)


def test_lld_line_gets_the_options_first() -> None:
    """Each option becomes `-mllvm OPTION` before Zig's own ld.lld arguments."""
    arguments = lld_arguments(VERBOSE, ["-enable-global-merge=false"])
    assert arguments == ["-mllvm", "-enable-global-merge=false", "--error-limit=0", "-mllvm",
                         "-float-abi=soft", "--lto-O2", "-o", "/b/rtprobe", "/b/main.o"]


@pytest.mark.parametrize("output", ["clang version 22.1.8\n", VERBOSE + VERBOSE])
def test_no_or_two_lld_lines_are_refused(output: str) -> None:
    """The link is redone only from exactly one ld.lld line."""
    with pytest.raises(LinkError, match="ld.lld command lines"):
        lld_arguments(output, ["-x"])


# what Zig prints with a cold cache: its crt1.o relinked (-r) before the program
COLD = ("ld.lld -r --error-limit=0 -m elf32ppclinux -static -o zc/o/7a/crt1.o zc/o/76/crt1.o\n"
        + VERBOSE)


def test_the_program_link_is_chosen_over_zigs_own_links() -> None:
    """A cold cache's relocatable crt1.o link is not the program's; a link writing another
    file than the command's -o is not either."""
    arguments = lld_arguments(COLD, ["-x"], "/b/rtprobe")
    assert arguments[:2] == ["-mllvm", "-x"] and arguments[-3:] == ["-o", "/b/rtprobe",
                                                                    "/b/main.o"]
    assert lld_arguments(COLD, ["-x"]) == arguments
    with pytest.raises(LinkError, match="printed 0 ld.lld"):
        lld_arguments(COLD, ["-x"], "/b/other")


def test_zig_part_of_the_command() -> None:
    """`python -m ziglang cc ...` -> `python -m ziglang`; no cc: LinkError."""
    assert zig_of(["/py", "-m", "ziglang", "cc", "-target", "t"]) == ["/py", "-m", "ziglang"]
    with pytest.raises(LinkError, match="not a Zig cc command"):
        zig_of(["gcc", "-o", "x"])


def test_arguments_with_spaces_fail_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    """A path with a space cannot survive Zig's printed command line: exit 1, one line."""
    code = main(["-x", "--", sys.executable, "-m", "ziglang", "cc", "-o", "/a b/rtprobe"])
    assert code == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "spaces" in err


def test_powerpc_links_through_ltolink_and_others_do_not() -> None:
    """Only powerpc's link carries LLVM options; its compile stays plain Zig cc."""
    powerpc = get_arch("powerpc")
    assert "-m rtbench.rtprobe.build.ltolink -enable-global-merge=false -- " in powerpc.link_cc()
    assert "ltolink" not in powerpc.cc()
    assert "ltolink" not in get_arch("mips").link_cc()


def test_a_failed_build_names_its_first_cause_not_makes_line() -> None:
    stderr = ("cc -c x.c\n"
              "ltolink: Zig's verbose link printed 0 ld.lld command lines, expected 1; "
              "build this arch without ltolink\n"
              "make[1]: *** [Makefile:97: /c/build/rtprobe] Error 1\n"
              "make: *** [Makefile:12: all] Error 2\n")
    assert first_cause(stderr).startswith("ltolink: Zig's verbose link printed 0")
    compiler = "src/a.c:3:1: error: unknown type name 'x'\nmake: *** [a.o] Error 1\n"
    assert first_cause(compiler) == "src/a.c:3:1: error: unknown type name 'x'"
    assert first_cause("make: *** [a] Error 1\n") == "make: *** [a] Error 1"
    assert first_cause("") == "no message"
