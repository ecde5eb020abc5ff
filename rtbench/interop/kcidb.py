"""KernelCI KCIDB JSON (I/O schema v5.3): the checkout and build of the measured kernel,
a test per cell and one per figure.

Ids are "<origin>:<run uid>...", the origin being the lab's CI system: `--kcidb-origin`,
else RTBENCH_KCIDB_ORIGIN, else "rtbench" (KCIDB's pattern: [a-z0-9_]+).  The checkout
and the build say what the run knows of
its kernel: the release (`uname -r`, always), and where given the git commit,
repository, branch, tree name and config, each from a run tag or else from an
environment variable of the exporting process (KERNEL_FACTS; a tag wins).  What is not
known is left out, never guessed.  A submitter that already sent its own build can set
RTBENCH_KCIDB_BUILD_ID (and RTBENCH_KCIDB_CHECKOUT_ID): the tests then point at it.
A cell's status is PASS or FAIL from its verdicts (ERROR when it could not run);
figures are DONE tests with their number in microseconds.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from typing import Any

from rtbench.bundle import RunDetail
from rtbench.interop._cells import cells, figures, safe_name
from rtbench.interop.base import Exporter, ExportFormatError

ORIGIN = "rtbench"
ORIGIN_VARIABLE = "RTBENCH_KCIDB_ORIGIN"
_ORIGIN = re.compile(r"^[a-z0-9_]+$")
# KCIDB field -> (run tag, environment variable)
KERNEL_FACTS = {
    "git_commit_hash": ("kernel_commit", "RTBENCH_KERNEL_COMMIT"),
    "git_repository_url": ("kernel_repo", "RTBENCH_KERNEL_REPO"),
    "git_repository_branch": ("kernel_branch", "RTBENCH_KERNEL_BRANCH"),
    "tree_name": ("kernel_tree", "RTBENCH_KERNEL_TREE"),
    "config_name": ("kernel_config", "RTBENCH_KERNEL_CONFIG"),
}
_SHA1 = re.compile(r"^[0-9a-f]{40}$")
_ID = re.compile(r"^[^:\0]+:.+$")


def kernel_facts(run: RunDetail, environ: Mapping[str, str]) -> dict[str, str]:
    """The KCIDB fields of KERNEL_FACTS the run's tags or environ give (tags first)."""
    facts: dict[str, str] = {}
    for field_name, (tag, variable) in KERNEL_FACTS.items():
        value = (run.tags.get(tag) or environ.get(variable) or "").strip()
        if value:
            facts[field_name] = value
    commit = facts.get("git_commit_hash")
    if commit is not None and not _SHA1.match(commit.lower()):
        raise ExportFormatError(f"kernel commit {commit[:60]!r} (tag kernel_commit or "
                                "RTBENCH_KERNEL_COMMIT) is not a full 40-digit git hash")
    if commit is not None:
        facts["git_commit_hash"] = commit.lower()
    return facts


def _given_id(environ: Mapping[str, str], variable: str, default: str) -> str:
    """An "origin:id" from environ[variable], else default."""
    value = environ.get(variable, "").strip()
    if not value:
        return default
    if not _ID.match(value):
        raise ExportFormatError(f"{variable}={value[:60]!r} is not a KCIDB id: write "
                                "ORIGIN:ID, e.g. mylab:build-812")
    return value


def origin_of(given: str | None, environ: Mapping[str, str]) -> str:
    """The KCIDB origin: given (--kcidb-origin), else RTBENCH_KCIDB_ORIGIN, else
    rtbench; ExportFormatError when it is not KCIDB's [a-z0-9_]+."""
    where = "--kcidb-origin" if given is not None else ORIGIN_VARIABLE
    value = (given if given is not None else environ.get(ORIGIN_VARIABLE, "")).strip()
    if not value and given is None:
        return ORIGIN
    if not _ORIGIN.match(value):
        raise ExportFormatError(f"{where} {value[:60]!r} is not a KCIDB origin: use lower-case "
                                "letters, digits and _ (e.g. mylab)")
    return value


def document(run: RunDetail, environ: Mapping[str, str],
             origin: str | None = None) -> dict[str, Any]:
    """The KCIDB document of run (facts and ids from environ where the run has none;
    origin as origin_of() finds it)."""
    lab = origin_of(origin, environ)
    uid = run.uid or f"run{run.id}"
    facts = kernel_facts(run, environ)
    checkout_id = _given_id(environ, "RTBENCH_KCIDB_CHECKOUT_ID", f"{lab}:{uid}")
    build_id = _given_id(environ, "RTBENCH_KCIDB_BUILD_ID", f"{lab}:{uid}")
    checkout: dict[str, Any] = {
        "id": checkout_id, "origin": checkout_id.split(":", 1)[0],
        "misc": {"kernel_release": run.kernel}}
    checkout.update({k: v for k, v in facts.items() if k != "config_name"})
    build: dict[str, Any] = {
        "id": build_id, "origin": build_id.split(":", 1)[0], "checkout_id": checkout_id,
        "misc": {"kernel_release": run.kernel}}
    if run.arch:
        build["architecture"] = run.arch
    if "config_name" in facts:
        build["config_name"] = facts["config_name"]
    env = {"comment": f"{run.hostname} {run.kernel} {run.arch}",
           "misc": {"hostname": run.hostname, "kernel": run.kernel, "arch": run.arch,
                    "simulated": run.simulated, "tags": run.tags}}
    tests: list[dict[str, Any]] = []
    prefix = f"{lab}:{uid}"
    for n, cell in enumerate(cells(run)):
        m = cell.measurement
        path = safe_name("rtbench", cell.scenario.name, m.name)
        status = "ERROR" if cell.errored else "PASS" if cell.passed else "FAIL"
        tests.append({
            "id": f"{prefix}:{n}", "build_id": build_id, "origin": lab,
            "path": path, "status": status, "start_time": run.started_at.isoformat(),
            "environment": env,
            "misc": {"verdicts": m.verdicts, "test": m.test,
                     "summary_only": cell.summary_only}})
        for series, stats in cell.per_series:
            for figure, value in figures(stats):
                if value is None:
                    continue
                tests.append({
                    "id": f"{prefix}:{n}:{safe_name(series.label)}:{figure}",
                    "build_id": build_id, "origin": lab,
                    "path": f"{path}.{safe_name(series.label)}."
                            f"{figure.replace('.', '_')}",
                    "status": "DONE", "number": {"value": value, "unit": "us"},
                    "start_time": run.started_at.isoformat(), "environment": env})
    return {"version": {"major": 5, "minor": 3}, "checkouts": [checkout],
            "builds": [build], "tests": tests}


def export_with_origin(run: RunDetail, origin: str | None,
                       environ: Mapping[str, str]) -> bytes:
    """The run as KCIDB JSON under origin (None: RTBENCH_KCIDB_ORIGIN, else rtbench)."""
    doc = document(run, environ, origin)
    return (json.dumps(doc, indent=1, allow_nan=False) + "\n").encode()


class KcidbExporter(Exporter):
    """KCIDB v5.3 JSON."""

    name = "kcidb"
    summary = "KernelCI KCIDB JSON (schema 5.3): checkout, build, tests with their values"
    suffix = ".json"

    def export(self, run: RunDetail) -> bytes:
        """The run as a KCIDB document (kernel facts from its tags or the environment)."""
        return export_with_origin(run, None, os.environ)
