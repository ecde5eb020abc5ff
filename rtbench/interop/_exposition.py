"""Metric families written as Prometheus text (format 0.0.4) or OpenMetrics 1.0.

The two formats name a counter differently: OpenMetrics has `# TYPE x counter` over
samples `x_total`; the Prometheus text format (what the Pushgateway and GitLab's
metrics reports read) wants the TYPE and HELP lines to name the sample, `x_total`,
or it files the samples as untyped.  A family is described once, by its family name,
and rendered for either.  Label values are escaped (backslash, quote, newline) and
other control characters dropped.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache

OPENMETRICS_TYPE = "application/openmetrics-text; version=1.0.0; charset=utf-8"
PROMETHEUS_TYPE = "text/plain; version=0.0.4; charset=utf-8"


@dataclass
class Family:
    """One metric family: name (no _total), type, help, unit, and its sample lines."""

    name: str
    kind: str  # counter, gauge, histogram
    help: str
    unit: str = ""
    # (name suffix such as "" "_bucket" "_total", rendered labels, value text and
    # timestamp if any)
    samples: list[tuple[str, str, str]] = field(default_factory=list)

    def add(self, labels: Mapping[str, object], value: object, suffix: str = "",
            timestamp: str | None = None) -> None:
        """Append a sample (a counter's gets _total added when rendered); timestamp:
        Unix seconds as text, written after the value (history), or none."""
        self.add_rendered(labels_text(labels), value, suffix, timestamp)

    def add_rendered(self, labels: str, value: object, suffix: str = "",
                     timestamp: str | None = None) -> None:
        """Append a sample whose labels are already labels_text() (shared by families)."""
        if self.kind == "counter":
            suffix = "_total"
        text = _number(value)
        self.samples.append((suffix, labels, text if timestamp is None
                             else f"{text} {timestamp}"))


def _number(value: object) -> str:
    """A sample value as text: ints plain, floats in repr, +Inf/NaN spelled so."""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if value != value:
            return "NaN"
        if value in (float("inf"), float("-inf")):
            return "+Inf" if value > 0 else "-Inf"
        return repr(value)
    return str(value)


@lru_cache(maxsize=8192)
def _escaped(text: str) -> str:
    """text escaped as a label value (cached: boards, kernels and cells repeat)."""
    text = text.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')
    return "".join(ch for ch in text if ch.isprintable() or ch == "\\")


def label_value(value: object) -> str:
    """A label value escaped for both text formats."""
    return _escaped(str(value))


def labels_text(pairs: Mapping[str, object]) -> str:
    """{k="v",...}, or nothing for no labels."""
    if not pairs:
        return ""
    return "{" + ",".join(f'{k}="{label_value(v)}"' for k, v in pairs.items()) + "}"


def _help(text: str) -> str:
    """A HELP text escaped (backslash, newline)."""
    return text.replace("\\", "\\\\").replace("\n", "\\n")


def render(families: Iterable[Family], openmetrics: bool) -> str:
    """The families as OpenMetrics 1.0 (ends with # EOF) or Prometheus text 0.0.4."""
    out: list[str] = []
    for fam in families:
        named = fam.name + ("_total" if fam.kind == "counter" and not openmetrics else "")
        out.append(f"# HELP {named} {_help(fam.help)}")
        out.append(f"# TYPE {named} {fam.kind}")
        if fam.unit and openmetrics:
            out.append(f"# UNIT {named} {fam.unit}")
        out.extend(f"{fam.name}{suffix}{labels} {value}"
                   for suffix, labels, value in fam.samples)
    if openmetrics:
        out.append("# EOF")
    return "\n".join(out) + "\n"
