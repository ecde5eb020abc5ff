"""Helpers of the suite tests: parse suite text, or catch the error it raises."""

from __future__ import annotations

import pytest

from rtbench.suites.model import Suite, SuiteError
from rtbench.suites.parse import parse_suite


def parse(text: str) -> Suite:
    """Parse suite text named t.toml."""
    return parse_suite(text, "t.toml")


def error_of(text: str) -> SuiteError:
    """The SuiteError that text raises."""
    with pytest.raises(SuiteError) as info:
        parse(text)
    return info.value
