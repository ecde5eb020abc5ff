"""Kernel versions in version order: 6.1 < 6.6 < 6.12 < 6.13 < 6.18, not as strings."""

from __future__ import annotations

import re

_PARTS = re.compile(r"\d+|[^\d.\-_+~]+")
_END = (0, 1, "")  # the end of the text: after an rc, before a number or a word


def kernel_sort_key(text: str) -> tuple[tuple[int, int, str], ...]:
    """A key that orders kernel release strings as versions (numbers as numbers).

    Each part becomes (kind, number, word) so that numbers and words compare; the end
    of the text sorts after "-rcN" (6.12-rc3 < 6.12) and before anything else that
    follows (6.12 < 6.12.1 < 6.12-rt5).
    """
    key: list[tuple[int, int, str]] = []
    for part in _PARTS.findall(text):
        if part.isdigit():
            key.append((1, int(part), ""))
        elif part.lower() == "rc":
            key.append((0, 0, "rc"))
        else:
            key.append((2, 0, part.lower()))
    key.append(_END)
    return tuple(key)
