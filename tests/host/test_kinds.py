"""Test kinds are described once, by the probe (rtbench/kinds, docs/architecture.md).

The packaged copy is what the in-tree rtprobe describes; a toy kind that exists only in a
probe's `describe --json` gets every host rule (RT-only, busy loop, runs per item, its
headline, the layouts it feeds, its CPUs) without a line of host code, through a whole
run stored and read back; no host module decides by a probe test's name outside
rtbench/kinds/ (and the studies' layouts, which print what a study measured).
"""

from __future__ import annotations

import ast
import copy
import json
from pathlib import Path
from typing import Any

import pytest
from fake_target import FakeTarget, Script
from synth_probe import synth_lines

from rtbench.analysis.scenario_check import start_cpus
from rtbench.analysis.verdict import is_busy_loop
from rtbench.kinds import KindTraits, packaged, recorded_kinds, run_registry
from rtbench.kinds._known import KNOWN_HOST
from rtbench.report.terminal import data_tables
from rtbench.rtprobe.catalogue import ProbeCatalogue
from rtbench.rtprobe.util.locate import locate_probe, probe_describe
from rtbench.run.runner import Runner
from rtbench.store import Store
from rtbench.suites.parse import parse_suite
from rtbench.targets.base import CommandResult

PACKAGE = Path(__file__).resolve().parents[2] / "rtbench"
TOY_HOST = {"rt_only": True, "own_cpus": True, "busy_loop": "always", "runs_per": "items",
            "figures": ["rate_hz", "mode"], "table_keys": [], "layouts": ["lrtai"]}


@pytest.fixture(scope="module")
def described() -> dict[str, Any]:
    """The in-tree rtprobe's `describe --json`."""
    doc: dict[str, Any] = json.loads(probe_describe(locate_probe()))
    return doc


def toy_describe(real: dict[str, Any]) -> dict[str, Any]:
    """The real description plus "toy": cyclic's options and the toy's host traits."""
    doc = copy.deepcopy(real)
    cyclic = next(t for t in doc["tests"] if t["name"] == "cyclic")
    toy = {**copy.deepcopy(cyclic), "name": "toy", "host": TOY_HOST}
    toy["options"] = [*toy["options"], {"name": "items", "type": "list", "default": None,
                                        "help": "one run per item"}]
    doc["tests"].append(toy)
    return doc


def test_the_packaged_copy_is_what_the_probe_describes(described: dict[str, Any]) -> None:
    # every packaged kind as the probe describes it; a kind added to the probe since
    # need not be packaged (its runs record it)
    hosts = {t["name"]: t["host"] for t in described["tests"]}
    assert {name: hosts.get(name) for name in KNOWN_HOST} == KNOWN_HOST
    catalogue = ProbeCatalogue.from_describe(described)
    kinds = {n: k.host for n, k in catalogue.tests.items() if n in KNOWN_HOST}
    assert kinds == packaged().kinds
    assert recorded_kinds(kinds.values()) == {}


def test_a_probe_older_than_host_gets_the_packaged_traits(described: dict[str, Any]) -> None:
    old = copy.deepcopy(described)
    for entry in old["tests"]:
        del entry["host"]
    catalogue = ProbeCatalogue.from_describe(old)
    assert catalogue.tests["pi"].host.rt_only and catalogue.tests["noise"].host.busy_loop
    assert {n: k.host for n, k in catalogue.tests.items() if n in KNOWN_HOST} \
        == packaged().kinds
    # a test nobody described gets the plain traits: no rule applies to it
    assert packaged().traits("stress-ng") == KindTraits(name="stress-ng")


def test_every_kind_module_belongs_to_a_kind_and_tables_have_one(
        described: dict[str, Any]) -> None:
    hosts = {t["name"].replace("-", "_"): t["host"] for t in described["tests"]}
    modules = {p.stem for p in (PACKAGE / "kinds").glob("*.py") if not p.stem.startswith("_")}
    assert modules <= set(hosts)
    for name, host in hosts.items():
        if host["table_keys"]:
            assert name in modules, f"{name} has table keys but no kinds/{name}.py table()"


