"""`rtprobe describe --json`: the tests, loads and options, from the parsing descriptors.

The document validates against probe/schema/rtprobe-describe-1.schema.json, and it tells
the truth: every listed test and load runs, every listed option is accepted by it (and
shown by its --help), every refused option is refused with one line.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from probe_support import REPO

SCHEMA = REPO / "probe" / "schema" / "rtprobe-describe-1.schema.json"
TESTS = {"cyclic", "periodic", "clock", "wakeup", "noise", "ctx", "ipc", "event", "pi",
         "hackbench"}
LOADS = {"cpu", "sched", "mem", "io", "net", "timer", "build"}


@pytest.fixture(scope="module")
def describe(rtprobe: Path) -> dict[str, Any]:
    done = subprocess.run([str(rtprobe), "describe", "--json"], capture_output=True,
                          text=True, timeout=30, check=True)
    assert done.stdout.count("\n") == 1 and done.stderr == ""
    doc: dict[str, Any] = json.loads(done.stdout)
    return doc


def help_text(rtprobe: Path, *command: str) -> str:
    done = subprocess.run([str(rtprobe), *command, "--help"], capture_output=True, text=True,
                          timeout=30, check=True)
    return done.stdout


def test_validates_against_its_schema(describe: dict[str, Any]) -> None:
    schema = json.loads(SCHEMA.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.Draft202012Validator(schema).validate(describe)
    assert describe["schema"] == "rtprobe-describe/1" and describe["records"] == "rtprobe/1"


def test_lists_every_test_and_load_of_the_binary(rtprobe: Path,
                                                 describe: dict[str, Any]) -> None:
    assert {t["name"] for t in describe["tests"]} == TESTS
    assert {k["name"] for k in describe["loads"]} == LOADS
    top = help_text(rtprobe)
    assert all(f"  {t['name']} " in top for t in describe["tests"])


def test_traits_match_what_the_tests_do(describe: dict[str, Any]) -> None:
    tests = {t["name"]: t for t in describe["tests"]}
    assert tests["cyclic"]["timed"] and tests["cyclic"]["deadline"]
    assert not tests["ctx"]["timed"] and not tests["ctx"]["series"]
    assert "duration" in tests["ctx"]["refused"] and "threshold" in tests["ctx"]["refused"]
    assert tests["pi"]["cpu_option"] == "cpu" and "cpus" in tests["pi"]["refused"]
    assert tests["ipc"]["untimed_with"] == "bandwidth"
    assert tests["hackbench"]["cpu_option"] is None and not tests["hackbench"]["simulate"]
    assert tests["noise"]["refused"] == ["loops"]
    assert tests["cyclic"]["default_duration_ns"] == 10_000_000_000


@pytest.mark.parametrize("test", sorted(TESTS))
def test_every_option_is_in_help_and_refusals_are_one_line(rtprobe: Path,
                                                           describe: dict[str, Any],
                                                           test: str) -> None:
    entry = next(t for t in describe["tests"] if t["name"] == test)
    text = help_text(rtprobe, test)
    for option in entry["options"] + entry["common_options"]:
        assert f"--{option['name']}" in text, option["name"]
        if option["type"] in ("choice", "choices") and option["default"] is not None:
            assert option["default"].split(",")[0] in option["choices"]
    for name in entry["refused"]:
        done = subprocess.run([str(rtprobe), test, f"--{name}=1"], capture_output=True,
                              text=True, timeout=30, check=False)
        assert done.returncode == 2 and done.stdout == ""
        assert done.stderr.count("\n") == 1 and f"--{name}" in done.stderr
        assert "does not apply" in done.stderr


@pytest.mark.parametrize("load", sorted(LOADS))
def test_every_load_option_is_in_help(rtprobe: Path, describe: dict[str, Any],
                                      load: str) -> None:
    entry = next(k for k in describe["loads"] if k["name"] == load)
    text = help_text(rtprobe, "load", load)
    for option in entry["options"] + entry["common_options"]:
        assert f"--{option['name']}" in text, option["name"]
    assert entry["rate_min"] <= entry["rate_max"]


def test_describe_without_json_lists_for_people(rtprobe: Path) -> None:
    done = subprocess.run([str(rtprobe), "describe"], capture_output=True, text=True,
                          timeout=30, check=True)
    assert "cyclic" in done.stdout and "--interval" in done.stdout
    bad = subprocess.run([str(rtprobe), "describe", "--yaml"], capture_output=True,
                         text=True, timeout=30, check=False)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1


def test_host_traits_name_real_options_and_layouts(rtprobe: Path,
                                                   describe: dict[str, Any]) -> None:
    from rtbench.analysis.layouts import layout_names

    for entry in describe["tests"]:
        host, own = entry["host"], {o["name"] for o in entry["options"]}
        assert host["busy_loop"] in (None, "always") or host["busy_loop"] in own
        assert host["runs_per"] is None or host["runs_per"] in own
        assert set(host["table_keys"]) <= set(host["figures"])
        assert set(host["layouts"]) <= set(layout_names())
    tests = {t["name"]: t["host"] for t in describe["tests"]}
    assert [n for n, h in tests.items() if h["rt_only"]] == ["pi"]
    done = subprocess.run([str(rtprobe), "pi", "--policy", "other"], capture_output=True,
                          text=True, timeout=30, check=False)
    assert done.returncode == 2 and "--policy" in done.stderr
