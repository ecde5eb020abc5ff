"""Figures: checked for their content (axes, units, series, titles), not pixels."""

from __future__ import annotations

from pathlib import Path

import pytest
from explain_helpers import cli, exp_windows, simulated_runs, synthetic_measurement, synthetic_run

from rtbench.analysis.compare import view_of_reference, view_of_run
from rtbench.reference import reference_run
from rtbench.report import figures


def views(host: str = "box"):  # type: ignore[no-untyped-def]
    """Two measured runs (two series each in the first) and the Loongson reference."""
    m1 = synthetic_measurement(exp_windows(1, windows=12))
    second = synthetic_measurement(exp_windows(2, windows=12)).series[0]
    second.index, second.label = 1, "cpu1"
    m1.series.append(second)
    a = synthetic_run([m1], hostname=host, kernel="6.1.0-rt5")
    b = synthetic_run([synthetic_measurement(exp_windows(3, windows=12))], hostname="other")
    a.id, b.id = 1, 2
    ref = reference_run("loongson2f")
    assert ref is not None
    return [view_of_run(a), view_of_run(b), view_of_reference(ref)]


def texts(fig: object) -> list[str]:
    """Every text of a figure's axes (titles, labels, legend entries)."""
    out = []
    for ax in fig.axes:  # type: ignore[attr-defined]
        out += [ax.get_title(), ax.get_xlabel(), ax.get_ylabel()]
        legend = ax.get_legend()
        if legend is not None:
            out += [t.get_text() for t in legend.get_texts()]
    return out


def test_hist_has_a_series_per_cpu_and_units() -> None:
    vs = views()
    fig = figures.build("hist", vs, vs[0].cells[0].key, "p99")
    ax = fig.axes[0]
    assert ax.get_xlabel() == "latency (µs)" and "per µs" in ax.get_ylabel()
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert [lb.split(" (")[0] for lb in labels[:3]] == ["run 1 cpu0", "run 1 cpu1", "run 2 cpu0"]
    assert "ref:loongson2f max 27 µs (published)" in labels  # published max as a line
    title = ax.get_title()
    assert "box" in title and "6.1.0-rt5" in title and "cyclic" in title
    assert "published, not measured here" in " ".join(title.split())


def test_ccdf_one_curve_per_run_log_log() -> None:
    vs = views()
    ax = figures.build("ccdf", vs, vs[0].cells[0].key, "p99").axes[0]
    assert ax.get_xscale() == ax.get_yscale() == "log"
    assert len(ax.get_lines()) == 3  # two runs and the published max
    assert ax.get_xlabel() == "latency (µs)"


def test_timeline_panels_and_sweep_and_load() -> None:
    vs = views()
    key = vs[0].cells[0].key
    fig = figures.build("timeline", vs, key, "p99")
    assert len(fig.axes) == 2  # measured runs only
    assert all(ax.get_ylabel() == "latency (µs)" and ax.get_xlabel() == "time since start (s)"
               for ax in fig.axes)
    assert {line.get_label() for line in fig.axes[0].get_lines()} >= {"max", "avg", "min"}
    sweep = figures.build("sweep", vs, key, "max").axes[0]
    assert sweep.get_ylabel() == "max latency (µs)" and len(sweep.get_lines()) == 3
    load = figures.build("load", vs, None, "p99")
    assert [ax.get_ylabel() for ax in load.axes] == ["CPU busy (%)",
                                                     "context switches per s (1/s)"]


def test_user_text_is_literal() -> None:
    vs = views(host="$\\alpha$ box")
    fig = figures.build("hist", vs, vs[0].cells[0].key, "p99")
    assert r"\$\alpha\$ box" in fig.axes[0].get_title()
    svg = figures.svg_text(fig)
    assert "$\\alpha$ box" in svg.replace("\\$", "$")


@pytest.fixture(scope="module")
def sim_db(tmp_path_factory: pytest.TempPathFactory, probe_path: Path) -> str:
    """Two short simulated runs."""
    return simulated_runs(tmp_path_factory.mktemp("plot"), probe_path, ["1", "2"],
                          duration="12s")


@pytest.mark.parametrize(("kind", "suffix", "magic"), [
    ("hist", "svg", b"<?xml"), ("ccdf", "png", b"\x89PNG"), ("timeline", "pdf", b"%PDF"),
    ("sweep", "svg", b"<?xml"), ("load", "png", b"\x89PNG")])
def test_plot_command_writes_each_format(sim_db: str, tmp_path: Path, kind: str, suffix: str,
                                         magic: bytes) -> None:
    out = tmp_path / f"f.{suffix}"
    done = cli("plot", "1", "latest", "ref:loongson2f", "--kind", kind, "-o", str(out),
               "--db", sim_db)
    assert done.exit_code == 0, done.output
    assert out.read_bytes().startswith(magic)
    assert [p.name for p in tmp_path.iterdir()] == [out.name]  # no temp file left


@pytest.mark.parametrize("args", [
    ("--kind", "hist", "-o", "x.gif"), ("--kind", "hist", "-o", "/nonexistent-dir/x.svg"),
    ("--kind", "hist", "--cell", "no-such-cell", "-o", "OUT.svg"),
    ("--kind", "pie", "-o", "OUT.svg")])
def test_plot_bad_input_exits_2_and_writes_nothing(sim_db: str, tmp_path: Path,
                                                   args: tuple[str, ...]) -> None:
    args = tuple(a.replace("OUT", str(tmp_path / "f")) for a in args)
    done = cli("plot", "1", *args, "--db", sim_db)
    assert done.exit_code == 2, done.output
    assert list(tmp_path.iterdir()) == []


def test_plot_unknown_run(sim_db: str, tmp_path: Path) -> None:
    done = cli("plot", "9", "--kind", "hist", "-o", str(tmp_path / "x.svg"), "--db", sim_db)
    assert done.exit_code == 2 and "run 9 is not stored" in done.output
