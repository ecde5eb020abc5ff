"""Suite parsing and validation (rtbench.suites) against the built rtprobe's catalogue."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from suite_helpers import error_of, parse

from rtbench.rtprobe.argv import UNIT_NS, format_duration, params_to_args
from rtbench.rtprobe.catalogue import local_catalogue
from rtbench.suites.compat import check_options
from rtbench.suites.model import SuiteError
from rtbench.suites.parse import builtin_suites, load_suite, parse_duration_ns

MINIMAL = """
[suite]
name = "t"
[[tests]]
test = "cyclic"
"""


def test_minimal_defaults() -> None:
    suite = parse(MINIMAL)
    assert suite.name == "t"
    assert [s.name for s in suite.scenarios] == ["idle"]
    (test,) = suite.tests
    assert (test.name, test.test, test.duration_ns, test.warmup_ns) == (
        "cyclic", "cyclic", 10 * UNIT_NS["s"], UNIT_NS["s"])
    assert test.thresholds_ns == ()


@pytest.mark.parametrize(("text", "key"), [
    (MINIMAL + "durration = '1s'\n", "tests[0].durration"),
    ("[suite]\nname='t'\ncolour='red'\n[[tests]]\ntest='cyclic'\n", "suite.colour"),
    (MINIMAL + "[extra]\n", "extra"),
    (MINIMAL + "[[scenarios]]\nname='a'\nloadz=[]\n", "scenarios[0].loadz"),
    (MINIMAL + "[[scenarios]]\nname='a'\nloads=[{command='x', instanzes=2}]\n",
     "scenarios[0].loads[0].instanzes"),
    ("[suite]\nname='t'\n[defaults]\nwarmpu='1s'\n[[tests]]\ntest='cyclic'\n",
     "defaults.warmpu"),
])
def test_unknown_key_is_named(text: str, key: str) -> None:
    err = error_of(text)
    assert err.source == "t.toml"
    assert err.key == key
    assert "unknown key" in err.reason
    assert str(err).startswith(f"t.toml: {key}: ")


@pytest.mark.parametrize("value", ["'1 fortnight'", "'-1s'", "'1.5ns'", "'s'", "true", "'10 sec'"])
def test_bad_duration(value: str) -> None:
    err = error_of(MINIMAL + f"duration = {value}\n")
    assert err.key == "tests[0].duration"


def test_zero_duration_refused_zero_warmup_allowed() -> None:
    assert error_of(MINIMAL + "duration = '0s'\n").reason == "must be greater than zero"
    assert parse(MINIMAL + "warmup = 0\n").tests[0].warmup_ns == 0


def test_unknown_test_kind() -> None:
    err = error_of("[suite]\nname='t'\n[[tests]]\ntest='cyclicc'\n")
    assert err.key == "tests[0].test"
    assert "unknown test kind 'cyclicc'" in err.reason


@pytest.mark.parametrize(("extra", "key"), [
    ("params = { duration = '1s' }", "tests[0].params.duration"),
    ("params = { output = 'x' }", "tests[0].params.output"),
    ("params = { 'Bad Name' = 1 }", "tests[0].params.Bad Name"),
    ("params = { interval = {a = 1} }", "tests[0].params.interval"),
    ("thresholds = ['1ms', 'soon']", "tests[0].thresholds[1]"),
    ("sweep = { interval = '1ms' }", "tests[0].sweep.interval"),
])
def test_bad_test_entries(extra: str, key: str) -> None:
    assert error_of(MINIMAL + extra + "\n").key == key


@pytest.mark.parametrize(("load", "key"), [
    ("{command='x', kind='cpu', rate=1}", "scenarios[0].loads[0]"),
    ("{}", "scenarios[0].loads[0]"),
    ("{kind='cpu'}", "scenarios[0].loads[0].rate"),
    ("{kind='gpu', rate=1}", "scenarios[0].loads[0].kind"),
    ("{command='x', rate=5}", "scenarios[0].loads[0].rate"),
    ("{command='x', instances=0}", "scenarios[0].loads[0].instances"),
    ("{command='x', cpus='1-'}", "scenarios[0].loads[0].cpus"),
    ("{kind='net', rate=5, on='board'}", "scenarios[0].loads[0].on"),
    ("{kind='cpu', rate=5, on='host'}", "scenarios[0].loads[0].on"),
    ("{command='x', on='host'}", "scenarios[0].loads[0].on"),
])
def test_bad_loads(load: str, key: str) -> None:
    assert error_of(MINIMAL + f"[[scenarios]]\nname='a'\nloads=[{load}]\n").key == key


def test_net_load_on_the_host() -> None:
    suite = parse(MINIMAL + "[[scenarios]]\nname='f'\nload_cpus='1'\n"
                  "loads=[{kind='net', rate=2000, on='host'}, {kind='net', rate=10}]\n")
    host, target = suite.scenarios[0].loads
    assert (host.on, host.cpus, host.describe()["on"]) == ("host", None, "host")
    assert (target.on, target.cpus, "on" in target.describe()) == ("target", "1", False)


def test_duplicates_and_missing() -> None:
    assert error_of(MINIMAL + "[[tests]]\ntest='cyclic'\n").key == "tests[1]"
    assert error_of("[suite]\nname='t'\n").key == "tests"
    assert error_of("[[tests]]\ntest='cyclic'\n").key == "suite"
    assert "not valid TOML" in error_of("[suite\n").reason


def test_builtin_load_and_cpus() -> None:
    suite = parse(MINIMAL + "[[scenarios]]\nname='l'\nload_cpus='1'\nmeasure_cpus='0'\n"
                  "loads=[{kind='cpu', rate=50, options={workers=2}}, "
                  "{command='find /', instances=3, cpus='0-1'}]\n")
    (scenario,) = suite.scenarios
    builtin, external = scenario.loads
    assert (builtin.kind, builtin.rate, builtin.cpus, dict(builtin.options)) == (
        "cpu", 50.0, "1", {"workers": 2})
    assert (external.command, external.instances, external.cpus) == ("find /", 3, "0-1")
    assert suite.load_kinds() == {"cpu"}
    assert "--cpus" in suite.tests[0].probe_args(scenario, None)


def test_scale_multiplies_durations_not_params() -> None:
    text = ("[suite]\nname='t'\nscale=0.5\n[defaults]\nsettle='2s'\n"
            "[[scenarios]]\nname='l'\nloads=[{command='true'}]\n"
            "[[tests]]\ntest='cyclic'\nduration='10s'\nwarmup='1s'\nparams={interval='1ms'}\n")
    suite = parse(text)
    assert suite.scale == 0.5
    assert (suite.tests[0].duration_ns, suite.tests[0].warmup_ns) == (5 * 10**9, 5 * 10**8)
    assert suite.scenarios[0].settle_ns == 10**9
    again = suite.scaled(0.1)
    assert again.scale == pytest.approx(0.05)
    assert again.tests[0].duration_ns == 5 * 10**8
    assert again.tests[0].params == {"interval": "1ms"}
    args = again.tests[0].probe_args(again.scenarios[0], "7")
    assert args[:5] == ["cyclic", "--duration", "500ms", "--warmup", "50ms"]
    assert args[-4:] == ["--interval", "1ms", "--simulate", "7"]
    with pytest.raises(SuiteError):
        suite.scaled(0)


def test_sweep_expands() -> None:
    suite = parse(MINIMAL + "name='c'\nsweep={interval=['250us','1ms'], priority=[80, 90]}\n")
    assert [t.name for t in suite.tests] == [
        "c[interval=250us,priority=80]", "c[interval=250us,priority=90]",
        "c[interval=1ms,priority=80]", "c[interval=1ms,priority=90]"]
    assert suite.tests[3].params == {"interval": "1ms", "priority": 90}


def test_params_to_args() -> None:
    assert params_to_args({"interval": "1ms", "mlock_all": True, "quiet": False,
                           "cpus_list": [0, 1], "ratio": 0.5}) == [
        "--interval", "1ms", "--mlock-all", "--cpus-list", "0,1", "--ratio", "0.5"]


def test_check_options_against_the_probe_catalogue() -> None:
    catalogue = local_catalogue()
    suite = parse(MINIMAL + "params={interval='1ms', intervall='2ms'}\n")
    with pytest.raises(SuiteError) as info:
        check_options(suite, catalogue)
    assert info.value.key == "tests[0].params.intervall"
    check_options(parse(MINIMAL + "params={interval='1ms'}\n"), catalogue)
    from_defaults = parse("[suite]\nname='t'\n[defaults]\nparams={modee='x'}\n"
                          "[[tests]]\ntest='cyclic'\n")
    with pytest.raises(SuiteError) as info:
        check_options(from_defaults, catalogue)
    assert info.value.key == "defaults.params.modee"
    swept = parse(MINIMAL + "sweep={intervalz=['1ms']}\n")
    with pytest.raises(SuiteError) as info:
        check_options(swept, catalogue)
    assert info.value.key == "tests[0].sweep.intervalz"


@settings(deadline=None)
@given(st.integers(min_value=0, max_value=2**62))
def test_format_duration_round_trips(ns: int) -> None:
    assert parse_duration_ns(format_duration(ns), "s") == ns


@settings(deadline=None)
@given(st.integers(min_value=0, max_value=10**4), st.sampled_from(sorted(UNIT_NS)))
def test_parse_duration_units(value: int, unit: str) -> None:
    assert parse_duration_ns(f"{value}{unit}", "s") == value * UNIT_NS[unit]
    assert parse_duration_ns(f"{value} {unit}", "s") == value * UNIT_NS[unit]


def test_parse_duration_default_unit_and_decimals() -> None:
    assert parse_duration_ns("1.5ms", "s") == 1_500_000
    assert parse_duration_ns(2, "s") == 2 * 10**9
    assert parse_duration_ns("250", "us") == 250_000
    for bad in ("1.0000000001s", "1e3s", "", "nan"):
        with pytest.raises(ValueError):
            parse_duration_ns(bad, "s")


def test_builtin_suites_are_valid_and_short() -> None:
    found = builtin_suites()
    assert {"quick", "smoke"} <= set(found)
    assert load_suite("smoke").estimated_seconds() <= 15
    assert load_suite("quick").estimated_seconds() <= 90
    assert load_suite("quick", 0.1).estimated_seconds() < load_suite("quick").estimated_seconds()


def test_unknown_suite_name_and_missing_file(tmp_path: object) -> None:
    with pytest.raises(SuiteError, match="no built-in suite"):
        load_suite("no-such-suite")
    with pytest.raises(SuiteError, match="no such suite file"):
        load_suite("/nonexistent/x.toml")
