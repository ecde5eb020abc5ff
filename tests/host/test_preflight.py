"""Preflight checks: one fact per knob, severities and advice from sysinfo."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rtbench.preflight import CHECKS, run_preflight, worst_severity

NAMES = ["preempt_rt", "rt_throttling", "cpufreq_governor", "idle_states", "smt",
         "cpu_isolation", "irqbalance", "thp", "clocksource", "virtualization"]

TUNED: dict[str, Any] = {
    "preempt_rt": True, "preempt_model": "PREEMPT_RT", "rt_runtime_us": -1,
    "rt_period_us": 1000000, "governors": {"0": "performance", "1": "performance"},
    "idle_driver": "intel_idle",
    "idle_states": [{"cpu": 0, "state": 0, "name": "POLL", "latency_us": 0, "disabled": False},
                    {"cpu": 0, "state": 3, "name": "C6", "latency_us": 133, "disabled": True}],
    "smt_active": False, "smt_control": "off",
    "cmdline": "root=/dev/sda1 isolcpus=1 nohz_full=1 rcu_nocbs=1",
    "irqbalance_running": False, "thp_enabled": "always madvise [never]",
    "clocksource": "tsc", "clocksource_available": "tsc hpet", "virtualization": "none",
}

UNTUNED: dict[str, Any] = {
    "preempt_rt": False, "preempt_model": "voluntary", "rt_runtime_us": 950000,
    "rt_period_us": 1000000, "governors": {"0": "powersave", "1": "performance"},
    "idle_driver": "intel_idle",
    "idle_states": [{"cpu": 0, "state": 3, "name": "C6", "latency_us": 133, "disabled": False}],
    "smt_active": True, "smt_control": "on", "cmdline": "root=/dev/sda1 quiet",
    "irqbalance_running": True, "thp_enabled": "[always] madvise never",
    "clocksource": "hpet", "clocksource_available": "tsc hpet acpi_pm",
    "virtualization": "kvm",
}


def by_name(facts: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Index facts by knob name."""
    return {f["name"]: f for f in facts}


def test_one_class_and_fact_per_knob() -> None:
    assert len(CHECKS) == len(NAMES)
    assert [f["name"] for f in run_preflight(TUNED)] == NAMES


def test_tuned_machine_is_ok() -> None:
    facts = by_name(run_preflight(TUNED, steal=0.0))
    assert {n: f["severity"] for n, f in facts.items()} == {
        **{n: "ok" for n in NAMES}}
    assert "isolcpus=1" in facts["cpu_isolation"]["value"]
    assert facts["thp"]["value"] == "never"


def test_untuned_machine_warns_with_advice() -> None:
    facts = by_name(run_preflight(UNTUNED, steal=0.05))
    expected = {"preempt_rt": "bad", "rt_throttling": "warn", "cpufreq_governor": "warn",
                "idle_states": "warn", "smt": "warn", "cpu_isolation": "info",
                "irqbalance": "warn", "thp": "warn", "clocksource": "warn",
                "virtualization": "bad"}
    assert {n: f["severity"] for n, f in facts.items()} == expected
    for name, fact in facts.items():
        assert fact["advice"], name
        assert "\n" not in fact["advice"], name
    assert "performance" in facts["cpufreq_governor"]["advice"]
    assert "C6 133 µs" in facts["idle_states"]["value"]
    assert "5.00 %" in facts["virtualization"]["value"]
    assert worst_severity(list(facts.values())) == "bad"


def test_missing_facts_are_info_not_errors() -> None:
    facts = run_preflight({})
    assert [f["name"] for f in facts] == NAMES
    assert all(f["severity"] in ("info", "ok") for f in facts)


@settings(deadline=None)
@given(st.dictionaries(st.sampled_from(sorted(UNTUNED)),
                       st.one_of(st.none(), st.booleans(), st.integers(-5, 10**6),
                                 st.text(max_size=20))))
def test_any_sysinfo_values_give_ten_facts(info: dict[str, Any]) -> None:
    # Values of any type, even where lists/dicts are expected, must not crash preflight.
    facts = run_preflight(info)
    assert len(facts) == len(NAMES)
    assert all(f["severity"] in ("ok", "info", "warn", "bad") for f in facts)


def test_real_sysinfo(probe_path: Path) -> None:
    done = subprocess.run([str(probe_path), "sysinfo"], capture_output=True, text=True,
                          timeout=30, check=True)
    facts = run_preflight(json.loads(done.stdout))
    assert [f["name"] for f in facts] == NAMES


@pytest.mark.parametrize("value", ["tsc", "arch_sys_counter", "kvm-clock", "acpi_pm"])
def test_clocksource_severity(value: str) -> None:
    fact = by_name(run_preflight({"clocksource": value}))["clocksource"]
    assert fact["severity"] == {"tsc": "ok", "arch_sys_counter": "ok", "kvm-clock": "info",
                                "acpi_pm": "warn"}[value]


def test_slow_clocksource_advice_lists_the_sources_for_people() -> None:
    facts = {f["name"]: f for f in run_preflight({"clocksource": "hpet",
                                                  "clocksource_available": ["hpet", "acpi_pm"]})}
    advice = facts["clocksource"]["advice"]
    assert advice == "slow clocksource and no tsc available (hpet, acpi_pm)"
