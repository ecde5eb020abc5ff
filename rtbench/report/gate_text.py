"""The regression gate's decisions as terminal lines and as JSON."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rtbench.analysis.gate import INCONCLUSIVE, NO_REGRESSION, REGRESSION, GateCheck, overall


def plain(text: object) -> str:
    """User text for a terminal printed without markup: control characters dropped."""
    return "".join(ch for ch in str(text) if ch.isprintable() or ch == " ")


def gate_lines(checks: Sequence[GateCheck], limit: float) -> list[str]:
    """One line per regression and inconclusive check, then the gate's overall line."""
    lines = []
    for c in checks:
        if c.outcome == REGRESSION:
            lines.append(f"REGRESSION {plain(c.run)} {plain(c.cell)}: {c.metric}: "
                         f"{plain(c.reason)} (limit +{limit:.1%})")
        elif c.outcome == INCONCLUSIVE:
            lines.append(f"INCONCLUSIVE {plain(c.run)} {plain(c.cell)}: {c.metric}: "
                         f"{plain(c.reason)}")
    counts = {o: sum(c.outcome == o for c in checks)
              for o in (REGRESSION, INCONCLUSIVE, NO_REGRESSION)}
    result = overall(checks)
    tally = (f"{counts[REGRESSION]} regression, {counts[INCONCLUSIVE]} inconclusive, "
             f"{counts[NO_REGRESSION]} no regression of {len(checks)} checks")
    if result == REGRESSION:
        lines.append(f"gate: REGRESSION beyond +{limit:.1%} ({tally})")
    elif result == INCONCLUSIVE:
        lines.append(f"gate: INCONCLUSIVE, not a pass: the runs cannot decide every check "
                     f"({tally})")
    else:
        lines.append(f"gate: no regression beyond +{limit:.1%} ({tally})")
    return lines


def gate_json(checks: Sequence[GateCheck], metrics: Sequence[str],
              limit: float) -> dict[str, Any]:
    """The gate's decisions for `compare --json`."""
    return {"metrics": list(metrics), "max_regression": limit, "outcome": overall(checks),
            "checks": [c.__dict__ for c in checks],
            "regressions": [c.__dict__ for c in checks if c.outcome == REGRESSION]}
