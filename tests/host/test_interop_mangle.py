"""Every importer, fed mangled files: it imports or refuses with one line, never crashes.

Seeds are real tool output (tests/host/data/interop/real) and the fixtures; hypothesis
truncates them, drops, repeats and reorders lines, swaps numbers for huge ones, NaN,
negatives and words, and splices in binary noise.  Whatever an importer accepts must
store whole (Store.add_bundle) and read back; the CLI exits 2 on a refused file
with one line on stderr and stores nothing.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rtbench.bundle import RunDetail
from rtbench.interop._build import run_uid
from rtbench.interop.base import ImportFormatError, importers
from rtbench.store import Store

DATA = Path(__file__).parent / "data" / "interop"
SEEDS = sorted(p for p in list(DATA.glob("*.*")) + list((DATA / "real").glob("*.*")))
NUMBER = re.compile(rb"\d+(?:\.\d+)?")
ODD_NUMBERS = [b"99999999999999999999999999", b"NaN", b"-nan", b"inf", b"-5", b"1e308",
               b"x", b"", b"0", b"18446744073709551616", b"3.5"]


@st.composite
def mangled(draw: st.DrawFn, seed: bytes) -> bytes:
    """seed with a few random mangles applied."""
    data = seed
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["truncate", "lines", "number", "noise", "swap"]))
        if kind == "truncate" and data:
            data = data[:draw(st.integers(0, len(data)))]
        elif kind == "lines":
            lines = data.split(b"\n")
            if lines:
                i = draw(st.integers(0, len(lines) - 1))
                op = draw(st.sampled_from(["drop", "repeat", "shuffle"]))
                if op == "drop":
                    del lines[i]
                elif op == "repeat":
                    lines.insert(i, lines[i])
                else:
                    lines = draw(st.permutations(lines))
            data = b"\n".join(lines)
        elif kind == "number":
            spots = list(NUMBER.finditer(data))
            if spots:
                spot = spots[draw(st.integers(0, len(spots) - 1))]
                data = data[:spot.start()] + draw(st.sampled_from(ODD_NUMBERS)) + \
                    data[spot.end():]
        elif kind == "noise":
            at = draw(st.integers(0, len(data)))
            data = data[:at] + draw(st.binary(min_size=1, max_size=40)) + data[at:]
        elif kind == "swap":
            data = data.replace(b"{", b"[", 1) if draw(st.booleans()) else \
                data.replace(b":", b"", 1)
    return data


def _check(runs: list[RunDetail], store: Store, tag: str) -> None:
    """Accepted runs store whole and read back with their counts."""
    for index, run in enumerate(runs):
        run.uid = run_uid(tag, index)
        run_id, _ = store.add_bundle(run)
        back = store.get_run(run_id)
        got = [s.count for sc in back.scenarios for m in sc.measurements for s in m.series]
        want = [s.count for sc in run.scenarios for m in sc.measurements for s in m.series]
        assert got == want


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    """A scratch database for accepted runs."""
    return Store.open(f"sqlite:///{tmp_path_factory.mktemp('mangle') / 'm.db'}")


@pytest.mark.parametrize("seed_path", SEEDS, ids=lambda p: p.name)
@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture,
                                 HealthCheck.too_slow])
@given(data=st.data())
def test_mangled_files_import_or_fail_in_one_line(seed_path: Path, store: Store,
                                                  data: st.DataObject) -> None:
    seed = seed_path.read_bytes()
    blob = data.draw(mangled(seed))
    for name, importer in importers().items():
        importer.detect(blob[:4096], seed_path.name)  # never raises
        try:
            runs = importer.read(blob, seed_path.name)
        except ImportFormatError as exc:
            assert "\n" not in str(exc) and str(exc)
            continue
        import hashlib

        _check(runs, store, hashlib.sha256(name.encode() + blob).hexdigest())


@settings(max_examples=40, deadline=None)
@given(blob=st.binary(max_size=300))
def test_binary_noise(blob: bytes) -> None:
    for importer in importers().values():
        importer.detect(blob, "samples.raw")
        try:
            importer.read(blob, "noise.bin")
        except ImportFormatError as exc:
            assert "\n" not in str(exc)


def test_cli_refuses_a_broken_file_and_stores_nothing(tmp_path: Path, run_cli) -> None:  # type: ignore
    broken = tmp_path / "ct.json"
    text = (DATA / "real" / "ct.json").read_text()
    broken.write_text(text.replace('"cycles": 500', '"cycles": 1e999'))
    good = tmp_path / "good.json"
    good.write_text(text)
    db = f"sqlite:///{tmp_path / 'b.db'}"
    done = run_cli("import", str(good), str(broken), "--db", db)
    assert done.returncode == 2, done.stdout + done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    listed = run_cli("ls", "--db", db)
    assert "cyclictest" not in listed.stdout  # nothing stored: files are checked first
