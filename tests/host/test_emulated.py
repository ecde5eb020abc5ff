"""Runs measured under CPU emulation (issue 34): preflight never says "bare metal"
without evidence and calls emulation bad; such a run is `emulated` in the store (column
runs.emulated, migration 0005_emulated, filled from sysinfo), in the verdict, the report,
`ls` and the runs JSON, and the matrix leaves it out unless asked, with "figures describe
the emulator, not a board"."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
from explain_helpers import cli, synthetic_measurement, synthetic_run
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from rtbench import EMULATED_WORDS
from rtbench.analysis.verdict import verdict_of
from rtbench.bundle import RunDetail
from rtbench.preflight import run_preflight
from rtbench.report.html import render_html
from rtbench.report.terminal import show_run
from rtbench.server.views import lab as lab_views
from rtbench.store import Store

TCG = {"virtualization": "tcg", "emulated": True,
       "virtualization_evidence": "device tree compatible linux,dummy-virt and no KVM "
                                  "sign: QEMU emulating the CPU"}


def _virt(info: dict[str, Any], steal: float | None = None) -> dict[str, Any]:
    """The virtualization fact preflight gives for info."""
    return next(f for f in run_preflight(info, steal=steal) if f["name"] == "virtualization")


def test_preflight_says_bare_metal_only_with_evidence() -> None:
    fact = _virt({"virtualization": None, "emulated": None}, steal=0.0)
    assert fact["value"] == "unknown" and fact["severity"] == "info"
    assert "bare metal" not in fact["value"] and "unknown" in fact["advice"]
    assert _virt({"virtualization": "none", "emulated": False})["value"] == "bare metal"
    bad = _virt(TCG)
    assert bad["severity"] == "bad" and EMULATED_WORDS in bad["advice"]
    assert bad["value"].startswith("CPU emulated (tcg)")
    assert _virt({"virtualization": "kvm", "emulated": False})["severity"] == "warn"


@settings(max_examples=60, deadline=None)
@given(virt=st.one_of(st.none(), st.text(max_size=12)),
       emulated=st.one_of(st.none(), st.booleans()),
       steal=st.one_of(st.none(), st.floats(0, 1)))
def test_preflight_virtualization_never_claims_without_evidence(
        virt: str | None, emulated: bool | None, steal: float | None) -> None:
    fact = _virt({"virtualization": virt, "emulated": emulated}, steal)
    if "bare metal" in str(fact["value"]):
        assert virt == "none" and emulated is not True
    if emulated is True:
        assert fact["severity"] == "bad"


def _run(emulated: bool, hostname: str = "box") -> RunDetail:
    """A stored-ready run, its sysinfo saying emulated (or a real CPU)."""
    m = synthetic_measurement([np.full(200, 20_000, dtype=np.int64)])
    info = TCG if emulated else {"virtualization": "none", "emulated": False}
    run = synthetic_run([m], hostname=hostname, sysinfo=info)
    run.simulated = False
    return run


def test_the_store_marks_runs_from_their_sysinfo(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'r.db'}"
    with Store.open(url) as store:
        real, _ = store.add_bundle(_run(False, "board-a"))
        emu, _ = store.add_bundle(_run(True, "qemu-arm64"))
        assert {r.id: r.emulated for r in store.list_runs()} == {real: False, emu: True}
        assert store.get_run(emu).emulated and not store.get_run(real).emulated
        # the matrix leaves emulated runs out unless asked
        plain = lab_views.matrix(store, suite=None, board=None, simulated=False)
        assert [b for tb in plain.tables for b in tb.boards] == ["board-a"]
        both = lab_views.matrix(store, suite=None, board=None, simulated=False,
                               emulated=True)
        assert sorted(b for tb in both.tables for b in tb.boards) == ["board-a",
                                                                      "qemu-arm64"]
        assert lab_views.matrix_json(both, False, True)["emulated_included"] is True
    listed = cli("ls", "--db", url)
    assert "emulated" in listed.output.split("qemu-arm64", 1)[1]
    rows = json.loads(cli("ls", "--json", "--db", url).output)
    assert {r["id"]: r["emulated"] for r in rows} == {real: False, emu: True}


def test_the_migration_fills_emulated_from_sysinfo(tmp_path: Path) -> None:
    from alembic import command

    from rtbench.store.engine import _alembic_config

    url = f"sqlite:///{tmp_path / 'm.db'}"
    with Store.open(url) as store:
        real, _ = store.add_bundle(_run(False, "board-a"))
        emu, _ = store.add_bundle(_run(True, "qemu-arm64"))
        cfg = _alembic_config(store.engine)
        with store.engine.begin() as conn:
            cfg.attributes["connection"] = conn
            command.downgrade(cfg, "0004_ops")  # the schema before 0005_emulated
    with Store.open(url) as store:  # migrates to head, filling the column
        assert {r.id: r.emulated for r in store.list_runs()} == {real: False, emu: True}


def test_verdict_report_and_show_say_emulated() -> None:
    run = _run(True)
    run.id = 3
    verdict = verdict_of(run)
    assert verdict.headline.endswith(f"EMULATED: {EMULATED_WORDS}")
    assert "linux,dummy-virt" in verdict.notes[0] and EMULATED_WORDS in verdict.notes[0]
    html = render_html(run, figures=False)
    assert "EMULATED RUN" in html and EMULATED_WORDS in html
    console = Console(record=True, width=120)
    show_run(console, run)
    assert f"EMULATED RUN: the CPU was emulated; {EMULATED_WORDS}" in console.export_text()
    real = _run(False)
    assert "EMULATED" not in verdict_of(real).headline
    assert "EMULATED" not in render_html(real, figures=False)
