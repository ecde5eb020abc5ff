"""`GET /metrics` (issue 26 item 4): the planted lab's newest figures per board x cell,
TYPE/HELP lines that name their samples, escaped labels, scraped by a real Prometheus
started on loopback (or, when it cannot start, parsed by prometheus_client's parser --
the test prints which ran), and the Grafana dashboard's queries naming real metrics."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient
from pg_cluster import BACKENDS, migrated_url
from server_helpers import free_port

from rtbench.server.app import create_app
from rtbench.store import Store
from tests.parts import missing_part

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))
from lab_data import REGRESSED_MAX_NS, make_lab, write_lab  # noqa: E402

LAB = make_lab(8, 3, 2)  # 48 runs; the planted board regresses from the 2nd kernel


def _lab_store(url: str) -> Store:
    """A store holding LAB."""
    store = Store.open(url)
    write_lab(store, LAB)
    return store


@pytest.fixture(params=BACKENDS)
def lab_client(request: pytest.FixtureRequest, tmp_path: Path):
    """A TestClient over the planted lab, on each backend."""
    store = _lab_store(migrated_url(request.param, tmp_path))
    with TestClient(create_app(store=store), raise_server_exceptions=False) as client:
        yield client
    store.close()


def _families(text: str) -> dict[str, object]:
    """The Prometheus-text families of text, by name."""
    from prometheus_client.parser import text_string_to_metric_families

    return {f.name: f for f in text_string_to_metric_families(text)}  # type: ignore[no-untyped-call]


def test_metrics_show_the_planted_regression(lab_client) -> None:
    answer = lab_client.get("/metrics")
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/plain; version=0.0.4")
    families = _families(answer.text)
    maxs = families["rtbench_cell_latency_max_seconds"].samples  # type: ignore[attr-defined]
    assert {s.labels["board"] for s in maxs} == {LAB.board_name(i) for i in range(8)}
    newest = LAB.kernel_names[-1]
    planted = [s for s in maxs if s.labels["board"] == LAB.planted_board]
    assert {s.labels["kernel"] for s in planted} == {newest}
    assert max(s.value for s in planted) == pytest.approx(REGRESSED_MAX_NS / 1e9)
    others = [s.value for s in maxs if s.labels["board"] != LAB.planted_board]
    assert max(others) < REGRESSED_MAX_NS / 1e9
    # the label scheme of every export; no run id as a label
    assert all(set(s.labels) == {"board", "kernel", "suite", "scenario", "test", "series"}
               for s in maxs)
    # each board x cell once: the newest run only
    cells = {(s.labels["board"], s.labels["scenario"], s.labels["test"], s.labels["series"])
             for s in maxs}
    assert len(cells) == len(maxs)
    run_ids = families["rtbench_cell_run_id"].samples  # type: ignore[attr-defined]
    assert len(run_ids) == len(maxs) and all(s.value >= 1 for s in run_ids)
    exceed = families["rtbench_cell_exceedances"].samples  # type: ignore[attr-defined]
    assert {s.labels["threshold"] for s in exceed} == {"0.0001"}
    assert any(s.value > 0 for s in exceed if s.labels["board"] == LAB.planted_board)
    # the TYPE and HELP lines name exactly the families the samples belong to
    typed = re.findall(r"^# TYPE (\S+) (\S+)$", answer.text, re.M)
    helped = re.findall(r"^# HELP (\S+) ", answer.text, re.M)
    names = {re.match(r"[a-z0-9_]+", line).group(0)  # type: ignore[union-attr]
             for line in answer.text.splitlines() if line and not line.startswith("#")}
    assert [n for n, _ in typed] == helped and names <= {n for n, _ in typed}


def test_metrics_openmetrics_when_asked_and_labels_escaped(tmp_path: Path) -> None:
    from prometheus_client.openmetrics.parser import text_string_to_metric_families

    from rtbench.interop._exposition import label_value

    assert label_value('a"b\\c\nd\x07') == 'a\\"b\\\\c\\nd'
    store = _lab_store(f"sqlite:///{tmp_path / 'l.db'}")
    with TestClient(create_app(store=store)) as client:
        answer = client.get("/metrics", headers={
            "Accept": "application/openmetrics-text;version=1.0.0,text/plain;q=0.5"})
    store.close()
    assert answer.headers["content-type"].startswith("application/openmetrics-text")
    assert answer.text.endswith("# EOF\n")
    names = {f.name for f in text_string_to_metric_families(answer.text)}  # type: ignore[no-untyped-call]
    assert "rtbench_cell_latency_max_seconds" in names


def _prometheus_query(tmp_path: Path, target: str) -> list[dict[str, object]] | None:
    """Scrape target with a real Prometheus on loopback and query the planted board's
    max; None when Prometheus is missing or does not start."""
    binary = shutil.which("prometheus")
    if binary is None:
        missing_part("prometheus", "prometheus is not installed: scraped by the parser")
        return None
    port = free_port()
    config = tmp_path / "prometheus.yml"
    config.write_text("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                      "scrape_configs:\n  - job_name: rtbench\n    static_configs:\n"
                      f"      - targets: ['{target}']\n")
    proc = subprocess.Popen([binary, f"--config.file={config}",
                             f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                             f"--web.listen-address=127.0.0.1:{port}"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    query = 'rtbench_cell_latency_max_seconds{board="' + LAB.planted_board + '"}'
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                return None
            try:
                answer = httpx.get(f"http://127.0.0.1:{port}/api/v1/query",
                                   params={"query": query}, timeout=2).json()
                if answer.get("data", {}).get("result"):
                    return list(answer["data"]["result"])
            except (httpx.HTTPError, json.JSONDecodeError):
                pass
            time.sleep(0.3)
        return None
    finally:
        proc.terminate()
        proc.wait(20)


def test_prometheus_scrapes_the_planted_board(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'scrape.db'}"
    _lab_store(url).close()
    port = free_port()
    serve = subprocess.Popen([sys.executable, "-m", "rtbench", "serve", "--db", url,
                              "--bind", f"127.0.0.1:{port}"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(300):
            try:
                if httpx.get(f"http://127.0.0.1:{port}/api/v1/health",
                             timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        result = _prometheus_query(tmp_path, f"127.0.0.1:{port}")
        if result is not None:
            print("scraped by: a real Prometheus")
            values = [float(r["value"][1]) for r in result]  # type: ignore[index]
            assert {r["metric"]["kernel"] for r in result} == {  # type: ignore[index]
                LAB.kernel_names[-1]}
            assert {r["metric"]["job"] for r in result} == {"rtbench"}  # type: ignore[index]
        else:
            print("scraped by: prometheus_client's parser (Prometheus did not start)")
            text = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=10).text
            samples = _families(text)["rtbench_cell_latency_max_seconds"].samples  # type: ignore[attr-defined]
            values = [s.value for s in samples if s.labels["board"] == LAB.planted_board]
        assert max(values) == pytest.approx(REGRESSED_MAX_NS / 1e9)
    finally:
        serve.terminate()
        serve.wait(20)


def test_grafana_dashboard_queries_name_real_metrics(tmp_path: Path) -> None:
    dashboard = json.loads((REPO / "integrations/grafana/rtbench-lab.json").read_text())
    store = _lab_store(f"sqlite:///{tmp_path / 'g.db'}")
    with TestClient(create_app(store=store)) as client:
        exposed = set(_families(client.get("/metrics").text))
    store.close()
    exprs = [t["expr"] for p in dashboard["panels"] for t in p["targets"]]
    exprs += [v["definition"] for v in dashboard["templating"]["list"] if "definition" in v]
    used = {name for e in exprs for name in re.findall(r"rtbench_[a-z0-9_]+", e)}
    assert len(exprs) >= 6 and used and used <= exposed, used - exposed
