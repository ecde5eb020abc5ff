"""Issue 37 items 1 and 6: the stored history as timestamped OpenMetrics that promtool
backfills (one sample per run at its start, labels board, kernel, suite, scenario,
test, series, no run id as a label), and the alert rules in Prometheus' rule format
(`promtool check rules`, and `promtool test rules` on planted series)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rtbench.store import Store
from tests.cli_inprocess import run_in_process
from tests.conftest import REPO
from tests.parts import require_part

sys.path.insert(0, str(REPO / "bench"))
from lab_data import make_lab, make_run, write_lab  # noqa: E402

LAB = make_lab(2, 2, 3)  # 12 runs, one cell of two series each
LABELS = {"board", "kernel", "suite", "scenario", "test", "series"}
RULES = REPO / "integrations" / "prometheus" / "rtbench-rules.yml"
RULE_TESTS = REPO / "tests" / "host" / "data" / "prometheus" / "rules_test.yml"


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    """The lab (and one simulated run, which history leaves out) in a database, and its
    history written by `rtbench export --format openmetrics-history`."""
    tmp = tmp_path_factory.mktemp("history")
    url = f"sqlite:///{tmp / 'lab.db'}"
    with Store.open(url) as store:
        write_lab(store, LAB)
        store.add_bundle(make_run(LAB, 0, 1, 9, simulated=True))
    out = tmp / "lab.om"
    done = run_in_process(["export", "--format", "openmetrics-history", "-o", str(out),
                           "--db", url], dict(os.environ), REPO, timeout=60)
    assert done.returncode == 0, done.stderr
    return url, out


def test_history_has_one_sample_per_run_at_its_start(history: tuple[str, Path]) -> None:
    from prometheus_client.openmetrics.parser import text_string_to_metric_families

    url, out = history
    text = out.read_text()
    assert text.endswith("# EOF\n")
    families = {f.name: f for f in text_string_to_metric_families(text)}  # type: ignore[no-untyped-call]
    ids = families["rtbench_cell_run_id"].samples
    with Store.open(url) as store:
        runs = {r.id: r for r in store.list_runs() if not r.simulated}
    # two series per run, every real run once per series, stamped with its start
    assert len(ids) == 2 * len(runs) == 24
    for sample in ids:
        run = runs[int(sample.value)]
        assert float(sample.timestamp) == pytest.approx(run.started_at.timestamp())
        assert set(sample.labels) == LABELS and sample.labels["kernel"] == run.kernel
    maxs = families["rtbench_cell_latency_max_seconds"].samples
    assert all(set(s.labels) == LABELS for s in maxs) and len(maxs) == 24
    assert not re.search(r'\brun="', text)


def test_promtool_backfills_the_history(history: tuple[str, Path], tmp_path: Path) -> None:
    promtool = shutil.which("promtool")
    if promtool is None:
        require_part("prometheus", "promtool is not installed (Debian package prometheus)")
    _, out = history
    blocks = tmp_path / "tsdb"
    done = subprocess.run([promtool, "tsdb", "create-blocks-from", "openmetrics", str(out),
                           str(blocks)], capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode == 0, done.stderr + done.stdout
    (blocks / "wal").mkdir(exist_ok=True)  # `tsdb dump` opens the database, WAL included
    dump = subprocess.run([promtool, "tsdb", "dump", str(blocks)], capture_output=True,
                          text=True, timeout=120, check=True).stdout
    run_ids = [line for line in dump.splitlines()
               if line.startswith('{__name__="rtbench_cell_run_id"')]
    assert len(run_ids) == 24
    # one series per board x kernel x suite x cell: 2 boards x 2 kernels x 2 series
    assert len({line.rsplit(" ", 2)[0] for line in run_ids}) == 8


def test_history_refuses_a_run_and_narrows_by_board(history: tuple[str, Path],
                                                    tmp_path: Path) -> None:
    url, _ = history
    env = dict(os.environ)
    done = run_in_process(["export", "1", "--format", "openmetrics-history", "--db", url],
                          env, REPO, timeout=60)
    assert done.returncode == 2 and "give no RUN" in done.stderr
    out = tmp_path / "one.om"
    done = run_in_process(["export", "--format", "openmetrics-history", "--board",
                           LAB.board_name(0), "--since", "2026-01-01", "-o", str(out),
                           "--db", url], env, REPO, timeout=60)
    assert done.returncode == 0, done.stderr
    boards = set(re.findall(r'board="([^"]+)"', out.read_text()))
    assert boards == {LAB.board_name(0)}
    done = run_in_process(["export", "--format", "openmetrics-history", "--since", "1.1.26",
                           "--db", url], env, REPO, timeout=60)
    assert done.returncode == 2 and "YYYY-MM-DD" in done.stderr




def test_alert_rules_check_and_fire_on_held_changes_only() -> None:
    promtool = shutil.which("promtool")
    if promtool is None:
        require_part("prometheus", "promtool is not installed (Debian package prometheus)")
    check = subprocess.run([promtool, "check", "rules", str(RULES)], capture_output=True,
                           text=True, timeout=60, check=False)
    assert check.returncode == 0 and "SUCCESS: 4 rules found" in check.stdout, check.stderr
    # b1's p99.9 rose with a new kernel and held 40 h: it fires (the kernel label is
    # gone from the alert); b2's rose for 2 h only: it does not
    done = subprocess.run([promtool, "test", "rules", str(RULE_TESTS)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def test_grafana_dashboard_has_percentiles_units_and_run_links() -> None:
    import json

    dashboard = json.loads((REPO / "integrations/grafana/rtbench-lab.json").read_text())
    exprs = {p["title"]: " ".join(t["expr"] for t in p["targets"])
             for p in dashboard["panels"]}
    assert any("rtbench_cell_latency_p99_seconds" in e and "p99 " in t
               for t, e in exprs.items())
    assert any("rtbench_cell_latency_p999_seconds" in e and "p99.9" in t
               for t, e in exprs.items())
    # the old packed label is gone: legends name the scheme's labels
    legends = [t.get("legendFormat", "") for p in dashboard["panels"] for t in p["targets"]]
    assert not any("{{cell}}" in x for x in legends)
    [table] = [p for p in dashboard["panels"] if p["type"] == "table"]
    fields = {o["matcher"]["options"]: {x["id"]: x["value"] for x in o["properties"]}
              for o in table["fieldConfig"]["overrides"]}
    values = {k: v for k, v in fields.items() if k.startswith("Value #")}
    assert values and all("unit" in v for v in values.values())
    refs = {t["refId"]: t["expr"] for t in table["targets"]}
    [run_field] = [k for k in values if "rtbench_cell_run_id" in refs[k[-1]]]
    [link] = values[run_field]["links"]
    assert link["url"] == "${server}/runs/${__value.raw}"
    assert "server" in {v["name"] for v in dashboard["templating"]["list"]}
