"""Choosing runs (ids, latest, selectors, ref:) and matching cells across runs."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pytest
from explain_helpers import cli, exp_windows, synthetic_measurement, synthetic_run
from hypothesis import given
from hypothesis import strategies as st

from rtbench.analysis.select import (
    SelectError,
    cell_key,
    match_cells,
    matches,
    parse_spec,
    resolve,
    resolve_one,
)
from rtbench.bundle import RunSummary
from rtbench.store import Store


def summary(run_id: int, host: str = "box", kernel: str = "6.1.0", suite: str = "quick",
            tags: dict[str, str] | None = None) -> RunSummary:
    """A RunSummary for the selector tests."""
    return RunSummary(id=run_id, started_at=datetime(2026, 1, 1, tzinfo=timezone.utc),
                      hostname=host, kernel=kernel, suite=suite, status="ok",
                      worst_max_ns=None, simulated=False, tags=tags or {})


RUNS = [summary(1, "imx31", "6.1.0-rt5"), summary(2, "imx31", "6.1.0"),
        summary(3, "box", "6.6.0-rt1", tags={"board": "a"}), summary(4, "box", "6.6.0")]


def test_ids_latest_and_back() -> None:
    assert resolve(parse_spec("2"), RUNS) == [2]
    assert resolve(parse_spec("latest"), RUNS) == [4]
    assert resolve(parse_spec("latest~0"), RUNS) == [4]
    assert resolve(parse_spec("latest~3"), RUNS) == [1]
    with pytest.raises(SelectError, match="only 4 run"):
        resolve(parse_spec("latest~4"), RUNS)
    with pytest.raises(SelectError, match="run 9 is not stored"):
        resolve(parse_spec("9"), RUNS)


def test_latest_and_selectors_skip_adhoc_runs_unless_they_name_the_tag() -> None:
    runs = [*RUNS, summary(5, "box", "6.6.0", suite="cyclictest",
                           tags={"adhoc": "cyclictest"})]
    assert resolve(parse_spec("latest"), runs) == [4]
    assert resolve(parse_spec("latest~1"), runs) == [3]
    assert resolve(parse_spec("host=box"), runs) == [3, 4]
    assert resolve(parse_spec("5"), runs) == [5]  # an id always names its run
    assert resolve(parse_spec("adhoc=cyclictest"), runs) == [5]
    assert resolve(parse_spec("host=box,adhoc!=other"), runs) == [3, 4, 5]
    with pytest.raises(SelectError, match="1 run\\(s\\) tagged adhoc"):
        resolve(parse_spec("latest"), runs[-1:])


def test_selectors() -> None:
    assert resolve(parse_spec("host=imx31,kernel~rt"), RUNS) == [1]
    assert resolve(parse_spec("host=imx31"), RUNS) == [1, 2]
    assert resolve(parse_spec("kernel!~rt"), RUNS) == [2, 4]
    assert resolve(parse_spec("host!=imx31"), RUNS) == [3, 4]
    assert resolve(parse_spec("board=a"), RUNS) == [3]
    assert resolve(parse_spec("KERNEL~RT".lower()), RUNS) == [1, 3]
    with pytest.raises(SelectError, match="matches no stored run"):
        resolve(parse_spec("host=nowhere"), RUNS)
    with pytest.raises(SelectError, match="matches 2 runs"):
        resolve_one(parse_spec("host=imx31"), RUNS)


@pytest.mark.parametrize("text", ["", "latest~x", "host", "ref:", "a=b,,c"])
def test_bad_names(text: str) -> None:
    with pytest.raises(SelectError):
        parse_spec(text)


def test_ref_spec() -> None:
    spec = parse_spec("ref:loongson2f")
    assert spec.kind == "ref" and spec.ref == "loongson2f"


@given(st.dictionaries(st.sampled_from(["board", "lab", "cfg"]),
                       st.text(alphabet="abcxyz019-", min_size=1, max_size=6), max_size=3),
       st.sampled_from(["board", "lab", "cfg"]),
       st.text(alphabet="abcxyz019-", min_size=1, max_size=6))
def test_tag_selector_is_exact(tags: dict[str, str], key: str, value: str) -> None:
    run = summary(1, tags=tags)
    spec = parse_spec(f"{key}={value}")
    assert matches(run, spec.conditions) == (tags.get(key) == value)
    contains = parse_spec(f"{key}~{value}")
    assert matches(run, contains.conditions) == (key in tags and value in tags[key])


def test_cells_match_by_scenario_test_params_and_list_the_rest() -> None:
    a = [(cell_key("idle", "cyclic", {"interval_ns": 1000}), "a1"),
         (cell_key("load", "cyclic", {"interval_ns": 1000}), "a2"),
         (cell_key("idle", "wakeup", {}), "a3")]
    b = [(cell_key("idle", "cyclic", {"interval_ns": 1000}), "b1"),
         (cell_key("idle", "cyclic", {"interval_ns": 2000}), "b2"),
         (cell_key("load", "cyclic", {"interval_ns": 1000}), "b3")]
    rows, unmatched = match_cells([a, b], [False, False])
    assert [(r.partners[0], r.partners[1]) for r in rows] == [("a1", "b1"), ("a2", "b3")]
    assert {(i, k.label()) for i, k in unmatched} == {
        (0, "idle / wakeup"), (1, "idle / cyclic interval=2us")}


def test_published_cells_match_loosely() -> None:
    ours = [(cell_key("idle", "cyclic", {"interval_ns": 1_000_000, "mode": "abs"}), "m")]
    ref = [(cell_key("idle", "cyclic", {}), "r1"),
           (cell_key("idle", "cyclic", {"interval_ns": 100_000}), "r2")]
    rows, unmatched = match_cells([ours, ref], [False, True])
    assert len(rows) == 1 and rows[0].partners == ["m", "r1"]
    assert len(unmatched) == 1


def test_tag_command_and_selectors_on_the_store(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'r.db'}"
    with Store.open(url) as store:
        for host in ("imx31", "box"):
            run = synthetic_run([synthetic_measurement(exp_windows(1, windows=2))],
                                hostname=host)
            store.add_bundle(run)
    done = cli("tag", "host=imx31", "lab=adelaide", "cfg=rt", "--db", url)
    assert done.exit_code == 0, done.output
    assert "run 1: cfg=rt lab=adelaide" in done.output
    done = cli("tag", "latest", "--remove", "lab", "x=1", "--db", url)
    assert done.exit_code == 0 and "run 2: x=1" in done.output
    done = cli("ls", "lab=adelaide", "--db", url)
    assert done.exit_code == 0 and "imx31" in done.output and "box" not in done.output
    # the board is a field of the run (here the host: they were imported without one)
    done = cli("ls", "board=imx31", "--json", "--db", url)
    assert done.exit_code == 0 and [r["id"] for r in json.loads(done.output)] == [1]
    done = cli("show", "x=1", "--db", url)
    assert done.exit_code == 0 and "box" in done.output
    with Store.open(url) as store:
        assert store.get_run(1).tags == {"lab": "adelaide", "cfg": "rt"}


@pytest.mark.parametrize("args", [
    ("tag", "9", "a=b"), ("tag", "latest", "bad tag"), ("tag", "latest"),
    ("tag", "latest", "host=x"), ("tag", "latest", "board=x"), ("show", "host=nowhere"),
    ("show", "kernel~6"),
    ("show", "ref:loongson2f"), ("ls", "latest"), ("tag", "ref:x", "a=b"),
])
def test_bad_run_names_exit_2_with_one_line(tmp_path: Path, args: tuple[str, ...]) -> None:
    url = f"sqlite:///{tmp_path / 'r.db'}"
    with Store.open(url) as store:
        for _ in range(2):
            store.add_bundle(synthetic_run([synthetic_measurement(exp_windows(1, windows=2))]))
    done = cli(*args, "--db", url)
    assert done.exit_code == 2, done.output
    assert len(done.output.strip().splitlines()) == 1 and "Traceback" not in done.output
    with Store.open(url) as store:
        assert all(r.tags == {} for r in store.list_runs())
