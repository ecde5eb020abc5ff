"""Whether a probe can run a suite: its tests, options, loads and --simulate, checked
against the probe's catalogue before anything runs."""

from __future__ import annotations

from rtbench.rtprobe.catalogue import ProbeCatalogue, ProbeMismatch
from rtbench.suites.model import Suite, SuiteError


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
