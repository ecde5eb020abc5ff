"""The layers of docs/architecture.md stay true: every import in rtbench/ is checked.

A module's layer is read from its path: the innermost folder of rtbench/ named after a
layer (`rtbench/run/` is `run`, `rtbench/rtprobe/wire/` is `wire`); rtbench/'s own
`__init__.py` is `core`, and its only other loose modules, `cli.py` and `__main__.py`, are
`commands`.  A layer may import only the layers listed for it (every import counts, also
those inside functions).  A module outside every layer folder fails the check, as does a
loose module at rtbench/'s root.  Module-level imports must form no circle.  The checker
itself is tested on packages planted in a temporary directory.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.host.import_graph import circles, imports, module_edges, modules_of

PACKAGE = Path(__file__).resolve().parents[2] / "rtbench"

# the modules at the package's root, and their layers; everything else is in a folder
ROOT_MODULES = {"__init__": "core", "cli": "commands", "__main__": "commands"}
# layer -> the layers it may import (itself always)
ALLOWED: dict[str, set[str]] = {
    "core": set(),
    "wire": set(),
    "util": {"core"},
    "build": {"core", "util"},
    # the test kinds' host traits and their own headlines and tables (pure)
    "kinds": set(),
    # the probe's contract on the host; the provider builds probes, targets never do
    "rtprobe": {"core", "util", "wire", "build", "kinds"},
    "suites": {"core", "util", "rtprobe"},
    "preflight": {"core", "kinds"},
    "targets": {"core", "util", "wire", "rtprobe"},
    # a run in memory; it asks the transports only which board a target URI names
    "bundle": {"wire", "targets"},
    # a fleet's inventory: boards named with their targets' URIs
    "fleet": {"core", "util", "wire", "rtprobe", "targets"},
    "store": {"core", "wire", "bundle"},
    "analysis": {"core", "wire", "bundle", "kinds"},
    "reference": {"core", "wire", "bundle", "analysis"},
    "events": {"wire", "suites"},
    # the regression board: a stored run checked against its board's baseline
    "regress": {"core", "wire", "bundle", "store", "analysis"},
    "run": {"core", "util", "wire", "rtprobe", "bundle", "suites", "preflight", "targets",
            "fleet", "store", "analysis", "events", "regress", "kinds"},
    "report": {"core", "util", "wire", "bundle", "analysis", "reference", "store", "events",
               "kinds"},
    "interop": {"core", "wire", "bundle", "analysis", "store"},
    "server": {"core", "wire", "bundle", "analysis", "reference", "store", "report",
               "interop", "regress"},
}
ALLOWED["commands"] = set(ALLOWED)
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
    "run": PRESENTATION | DATABASE,
    "fleet": PRESENTATION | DATABASE,
    "regress": PRESENTATION | DATABASE | PROCESSES,
    "events": PRESENTATION | DATABASE | PROCESSES,
    "targets": PRESENTATION | DATABASE,
    "rtprobe": PRESENTATION | DATABASE,
    "suites": PRESENTATION | DATABASE | PROCESSES,
    "preflight": PRESENTATION | DATABASE | PROCESSES,
}


def layer(package: Path, module: str,
          allowed: dict[str, set[str]] = ALLOWED) -> str | None:
    """The layer of a module of the package, from its path: the innermost of the folders
    holding its file that is named after a layer (None: no such folder, or a loose module
    at the root that ROOT_MODULES does not name)."""
    path = package.parent.joinpath(*module.split("."))
    file = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
    folders = file.relative_to(package).parts[:-1]
    if not folders:
        return ROOT_MODULES.get(file.stem)
    named = [folder for folder in folders if folder in allowed]
    return named[-1] if named else None


def violations(package: Path = PACKAGE,
               allowed: dict[str, set[str]] = ALLOWED) -> list[str]:
    """Every module no layer covers and every import that crosses the layers the wrong
    way."""
    bad = []
    top = package.name
    for own, path in modules_of(package).items():
        mine = layer(package, own, allowed)
        where_file = path.relative_to(package.parent)
        if mine is None:
            bad.append(f"{where_file}: {own} is in no layer; move it into a layer's folder")
            continue
        for found in dict.fromkeys(imports(package, path)):
            where = f"{where_file}:{found.line}"
            first = found.module.split(".")[0]
            if first != top:
                if first in FORBIDDEN.get(mine, set()):
                    bad.append(f"{where}: {mine} imports {found.module}")
                continue
            theirs = layer(package, found.module, allowed)
            if theirs is None:
                bad.append(f"{where}: {own} imports {found.module}, which is in no layer")
            elif theirs != mine and theirs not in allowed[mine]:
                bad.append(f"{where}: {mine} imports {theirs} ({found.module})")
    return bad


def test_every_layer_has_a_folder() -> None:
    # a layer in the table is a folder of rtbench/ (core: also rtbench/__init__.py;
    # commands: also cli.py and __main__.py)
    folders = {path.name for path in PACKAGE.rglob("*") if path.is_dir()}
    assert set(ALLOWED) - folders == set()


def test_the_root_holds_only_the_cli() -> None:
    loose = sorted(path.name for path in PACKAGE.glob("*.py"))
    assert loose == ["__init__.py", "__main__.py", "cli.py"]


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
    ("run", "rtbench.report.live"), ("run", "rich.console"),
    ("analysis", "rtbench.store"), ("analysis", "sqlalchemy"),
    ("store", "rtbench.report.format"), ("store", "rich"),
])
def test_the_check_catches_a_crossing(layer_name: str, module: str) -> None:
    theirs = layer(PACKAGE, module) if module.startswith("rtbench") else None
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


PLANTED_ALLOWED: dict[str, set[str]] = {"core": set(), "util": {"core"},
                                         "cli": {"core", "util"}}


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
    package = plant(tmp_path, {"util/__init__.py": "", "util/low.py": "",
                               "cli/__init__.py": "", "cli/high.py": "import planted.util.low\n",
                               "stray.py": "x = 1\n", "other/__init__.py": "",
                               "other/lost.py": ""})
    bad = violations(package, PLANTED_ALLOWED)
    assert bad == ["planted/other/__init__.py: planted.other is in no layer; "
                   "move it into a layer's folder",
                   "planted/other/lost.py: planted.other.lost is in no layer; "
                   "move it into a layer's folder",
                   "planted/stray.py: planted.stray is in no layer; "
                   "move it into a layer's folder"]


def test_a_planted_crossing_fails(tmp_path: Path) -> None:
    package = plant(tmp_path, {"util/__init__.py": "",
                               "util/low.py": "def f() -> None:\n    import planted.cli.high\n",
                               "cli/__init__.py": "", "cli/high.py": "import planted.util.low\n"})
    bad = violations(package, PLANTED_ALLOWED)
    assert bad == ["planted/util/low.py:2: util imports cli (planted.cli.high)"]


def test_the_innermost_layer_folder_wins(tmp_path: Path) -> None:
    # cli/util/ is the util layer: it may not import cli, though it sits in cli/
    package = plant(tmp_path, {"cli/__init__.py": "", "cli/main.py": "",
                               "cli/util/__init__.py": "",
                               "cli/util/helper.py": "import planted.cli.main\n"})
    assert layer(package, "planted.cli.util.helper", PLANTED_ALLOWED) == "util"
    assert layer(package, "planted.cli.main", PLANTED_ALLOWED) == "cli"
    assert layer(package, "planted", PLANTED_ALLOWED) == "core"
    bad = violations(package, PLANTED_ALLOWED)
    assert bad == ["planted/cli/util/helper.py:1: util imports cli (planted.cli.main)"]


# the runner's and the store's files, split by job, stay this short (issue 38)
SPLIT_FOLDERS = ("run", "store")
MAX_LINES = 500


def test_the_runner_and_the_store_stay_split() -> None:
    long = {str(path.relative_to(PACKAGE)): lines
            for folder in SPLIT_FOLDERS for path in sorted((PACKAGE / folder).rglob("*.py"))
            if "migrations" not in path.parts
            and (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert long == {}
