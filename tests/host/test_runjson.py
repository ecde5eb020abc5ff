"""The run bundle: Store.add_bundle and the rtbench-run/1 JSON form."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import pytest

from rtbench.interop.base import ImportFormatError, exporters, importers
from rtbench.interop.runjson import dumps, loads
from rtbench.store import Store


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory, probe_path: Path) -> tuple[str, int]:
    """A simulated smoke run stored in a fresh database: (url, run id)."""
    import os

    from tests.cli_inprocess import run_in_process
    from tests.conftest import REPO

    tmp = tmp_path_factory.mktemp("runjson")
    url = f"sqlite:///{tmp / 'a.db'}"
    env = dict(os.environ, RTBENCH_PROBE=str(probe_path), XDG_DATA_HOME=str(tmp))
    done = run_in_process(["run", "smoke", "--scale", "0.3", "--simulate", "7", "--db", url,
                           "--no-report"], env, REPO, timeout=120)
    assert done.returncode in (0, 1), done.stderr
    return url, 1


def _plain(run: object) -> dict[str, object]:
    """A run as a dict without database ids."""
    data = asdict(run)  # type: ignore[call-overload]

    def strip(value: object) -> object:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k != "id"}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    return strip(data)  # type: ignore[return-value]


def test_round_trip_into_a_new_database(stored: tuple[str, int], tmp_path: Path) -> None:
    url, run_id = stored
    with Store.open(url) as store:
        original = store.get_run(run_id)
    assert original.uid and original.source == {"tool": "rtbench"}
    text = dumps(original)
    again = loads(text)
    assert _plain(again) == _plain(original)
    with Store.open(f"sqlite:///{tmp_path / 'b.db'}") as other:
        new_id, created = other.add_bundle(again)
        assert created
        assert other.add_bundle(again) == (new_id, False)  # same uid: stored once
        copy = other.get_run(new_id)
    assert _plain(copy) == _plain(original)
    assert dumps(copy) == text


def test_registry_finds_the_json_format() -> None:
    assert "json" in exporters() and "json" in importers()


@pytest.mark.parametrize("mangle, message", [
    (lambda d: d.update(schema="rtbench-run/9"), "a newer rtbench"),
    (lambda d: d.update(extra=1), "unknown field 'extra'"),
    (lambda d: d.pop("suite"), "missing field 'suite'"),
    (lambda d: d.update(scale="x"), "run.scale"),
    (lambda d: d["scenarios"][0]["measurements"][0]["series"][0].update(count=2**70),
     "outside 64 bits"),
    (lambda d: d["scenarios"][0]["measurements"][0]["series"][0].update(count=1),
     "do not add up|add up to"),
])
def test_bad_documents_are_refused(stored: tuple[str, int], mangle, message: str) -> None:
    import re

    url, run_id = stored
    with Store.open(url) as store:
        doc = json.loads(dumps(store.get_run(run_id)))
    mangle(doc)
    with pytest.raises(ImportFormatError) as info:
        loads(json.dumps(doc))
    assert re.search(message, str(info.value))
    assert "\n" not in str(info.value)


def test_nan_is_refused() -> None:
    with pytest.raises(ImportFormatError, match="NaN"):
        loads('{"schema": "rtbench-run/1", "scale": NaN}')


def _windowed_doc(stored: tuple[str, int]) -> dict:
    """The stored run as a dict, with a measurement that has windows."""
    url, run_id = stored
    with Store.open(url) as store:
        doc = json.loads(dumps(store.get_run(run_id)))
    assert any(m["windows"] for sc in doc["scenarios"] for m in sc["measurements"])
    return doc


def _first_windows(doc: dict) -> list[dict]:
    """The windows of the first measurement that has some."""
    return next(m["windows"] for sc in doc["scenarios"] for m in sc["measurements"]
                if m["windows"])


def test_pretty_printed_documents_read_like_compact_ones(stored: tuple[str, int]) -> None:
    doc = _windowed_doc(stored)
    compact = loads(json.dumps(doc, separators=(",", ":")))
    assert _plain(loads(json.dumps(doc, indent=2))) == _plain(compact)
    assert _plain(loads(json.dumps(doc))) == _plain(compact)


def test_window_histograms_are_checked_as_text(stored: tuple[str, int], monkeypatch) -> None:
    """Valid compact histograms never take the pair-by-pair path (the upload bar)."""
    import rtbench.interop.runjson as runjson

    def slow(*args: object) -> str:
        raise AssertionError("a valid window histogram was decoded pair by pair")

    monkeypatch.setattr(runjson, "_window_hist", slow)
    run = loads(json.dumps(_windowed_doc(stored), indent=1))
    assert sum(len(m.windows) for sc in run.scenarios for m in sc.measurements) > 0


@pytest.mark.parametrize("mangle, message", [
    (lambda w: w.update(count=w["count"] + 1), r"windows\[1\]\.hist: .*add up"),
    (lambda w: w.update(hist=list(reversed(w["hist"]))), r"windows\[1\]\.hist: .*increase"),
    (lambda w: w["hist"][0].__setitem__(1, 1.5), r"windows\[1\]\.hist\[0\]: expected an int"),
    (lambda w: w["hist"][0].__setitem__(1, -1), r"windows\[1\]\.hist: .*>= 0"),
    (lambda w: w["hist"].append([10**6, "1"]), r"windows\[1\]\.hist\[\d+\]: expected an int"),
    (lambda w: w["hist"].append([1, 2, 3]), r"windows\[1\]\.hist\[\d+\]: expected a pair"),
    (lambda w: w.update(extra=1), r"windows\[1\]: unknown field 'extra'"),
    (lambda w: w.pop("sum_ns"), r"windows\[1\]: object missing required field 'sum_ns'"),
    (lambda w: w.update(count=2**64), r"windows\[1\]\.count: "),
    (lambda w: w.update(warmup=1), r"windows\[1\]\.warmup: expected 'bool'"),
])
def test_bad_windows_are_refused_naming_the_window(stored: tuple[str, int], mangle,
                                                   message: str) -> None:
    import re

    doc = _windowed_doc(stored)
    windows = _first_windows(doc)
    assert len(windows) > 1 and len(windows[1]["hist"]) > 1
    mangle(windows[1])
    with pytest.raises(ImportFormatError) as info:
        loads(json.dumps(doc))
    assert re.search(message, str(info.value)), str(info.value)
    assert "\n" not in str(info.value)


def test_large_but_valid_window_values_take_the_exact_path(stored: tuple[str, int]) -> None:
    doc = _windowed_doc(stored)
    window = _first_windows(doc)[1]
    window["hist"].append([window["hist"][-1][0] + 1, 2**62])
    window["count"] += 2**62
    run = loads(json.dumps(doc))
    first = next(m for sc in run.scenarios for m in sc.measurements if m.windows)
    assert json.loads(first.windows[1].hist_json)[-1] == [window["hist"][-1][0], 2**62]


def test_measurements_without_windows_or_with_empty_histograms(stored: tuple[str, int]
                                                               ) -> None:
    doc = _windowed_doc(stored)
    windows = _first_windows(doc)
    for w in windows[1:]:
        w["hist"] = []  # a window may carry no histogram (its count stands alone)
    run = loads(json.dumps(doc))
    first = next(m for sc in run.scenarios for m in sc.measurements if m.windows)
    assert [w.hist_json for w in first.windows[1:]] == ["[]"] * (len(windows) - 1)
    for sc in doc["scenarios"]:
        for m in sc["measurements"]:
            m["windows"] = []
    assert all(not m.windows for sc in loads(json.dumps(doc)).scenarios
               for m in sc.measurements)


def test_text_that_is_not_utf8_is_not_json() -> None:
    from rtbench.interop.runjson import NotJson

    for text in (b'{"schema": "\x80"}', b'{"\x80": 1}', b'{"schema": "rtbench-run/1", '
                 b'"extra": "\xff"}'):
        with pytest.raises(NotJson, match="not valid JSON"):
            loads(text)
