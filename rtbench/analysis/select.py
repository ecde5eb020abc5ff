"""Choosing runs and matching their cells (pure: works on summaries and bundles).

A run is named by an id (`12`), `latest`, `latest~N` (the N-th before the newest),
a selector (`host=imx31,kernel~rt,tag=value`: `=` equal, `~` contains, `!=` differs,
`!~` does not contain;
keys board, host, kernel, suite, status, simulated, else a tag) or `ref:NAME` for a
published reference run.  Cells of runs are matched by scenario, test and
parameters; a cell without a partner is listed, never dropped silently.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rtbench import RUN_ID_MAX, RUN_ID_RANGE
from rtbench.bundle import RunSummary

FIELD_KEYS = ("board", "host", "kernel", "suite", "status", "simulated")
# the tag of quick runs made outside a suite (rtbench cyclictest): `latest` and the
# selectors skip them unless a condition names this tag
ADHOC_TAG = "adhoc"
_COND = re.compile(r"^([A-Za-z0-9_.:-]+?)\s*(!=|!~|=|~)(.*)$")


class SelectError(ValueError):
    """A run name or selector that is malformed or matches the wrong number of runs."""


@dataclass(frozen=True)
class RunSpec:
    """A parsed run name: kind is 'id', 'latest', 'selector' or 'ref'."""

    text: str
    kind: str
    run_id: int = 0
    back: int = 0  # latest~N
    conditions: tuple[tuple[str, str, str], ...] = ()  # (key, op, value)
    ref: str = ""


def parse_spec(text: str) -> RunSpec:
    """Parse a run name; SelectError says what is wrong with it."""
    spec = text.strip()
    if not spec:
        raise SelectError("an empty run name; give an id, latest, latest~N, "
                          "a selector like host=box,kernel~rt or ref:NAME")
    if spec.isascii() and spec.isdigit():
        if len(spec) > 10 or not 1 <= int(spec) <= RUN_ID_MAX:
            raise SelectError(f"run {spec[:30]}: {RUN_ID_RANGE}; 'rtbench ls' lists the "
                              "runs")
        return RunSpec(spec, "id", run_id=int(spec))
    if spec == "latest":
        return RunSpec(spec, "latest")
    m = re.fullmatch(r"latest~(\d+)", spec)
    if m:
        return RunSpec(spec, "latest", back=int(m.group(1)))
    if spec.startswith("latest"):
        raise SelectError(f"{spec!r}: write latest or latest~N with N a whole number "
                          "(latest~1 is the run before the newest)")
    if spec.startswith("ref:"):
        if not spec[4:]:
            raise SelectError(f"{spec!r}: name the reference run, e.g. ref:loongson2f "
                              "('rtbench ref ls' lists them)")
        return RunSpec(spec, "ref", ref=spec[4:])
    conditions = []
    for part in spec.split(","):
        cm = _COND.match(part.strip())
        if not cm:
            raise SelectError(f"run {spec!r}: {part.strip()!r} is not an id, latest, latest~N, "
                              "ref:NAME or key=value / key~text / key!=value")
        conditions.append((cm.group(1), cm.group(2), cm.group(3).strip()))
    return RunSpec(spec, "selector", conditions=tuple(conditions))


def field_value(run: RunSummary, key: str) -> str | None:
    """The value a selector key names for a run (a field, else a tag; None if absent)."""
    if key == "host":
        return run.hostname
    if key == "board":
        # a summary made before boards were stored: a fleet's board tag, if any
        return run.board or run.tags.get("board")
    if key == "kernel":
        return run.kernel
    if key == "suite":
        return run.suite
    if key == "status":
        return run.status
    if key == "simulated":
        return "yes" if run.simulated else "no"
    return run.tags.get(key)


def matches(run: RunSummary, conditions: Sequence[tuple[str, str, str]]) -> bool:
    """Whether a run meets every condition (case-insensitive for ~)."""
    for key, op, value in conditions:
        have = field_value(run, key)
        if op == "=" and have != value:
            return False
        if op == "!=" and have == value:
            return False
        if op == "~" and (have is None or value.lower() not in have.lower()):
            return False
        if op == "!~" and have is not None and value.lower() in have.lower():
            return False
    return True


def resolve(spec: RunSpec, runs: Sequence[RunSummary]) -> list[int]:
    """Ids of the stored runs a (non-ref) spec names, oldest first.

    runs: every stored run, any order.  An id or latest names at most one run;
    a selector may name several.  Runs tagged adhoc (rtbench cyclictest) are left to
    ids and to selectors that name the tag.  SelectError when nothing matches.
    """
    if spec.kind == "id":
        if not any(r.id == spec.run_id for r in runs):
            raise SelectError(f"run {spec.run_id} is not stored; 'rtbench ls' lists the runs")
        return [spec.run_id]
    chosen = candidates(spec, runs)
    skipped = len(runs) - len(chosen)
    note = (f" ({skipped} run(s) tagged {ADHOC_TAG}, e.g. from rtbench cyclictest, are "
            f"skipped: name one by id or select it with {ADHOC_TAG}=...)") if skipped else ""
    if spec.kind == "latest":
        newest = sorted(chosen, key=lambda r: r.id, reverse=True)
        if spec.back >= len(newest):
            raise SelectError(f"{spec.text}: only {len(newest)} run(s) are stored{note}")
        return [newest[spec.back].id]
    if spec.kind == "selector":
        found = sorted(r.id for r in chosen if matches(r, spec.conditions))
        if not found:
            raise SelectError(f"selector {spec.text!r} matches no stored run "
                              "('rtbench ls' shows board, host, kernel, suite, status "
                              f"and tags){note}")
        return found
    raise SelectError(f"{spec.text}: a reference run is not a stored run")


def candidates(spec: RunSpec, runs: Sequence[RunSummary]) -> list[RunSummary]:
    """The runs `latest` or a selector chooses among: all but those tagged adhoc,
    unless the selector names the tag."""
    if any(key == ADHOC_TAG for key, _, _ in spec.conditions):
        return list(runs)
    return [r for r in runs if ADHOC_TAG not in r.tags]


def resolve_one(spec: RunSpec, runs: Sequence[RunSummary]) -> int:
    """The one stored run a spec names; several matches are an error naming them."""
    found = resolve(spec, runs)
    if len(found) > 1:
        shown = ", ".join(map(str, found[:8])) + (" ..." if len(found) > 8 else "")
        raise SelectError(f"selector {spec.text!r} matches {len(found)} runs ({shown}); "
                          "this needs one: add a condition or give an id")
    return found[0]


# ---- cells ----------------------------------------------------------------------------------

def params_key(params: dict[str, Any]) -> str:
    """Parameters as canonical text (sorted JSON)."""
    return json.dumps(params, sort_keys=True, separators=(",", ":"), default=str)


@dataclass(frozen=True)
class CellKey:
    """What makes two cells comparable: scenario, test and parameters."""

    scenario: str
    test: str
    params: str  # params_key()

    def label(self) -> str:
        """'scenario / test {params}' for tables."""
        p = json.loads(self.params) if self.params else {}
        shown = " ".join(_param_text(k, v) for k, v in sorted(p.items()))
        return f"{self.scenario} / {self.test}" + (f" {shown}" if shown else "")


def _param_text(key: str, value: Any) -> str:
    """'interval=1ms' for interval_ns=1000000; other parameters as they are."""
    if key.endswith("_ns") and isinstance(value, int) and not isinstance(value, bool):
        for unit, size in (("s", 10**9), ("ms", 10**6), ("us", 10**3)):
            if value and value % size == 0:
                return f"{key[:-3]}={value // size}{unit}"
        return f"{key[:-3]}={value}ns"
    return f"{key}={value}"


def cell_key(scenario: str, test: str, params: dict[str, Any]) -> CellKey:
    """The CellKey of a measurement."""
    return CellKey(scenario, test, params_key(params))


def ref_matches(ref: CellKey, ours: CellKey) -> bool:
    """A reference cell matches ours on scenario and test, and on every parameter
    the paper states that our cell also records."""
    if ref.scenario != ours.scenario or ref.test != ours.test:
        return False
    stated = json.loads(ref.params)
    have = json.loads(ours.params)
    return all(have[k] == v for k, v in stated.items() if k in have)


@dataclass
class CellMatch:
    """One cell of the anchor run and its partner in each other run (None: no partner)."""

    key: CellKey
    partners: list[Any]  # per run, the run's cell object or None


def _same(key: CellKey, other: CellKey, key_is_ref: bool, other_is_ref: bool) -> bool:
    """Whether two cells are the same experiment (loose for published ones)."""
    if other_is_ref:
        return ref_matches(other, key)
    if key_is_ref:
        return ref_matches(key, other)
    return key == other


def match_cells(cells: Sequence[Sequence[tuple[CellKey, Any]]],
                reference: Sequence[bool]) -> tuple[list[CellMatch], list[tuple[int, CellKey]]]:
    """Match cells across runs.

    cells[i]: (key, cell) of run i; reference[i]: run i is a published one (loose
    parameter match).  The anchor is the first measured run.  Returns the rows
    where at least two runs have the cell (others None), in the anchor's order, and
    every cell left without a partner as (run index, key).
    """
    measured = [i for i, is_ref in enumerate(reference) if not is_ref]
    anchor = measured[0] if measured else 0
    rows: list[CellMatch] = []
    used: list[set[int]] = [set() for _ in cells]
    for pos, (key, cell) in enumerate(cells[anchor]):
        partners: list[Any] = [None] * len(cells)
        partners[anchor] = cell
        found_any = False
        for i, run_cells in enumerate(cells):
            if i == anchor:
                continue
            for j, (other_key, other) in enumerate(run_cells):
                if j not in used[i] and _same(key, other_key, reference[anchor],
                                              reference[i]):
                    used[i].add(j)
                    partners[i] = other
                    found_any = True
                    break
        if found_any:
            used[anchor].add(pos)
            rows.append(CellMatch(key, partners))
    unmatched = [(i, key) for i, run_cells in enumerate(cells)
                 for j, (key, _) in enumerate(run_cells) if j not in used[i]]
    return rows, unmatched
