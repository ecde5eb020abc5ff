"""The layers of docs/architecture.md stay true: every import in rtbench/ is checked.

Each module belongs to a layer; a layer may import only the layers listed for it (every
import counts, also those inside functions).  A module in a package this table does not
know yet is held to the rules that hold for everything: nothing imports the CLI, and
the presentation libraries stay in report/ and the CLI.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "rtbench"

# module (dotted, as a prefix) -> layer; the longest matching prefix wins
LAYER_OF = {
    "rtbench": "root",
    "rtbench.wire": "wire",
    "rtbench.cpulist": "util",
    "rtbench._pdeath": "util",
    "rtbench.owner": "util",
    "rtbench.runsave": "runner",
    "rtbench.rtprobe": "util",
    "rtbench.bundle": "bundle",
    "rtbench.suites": "suites",
    "rtbench.preflight": "preflight",
    "rtbench.targets": "targets",
    "rtbench.store": "store",
    "rtbench.analysis": "analysis",
    "rtbench.events": "events",
    "rtbench.runner": "runner",
    "rtbench.fleet": "runner",
    "rtbench.report": "report",
    "rtbench.interop": "interop",
    "rtbench.server": "server",
    "rtbench.cli": "cli",
    "rtbench.commands": "cli",
    "rtbench.__main__": "cli",
}
# layer -> the layers it may import (itself always)
ALLOWED = {
    "root": set(),
    "wire": set(),
    "util": {"root"},
    "bundle": {"wire"},
    "suites": {"root", "util"},
    "preflight": {"root"},
    "targets": {"root", "util", "wire"},
    "store": {"root", "wire", "bundle"},
    "analysis": {"root", "wire", "bundle"},
    "events": {"wire", "suites"},
    "runner": {"root", "util", "wire", "bundle", "suites", "preflight", "targets", "store",
               "analysis", "events"},
    "report": {"root", "util", "wire", "bundle", "analysis", "store", "events"},
    "interop": {"root", "wire", "bundle", "analysis", "store"},
    "server": {"root", "wire", "bundle", "analysis", "store", "report", "interop"},
    "cli": set(LAYER_OF.values()),
}
# third-party modules only some layers may use
PRESENTATION = {"rich", "matplotlib", "jinja2"}
DATABASE = {"sqlalchemy", "alembic"}
PROCESSES = {"subprocess", "socket", "select", "signal"}
FORBIDDEN = {
    "wire": PRESENTATION | DATABASE | PROCESSES,
    "bundle": PRESENTATION | DATABASE | PROCESSES,
    "analysis": PRESENTATION | DATABASE | PROCESSES | {"os", "pathlib", "io", "tempfile"},
    "store": PRESENTATION | PROCESSES,
    "runner": PRESENTATION | DATABASE,
    "events": PRESENTATION | DATABASE | PROCESSES,
    "targets": PRESENTATION | DATABASE,
    "suites": PRESENTATION | DATABASE | PROCESSES,
    "preflight": PRESENTATION | DATABASE | PROCESSES,
    None: PRESENTATION,  # a package not placed yet
}


def module_name(path: Path) -> str:
    """rtbench/x/y.py -> rtbench.x.y (a package's __init__ is the package)."""
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def layer(module: str) -> str | None:
    """The layer of an rtbench module (None: a package the table does not know)."""
    best = max((prefix for prefix in LAYER_OF
                if module == prefix or module.startswith(prefix + ".")), key=len)
    if best == "rtbench" and module != "rtbench":
        return None
    return LAYER_OF[best]


def imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every import in a file, relative ones resolved."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    own = module_name(path)
    package = own if path.name == "__init__.py" else own.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            # `from rtbench.wire import records` names a module, not a name
            for alias in node.names:
                full = f"{base}.{alias.name}"
                found.append((node.lineno, full if is_module(full) else base))
    return found


def is_module(dotted: str) -> bool:
    """True when dotted names a module or package of rtbench."""
    path = PACKAGE.parent.joinpath(*dotted.split("."))
    return path.is_dir() or path.with_suffix(".py").is_file()


def violations() -> list[str]:
    """Every import that crosses the layers the wrong way."""
    bad = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if "migrations" in path.parts:
            continue
        own = module_name(path)
        mine = layer(own)
        for lineno, target in imports(path):
            where = f"{path.relative_to(PACKAGE.parent)}:{lineno}"
            top = target.split(".")[0]
            if top != "rtbench":
                if top in FORBIDDEN.get(mine, set()):
                    bad.append(f"{where}: {mine or own} imports {target}")
                continue
            theirs = layer(target)
            if theirs == "root" and target != "rtbench":
                theirs = None
            if mine is None:
                if theirs == "cli":
                    bad.append(f"{where}: {own} imports the CLI ({target})")
                continue
            if theirs is None or theirs == mine:
                continue
            if theirs not in ALLOWED[mine]:
                bad.append(f"{where}: {mine} imports {theirs} ({target})")
    return bad


def test_the_layers_named_exist() -> None:
    for module in LAYER_OF:
        assert is_module(module), module


def test_imports_follow_the_layers() -> None:
    assert violations() == []


@pytest.mark.parametrize(("layer_name", "module"), [
    ("runner", "rtbench.report.live"), ("runner", "rich.console"),
    ("analysis", "rtbench.store"), ("analysis", "sqlalchemy"),
    ("store", "rtbench.report.format"), ("store", "rich"),
])
def test_the_check_catches_a_crossing(layer_name: str, module: str) -> None:
    theirs = layer(module) if module.startswith("rtbench") else None
    if theirs is not None:
        assert theirs not in ALLOWED[layer_name]
    else:
        assert module.split(".")[0] in FORBIDDEN[layer_name]
