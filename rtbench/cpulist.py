"""CPU lists as the kernel writes them ("0-3,6"): parse and format."""

from __future__ import annotations


def parse_cpulist(text: str) -> set[int]:
    """Parse "0-3,6" into a set of CPU numbers; ValueError when it is not a CPU list."""
    cpus: set[int] = set()
    for part in text.split(","):
        first, _, last = part.partition("-")
        cpus.update(range(int(first), int(last or first) + 1))
    return cpus


def format_cpulist(cpus: set[int] | list[int]) -> str:
    """Format CPU numbers as a compact list such as "0-3,6"."""
    ordered = sorted(set(cpus))
    parts: list[str] = []
    i = 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and ordered[j + 1] == ordered[j] + 1:
            j += 1
        parts.append(str(ordered[i]) if i == j else f"{ordered[i]}-{ordered[j]}")
        i = j + 1
    return ",".join(parts)
