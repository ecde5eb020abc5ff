"""Issue 26 items 1 and 7 for the export files: KCIDB with checkout and build objects
validated by kcidb-io's own schema; OpenMetrics and Prometheus text whose TYPE/HELP
lines name their samples the way each format wants (and a kernel label)."""

from __future__ import annotations

import json
import re
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

    run = bundle(kernel='6.6-rt "quoted"\nline')
    om = export("openmetrics", run)
    prom = export("prometheus", run)
    assert "# TYPE rtbench_overruns counter" in om and om.endswith("# EOF\n")
    assert "# TYPE rtbench_overruns_total counter" in prom and "# EOF" not in prom
    assert "# HELP rtbench_overruns_total " in prom and "# UNIT" not in prom
    families = {f.name: f for f in openmetrics_families(om)}  # type: ignore[no-untyped-call]
    assert {s.labels["kernel"] for s in families["rtbench_overruns"].samples} == {
        '6.6-rt "quoted"\nline'}
    parsed = {f.name: f for f in text_string_to_metric_families(prom)}  # type: ignore[no-untyped-call]
    assert parsed["rtbench_overruns"].type == "counter"
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


def test_gitlab_and_docs_name_the_prometheus_export() -> None:
    from pathlib import Path

    import yaml

    root = Path(__file__).resolve().parents[2]
    ci = yaml.safe_load((root / "integrations/gitlab/gitlab-ci.yml").read_text())
    jobs = [job for job in ci.values() if isinstance(job, dict) and "artifacts" in job]
    assert any(job["artifacts"].get("reports", {}).get("metrics") == "rtbench.prom"
               for job in jobs)
    script = json.dumps(jobs)
    assert "--format openmetrics -o rtbench.prom" in script
