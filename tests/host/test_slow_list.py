"""tests/slow_list.py: the list of tests marked slow by their time, read back and made."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.slow_list import (
    ENV_OFF,
    REPO,
    SLOW_LIST,
    SLOW_S,
    node_path,
    read_slow_list,
    render,
    timed_tests,
)

JUNIT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest">
<testcase classname="tests.host.test_slow_list" name="test_fast" time="0.010"/>
<testcase classname="tests.host.test_slow_list" name="test_slow[a-b]" time="2.500"/>
<testcase classname="tests.host.test_slow_list.TestGroup" name="test_in_class" time="1.500"/>
</testsuite></testsuites>
"""


def test_junit_names_become_node_ids_and_the_slow_ones_are_listed(tmp_path: Path) -> None:
    junit = tmp_path / "serial.xml"
    junit.write_text(JUNIT)
    seconds = timed_tests(junit)
    assert seconds == {
        "tests/host/test_slow_list.py::test_fast": 0.01,
        "tests/host/test_slow_list.py::test_slow[a-b]": 2.5,
        "tests/host/test_slow_list.py::TestGroup::test_in_class": 1.5,
    }
    listed = tmp_path / "slow_tests.txt"
    listed.write_text(render(seconds, threshold_s=SLOW_S))
    assert read_slow_list(listed) == {"tests/host/test_slow_list.py::test_slow[a-b]",
                                      "tests/host/test_slow_list.py::TestGroup::test_in_class"}


def test_the_list_can_be_turned_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    listed = tmp_path / "slow_tests.txt"
    listed.write_text(render({"tests/host/test_slow_list.py::test_x": 9.0}))
    monkeypatch.delenv(ENV_OFF, raising=False)
    assert read_slow_list(listed) == {"tests/host/test_slow_list.py::test_x"}
    assert read_slow_list(tmp_path / "absent.txt") == frozenset()
    monkeypatch.setenv(ENV_OFF, "off")
    assert read_slow_list(listed) == frozenset()


def test_unknown_classname_is_refused() -> None:
    with pytest.raises(ValueError, match="no test file"):
        node_path("tests.host.test_no_such_module")


def test_every_listed_test_names_a_test_file_that_exists() -> None:
    # a renamed module would leave its entries marking nothing; this names them
    for node in read_slow_list(SLOW_LIST):
        path = node.split("::", 1)[0]
        assert (REPO / path).is_file(), f"{SLOW_LIST.name}: {node}: no such file"
