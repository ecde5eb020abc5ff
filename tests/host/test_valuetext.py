"""value_text: any value as a person reads it, never a Python repr."""

from __future__ import annotations

from rtbench.core.valuetext import value_text
from rtbench.report.format import fmt_probe_text, fmt_template_value


def test_values_for_people() -> None:
    assert value_text(None) == "—"
    assert value_text(True) == "yes" and value_text(False) == "no"
    assert value_text(["hpet", "acpi_pm"]) == "hpet, acpi_pm"
    assert value_text({"python": "3.11.7", "owner": {"pid": 1, "host": "vm"}}) == \
        "python=3.11.7, owner=(pid=1, host=vm)"
    assert value_text({"a", "b"}) == "a, b"
    assert value_text([[1, 2], 3]) == "(1, 2), 3"
    assert value_text(0.1) == "0.1" and value_text(12) == "12"


def test_pages_keep_their_markup_and_format_the_rest() -> None:
    from markupsafe import Markup

    page = Markup("<b>x</b>")
    assert fmt_template_value(page) is page
    assert fmt_template_value(None) == "—" and fmt_template_value([1, 2]) == "1, 2"


def test_probe_text_in_the_unit_style() -> None:
    assert fmt_probe_text("threshold 1000us") == "threshold 1000µs"
    assert fmt_probe_text("5 samples >= 50us") == "5 samples ≥ 50µs"
    assert fmt_probe_text("status: bus error") == "status: bus error"
