"""Scenario placement, built-in load options and per-test-kind arguments (probe catalogue)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from suite_helpers import error_of, parse

from rtbench.rtprobe.catalogue import local_catalogue
from rtbench.run.checks import allowed_cpus
from rtbench.suites.compat import check_load_options
from rtbench.suites.model import Scenario, Suite, SuiteError
from rtbench.suites.placement import check_placement, plan_placement
from rtbench.util.cpulist import format_cpulist, parse_cpulist

HEAD = "[suite]\nname='t'\n"


@settings(deadline=None)
@given(st.sets(st.integers(min_value=0, max_value=300), min_size=1, max_size=40))
def test_cpulist_round_trips(cpus: set[int]) -> None:
    text = format_cpulist(cpus)
    assert parse_cpulist(text) == cpus
    assert format_cpulist(parse_cpulist(text)) == text


def test_format_cpulist_compacts_ranges() -> None:
    assert format_cpulist({0, 1, 2, 3, 6, 8, 9}) == "0-3,6,8-9"


def test_split_on_four_or_more_cpus_shared_below() -> None:
    loaded = Scenario(name="l")
    assert plan_placement(loaded, set(range(8)), True).describe() == {
        "rule": "split", "cpus": "0-7", "load_cpus": "0-3", "measure_cpus": "4-7"}
    odd = plan_placement(loaded, {0, 1, 2, 3, 4}, True)
    assert (odd.load_cpus, odd.measure_cpus) == ("0-1", "2-4")
    for allowed in ({0}, {0, 1}, {0, 1, 2}):
        shared = plan_placement(loaded, allowed, True)
        assert (shared.rule, shared.load_cpus, shared.measure_cpus) == ("shared", None, None)
    # A suite without any load keeps every CPU for measuring.
    assert plan_placement(loaded, set(range(8)), False).rule == "shared"


def test_given_cpus_win_and_the_other_side_gets_the_rest() -> None:
    both = plan_placement(Scenario(name="a", load_cpus="0", measure_cpus="3"), set(range(4)),
                          True)
    assert (both.rule, both.load_cpus, both.measure_cpus) == ("given", "0", "3")
    only_load = plan_placement(Scenario(name="b", load_cpus="0-1"), set(range(4)), True)
    assert (only_load.load_cpus, only_load.measure_cpus) == ("0-1", "2-3")
    only_measure = plan_placement(Scenario(name="c", measure_cpus="1"), {0, 1}, True)
    assert (only_measure.load_cpus, only_measure.measure_cpus) == ("0", "1")
    everything = plan_placement(Scenario(name="d", load_cpus="0-1"), {0, 1}, True)
    assert (everything.load_cpus, everything.measure_cpus) == ("0-1", None)


def test_defaults_give_placement_to_every_scenario() -> None:
    suite = parse(HEAD + "[defaults]\nload_cpus='0'\nmeasure_cpus='1'\n"
                  "[[scenarios]]\nname='a'\nloads=[{kind='cpu', rate=50}]\n"
                  "[[scenarios]]\nname='b'\nmeasure_cpus='0-1'\n"
                  "[[tests]]\ntest='cyclic'\n")
    a, b = suite.scenarios
    assert (a.load_cpus, a.measure_cpus, a.loads[0].cpus) == ("0", "1", "0")
    assert (b.load_cpus, b.measure_cpus) == ("0", "0-1")
    assert error_of(HEAD + "[defaults]\nmeasure_cpus='x'\n[[tests]]\ntest='cyclic'\n").key \
        == "defaults.measure_cpus"


def test_placement_refuses_cpus_the_target_lacks() -> None:
    suite = parse(HEAD + "[[scenarios]]\nname='a'\nmeasure_cpus='3'\n[[tests]]\ntest='cyclic'\n")
    with pytest.raises(SuiteError) as info:
        check_placement(suite, {0, 1})
    assert info.value.key == "scenarios[0].measure_cpus"
    assert "CPU 3" in info.value.reason and "0-1" in info.value.reason
    check_placement(suite, set(range(4)))


def test_allowed_cpus_from_sysinfo() -> None:
    assert allowed_cpus({"cpus_allowed": "0-3,6", "cpus_online": "0-7"}) == {0, 1, 2, 3, 6}
    assert allowed_cpus({"cpus_online": "0-1"}) == {0, 1}
    assert allowed_cpus({"cpus_configured": 3}) == {0, 1, 2}


@pytest.mark.parametrize(("load", "key"), [
    ("{kind='io', rate=5}", "scenarios[0].loads[0].options.dir"),
    ("{kind='sched', rate=5, options={rate=3}}", "scenarios[0].loads[0].options.rate"),
    ("{kind='net', rate=5, options={cpus='0'}}", "scenarios[0].loads[0].options.cpus"),
    ("{kind='cpu', rate=5, options={duration='1s'}}", "scenarios[0].loads[0].options.duration"),
])
def test_bad_load_options(load: str, key: str) -> None:
    text = HEAD + f"[[scenarios]]\nname='a'\nloads=[{load}]\n[[tests]]\ntest='cyclic'\n"
    assert error_of(text).key == key


def test_load_options_checked_against_the_catalogue_and_passed_through() -> None:
    suite = parse(HEAD + "[[scenarios]]\nname='a'\nloads=[{kind='io', rate=5, "
                  "options={dir='/tmp', walk=500, file_sise='1M'}}]\n[[tests]]\ntest='cyclic'\n")
    with pytest.raises(SuiteError) as info:
        check_load_options(suite, local_catalogue())
    assert info.value.key == "scenarios[0].loads[0].options.file_sise"
    good = parse(HEAD + "[[scenarios]]\nname='a'\nloads=[{kind='io', rate=5, "
                 "options={dir='/tmp', walk=500}}]\n[[tests]]\ntest='cyclic'\n")
    check_load_options(good, local_catalogue())


def one_test(body: str, scenario: str = "") -> Suite:
    """A suite with [defaults] durations/thresholds and one test entry."""
    return parse(HEAD + "[defaults]\nduration='2s'\nwarmup='1s'\nthresholds=['1ms']\n"
                 + scenario + "[[tests]]\n" + body)


def test_list_and_boolean_params_pass_through() -> None:
    ctx = one_test("test='ctx'\nparams={processes=[2,4], sizes=[0,16]}\n")
    (test,) = ctx.tests
    args = test.probe_args(ctx.scenarios[0], None)
    assert args == ["ctx", "--processes", "2,4", "--sizes", "0,16"]
    pi = one_test("test='pi'\nparams={no_pi=true, iterations=10}\n")
    args = pi.tests[0].probe_args(pi.scenarios[0], "3")
    assert args == ["pi", "--warmup", "1s", "--threshold", "1ms", "--no-pi",
                    "--iterations", "10", "--simulate", "3"]
    off = one_test("test='pi'\nparams={no_pi=false}\n")
    assert "--no-pi" not in off.tests[0].probe_args(off.scenarios[0], None)


def test_untimed_tests_leave_out_duration_and_defaults() -> None:
    bw = one_test("test='ipc'\nparams={bandwidth=true, total='16M'}\n")
    (test,) = bw.tests
    assert test.probe_args(bw.scenarios[0], None) == ["ipc", "--bandwidth", "--total", "16M"]
    assert (test.warmup_ns, test.thresholds_ns) == (0, ())
    latency = one_test("test='ipc'\nparams={transport='unix'}\n")
    assert latency.tests[0].probe_args(latency.scenarios[0], None)[:5] == [
        "ipc", "--duration", "2s", "--warmup", "1s"]
    hb = one_test("test='hackbench'\nparams={groups=1}\n")
    assert hb.tests[0].probe_args(hb.scenarios[0], None) == ["hackbench", "--groups", "1"]


@pytest.mark.parametrize(("body", "key"), [
    ("test='ctx'\nduration='5s'\n", "tests[0].duration"),
    ("test='ctx'\nwarmup='1s'\n", "tests[0].warmup"),
    ("test='ctx'\nthresholds=['1ms']\n", "tests[0].thresholds"),
    ("test='pi'\nduration='5s'\n", "tests[0].duration"),
    ("test='hackbench'\nwarmup='1s'\n", "tests[0].warmup"),
    ("test='ipc'\nduration='5s'\nparams={bandwidth=true}\n", "tests[0].duration"),
])
def test_untimed_tests_refuse_their_own_duration(body: str, key: str) -> None:
    error = error_of(HEAD + "[[tests]]\n" + body)
    assert error.key == key and "params" in error.reason


def test_measure_cpus_reach_each_kind_its_own_way() -> None:
    scenario = "[[scenarios]]\nname='a'\nmeasure_cpus='1-2'\n"
    cyclic = one_test("test='cyclic'\n", scenario)
    assert cyclic.tests[0].probe_args(cyclic.scenarios[0], None)[7:9] == ["--cpus", "1-2"]
    pi = one_test("test='pi'\n", scenario)
    args = pi.tests[0].probe_args(pi.scenarios[0], None)
    assert "--cpus" not in args and args[args.index("--cpu") + 1] == "1"
    own = one_test("test='pi'\nparams={cpu=2}\n", scenario)
    assert own.tests[0].probe_args(own.scenarios[0], None).count("--cpu") == 1
    hb = one_test("test='hackbench'\n", scenario)
    assert hb.tests[0].probe_args(hb.scenarios[0], None) == ["hackbench"]
    assert hb.tests[0].affinity(hb.scenarios[0]) == "1-2"
    assert cyclic.tests[0].affinity(cyclic.scenarios[0]) is None


def test_expected_seconds() -> None:
    wakeup = one_test("test='wakeup'\nparams={mechanism=['pipe','sem','futex']}\n")
    assert wakeup.tests[0].expected_seconds() == pytest.approx(9.0)
    ctx = one_test("test='ctx'\n")
    assert ctx.tests[0].expected_seconds() == pytest.approx(2.0)
    assert ctx.scaled(0.1).tests[0].expected_seconds() == pytest.approx(2.0)
