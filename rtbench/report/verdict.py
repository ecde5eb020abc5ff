"""The verdict of a run as lines for the terminal (the HTML report renders the same fields)."""

from __future__ import annotations

import re

from rich.console import Group
from rich.table import Table
from rich.text import Text

from rtbench.analysis.verdict import Throttled, Verdict
from rtbench.report.text import for_terminal

NO_CAUSE_ACTION = ("no preflight fact explains it: see when the worst samples happened "
                   "(`rtbench show RUN`) and trace them with rtprobe --break-on")
LOST_ACTION = ("the link to the target broke, not the latency: check the board's power "
               "and network (or cable), then run the suite again; the finished windows "
               "are stored")


def throttled_text(t: Throttled) -> str:
    """One sentence on a measurement that RT throttling interrupted."""
    return (f"{t.label}: {t.gaps} gaps of ~{t.gap_ns / 1e6:.0f} ms about "
            f"{t.period_us / 1e6:g} s apart — RT throttling stopped its busy loop; "
            "measure it with `echo -1 > /proc/sys/kernel/sched_rt_runtime_us` "
            "(restore the old value after)")


def actions(verdict: Verdict) -> list[str]:
    """What to do, most useful first (empty when the run passed)."""
    if verdict.status == "lost":
        return [LOST_ACTION]
    todo = [throttled_text(t) for t in verdict.throttled]
    todo += [c.action for c in verdict.causes if c.action and
             not (c.name == "rt_throttling" and verdict.throttled)]
    if not todo and verdict.failed:
        todo.append(NO_CAUSE_ACTION)
    return todo


def verdict_lines(verdict: Verdict) -> list[tuple[str, str]]:
    """(style, text) lines: headline, likely causes, what to do, notes."""
    style = {"ok": "bold green", "fail": "bold red", "break": "bold red"}.get(
        verdict.status, "bold yellow")
    lines = [(style, f"verdict: {verdict.headline}")]
    if verdict.not_as_defined:
        # short enough for 60 columns: a wrapped header would restart at column 0
        lines.append(("bold yellow", "scenarios not as defined (not what was asked for):"))
        lines += [("yellow", f"  - {flag}") for flag in verdict.not_as_defined]
    if verdict.causes:
        lines.append(("", "likely causes (from preflight):"))
        lines += [("", f"  - {c.name} = {c.value}: {c.why}") for c in verdict.causes]
    todo = actions(verdict)
    if todo:
        lines.append(("", "what to do:"))
        lines += [("", f"  - {line}") for line in todo]
    lines += [("yellow", f"note: {note}") for note in verdict.notes]
    return lines


# The head of a verdict line that its wrapped lines are indented past.
_HANGING = re.compile(r"^(\s*- |verdict: |note: )")


def verdict_text(verdict: Verdict) -> Group:
    """The verdict, each line wrapped under its own text (a bullet's continuation lines
    start below the bullet's first word, never at column 0); names are never markup."""
    lines: list[Table | Text] = []
    for style, line in verdict_lines(verdict):
        text = for_terminal(line)
        head = _HANGING.match(text)
        if head is None:
            lines.append(Text(text, style=style or ""))
            continue
        prefix = head.group(1)
        grid = Table.grid()
        grid.add_column(no_wrap=True)
        grid.add_column(overflow="fold")
        grid.add_row(Text(prefix, style=style or ""),
                     Text(text[len(prefix):], style=style or ""))
        lines.append(grid)
    return Group(*lines)
