"""Text from users, files and boards made safe for where it is shown.

Suite, scenario, test and host names, kernel strings, commands and reasons are data:
rich must not read `[...]` in them as markup, a terminal must not receive their escape
sequences, and matplotlib must not read `$...$` as mathtext.  Every place that hands such
text to rich or matplotlib goes through one of these functions; HTML is escaped by Jinja2.
"""

from __future__ import annotations

import re

from rich.markup import escape

# C0 controls but tab and newline, DEL, the C1 controls (CSI, OSC, ... as one byte), and
# the invisible characters that reorder or hide what a terminal shows: the bidirectional
# marks, embeddings, overrides and isolates (U+202E makes "exe.txt" read "txt.exe"), the
# line and paragraph separators, zero-width characters and the byte order mark.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e"
                      "\u2060-\u2069\ufeff]")
# An escape sequence whose parameters would otherwise remain as visible junk.
_ESCAPE_SEQUENCE = re.compile(r"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)?)")


# A run of backslashes before a `[` that escape() leaves alone (not tag-like).
_BACKSLASH_BEFORE_BRACKET = re.compile(r"(\\+)(?=\[)(?!\[[a-z#/@][^[]*?\])")

# Longer text is cut for display (a table cannot show a megabyte name anyway).
MAX_DISPLAY = 2000


def for_terminal(value: object) -> str:
    """str(value) without escape sequences and control characters (tab, newline kept),
    cut to MAX_DISPLAY characters."""
    text = str(value)
    if len(text) > 4 * MAX_DISPLAY:
        text = text[:4 * MAX_DISPLAY]
    text = _CONTROL.sub("", _ESCAPE_SEQUENCE.sub("", text))
    return text if len(text) <= MAX_DISPLAY else text[:MAX_DISPLAY - 1] + "…"


def for_rich(value: object) -> str:
    """str(value) ready to embed in rich markup: no control characters, brackets literal.

    rich's escape() protects tag-like brackets (`[b]`, `[/x]`), but rich also reads a
    backslash right before any other `[` as an escape and drops it, so one more backslash
    goes there first."""
    text = _BACKSLASH_BEFORE_BRACKET.sub(lambda m: m.group(1) + "\\", for_terminal(value))
    return escape(text)


def for_matplotlib(value: object) -> str:
    """str(value) as literal matplotlib text: `$` cannot start mathtext, no controls."""
    return for_terminal(value).replace("$", r"\$")
