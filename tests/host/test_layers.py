"""The layers of docs/architecture.md stay true: every import in rtbench/ is checked.

Each module belongs to a layer and a layer may import only the layers listed for it
(every import counts, also those inside functions).  Every module must be placed: one
the table does not know fails the check until it is given a layer.  Module-level
imports must form no circle.  The checker itself is tested on packages planted in a
temporary directory.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.host.import_graph import circles, imports, is_module, module_edges, modules_of

PACKAGE = Path(__file__).resolve().parents[2] / "rtbench"

# module (dotted, as a prefix) -> layer; the longest matching prefix wins
LAYER_OF = {
    "rtbench": "root",
    "rtbench.core.valuetext": "root",
    "rtbench.rtprobe": "rtprobe",
    "rtbench.rtprobe.wire.records": "wire",
    "rtbench.rtprobe.wire.checks": "wire",
    "rtbench.rtprobe.wire.trace_records": "wire",
    "rtbench.rtprobe.wire.loglin7": "wire",
    "rtbench.rtprobe.wire.raw": "wire",
    "rtbench.wire.histpairs": "wire",
    "rtbench.core.readlimit": "root",
    "rtbench.core.secretfile": "root",
    "rtbench.core.redact": "root",
    "rtbench.core.stdoutcheck": "root",
    "rtbench.core.boundedrun": "root",
    "rtbench.util.cpulist": "util",
    "rtbench.util._pdeath": "util",
    "rtbench.util.atomicfile": "util",
    "rtbench.rtprobe.util.elftrim": "util",
    "rtbench.rtprobe.util.locate": "util",
    "rtbench.run.util.owner": "util",
    "rtbench.run.util.tracestate": "util",
    "rtbench.rtprobe.build": "build",
    "rtbench.rtprobe.build.ltolink": "build",
    "rtbench.bundle": "bundle",
    "rtbench.kinds": "kinds",
    "rtbench.suites": "suites",
    "rtbench.preflight": "preflight",
    "rtbench.targets": "targets",
    "rtbench.store": "store",
    "rtbench.analysis": "analysis",
    "rtbench.reference": "reference",
    "rtbench.run": "runner",
    "rtbench.regress": "regress",
    "rtbench.run.events": "events",
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
    "build": {"root", "util"},
    # the test kinds' host traits and their own headlines and tables (pure)
    "kinds": set(),
    # the probe's contract on the host; the provider builds probes, targets never do
    "rtprobe": {"root", "util", "wire", "build", "kinds"},
    "bundle": {"wire"},
    "suites": {"root", "util", "rtprobe"},
    "preflight": {"root", "kinds"},
    "targets": {"root", "util", "wire", "rtprobe"},
    "store": {"root", "wire", "bundle"},
    "analysis": {"root", "wire", "bundle", "kinds"},
    "reference": {"root", "wire", "bundle", "analysis"},
    "events": {"wire", "suites"},
    # the regression board: a stored run checked against its board's baseline
    "regress": {"root", "wire", "bundle", "store", "analysis"},
    "runner": {"root", "util", "wire", "rtprobe", "bundle", "suites", "preflight", "targets",
               "store", "analysis", "events", "regress", "kinds"},
    "report": {"root", "util", "wire", "bundle", "analysis", "reference", "store", "events",
               "kinds"},
    "interop": {"root", "wire", "bundle", "analysis", "store"},
    "server": {"root", "wire", "bundle", "analysis", "reference", "store", "report",
               "interop", "regress"},
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
    "kinds": PRESENTATION | DATABASE | PROCESSES | {"os", "pathlib", "io", "tempfile"},
    "store": PRESENTATION | PROCESSES,
    "runner": PRESENTATION | DATABASE,
    "regress": PRESENTATION | DATABASE | PROCESSES,
    "events": PRESENTATION | DATABASE | PROCESSES,
    "targets": PRESENTATION | DATABASE,
    "rtprobe": PRESENTATION | DATABASE,
    "suites": PRESENTATION | DATABASE | PROCESSES,
    "preflight": PRESENTATION | DATABASE | PROCESSES,
}


def layer(module: str, layer_of: dict[str, str] = LAYER_OF) -> str | None:
    """The layer of a module (None: no entry of the table covers it)."""
    matching = [prefix for prefix in layer_of
                if module == prefix or module.startswith(prefix + ".")]
    if not matching:
        return None
    best = max(matching, key=len)
    top = module.split(".")[0]
    if best == top and module != top:
        return None  # the root entry is the package's __init__ only
    return layer_of[best]


def violations(package: Path = PACKAGE, layer_of: dict[str, str] = LAYER_OF,
               allowed: dict[str, set[str]] = ALLOWED) -> list[str]:
    """Every module no layer covers and every import that crosses the layers the wrong
    way."""
    bad = []
    top = package.name
    for own, path in modules_of(package).items():
        mine = layer(own, layer_of)
        where_file = path.relative_to(package.parent)
        if mine is None:
            bad.append(f"{where_file}: {own} is in no layer; give it one in LAYER_OF")
            continue
        for found in dict.fromkeys(imports(package, path)):
            where = f"{where_file}:{found.line}"
            first = found.module.split(".")[0]
            if first != top:
                if first in FORBIDDEN.get(mine, set()):
                    bad.append(f"{where}: {mine} imports {found.module}")
                continue
            theirs = layer(found.module, layer_of)
            if theirs is None:
                bad.append(f"{where}: {own} imports {found.module}, which is in no layer")
            elif theirs != mine and theirs not in allowed[mine]:
                bad.append(f"{where}: {mine} imports {theirs} ({found.module})")
    return bad


def test_the_layers_named_exist() -> None:
    for module in LAYER_OF:
        assert is_module(PACKAGE, module), module


def test_imports_follow_the_layers() -> None:
    assert violations() == []


def test_no_import_circles() -> None:
    # module-level imports, and those inside functions too (a lazy import that closes a
    # circle still ties the two modules together); type-checking imports do not count
    assert circles(module_edges(PACKAGE)) == []
    assert circles(module_edges(PACKAGE, in_functions=True)) == []


def test_cli_only_assembles() -> None:
    # the commands share rtbench.commands._common; rtbench.cli imports a command's module
    # only when it runs (importlib), so nothing but `python -m rtbench` imports the CLI
    importers = sorted({own for own, path in modules_of(PACKAGE).items()
                        for found in imports(PACKAGE, path) if found.module == "rtbench.cli"})
    assert importers == ["rtbench.__main__"]
    cli_imports = {found.module for found in imports(PACKAGE, PACKAGE / "cli.py")}
    assert not {m for m in cli_imports if m.startswith("rtbench.commands")}


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


def plant(root: Path, files: dict[str, str]) -> Path:
    """A package `planted` under root with the given files (path -> source)."""
    package = root / "planted"
    for name, text in {"__init__.py": "", **files}.items():
        path = package / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return package


PLANTED_LAYERS = {"planted": "root", "planted.low": "util", "planted.high": "cli"}
PLANTED_ALLOWED = {"root": set(), "util": {"root"}, "cli": {"root", "util"}}


def test_a_planted_circle_is_found(tmp_path: Path) -> None:
    package = plant(tmp_path, {
        "high/__init__.py": "",
        "high/a.py": "from planted.high.b import thing\n",
        "high/b.py": "import planted.high.c\nthing = 1\n",
        "high/c.py": "from planted.high import a\n",
        "high/d.py": "def later() -> None:\n    from planted.high import e\n",
        "high/e.py": "from planted.high import d\n",
    })
    found = circles(module_edges(package))
    # d -> e is inside a function: no circle at import time, but one all the same
    assert found == [["planted.high.a", "planted.high.b", "planted.high.c"]]
    assert circles(module_edges(package, in_functions=True)) == [
        ["planted.high.a", "planted.high.b", "planted.high.c"],
        ["planted.high.d", "planted.high.e"]]


def test_type_checking_imports_make_no_circle(tmp_path: Path) -> None:
    package = plant(tmp_path, {
        "low.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                  "    from planted.high import X\n",
        "high.py": "from planted.low import Y\n",
    })
    assert circles(module_edges(package)) == []
    assert circles(module_edges(package, in_functions=True)) == []


def test_a_planted_unplaced_module_fails(tmp_path: Path) -> None:
    package = plant(tmp_path, {"low.py": "", "high.py": "import planted.low\n",
                               "stray.py": "x = 1\n"})
    bad = violations(package, PLANTED_LAYERS, PLANTED_ALLOWED)
    assert bad == ["planted/stray.py: planted.stray is in no layer; give it one in LAYER_OF"]


def test_a_planted_crossing_fails(tmp_path: Path) -> None:
    package = plant(tmp_path, {"low.py": "def f() -> None:\n    import planted.high\n",
                               "high.py": "import planted.low\n"})
    bad = violations(package, PLANTED_LAYERS, PLANTED_ALLOWED)
    assert bad == ["planted/low.py:2: util imports cli (planted.high)"]
