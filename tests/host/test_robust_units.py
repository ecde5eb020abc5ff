"""Small pieces of the robustness work: text for rich/terminal/matplotlib, linear line
reading, bounded CPU lists, owners, report permissions."""

from __future__ import annotations

import os
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console
from rich.text import Text

from rtbench.report.text import MAX_DISPLAY, for_matplotlib, for_rich, for_terminal
from rtbench.run.pump import LineBuffer
from rtbench.run.util.owner import current_owner, owner_dead
from rtbench.util.cpulist import parse_cpulist


def rendered(markup: str) -> str:
    """What rich prints for markup (no colours, wide)."""
    console = Console(width=10_000, color_system=None, emoji=False, record=True,
                      file=open(os.devnull, "w"))  # noqa: SIM115 - closed with the console
    console.print(markup, highlight=False, soft_wrap=True)
    return console.export_text().rstrip("\n")


@given(st.text(alphabet=st.characters(blacklist_categories=("Cc", "Cs", "Cf", "Zl", "Zp",
                                                             "Cn"),
                                       blacklist_characters="\\"), max_size=60))
def test_for_rich_prints_the_text_itself(text: str) -> None:
    """Any text without control or invisible characters (format characters such as the
    bidi overrides and zero-width spaces, line and paragraph separators: for_rich drops
    them, tests/host/test_corpus.py's BIDI cases) prints exactly as itself, brackets
    included.

    (Known gap: a backslash right before a `[` that is not tag-like can lose the
    backslash; rich.markup.escape leaves that case alone.)"""
    assert rendered("[bold]" + for_rich(text) + "[/bold]") == Text(text).plain


def test_for_terminal_strips_escape_sequences() -> None:
    """ANSI and OSC sequences and other controls never reach the terminal."""
    assert for_terminal("\x1b[2J\x1b]0;pwned\x07clear\x1b[31mred\x00\x9b") == "clearred"
    assert for_terminal("tab\there\nnext") == "tab\there\nnext"
    assert len(for_terminal("x" * 10**6)) == MAX_DISPLAY


def test_for_matplotlib_is_literal() -> None:
    """`$` cannot start mathtext."""
    assert for_matplotlib("$x^2$") == r"\$x^2\$"


def test_linebuffer_is_linear() -> None:
    """A 40 MB line in 64 KiB chunks is read in well under a second (it was quadratic)."""
    buf = LineBuffer()
    chunk = b"x" * 65536
    started = time.perf_counter()
    for _ in range(40 * 16):
        assert buf.feed(chunk) == []
    lines = buf.feed(b"y\nnext")
    assert time.perf_counter() - started < 2.0
    assert len(lines) == 1 and len(lines[0][1]) == 40 * 2**20 + 1
    assert buf.rest() == "next"


@given(st.lists(st.binary(max_size=20), max_size=20))
def test_linebuffer_splits_like_bytes_split(chunks: list[bytes]) -> None:
    """Feeding chunks gives the lines of the joined stream, numbered, and the rest."""
    buf = LineBuffer()
    got = [line for chunk in chunks for _, line in buf.feed(chunk)]
    *lines, rest = b"".join(chunks).split(b"\n")
    assert got == [ln.decode("utf-8", errors="replace") for ln in lines]
    assert buf.rest() == rest.decode("utf-8", errors="replace")


@pytest.mark.parametrize("text", ["1-0", "0-99999999999", "8192", "a", "1-", "-1", ""])
def test_cpulist_refuses(text: str) -> None:
    """Backwards ranges, CPUs beyond Linux's limit and junk are refused at once."""
    with pytest.raises(ValueError):
        parse_cpulist(text)


def test_owner_alive_and_dead() -> None:
    """This process is alive; a pid that does not exist (or another boot) is dead."""
    me = current_owner()
    assert not owner_dead(me)
    assert owner_dead({**me, "pid": 2**22 + 12345})
    assert owner_dead({**me, "boot_id": "another-boot"})
    assert not owner_dead({**me, "hostname": "another-host", "pid": 2**22 + 12345})
    assert not owner_dead(None)


def test_report_follows_umask(tmp_path: Path) -> None:
    """The HTML report is written with 0666 less the umask (private under 077)."""
    from rtbench.bundle import RunDetail
    from rtbench.report.html import write_html_report

    run = RunDetail(id=1, suite="s", suite_source="", scale=1.0, status="ok",
                    started_at=datetime.now(timezone.utc), finished_at=None,
                    hostname="h", target="local", kernel="k", arch="x86_64", sysinfo={},
                    preflight=[], tool_versions={}, command_line=[], simulated=False)
    for mask, mode in ((0o077, 0o600), (0o022, 0o644)):
        old = os.umask(mask)
        try:
            path = tmp_path / f"r{mask}.html"
            write_html_report(run, path)
        finally:
            os.umask(old)
        assert path.stat().st_mode & 0o777 == mode


@pytest.mark.parametrize("name", ["a\\[1", "\\[x", "c\\[interval=50us]", "q\\[/bold]",
                                  "x\\\\[b]", "vm[/]x", "nightly[/bold][bold]"])
def test_backslashes_before_brackets_survive_rich(name: str) -> None:
    from rich.console import Console

    from rtbench.report.text import for_rich

    console = Console(width=200, color_system=None)
    with console.capture() as cap:
        console.print(for_rich(name) + " ok", end="")
    assert cap.get() == name + " ok"
