"""Preflight: the system knobs that decide real-time results, one small check per knob.

Facts are computed from the JSON that `rtprobe sysinfo` prints (so a remote target is
checked the same way) plus, for the local machine, the steal time in /proc/stat.
"""

from __future__ import annotations

from typing import Any

from rtbench.preflight.knobs import CHECKS, Fact, Severity

__all__ = ["CHECKS", "Fact", "Severity", "run_preflight", "worst_severity"]

_ORDER = {"ok": 0, "info": 1, "warn": 2, "bad": 3}


def run_preflight(sysinfo: dict[str, Any], steal: float | None = None) -> list[dict[str, Any]]:
    """Run every check and return the facts as dicts {name, value, severity, advice}.

    A sysinfo value of an unexpected shape (an older or newer rtprobe) gives an 'info'
    fact saying so instead of an exception: preflight never stops a run.
    """
    facts = []
    for check_class in CHECKS:
        check = check_class()
        try:
            fact = check.evaluate(sysinfo, steal)
        except (TypeError, ValueError, AttributeError, KeyError) as exc:
            fact = Fact(check.name, "unreadable", "info",
                        f"rtprobe sysinfo gave an unexpected value for this knob ({exc})")
        facts.append(fact.as_dict())
    return facts


def worst_severity(facts: list[dict[str, Any]]) -> str:
    """The most serious severity among facts."""
    return max((str(f["severity"]) for f in facts), key=lambda s: _ORDER.get(s, 0), default="ok")
