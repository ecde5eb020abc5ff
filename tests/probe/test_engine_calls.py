"""The probe engine's C files call one another as a tree: no circle between files.

Each function a file of probe/src/engine/ defines without `static` belongs to that file;
a file that calls another's function depends on it.  Those dependencies must form no
circle (run_impl.h says which file calls which: run.c at the top, state.c at the
bottom).  Calls through function pointers (a series' `struct series_owner`) are how a
lower file reaches up without depending on it, and are not calls here.
"""

from __future__ import annotations

import re
from pathlib import Path

from probe_support import REPO

ENGINE = REPO / "probe" / "src" / "engine"
DEFINITION = re.compile(r"^(?!static\b)[A-Za-z_][\w \t*]*?\b(\w+)\(([^;{]*?)\)\s*\{",
                        re.M | re.S)
COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)


def file_calls(engine: Path = ENGINE) -> dict[str, set[str]]:
    """file stem -> the stems of the other engine files whose functions it calls."""
    texts = {p.stem: COMMENT.sub("", p.read_text()) for p in sorted(engine.glob("*.c"))}
    owner = {m.group(1): stem for stem, text in texts.items()
             for m in DEFINITION.finditer(text)}
    calls: dict[str, set[str]] = {stem: set() for stem in texts}
    for stem, text in texts.items():
        for name in set(re.findall(r"\b(\w+)\s*\(", text)):
            if name in owner and owner[name] != stem:
                calls[stem].add(owner[name])
    return calls


def circle(calls: dict[str, set[str]]) -> list[str] | None:
    """One circle of calls between files, or None."""
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(calls.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        state[node] = 2
        path.pop()
        return None

    for node in sorted(calls):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_the_engine_files_call_one_another_as_a_tree() -> None:
    calls = file_calls()
    assert circle(calls) is None, " -> ".join(circle(calls) or [])
    # the shape run_impl.h describes
    assert calls["run"] >= {"record", "hooks", "trace", "summary", "raw", "state"}
    run_parts = {"run", "record", "hooks", "trace", "summary", "raw", "state"}
    assert not calls["state"] & run_parts and not calls["raw"] & run_parts
    assert calls["record"] & run_parts == {"state"}
    assert calls["hooks"] & run_parts <= {"state"} and calls["summary"] & run_parts <= {"state"}
    assert calls["trace"] & run_parts == {"record"}


def test_the_checker_finds_a_circle(tmp_path: Path) -> None:
    (tmp_path / "a.c").write_text("int a_one(void)\n{\n\treturn b_two();\n}\n")
    (tmp_path / "b.c").write_text("static int helper(void)\n{\n\treturn 0;\n}\n"
                                  "int b_two(void)\n{\n\treturn a_one() + helper();\n}\n")
    calls = file_calls(tmp_path)
    assert calls == {"a": {"b"}, "b": {"a"}}
    assert circle(calls) == ["a", "b", "a"]
    (tmp_path / "b.c").write_text("int b_two(void)\n{\n\treturn 0;\n}\n")
    assert circle(file_calls(tmp_path)) is None
