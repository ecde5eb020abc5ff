"""A test whose failure pytest cannot format still fails as itself (a pytest plugin).

pytest builds a failed test's report from its traceback; where that raises (pytest 9 on
Python 3.11 met a frame whose line number was None: `TypeError: unsupported operand
type(s) for -: 'NoneType' and 'int'` in _pytest/_code/code.py), the exception escaped
as an INTERNALERROR, the xdist worker died, and the whole run ended without naming the
test. Here such a report becomes a plain failure of its test, its text formatted by the
traceback module, which takes a missing line number.
"""

from __future__ import annotations

import traceback
from collections.abc import Generator
from typing import Any

import pytest


def failure_text(call: pytest.CallInfo[None], error: BaseException) -> str:
    """What is said for a failure whose report could not be made: why not, and the
    failure as the traceback module formats it."""
    said = f"pytest could not format this failure ({type(error).__name__}: {error})"
    if call.excinfo is None:
        return said
    try:
        lines = traceback.format_exception(call.excinfo.value)
    except Exception as again:  # noqa: BLE001 - say the failure's type and text at least
        lines = [f"(traceback: {again})\n", f"{call.excinfo.typename}: {call.excinfo.value}\n"]
    return said + ":\n" + "".join(lines)


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item,
                              call: pytest.CallInfo[None]) -> Generator[None, Any, None]:
    """A report that raised while being made: a failed report of the test instead."""
    outcome = yield
    try:
        outcome.get_result()
    except Exception as error:  # noqa: BLE001 - any: the run must go on
        outcome.force_result(pytest.TestReport(
            item.nodeid, item.location, {name: 1 for name in item.keywords}, "failed",
            failure_text(call, error), call.when, duration=call.duration,
            start=call.start, stop=call.stop))
