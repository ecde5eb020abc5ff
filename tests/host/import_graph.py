"""The import graph of a Python package, read from its source: every import, and the
circles among its module-level imports.

tests/host/test_layers.py holds rtbench/ to its layers with this; its own tests run it
over small packages planted in a temporary directory.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Import:
    """One import statement's target, where it is, and whether it runs at import time."""

    line: int
    module: str
    module_level: bool  # False: inside a function, or only for the type checker
    type_checking: bool = False  # under `if TYPE_CHECKING:`: never imported at run time


def modules_of(package: Path) -> dict[str, Path]:
    """Every module of the package directory (dotted name -> file), migrations left out."""
    found = {}
    for path in sorted(package.rglob("*.py")):
        if "migrations" in path.relative_to(package).parts:
            continue
        found[module_name(package, path)] = path
    return found


def module_name(package: Path, path: Path) -> str:
    """pkg/x/y.py -> pkg.x.y (a package's __init__ is the package)."""
    parts = list(path.relative_to(package.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def is_module(package: Path, dotted: str) -> bool:
    """True when dotted names a module or subpackage of the package directory."""
    path = package.parent.joinpath(*dotted.split("."))
    return path.is_dir() or path.with_suffix(".py").is_file()


def imports(package: Path, path: Path) -> list[Import]:
    """Every import in a file, relative ones resolved; `from X import Y` is an edge to
    X.Y when that is a module, else to X."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    own = module_name(package, path)
    base_package = own if path.name == "__init__.py" else own.rpartition(".")[0]
    found = []
    for node, module_level, typing_only in _walk(tree.body, True, False):
        if isinstance(node, ast.Import):
            found += [Import(node.lineno, alias.name, module_level, typing_only)
                      for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = base_package.split(".")
                anchor = parts[: len(parts) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                full = f"{base}.{alias.name}"
                found.append(Import(node.lineno, full if is_module(package, full) else base,
                                    module_level, typing_only))
    return found


def _walk(body: list[ast.stmt], module_level: bool,
          typing_only: bool) -> Iterator[tuple[ast.stmt, bool, bool]]:
    """Every statement under body, with whether it runs when the module is imported (not
    inside a function, not under `if TYPE_CHECKING:`) and whether it is for the type
    checker only."""
    for node in body:
        yield node, module_level, typing_only
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield from _walk(node.body, False, typing_only)
        elif isinstance(node, ast.If) and _is_type_checking(node.test):
            yield from _walk(node.body, False, True)
            yield from _walk(node.orelse, module_level, typing_only)
        elif isinstance(node, ast.Try):
            for part in (node.body, node.orelse, node.finalbody,
                         *(handler.body for handler in node.handlers)):
                yield from _walk(part, module_level, typing_only)
        else:
            for field in ("body", "orelse"):
                children = getattr(node, field, None)
                if isinstance(children, list):
                    yield from _walk([c for c in children if isinstance(c, ast.stmt)],
                                     module_level, typing_only)


def _is_type_checking(test: ast.expr) -> bool:
    """True for `TYPE_CHECKING` and `typing.TYPE_CHECKING`."""
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def module_edges(package: Path, in_functions: bool = False) -> dict[str, set[str]]:
    """module -> the package's modules it imports at import time (also those imported
    inside functions when in_functions; never those only for the type checker)."""
    modules = modules_of(package)
    edges: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        for found in imports(package, path):
            runs = found.module_level or (in_functions and not found.type_checking)
            if runs and found.module in modules and found.module != name:
                edges[name].add(found.module)
    return edges


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0

    def visit(start: str) -> None:
        """Iterative Tarjan from start (no recursion limit on long chains)."""
        nonlocal counter
        work = [(start, iter(sorted(edges.get(start, ()))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(sorted(group))

    for name in sorted(edges):
        if name not in index:
            visit(name)
    return sorted(found)
