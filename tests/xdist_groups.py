"""`--dist loadgroup` that works whatever pytest's node ids are made of.

pytest-xdist sends the tests marked `xdist_group("NAME")` to one worker by appending
`@NAME` to their node ids in the workers; pytest 9.2's structured node ids no longer take
that suffix, and every test would go wherever the scheduler pleases.  Here each worker
writes the group of each test it collected into a file the controller named, and the
controller's scheduler (xdist's load-scope scheduling) reads its work units from it: a
group's tests are one unit, every other test a unit of its own.  The units are handed out
in collection order (tests/conftest.py starts the longest ones first).

Also: each worker gets the controller's COLUMNS (or none), as a run without xdist has.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest

GROUPS_KEY = "rtbench_xdist_groups"
GROUPS_DIR = pytest.StashKey[Path]()
COLUMNS_KEY = "rtbench_columns"


def group_of(item: pytest.Item) -> str | None:
    """The name given by item's xdist_group marker, or None."""
    mark = item.get_closest_marker("xdist_group")
    if mark is None:
        return None
    return str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))


def pytest_configure(config: pytest.Config) -> None:
    """In the controller of a loadgroup run: a private directory for the groups file."""
    if not hasattr(config, "workerinput") and config.getoption("dist", "no") == "loadgroup":
        config.stash[GROUPS_DIR] = Path(tempfile.mkdtemp(prefix="rtbench-xdist-"))


def pytest_unconfigure(config: pytest.Config) -> None:
    """Remove the controller's groups directory."""
    folder = config.stash.get(GROUPS_DIR, None)
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """Tell each worker where to write the groups, and the controller's COLUMNS."""
    folder = node.config.stash.get(GROUPS_DIR, None)
    if folder is not None:
        node.workerinput[GROUPS_KEY] = str(folder / "groups.json")
    node.workerinput[COLUMNS_KEY] = os.environ.get("COLUMNS")


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    """In a worker: COLUMNS as in the controller.  A worker starts with COLUMNS=80 set,
    which rtbench takes as the terminal's width (tables fold at 80 columns, where a test
    run without xdist gets rtbench's 120 for output that is not a terminal)."""
    workerinput = getattr(session.config, "workerinput", None)
    if workerinput is None or COLUMNS_KEY not in workerinput:
        return
    columns = workerinput[COLUMNS_KEY]
    if columns is None:
        os.environ.pop("COLUMNS", None)
    else:
        os.environ["COLUMNS"] = columns


@pytest.hookimpl(tryfirst=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    """In a worker: write {node id: group} of the grouped tests before xdist reports the
    collection (every worker writes the same; each renames its own complete file)."""
    target = getattr(session.config, "workerinput", {}).get(GROUPS_KEY)
    if target is None:
        return
    groups = {item.nodeid: name for item in session.items
              if (name := group_of(item)) is not None}
    temp = Path(f"{target}.{os.getpid()}")
    temp.write_text(json.dumps(groups))
    temp.replace(target)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """The scheduler of `--dist loadgroup`: load-scope scheduling over the groups file."""
    folder = config.stash.get(GROUPS_DIR, None)
    if folder is None:
        return None
    from xdist.scheduler import LoadScopeScheduling

    # the units in collection order, as tests/conftest.py sorts it (longest first), not
    # xdist's default of the units with the most tests first
    config.option.loadscopereorder = False

    class FileGroupScheduling(LoadScopeScheduling):  # type: ignore[misc]
        """A work unit per group and per ungrouped test."""

        groups: dict[str, str] | None = None

        def _split_scope(self, nodeid: str) -> str:
            """The unit nodeid belongs to: its group's, or its own."""
            if self.groups is None:
                # written by every worker before it reports its collection, so present
                # here unless no worker collected anything (then there is nothing to group)
                path = folder / "groups.json"
                self.groups = json.loads(path.read_text()) if path.exists() else {}
            name = self.groups.get(nodeid)
            return nodeid if name is None else f"group {name}"

    return FileGroupScheduling(config, log)