SAMPLES = {
    "ctx": {"unit": "ns", "cells": [{"size_kib": 0, "processes": 2, "per_switch_ns": 15821}],
            "overheads": [{"size_kib": 0, "overhead_ns": 683}]},
    "ipc": {"transport": "pipe", "mode": "bandwidth",
            "bandwidth": [{"cpu": 0, "chunk_bytes": 65536, "mb_per_s": 4189.86}]},
    "hackbench": {"elapsed_ns": 97705753, "messages_per_s": 409392.5, "groups": 10},
    "pi": {"pi": False, "max_excess_ns": 20075, "mean_excess_ns": 18783,
           "limit_ns": 2000000, "iterations": 9},
    "event": {"kind": "self", "handled": 1000, "missed": 3, "source": "self"},
    "noise": {"cpus": [{"busy_ns": 10**9, "stolen_ns": 9017609, "gaps": 552}],
              "threshold_ns": 1000},
    "clock": {"clock_source": "monotonic", "read_cost_ns": 24.25, "reads": 7},
    "periodic": {"failed_iterations": 2, "missed_periods": 0,
                 "threads": [{"start_latency_ns": 24022}], "period_ns": 1000},
    "wakeup": {"mechanisms": [{"mechanism": "pipe", "ran": True}], "pairs": 1},
}


@pytest.mark.parametrize("test", sorted(SAMPLES))
def test_a_headline_reads_only_its_described_figures(test: str) -> None:
    kinds = packaged()
    figures = kinds.traits(test).figures
    data = SAMPLES[test]
    shown = kinds.headline(test, data)
    assert shown is not None
    assert kinds.headline(test, {k: v for k, v in data.items() if k in figures}) == shown
    assert kinds.headline(test, {k: v for k, v in data.items() if k not in figures}) is None


def test_a_toy_kind_needs_no_host_code(described: dict[str, Any], tmp_path: Path) -> None:
    catalogue = ProbeCatalogue.from_describe(toy_describe(described))
    kind = catalogue.tests["toy"]
    assert kind.host.name == "toy" and kind.host.rt_only
    suite = parse_suite('[suite]\nname = "toy"\n[defaults]\nduration = "100ms"\nwarmup = "0s"\n'
                        'settle = "0s"\n[[scenarios]]\nname = "idle"\n[[tests]]\n'
                        'name = "toy-1"\ntest = "toy"\nparams = { items = ["a", "b", "c"] }\n',
                        "toy.toml", catalogue)
    spec = suite.tests[0]
    assert spec.policy_use() == "rt" and spec.runs() == 3

    lines, _ = synth_lines(series=2, windows=3)
    records = [json.loads(line) for line in lines]
    for record in records:
        if record["type"] in ("start", "result"):
            record["test"] = "toy"
        if record["type"] == "result":
            record["data"] = {"rate_hz": 100, "mode": "spin", "other": 1}

    class ToyTarget(FakeTarget):
        """The fake target whose probe describes the toy."""

        def run_probe(self, args: list[str], timeout_s: float = 30.0) -> CommandResult:
            """describe --json with the toy; the rest as the fake target."""
            if args == ["describe", "--json"]:
                return CommandResult(0, json.dumps(toy_describe(described)), "")
            return super().run_probe(args, timeout_s)

    store = Store.open(f"sqlite:///{tmp_path / 'r.db'}")
    target = ToyTarget(lambda args: Script([json.dumps(r) for r in records]))
    Runner(target, simulate="1").run(suite, store, ["rtbench", "run", "toy.toml"])
    run = store.get_run(1)
    # the run recorded the toy's traits (and only those: the packaged kinds are known)
    assert run.source == {"tool": "rtbench", "kinds": {"toy": TOY_HOST}}
    kinds = run_registry(run.source)
    m = run.scenarios[0].measurements[0]
    assert m.test == "toy" and is_busy_loop(m, kinds) and not is_busy_loop(m, packaged())
    assert "toy" in kinds.feeding("lrtai") and "toy" not in packaged().feeding("lrtai")
    assert start_cpus(m.start, kinds) == {0, 1}
    assert run.scenarios[0].intensity is not None
    assert run.scenarios[0].intensity["measuring_cpus"] == [0, 1]
    headings = [heading for heading, _ in data_tables(m, kinds)]
    assert headings == ["  result data: rate_hz 100, mode spin"]


