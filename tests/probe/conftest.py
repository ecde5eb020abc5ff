"""Fixtures for end-to-end tests of the real rtprobe binary."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import jsonschema
import pytest
from probe_support import REPO, ProbeRun, RunProbe, parse_ndjson

from tests.session_lock import session_lock

SCHEMA_PATH = REPO / "probe" / "schema" / "rtprobe-1.schema.json"


@pytest.fixture(scope="session")
def rtprobe() -> Iterator[Path]:
    """Build probe/ with make (warning-free; one worker at a time) and yield the binary's
    path."""
    with session_lock("probe-make"):
        done = subprocess.run(["make", "-C", str(REPO / "probe")], capture_output=True,
                              text=True, check=False, timeout=300)
    if done.returncode != 0:
        pytest.fail(f"make -C probe failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    path = REPO / "probe" / "build" / "rtprobe"
    assert path.is_file()
    yield path


@pytest.fixture(scope="session")
def validator() -> jsonschema.protocols.Validator:
    """A draft 2020-12 validator for the shipped rtprobe/1 schema."""
    schema = json.loads(SCHEMA_PATH.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


@pytest.fixture()
def run_probe(rtprobe: Path) -> RunProbe:
    """Run `rtprobe ARGS...` to completion (bounded) and parse its stdout."""

    def run(*args: str, timeout: float = 30.0, prefix: tuple[str, ...] = (),
            env: dict[str, str] | None = None, parse: bool = True,
            measures: bool = True) -> ProbeRun:
        # measures=False: the arguments are refused before anything is measured
        if not measures or "--simulate" in args or "--help" in args or args[:1] in (
                ("describe",), ("sysinfo",)):
            done = subprocess.run([*prefix, str(rtprobe), *args], capture_output=True,
                                  text=True, timeout=timeout, check=False, env=env)
        else:
            # a real measurement: one at a time across xdist workers, since two SCHED_FIFO
            # probes on this machine's few CPUs starve each other's samples and counts
            with session_lock("realtime"):
                done = subprocess.run([*prefix, str(rtprobe), *args], capture_output=True,
                                      text=True, timeout=timeout, check=False, env=env)
        records = parse_ndjson(done.stdout) if parse else []
        return ProbeRun(done.returncode, records, done.stdout, done.stderr)

    return run
