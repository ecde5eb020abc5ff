"""CPU lists as the kernel writes them ("0-3,6"): parse and format."""

from __future__ import annotations

# The highest CPU number Linux can have (NR_CPUS is at most 8192).
MAX_CPU = 8191


def parse_cpulist(text: str) -> set[int]:
    """Parse "0-3,6" into a set of CPU numbers; ValueError names a bad part.

    Ranges must go upwards and stay within MAX_CPU (so a typo cannot ask for
    billions of CPUs).
    """
    cpus: set[int] = set()
    for part in text.split(","):
        first, dash, last = part.strip().partition("-")
        if not first.isdigit() or (dash and not last.isdigit()):
            raise ValueError(f"{part!r} is not a CPU number or range such as 0-3")
        low, high = int(first), int(last or first)
        if high < low:
            raise ValueError(f"range {part} goes backwards")
        if high > MAX_CPU:
            raise ValueError(f"CPU {high} is above {MAX_CPU}, the highest Linux supports")
        cpus.update(range(low, high + 1))
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
