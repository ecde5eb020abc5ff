"""Issue 26 items 1 and 7 for the export files: KCIDB with checkout and build objects
validated by kcidb-io's own schema; OpenMetrics and Prometheus text whose TYPE/HELP
lines name their samples the way each format wants (and a kernel label)."""

from __future__ import annotations

import json
import re
import shlex
from typing import Any

import pytest
from server_helpers import bundle

from rtbench.interop.base import ExportFormatError, exporters
from rtbench.interop.kcidb import document
from tests.parts import import_part

COMMIT = "0123456789abcdef0123456789abcdef01234567"


def export(name: str, run: object) -> str:
    """The run exported in format name, as text."""
    return exporters()[name].export(run).decode()  # type: ignore[arg-type]


def test_kcidb_checkout_and_build_validate_with_kcidb_io() -> None:
    kcidb_io: Any = import_part("kcidb_io")
    run = bundle(kernel="6.6.15-rt22", tags={"kernel_config": "rt-full"})
    env = {"RTBENCH_KERNEL_COMMIT": COMMIT.upper(),
           "RTBENCH_KERNEL_REPO": "https://git.example.org/linux-rt.git",
           "RTBENCH_KERNEL_BRANCH": "v6.6-rt", "RTBENCH_KERNEL_CONFIG": "ignored: tag wins"}
    doc = document(run, env)
    kcidb_io.schema.V5_3.validate(doc)
    [checkout], [build] = doc["checkouts"], doc["builds"]
    assert checkout["git_commit_hash"] == COMMIT
    assert checkout["git_repository_url"] == "https://git.example.org/linux-rt.git"
    assert checkout["git_repository_branch"] == "v6.6-rt"
    assert checkout["misc"]["kernel_release"] == "6.6.15-rt22"
    assert build["checkout_id"] == checkout["id"] and build["config_name"] == "rt-full"
    assert build["architecture"] == run.arch
    assert {t["build_id"] for t in doc["tests"]} == {build["id"]}


def test_kcidb_leaves_out_what_the_run_does_not_know() -> None:
    kcidb_io: Any = import_part("kcidb_io")
    doc = document(bundle(), {"RTBENCH_KCIDB_BUILD_ID": "mylab:build-812"})
    kcidb_io.schema.V5_3.validate(doc)
    [checkout], [build] = doc["checkouts"], doc["builds"]
    assert "git_commit_hash" not in checkout and "config_name" not in build
    assert build["id"] == "mylab:build-812" and build["origin"] == "mylab"
    assert {t["build_id"] for t in doc["tests"]} == {"mylab:build-812"}
    with pytest.raises(ExportFormatError, match="40-digit"):
        document(bundle(), {"RTBENCH_KERNEL_COMMIT": "abc123"})
    with pytest.raises(ExportFormatError, match="ORIGIN:ID"):
        document(bundle(), {"RTBENCH_KCIDB_BUILD_ID": "no-colon"})


def test_openmetrics_and_prometheus_name_counters_their_own_way() -> None:
    from prometheus_client.openmetrics.parser import (
        text_string_to_metric_families as openmetrics_families,
    )
    from prometheus_client.parser import text_string_to_metric_families

    from rtbench.interop._exposition import Family, render

    run = bundle(kernel='6.6-rt "quoted"\nline')
    om = export("openmetrics", run)
    prom = export("prometheus", run)
    assert "# UNIT rtbench_cell_latency_max_seconds seconds" in om and om.endswith("# EOF\n")
    assert "# EOF" not in prom and "# UNIT" not in prom and "_bucket" not in prom
    families = {f.name: f for f in openmetrics_families(om)}  # type: ignore[no-untyped-call]
    assert {s.labels["kernel"] for s in families["rtbench_cell_overruns"].samples} == {
        '6.6-rt "quoted"\nline'}
    parsed = {f.name: f for f in text_string_to_metric_families(prom)}  # type: ignore[no-untyped-call]
    assert parsed["rtbench_cell_overruns"].type == "gauge"
    # a counter: TYPE names the family in OpenMetrics, the _total sample in Prometheus text
    counter = Family("rtbench_things", "counter", "Things.")
    counter.add({"board": "b"}, 3)
    assert "# TYPE rtbench_things counter\n" in render([counter], openmetrics=True)
    assert "# TYPE rtbench_things_total counter\n" in render([counter], openmetrics=False)
    # the rule a Pushgateway (Go's text parser) applies: every sample of a family named by
    # a TYPE line carries that name, plus _bucket/_count/_sum for a histogram
    typed: dict[str, str] = {}
    for line in prom.splitlines():
        kind = re.match(r"# TYPE (\S+) (\S+)", line)
        if kind:
            typed[kind.group(1)] = kind.group(2)
        elif not line.startswith("#"):
            name = re.match(r"[a-zA-Z_:][a-zA-Z0-9_:]*", line).group(0)  # type: ignore[union-attr]
            base = re.sub(r"_(bucket|count|sum)$", "", name)
            assert name in typed or typed.get(base) == "histogram", name