def test_a_malformed_recording_falls_back_to_the_packaged_kinds() -> None:
    bad = {"kinds": {"noise": {"rt_only": "yes"}, "toy": [], "pi": {**TOY_HOST}}}
    kinds = run_registry(bad)
    assert kinds.traits("noise") == packaged().traits("noise")
    assert kinds.traits("toy") == KindTraits(name="toy")
    assert kinds.traits("pi").busy_loop == "always"
    assert run_registry({}) is packaged() and run_registry(None) is packaged()


# modules that name probe tests on purpose: the studies' layouts print what a study
# measured, published references and other tools' files map their names to kinds
NAMING_ALLOWED = ("kinds/", "interop/", "reference/", "analysis/layouts.py",
                  "analysis/reference.py")


def _names_a_test(node: ast.expr) -> bool:
    """Whether node reads a measurement's test name: x.test, x.get("test"), test."""
    if isinstance(node, ast.Attribute):
        return node.attr == "test"
    if isinstance(node, ast.Name):
        return node.id == "test"
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == "get" and bool(node.args)
            and isinstance(node.args[0], ast.Constant) and node.args[0].value == "test")


def _constants(node: ast.expr, named: dict[str, set[str]]) -> set[str]:
    """The string constants of node: one, the items of a tuple, list or set (also in
    frozenset(...)), or those of a module-level name bound to such a literal."""
    if isinstance(node, ast.Name):
        return named.get(node.id, set())
    if isinstance(node, ast.Call) and node.args and isinstance(node.func, ast.Name) \
            and node.func.id in ("frozenset", "set", "tuple"):
        node = node.args[0]
    items = node.elts if isinstance(node, ast.Tuple | ast.List | ast.Set) else [node]
    return {i.value for i in items if isinstance(i, ast.Constant) and isinstance(i.value, str)}


def rules_naming_tests(tree: ast.Module, tests: set[str]) -> list[int]:
    """Lines of comparisons of a test's name with probe test names."""
    named: dict[str, set[str]] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign | ast.AnnAssign) and stmt.value is not None:
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            for target in targets:
                if isinstance(target, ast.Name):
                    named[target.id] = _constants(stmt.value, {})
    return [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Compare)
            and any(_names_a_test(s) for s in (node.left, *node.comparators))
            and any(_constants(s, named) & tests for s in (node.left, *node.comparators))]


def test_no_host_rule_names_a_probe_test() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        where = path.relative_to(PACKAGE).as_posix()
        if not where.startswith(NAMING_ALLOWED):
            tree = ast.parse(path.read_text(), where)
            found += [f"{where}:{line}" for line in rules_naming_tests(tree, set(KNOWN_HOST))]
    assert found == [], f"decides by a probe test's name (ask rtbench.kinds): {found}"


def test_the_name_check_finds_the_rules_it_replaced() -> None:
    before = """
ONE_THREAD_A_SERIES = ("cyclic", "periodic", "clock", "noise")
RT_ONLY_TESTS = frozenset({"pi"})
def rules(m, start, test):
    a = m.test == "noise"
    b = start.get("test") in ONE_THREAD_A_SERIES
    c = "rt" if test in RT_ONLY_TESTS else "any"
    d = m.test == "mine" or m.name == "noise"
"""
    assert rules_naming_tests(ast.parse(before), set(KNOWN_HOST)) == [5, 6, 7]
