"""The board zoo's tests are `make test-boards`'s (RTBENCH_TEST_BOARDS=1): `make test`
(pytest over tests/) leaves them out, as each boots a guest of another CPU under
emulation for minutes (docs/testing.md).  RTBENCH_ZOO_BOARDS (a comma list) picks the
boards; a board it names that cannot run here fails rather than skips."""

import os

import pytest

from tools.zoo import BOARDS_VARIABLE, listed_boards

collect_ignore_glob = [] if os.environ.get("RTBENCH_TEST_BOARDS") == "1" else ["test_*.py"]


def pytest_configure(config: pytest.Config) -> None:
    """Refuse an RTBENCH_ZOO_BOARDS naming no board before anything boots."""
    try:
        listed_boards(os.environ.get(BOARDS_VARIABLE))
    except ValueError as error:
        raise pytest.UsageError(str(error)) from None
