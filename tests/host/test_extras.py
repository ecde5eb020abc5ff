"""pyproject.toml's `all` extra is every optional part: server, serial, cross, labgrid."""

from __future__ import annotations

import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def test_all_extra_is_the_union_of_the_optional_parts() -> None:
    extras = tomllib.loads(PYPROJECT.read_text())["project"]["optional-dependencies"]
    parts = ("server", "serial", "cross", "labgrid")
    union = {req for name in parts for req in extras[name]}
    assert set(extras["all"]) == union
    assert len(extras["all"]) == len(union)     # each requirement once


def test_one_serial_package_in_every_extra() -> None:
    """pyserial and labgrid's pyserial-labgrid both install the `serial` module and
    overwrite each other: every extra names the fork labgrid itself requires."""
    extras = tomllib.loads(PYPROJECT.read_text())["project"]["optional-dependencies"]
    for name, requirements in extras.items():
        names = {req.split(">")[0].split("=")[0].split("<")[0].strip() for req in requirements}
        assert "pyserial" not in names, name
    assert any(req.startswith("pyserial-labgrid") for req in extras["serial"])
    assert any(req.startswith("pyserial-labgrid") for req in extras["all"])


def test_the_dev_extra_is_the_test_extra_and_the_tools_ci_adds() -> None:
    """make test installs the test extra, make dev and CI the dev one (Makefile)."""
    extras = tomllib.loads(PYPROJECT.read_text())["project"]["optional-dependencies"]
    added = set(extras["dev"]) - set(extras["test"])
    assert set(extras["test"]) < set(extras["dev"])
    assert {name.split(">")[0] for name in added} == {"mypy", "ruff", "schemathesis", "ziglang"}