def gitlab_metrics(text: str) -> dict[str, str]:
    """A metrics report read as GitLab's parser reads it (Gitlab::Ci::Parsers::Metrics::
    Generic): per non-blank line, everything from '#' on dropped, the rest split as a
    shell would; the first word is the metric's key, the second its value (a string)."""
    report: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        words = shlex.split(re.sub(r"#.*$", "", line))
        if len(words) >= 2:
            report[words[0]] = words[1]
    return report


def test_gitlab_metrics_report_compares_two_runs_figure_by_figure() -> None:
    first = bundle(windows=3, per_window=500, tags={"ci": "main"})
    second = bundle(windows=4, per_window=500, tags={"ci": "branch"})
    texts = [export("prometheus", run) for run in (first, second)]
    old, new = (gitlab_metrics(text) for text in texts)
    # one line per figure: every sample line of the text is one metric of the report
    samples = [line for line in texts[0].splitlines() if not line.startswith("#")]
    assert len(old) == len(samples) >= 10
    # the same names in both runs: nothing "new", nothing "removed"
    assert set(old) == set(new)
    assert not any(first.uid in key or second.uid in key or "le=" in key for key in old)
    figures = {key.split("{")[0] for key in old}
    assert {"rtbench_cell_latency_min_seconds", "rtbench_cell_latency_mean_seconds",
            "rtbench_cell_latency_p99_seconds", "rtbench_cell_latency_max_seconds",
            "rtbench_cell_samples", "rtbench_cell_overruns", "rtbench_cell_verdict"} <= figures
    # and a change is seen as a change of value under the same name
    changed = [key for key in old if old[key] != new[key]]
    assert any(key.startswith("rtbench_cell_samples{") for key in changed)


def test_gitlab_and_docs_name_the_prometheus_export() -> None:
    from pathlib import Path

    import yaml

    root = Path(__file__).resolve().parents[2]
    ci = yaml.safe_load((root / "integrations/gitlab/gitlab-ci.yml").read_text())
    jobs = [job for job in ci.values() if isinstance(job, dict) and "artifacts" in job]
    assert any(job["artifacts"].get("reports", {}).get("metrics") == "rtbench.prom"
               for job in jobs)
    script = json.dumps(jobs)
    assert "--format prometheus -o rtbench.prom" in script


def test_kcidb_origin_from_the_option_or_the_environment(tmp_path) -> None:
    import os

    from server_helpers import bundle_text

    from tests.cli_inprocess import run_in_process
    from tests.conftest import REPO

    kcidb_io: Any = import_part("kcidb_io")
    doc = document(bundle(), {"RTBENCH_KCIDB_ORIGIN": "envlab"})
    kcidb_io.schema.V5_3.validate(doc)
    objects = [*doc["checkouts"], *doc["builds"], *doc["tests"]]
    assert {o["origin"] for o in objects} == {"envlab"}
    assert all(o["id"].startswith("envlab:") for o in objects)
    with pytest.raises(ExportFormatError, match="RTBENCH_KCIDB_ORIGIN 'My-Lab'"):
        document(bundle(), {"RTBENCH_KCIDB_ORIGIN": "My-Lab"})
    # the option wins over the environment, through the command line
    (tmp_path / "run.json").write_text(bundle_text())
    url = f"sqlite:///{tmp_path / 'k.db'}"
    env = dict(os.environ, RTBENCH_KCIDB_ORIGIN="envlab")
    assert run_in_process(["import", str(tmp_path / "run.json"), "--db", url], env, REPO,
                          timeout=60).returncode == 0
    done = run_in_process(["export", "1", "--format", "kcidb", "--kcidb-origin", "mylab",
                           "--db", url], env, REPO, timeout=60)
    assert done.returncode == 0, done.stderr
    assert {t["origin"] for t in json.loads(done.stdout)["tests"]} == {"mylab"}
    done = run_in_process(["export", "1", "--format", "kcidb", "--kcidb-origin", "a:b",
                           "--db", url], env, REPO, timeout=60)
    assert done.returncode == 2 and "--kcidb-origin 'a:b' is not a KCIDB origin" in done.stderr
    done = run_in_process(["export", "1", "--format", "junit", "--kcidb-origin", "mylab",
                           "--db", url], env, REPO, timeout=60)
    assert done.returncode == 2 and "--format kcidb only" in done.stderr
