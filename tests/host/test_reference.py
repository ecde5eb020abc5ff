"""Published reference runs: shipped with the package, read-only, only printed figures."""

from __future__ import annotations

from pathlib import Path

import pytest
from explain_helpers import cli, exp_windows, synthetic_measurement, synthetic_run

from rtbench.analysis.compare import published_cell
from rtbench.analysis.reference import PUBLISHED_LABEL, hist_quantile, read_csv
from rtbench.reference import reference_run, reference_runs
from rtbench.store import Store
from tests.conftest import REPO

DATA = REPO / "rtbench" / "reference" / "data"
SHARED = REPO.parent / "shared" / "reference"


def test_every_csv_ships_and_loads() -> None:
    files = sorted(p.name for p in DATA.glob("*.csv"))
    assert len(files) == 6
    used = {r.file for r in reference_runs()} | {"celleb_gtod_histogram.csv"}
    assert set(files) == used
    names = [r.name for r in reference_runs()]
    assert len(names) == len(set(names))
    assert {"loongson2f", "imx31", "at91sam9263", "celleb-rt", "x86-vanilla",
            "s3c24a0-linux24", "lrtai"} <= set(names)


# not a part: shared/ is beside the lead's checkout only, never in a clone
@pytest.mark.skipif(not SHARED.is_dir(), reason="no shared/reference beside the checkout")
def test_packaged_copies_match_the_shared_files() -> None:
    for path in SHARED.glob("*.csv"):
        assert (DATA / path.name).read_text() == path.read_text()


def test_comment_lines_are_kept_as_conditions() -> None:
    comments, rows = read_csv((DATA / "loongson2f_cyclictest.csv").read_text())
    assert len(comments) == 5 and len(rows) == 7
    ref = reference_run("loongson2f")
    assert ref is not None and ref.label == PUBLISHED_LABEL
    assert any("cyclictest -p80" in line for line in ref.conditions)


def test_only_printed_figures_are_claimed() -> None:
    ref = reference_run("imx31")
    assert ref is not None
    cyclic = next(c for c in ref.cells if c.test == "cyclic")
    assert cyclic.figures_ns == {"max": 72_000.0, "mean": 35_000.0}
    data = published_cell(cyclic)
    assert data.figures["p50"] is None and data.figures["p99"] is None
    assert data.matrix is None and data.overruns is None


def test_a_published_histogram_gives_percentiles() -> None:
    ref = reference_run("celleb-rt")
    assert ref is not None
    idle = next(c for c in ref.cells if c.hist and c.scenario == "idle")
    assert sum(n for _, n in idle.hist) == 1_000_000  # every class of rt1_idle
    assert hist_quantile(idle, 0.5) == 1000.0  # 1 us class
    assert published_cell(idle).figures["max"] == 10_000.0


def test_ref_commands() -> None:
    listing = cli("ref", "ls")
    assert listing.exit_code == 0 and "ref:loongson2f" in listing.output
    assert "published, not measured here" in listing.output
    shown = cli("ref", "show", "loongson2f")
    assert shown.exit_code == 0
    for needle in ("published, not measured here", "loongson2f_cyclictest.csv", "Loongson 2F",
                   "ping+x+find", "n/a", "cyclictest -p80"):
        assert needle in shown.output
    assert cli("ref", "show", "ref:lrtai").exit_code == 0
    bad = cli("ref", "show", "nope")
    assert bad.exit_code == 2 and len(bad.output.strip().splitlines()) == 1


def test_multi_run_report_with_a_reference(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'r.db'}"
    with Store.open(url) as store:
        for seed in (1, 2):
            store.add_bundle(synthetic_run([synthetic_measurement(exp_windows(seed))]))
    out = tmp_path / "c.html"
    done = cli("report", "1", "2", "ref:loongson2f", "-o", str(out), "--db", url)
    assert done.exit_code == 0, done.output
    html = out.read_text()
    for needle in ("run 2 against run 1", "published, not measured here",
                   "loongson2f_cyclictest.csv", "Cycle-time advisor", "Environment", "<svg"):
        assert needle in html
    assert "<script" not in html and "<link" not in html
    single = tmp_path / "one.html"
    assert cli("report", "latest", "-o", str(single), "--db", url).exit_code == 0
    assert "rtbench run 2" in single.read_text()
    for args in (("report", "ref:imx31", "-o", str(tmp_path / "x.html")),
                 ("report", "1", "-o", str(tmp_path / "nowhere" / "x.html")),
                 ("report", "host=none")):
        bad = cli(*args, "--db", url)
        assert bad.exit_code == 2, bad.output
    # nothing half-written beside the reports (the database's own lock file aside)
    written = sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith("r.db"))
    assert written == ["c.html", "one.html"]
