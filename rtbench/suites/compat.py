"""Whether a probe can run a suite: its tests, options, loads and --simulate, checked
against the probe's catalogue before anything runs."""

from __future__ import annotations

from typing import Any, Protocol

from rtbench import EXIT_USAGE
from rtbench.rtprobe.argv import params_to_args
from rtbench.rtprobe.catalogue import ProbeCatalogue, ProbeMismatch
from rtbench.suites.model import Suite, SuiteError, TestSpec


class _ProbeRunner(Protocol):
    """What check_param_values needs of a target: running its rtprobe."""

    def run_probe(self, args: list[str], timeout_s: float = ...) -> Any: ...


def _param_where(test: TestSpec, key: str) -> str:
    """Where in the suite file a test's param is set."""
    if key in test.sweep_keys:
        return f"tests[{test.index}].sweep.{key}"
    if key in test.own_params:
        return f"tests[{test.index}].params.{key}"
    return f"defaults.params.{key}"


def check_param_values(suite: Suite, target: _ProbeRunner) -> None:
    """Every param value as the target's rtprobe parses it, before anything runs.

    `rtprobe KIND --OPTION VALUE --help` parses the value with the probe's own rules
    (ranges, units, choices) and stops at --help: exit 2 and a line naming the option
    when the value is refused.  Asked once per distinct (test kind, option, value).
    """
    asked: set[tuple[str, str, str]] = set()
    for test in suite.tests:
        for key, value in test.params.items():
            args = params_to_args({key: value})
            if not args or (test.test, key, repr(value)) in asked:
                continue
            asked.add((test.test, key, repr(value)))
            done = target.run_probe([test.test, *args, "--help"], timeout_s=30.0)
            if done.returncode != EXIT_USAGE:
                continue
            why = (str(done.stderr).strip().splitlines() or [""])[-1]
            why = why.removeprefix("rtprobe: ").strip()
            if args[0] not in why:
                continue  # refused for another reason: the run reports it
            raise SuiteError(suite.source, _param_where(test, key),
                             f"rtprobe {test.test} refuses it: {why}")


def check_options(suite: Suite, catalogue: ProbeCatalogue) -> None:
    """Refuse params that the probe's test does not take (per `rtprobe describe`)."""
    for test in suite.tests:
        kind = catalogue.tests.get(test.test)
        if kind is None:
            raise SuiteError(suite.source, f"tests[{test.index}].test",
                             f"this rtprobe ({catalogue.version}) has no test {test.test!r}; "
                             "update rtprobe or remove the test")
        for key in test.params:
            if key.replace("_", "-") in kind.options:
                continue
            where = f"defaults.params.{key}"
            if key in test.sweep_keys:
                where = f"tests[{test.index}].sweep.{key}"
            elif key in test.own_params:
                where = f"tests[{test.index}].params.{key}"
            option = "--" + key.replace("_", "-")
            raise SuiteError(suite.source, where,
                             f"rtprobe {test.test} has no option {option} "
                             f"(see `rtprobe {test.test} --help`)")


def check_load_options(suite: Suite, catalogue: ProbeCatalogue) -> None:
    """Refuse built-in loads and load options the probe does not have."""
    for i, scenario in enumerate(suite.scenarios):
        for j, load in enumerate(scenario.loads):
            if load.kind is None:
                continue
            kind = catalogue.loads.get(load.kind)
            where = f"scenarios[{i}].loads[{j}]"
            if kind is None:
                raise SuiteError(suite.source, f"{where}.kind",
                                 f"this rtprobe ({catalogue.version}) has no load "
                                 f"{load.kind!r}; use an external command load instead")
            for key in load.options:
                if key.replace("_", "-") not in kind.options:
                    raise SuiteError(suite.source, f"{where}.options.{key}",
                                     f"rtprobe load {load.kind} has no option "
                                     f"--{key.replace('_', '-')} "
                                     f"(see `rtprobe load {load.kind} --help`)")


def validate_for_probe(suite: Suite, catalogue: ProbeCatalogue, simulate: bool) -> None:
    """Before anything runs: the probe has every test kind, option and load the suite
    uses, and --simulate for every test of a simulated run.

    A kind the probe lacks is ProbeMismatch (exit 3: update the probe); an option it
    lacks is SuiteError (exit 2: fix the file); --simulate for a test without it is
    ProbeMismatch with exit 2.
    """
    for kind in sorted({t.test for t in suite.tests} - set(catalogue.tests)):
        raise ProbeMismatch(f"suite {suite.source}: this rtprobe ({catalogue.version}) has "
                            f"no test {kind!r}; update rtprobe or remove the test", 3)
    missing = sorted(suite.load_kinds() - set(catalogue.loads))
    if missing:
        raise ProbeMismatch(f"suite {suite.source}: this rtprobe ({catalogue.version}) has "
                            f"no built-in load {', '.join(missing)}; update rtprobe or use "
                            "an external command load (command = ...) instead", 3)
    if simulate:
        for test in suite.tests:
            if not catalogue.tests[test.test].simulate:
                raise ProbeMismatch(
                    f"--simulate: rtprobe {test.test} has no simulation, so the run would "
                    f"mix synthetic and real results; remove the {test.test} tests from "
                    f"{suite.source} or run without --simulate", 2)
    check_options(suite, catalogue)
    check_load_options(suite, catalogue)
