"""Exporters: each output is read back by the consumer's own rules.

junit validates against the Jenkins xUnit JUnit schema, kcidb against KCIDB's JSON
schema (both vendored, see tests/host/data/README.md), openmetrics is parsed by
prometheus_client, rt-tests-json by a re-implementation of the field parser in
Linaro's test-definitions (automated/lib/parse_rt_tests_results.py).
"""

from __future__ import annotations

import csv
import io
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from rtbench.bundle import RunDetail
from rtbench.interop.base import exporters, importers
from rtbench.store import Store

DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, probe_path: Path) -> dict[str, RunDetail]:
    """A simulated smoke run, an imported histogram run, a summary-only and a failed one."""
    import os

    from tests.cli_inprocess import run_in_process
    from tests.conftest import REPO

    tmp = tmp_path_factory.mktemp("export")
    url = f"sqlite:///{tmp / 'e.db'}"
    env = dict(os.environ, RTBENCH_PROBE=str(probe_path), XDG_DATA_HOME=str(tmp))
    done = run_in_process(["run", "smoke", "--scale", "0.2", "--simulate", "5", "--db", url,
                           "--no-report"], env, REPO, timeout=120)
    assert done.returncode in (0, 1), done.stderr
    out = {}
    with Store.open(url) as store:
        out["smoke"] = store.get_run(1)
        for key, name, fmt in (("hist", "real/ct-h.json", "cyclictest-json"),
                               ("summary", "real/ct-q.txt", "cyclictest"),
                               ("failed", "ltp-async_handler.txt", "ltp-realtime")):
            run = importers()[fmt].read((DATA / "interop" / name).read_bytes(), name)[0]
            run_id, _ = store.add_bundle(run)
            out[key] = store.get_run(run_id)
    return out


def export(fmt: str, run: RunDetail) -> bytes:
    """run in format fmt."""
    return exporters()[fmt].export(run)


def cell_count(run: RunDetail) -> int:
    """Measurements in a run."""
    return sum(len(sc.measurements) for sc in run.scenarios)


def test_registry_lists_every_format() -> None:
    assert {"json", "junit", "lava", "kcidb", "openmetrics", "csv", "rt-tests-json",
            "ndjson"} <= set(exporters())


@pytest.mark.parametrize("key", ["smoke", "hist", "summary", "failed"])
def test_junit_validates_against_the_schema(runs: dict[str, RunDetail], key: str) -> None:
    import xmlschema

    schema = xmlschema.XMLSchema(str(DATA / "junit" / "junit-10.xsd"))
    text = export("junit", runs[key])
    schema.validate(text.decode())
    root = ET.fromstring(text)
    cases = root.findall("./testsuite/testcase")
    assert len(cases) == cell_count(runs[key])
    failures = root.findall("./testsuite/testcase/failure")
    assert len(failures) == (1 if key == "failed" else 0)
    assert root.find("./testsuite").get("failures") == str(len(failures))  # type: ignore
    props = {p.get("name"): p.get("value") for p in root.iter("property")}
    if key == "summary":
        assert props["imported.cyclictest.T0.p99_us"] == "n/a"  # never invented
        assert props["imported.cyclictest.T0.max_us"] == "1116.000"


def test_lava_lines(runs: dict[str, RunDetail]) -> None:
    line = re.compile(r"^lava-test-case [A-Za-z0-9_.-]+ --result (pass|fail)"
                      r"( --measurement -?[0-9.]+ --units (us|count))?$")
    for key, run in runs.items():
        lines = export("lava", run).decode().splitlines()
        body = [x for x in lines if not x.startswith("#")]
        assert body and all(line.match(x) for x in body), body[:3]
        if key == "summary":
            assert not any(".p99 " in x for x in body)
            assert "lava-test-case imported.cyclictest.T0.max --result pass " \
                   "--measurement 1116.000 --units us" in body
        if key == "failed":
            # the cell's verdict fails; its figures are readings, recorded as pass
            assert body[0].endswith("--result fail")
            assert [x for x in body if "--result fail" in x] == [body[0]]
            assert any("--measurement" in x for x in body[1:])


