"""`rtprobe --version` and `rtprobe sysinfo`: the calls and how their answers are read."""

from __future__ import annotations

import json
from typing import Any, Protocol

VERSION_ARGS = ["--version"]
SYSINFO_ARGS = ["sysinfo"]


class ProbeAnswerError(Exception):
    """rtprobe failed a call or printed what rtbench cannot read; str() is one line."""


class Answer(Protocol):
    """A finished rtprobe call as a target returns it."""

    @property
    def returncode(self) -> int:
        """The exit status of the call."""
        ...

    @property
    def stdout(self) -> str:
        """What it printed on stdout."""
        ...

    @property
    def stderr(self) -> str:
        """What it printed on stderr."""
        ...


def last_error_line(answer: Answer, fallback: str = "no message") -> str:
    """The last line rtprobe wrote to stderr (what it said when it failed)."""
    return (answer.stderr.strip().splitlines() or [fallback])[-1]


def version_of(answer: Answer) -> str | None:
    """The version in what `rtprobe --version` printed (its last word); None when the
    call failed or printed nothing."""
    words = answer.stdout.split()
    return words[-1] if answer.returncode == 0 and words else None


def sysinfo_of(answer: Answer) -> dict[str, Any]:
    """The facts `rtprobe sysinfo` printed (a JSON object); ProbeAnswerError when the
    call failed or its output is not one."""
    if answer.returncode != 0:
        raise ProbeAnswerError(f"rtprobe sysinfo failed (exit {answer.returncode}): "
                               f"{last_error_line(answer)}")
    try:
        info = json.loads(answer.stdout)
    except json.JSONDecodeError as exc:
        raise ProbeAnswerError(f"rtprobe sysinfo printed invalid JSON ({exc})") from exc
    if not isinstance(info, dict):
        raise ProbeAnswerError("rtprobe sysinfo did not print a JSON object")
    return info
