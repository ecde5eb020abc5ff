"""rtbench learns the probe's tests, loads and options from `rtprobe describe --json`.

No hand-kept list of kinds and no --help scraping in the host: the catalogue drives suite
parsing (kinds, traits) and the capability check before a run (options, loads, --simulate).
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from suite_helpers import parse

from rtbench.rtprobe.catalogue import (
    CatalogueError,
    ProbeCatalogue,
    ProbeMismatch,
    local_catalogue,
    target_catalogue,
)
from rtbench.rtprobe.util.locate import locate_probe
from rtbench.suites.compat import validate_for_probe
from rtbench.suites.model import SuiteError

RTBENCH = Path(__file__).resolve().parents[2] / "rtbench"


def describe_doc() -> dict[str, Any]:
    done = subprocess.run([str(locate_probe()), "describe", "--json"], capture_output=True,
                          text=True, timeout=30, check=True)
    doc: dict[str, Any] = json.loads(done.stdout)
    return doc


def test_traits_come_from_the_probe() -> None:
    cat = local_catalogue()
    assert cat.tests["cyclic"].timed and cat.tests["cyclic"].cpus == "--cpus"
    assert "interval" in cat.tests["cyclic"].options and "threshold" in \
        cat.tests["cyclic"].options
    ctx = cat.tests["ctx"]
    assert (ctx.timed, ctx.warmup, ctx.thresholds, ctx.nominal_s) == (False, False, False, 2.0)
    assert cat.tests["pi"].cpus == "--cpu" and cat.tests["hackbench"].cpus is None
    assert not cat.tests["hackbench"].simulate
    assert cat.loads["io"].options >= {"dir", "walk", "file-size", "rate", "cpus"}


def test_a_flag_param_can_make_a_test_untimed() -> None:
    suite = parse("[suite]\nname='t'\n[[tests]]\ntest='ipc'\nparams={bandwidth=true}\n")
    traits = suite.tests[0].traits()
    assert not traits.timed and not traits.thresholds
    assert "--duration" not in suite.tests[0].probe_args(suite.scenarios[0], None)


def test_a_probe_without_a_kind_is_exit_3_and_a_bad_option_exit_2() -> None:
    doc = describe_doc()
    doc["tests"] = [t for t in doc["tests"] if t["name"] != "noise"]
    doc["loads"] = [k for k in doc["loads"] if k["name"] != "net"]
    older = ProbeCatalogue.from_describe(doc)
    suite = parse("[suite]\nname='t'\n[[tests]]\ntest='noise'\n")
    with pytest.raises(ProbeMismatch) as info:
        validate_for_probe(suite, older, simulate=False)
    assert info.value.exit_code == 3 and "no test 'noise'" in str(info.value)
    loads = parse("[suite]\nname='t'\n[[scenarios]]\nname='a'\nloads=[{kind='net', rate=5}]\n"
                  "[[tests]]\ntest='cyclic'\n")
    with pytest.raises(ProbeMismatch) as info:
        validate_for_probe(loads, older, simulate=False)
    assert info.value.exit_code == 3 and "net" in str(info.value)
    bad = parse("[suite]\nname='t'\n[[tests]]\ntest='cyclic'\nparams={intervall='1ms'}\n")
    with pytest.raises(SuiteError):
        validate_for_probe(bad, local_catalogue(), simulate=False)


def test_simulate_needs_every_test_to_have_it() -> None:
    suite = parse("[suite]\nname='t'\n[[tests]]\ntest='hackbench'\n")
    with pytest.raises(ProbeMismatch) as info:
        validate_for_probe(suite, local_catalogue(), simulate=True)
    assert info.value.exit_code == 2 and "hackbench" in str(info.value)
    validate_for_probe(suite, local_catalogue(), simulate=False)


class _Answer:
    def __init__(self, rc: int, out: str) -> None:
        self.returncode, self.stdout = rc, out


class _Target:
    """A target whose rtprobe answers `describe --json` with a fixed reply."""

    def __init__(self, rc: int, out: str) -> None:
        self.answer = _Answer(rc, out)
        self.asked: list[list[str]] = []

    def run_probe(self, args: list[str], timeout_s: float = 30.0) -> _Answer:
        self.asked.append(args)
        return self.answer


def test_the_targets_own_probe_is_asked() -> None:
    target = _Target(0, json.dumps(describe_doc()))
    assert set(target_catalogue(target).tests) == set(local_catalogue().tests)
    assert target.asked == [["describe", "--json"]]
    with pytest.raises(ProbeMismatch) as info:
        target_catalogue(_Target(2, ""))
    assert info.value.exit_code == 3 and "older than rtbench" in str(info.value)
    with pytest.raises(ProbeMismatch):
        target_catalogue(_Target(0, "{not json"))


@pytest.mark.parametrize("doc", [{}, {"schema": "rtprobe-describe/9"},
                                 {"schema": "rtprobe-describe/1", "version": "1",
                                  "tests": [{"name": "x"}], "loads": []}])
def test_malformed_describe_is_refused(doc: dict[str, Any]) -> None:
    with pytest.raises(CatalogueError):
        ProbeCatalogue.from_describe(doc)


def test_no_help_scraping_in_the_host() -> None:
    # click's own --help option (help_option_names) is not a probe's help text
    scraping = re.compile(r'run_probe\([^)]*--help|\*\w+, "--help"\]|help_text|def supports')
    offenders = [str(p.relative_to(RTBENCH)) for p in RTBENCH.rglob("*.py")
                 if scraping.search(p.read_text())]
    # suites/compat.py asks rtprobe to parse a value and stop at --help; it reads only the
    # refusal's exit code and its one stderr line, never the help text (checked here)
    compat = (RTBENCH / "suites" / "compat.py").read_text()
    assert "done.stdout" not in compat and "help_text" not in compat
    assert [o for o in offenders if o != "suites/compat.py"] == []