def test_kcidb_validates_against_its_schema(runs: dict[str, RunDetail]) -> None:
    import jsonschema

    schema = json.loads((DATA / "kcidb" / "kcidb-schema-v5.3.json").read_text())
    validator = jsonschema.validators.validator_for(schema)(schema)
    for key, run in runs.items():
        doc = json.loads(export("kcidb", run))
        errors = list(validator.iter_errors(doc))
        assert not errors, (key, errors[0].message)
        statuses = [t["status"] for t in doc["tests"] if "number" not in t]
        assert len(statuses) == cell_count(run)
        assert statuses == (["FAIL"] if key == "failed" else ["PASS"] * cell_count(run))


def test_openmetrics_parses(runs: dict[str, RunDetail]) -> None:
    from prometheus_client.openmetrics.parser import text_string_to_metric_families

    for key, run in runs.items():
        families = {f.name: f for f in text_string_to_metric_families(  # type: ignore[no-untyped-call]
            export("openmetrics", run).decode())}
        hist = families["rtbench_latency_seconds"]
        series = [s for sc in run.scenarios for m in sc.measurements for s in m.series]
        counts = [int(s.value) for s in hist.samples if s.name.endswith("_count")]
        assert counts == [s.count for s in series]
        inf = [int(s.value) for s in hist.samples if s.labels.get("le") == "+Inf"]
        assert inf == counts
        if key == "hist":
            finite = [s for s in hist.samples if s.name.endswith("_bucket")
                      and s.labels["le"] != "+Inf"]
            assert len(finite) == len(series[0].hist)
        assert len(families["rtbench_cell_overruns"].samples) == len(series)
        # one label scheme, no run id: board, kernel, suite, scenario, test, series
        assert {frozenset(s.labels) for s in families["rtbench_cell_latency_max_seconds"]
                .samples} == {frozenset(("board", "kernel", "suite", "scenario", "test",
                                         "series"))}
        verdicts = [s.value for s in families["rtbench_cell_verdict"].samples]
        assert verdicts == ([0.0] if key == "failed" else [1.0] * cell_count(run))


def test_csv_one_row_per_cell_and_thread(runs: dict[str, RunDetail]) -> None:
    for key, run in runs.items():
        rows = list(csv.DictReader(io.StringIO(export("csv", run).decode())))
        series = [s for sc in run.scenarios for m in sc.measurements for s in m.series]
        assert [int(r["samples"]) for r in rows] == [s.count for s in series]
        if key == "summary":
            assert rows[0]["p99_us"] == "" and rows[0]["summary_only"] == "1"


def linaro_parse(doc: dict) -> list[str]:  # type: ignore[type-arg]
    """The result lines Linaro's rt-tests parser prints, re-implemented from its source."""
    lines = []
    for thread_id in range(int(doc["num_threads"])):
        data = doc["thread"][str(thread_id)]
        if "receiver" in data:
            data = data["receiver"]
        for key in ("min", "avg", "max"):
            lines.append(f"t{thread_id}-{key}-latency pass {data[key]} us")
    return lines


def test_rt_tests_json_is_read_by_the_linaro_parser(runs: dict[str, RunDetail]) -> None:
    run = runs["smoke"]
    doc = json.loads(export("rt-tests-json", run))
    lines = linaro_parse(doc)
    series = [s for sc in run.scenarios for m in sc.measurements for s in m.series]
    assert len(lines) == 3 * len(series)
    # an rtprobe run is in ns: written as cyclictest -N writes it (resolution_in_ns: 1)
    assert doc["resolution_in_ns"] == 1
    assert lines[0] == f"t0-min-latency pass {series[0].min_ns} us"  # the parser says us


def test_rt_tests_json_round_trips_a_ns_cyclictest_file() -> None:
    # issue 24: an ns run was rounded to us (min 7.999 -> 7, max 38.36 -> 39 us)
    original = {"file_version": 1, "cmdline:": "cyclictest -N -m -p 80 -t1 -i 1000",
                "rt_test_version:": "2.8", "resolution_in_ns": 1, "return_code": 0,
                "num_threads": 1,
                "thread": {"0": {"histogram": {}, "cycles": 2000, "min": 7999,
                                 "max": 38360, "avg": 12345.67, "cpu": 0, "node": 0}}}
    run = importers()["cyclictest-json"].read(json.dumps(original).encode(), "ns.json")[0]
    doc = json.loads(export("rt-tests-json", run))
    assert doc["resolution_in_ns"] == 1
    for key in ("cycles", "min", "max", "avg"):
        assert doc["thread"]["0"][key] == original["thread"]["0"][key], key  # type: ignore


