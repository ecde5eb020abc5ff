"""The regression check after `rtbench import` does not read a long tool histogram back
(issue 36, item 1: the whole import in memory bounded by the file): the imported run is
checked as imported, and runs read for a check (its baseline) leave out data["tool_hist"],
which no check reads.  The decisions are those of a check that reads every run back.
"""

from __future__ import annotations

import json
import sys
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from explain_helpers import cli
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.lab_data import make_lab, make_run
from rtbench.interop.base import importers
from rtbench.interop.runjson import dumps
from rtbench.regress.board import recheck
from rtbench.store import Store
from rtbench.store.evidence import _data, read_evidence
from rtbench.store.regressions import list_checks
from rtbench.store.rows import _dumps

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

from import_scaling import cyclictest_h  # noqa: E402


def test_an_import_is_checked_as_imported(tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Importing a board's runs kernel after kernel checks each without reading it back,
    with the same checks as reading every run back (recheck)."""
    url = f"sqlite:///{tmp_path / 'r.db'}"
    lab = make_lab(2, 3, 2)
    read: list[int] = []

    def spy(conn: Any, run_ids: list[int]) -> Any:
        """read_evidence, noting the ids read."""
        read.extend(run_ids)
        return read_evidence(conn, run_ids)
    monkeypatch.setattr("rtbench.regress.board.read_evidence", spy)
    paths = []
    for kernel in range(3):
        for run in range(2):
            path = tmp_path / f"k{kernel}-{run}.json"
            path.write_text(dumps(make_run(lab, 1, kernel, run)))
            paths.append(str(path))
    done = cli("import", *paths, "--format", "json", "--db", url)
    assert done.exit_code == 0, done.output
    monkeypatch.undo()
    with Store.open(url) as store:
        imported = sorted((r.run_id, r.cell, r.metric, r.outcome, r.value, r.baseline_value)
                          for r in list_checks(store))
        assert imported, "the lab's regressed kernel is checked"
        last = max(r[0] for r in imported)
        assert last not in read  # the last run was never read back
        recheck(store)
        again = sorted((r.run_id, r.cell, r.metric, r.outcome, r.value, r.baseline_value)
                       for r in list_checks(store))
    assert imported == again


def test_a_check_reads_a_long_tool_histogram_in_its_texts_size(tmp_path: Path) -> None:
    """A stored cyclictest -h run of 40,000 rows read for a check: its data has every key
    but "tool_hist", and reading it holds at most twice the stored text (a Python list
    per row held about 15 times)."""
    text = cyclictest_h(1 << 20)
    (run,) = importers()["cyclictest"].read(text, "h.txt")
    with Store.open(f"sqlite:///{tmp_path / 'h.db'}") as store:
        run_id, _ = store.add_bundle(run)
        stored = store.get_run(run_id).scenarios[0].measurements[0].data
        size = len(_dumps(stored))
        assert len(stored["tool_hist"][0]["counts"]) > 30_000  # stored compactly
        with store.transaction("read") as conn:
            tracemalloc.start()
            try:
                found = read_evidence(conn, [run_id])
                _, peak = tracemalloc.get_traced_memory()
            finally:
                tracemalloc.stop()
    data = found[run_id].scenarios[0].measurements[0].data
    assert data == {k: v for k, v in stored.items() if k != "tool_hist"}
    assert peak <= 2 * size, peak / size


KEYS = st.sampled_from(["tool_hist", "a", "tool_hist_unit_ns", 'x"tool_hist', "z"])
LEAVES = st.one_of(st.none(), st.integers(-5, 10**12), st.booleans(),
                   st.text(alphabet='"tool_his:[],{}\\', max_size=20))
COMPACT = st.fixed_dictionaries({"counts": st.lists(st.integers(0, 10**9), max_size=4),
                                 "first": st.integers(-3, 10**9),
                                 "step": st.integers(1, 10)})
HISTS = st.lists(st.one_of(st.none(), COMPACT, st.lists(st.lists(st.integers(-3, 10**9),
                                                                 min_size=2, max_size=2))),
                 max_size=3)
VALUES = st.recursive(st.one_of(LEAVES, HISTS), lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(KEYS, inner, max_size=3)), max_leaves=8)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(KEYS, VALUES, max_size=5))
def test_data_reads_every_key_but_tool_hist(data: dict[str, Any]) -> None:
    """_data() of stored data JSON is the whole decode without its top-level
    "tool_hist", whatever the keys, nesting and strings around it."""
    want = json.loads(_dumps(data))
    want.pop("tool_hist", None)
    assert _data(_dumps(data)) == want
    assert _data(json.dumps(data)) == want  # not as the store writes it: decoded whole
