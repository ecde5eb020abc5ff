"""docs/architecture.md names every module of rtbench/ by its path, and nothing that is
gone (issue 38): a module added without a line there fails here."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "rtbench"
DOC = ROOT / "docs" / "architecture.md"


def module_paths(package: Path = PACKAGE) -> set[str]:
    """Every module file of the package, as its path there (migrations left out)."""
    return {str(path.relative_to(package)) for path in package.rglob("*.py")
            if "migrations" not in path.relative_to(package).parts}


def named_in_table(text: str) -> set[str]:
    """The modules the doc's "Every module" table names (its first column)."""
    return set(re.findall(r"^\| `([\w/]+\.py)` \|", text, re.MULTILINE))


def test_every_module_is_named() -> None:
    named = named_in_table(DOC.read_text(encoding="utf-8"))
    assert sorted(module_paths() - named) == []


def test_every_module_named_exists() -> None:
    named = named_in_table(DOC.read_text(encoding="utf-8"))
    assert sorted(named - module_paths()) == []


def test_the_check_reads_a_planted_package(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    for name in ("__init__.py", "sub/__init__.py", "sub/thing.py"):
        (package / name).write_text("", encoding="utf-8")
    doc = "| `__init__.py` | x |\n| `sub/thing.py` | y |\n| `sub/gone.py` | z |\n"
    assert module_paths(package) - named_in_table(doc) == {"sub/__init__.py"}
    assert named_in_table(doc) - module_paths(package) == {"sub/gone.py"}