def test_rt_tests_json_keeps_the_tools_own_histogram(runs: dict[str, RunDetail]) -> None:
    original = json.loads((DATA / "interop" / "real" / "ct-h.json").read_text())
    doc = json.loads(export("rt-tests-json", runs["hist"]))
    assert doc["thread"]["0"]["histogram"] == original["thread"]["0"]["histogram"]
    for key in ("cycles", "min", "max", "avg"):
        assert doc["thread"]["0"][key] == original["thread"]["0"][key]
    again = importers()["cyclictest-json"].read(json.dumps(doc).encode(), "x.json")[0]
    a = again.scenarios[0].measurements[0].series[0]
    b = runs["hist"].scenarios[0].measurements[0].series[0]
    assert (a.count, a.min_ns, a.max_ns, a.hist) == (b.count, b.min_ns, b.max_ns, b.hist)


def test_ndjson_holds_every_record(runs: dict[str, RunDetail]) -> None:
    run = runs["smoke"]
    records = [json.loads(x) for x in export("ndjson", run).decode().splitlines()]
    kinds = [r["type"] for r in records]
    assert kinds[0] == "run" and kinds.count("scenario") == len(run.scenarios)
    assert kinds.count("measurement") == cell_count(run)
    assert kinds.count("window") == sum(len(m.windows) for sc in run.scenarios
                                        for m in sc.measurements)
    assert kinds.count("series") == sum(len(m.series) for sc in run.scenarios
                                        for m in sc.measurements)


def test_cli_export_to_a_file(runs: dict[str, RunDetail], tmp_path: Path,  # type: ignore
                              run_cli) -> None:
    db = f"sqlite:///{tmp_path / 'x.db'}"
    with Store.open(db) as store:
        store.add_bundle(runs["hist"])
    out = tmp_path / "r.xml"
    done = run_cli("export", "1", "--format", "junit", "-o", str(out), "--db", db)
    assert done.returncode == 0 and out.read_bytes().startswith(b"<?xml")
    bad = run_cli("export", "7", "--format", "junit", "--db", db)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1
    unknown = run_cli("export", "1", "--format", "nope", "--db", db)
    assert unknown.returncode == 2 and "one of" in unknown.stderr


def test_percentiles_in_the_overflow_bucket_are_unknown() -> None:
    # issue 24: a `cyclictest -N -h 100` import (every sample beyond the histogram) got
    # p50 = p90 = p99 = its minimum and a stddev of 0.000 +- 0.000
    from rtbench.analysis.stats import merged_stats

    doc = {"file_version": 1, "cmdline:": "cyclictest -N -h 100 -m -p 80 -t1",
           "resolution_in_ns": 1, "return_code": 0, "num_threads": 1,
           "thread": {"0": {"histogram": {"90": 5}, "cycles": 2000, "min": 90, "max": 38360,
                            "avg": 12345.67, "cpu": 0, "node": 0}}}
    run = importers()["cyclictest-json"].read(json.dumps(doc).encode(), "ovf.json")[0]
    m = run.scenarios[0].measurements[0]
    stats = merged_stats(m.series, m.measured_ns)
    assert stats is not None and stats.min_ns == 90 and stats.max_ns == 38360
    assert stats.pct("p50") is None and stats.pct("p99") is None and stats.stddev_ns is None
    assert any("beyond the histogram's last bucket" in n for n in stats.notes)
    assert any("stddev unknown" in n for n in stats.notes)
    # the overflow holds 1995 of 2000 samples: only p0.1-ish ranks are known; and a file
    # whose histogram holds every sample keeps all its percentiles
    doc["thread"]["0"]["histogram"] = {"90": 1000, "120": 1000}  # type: ignore[index]
    doc["thread"]["0"]["max"] = 120  # type: ignore[index]
    full = importers()["cyclictest-json"].read(json.dumps(doc).encode(), "full.json")[0]
    fm = full.scenarios[0].measurements[0]
    whole = merged_stats(fm.series, fm.measured_ns)
    assert whole is not None and whole.pct("p50") == 90 and whole.stddev_ns is not None
