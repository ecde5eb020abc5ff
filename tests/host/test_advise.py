"""The advisor: a known GEV tail recovered within its interval, plain refusals when the
fit is not supported, and the exit codes of `rtbench advise`."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from explain_helpers import cli, exp_windows, simulated_runs, synthetic_measurement
from hypothesis import example, given, settings
from hypothesis import strategies as st
from scipy import stats

from rtbench.analysis import evt
from rtbench.analysis.advise import advise_cell
from rtbench.cli import main


def test_known_gev_tail_is_recovered_within_its_interval() -> None:
    mu, sigma, xi, m = 50.0, 5.0, 0.1, 3600.0
    truth = evt.return_level(mu, sigma, xi, m)
    level_hits = shape_hits = 0
    seeds = range(30)
    for seed in seeds:
        x = stats.genextreme.rvs(-xi, loc=mu, scale=sigma, size=200,
                                 random_state=np.random.default_rng(seed))
        fit = evt.fit_gev(x, m)
        assert fit is not None
        assert fit.level_lo <= fit.level <= fit.level_hi
        level_hits += fit.level_lo <= truth <= fit.level_hi
        shape_hits += fit.xi_lo <= xi <= fit.xi_hi
    assert level_hits / len(seeds) >= 0.85, level_hits
    assert shape_hits / len(seeds) >= 0.85, shape_hits


def test_gumbel_and_bounded_tails_fit() -> None:
    rng = np.random.default_rng(3)
    gumbel = stats.gumbel_r.rvs(loc=20, scale=2, size=300, random_state=rng)
    fit = evt.fit_gev(gumbel, 100.0)
    assert fit is not None and fit.xi_lo <= 0 <= fit.xi_hi
    assert fit.level_lo <= 20 - 2 * math.log(-math.log(1 - 1 / 100)) <= fit.level_hi


@settings(max_examples=20, deadline=None)
@given(st.floats(1.0, 1000.0), st.floats(0.1, 100.0), st.floats(-0.3, 0.4),
       st.floats(2.0, 1e6))
@example(1.0, 1.0, 1e-300, 2.0)  # a shape scipy's GEV quantile cannot tell from 0
@example(1.0, 1.0, 5e-7, 1e6)  # inside return_level's Gumbel branch
def test_return_level_is_the_gev_quantile(mu: float, sigma: float, xi: float, m: float) -> None:
    level = evt.return_level(mu, sigma, xi, m)
    if abs(xi) < 1e-6:
        # scipy's GEV quantile loses its digits for a shape this close to 0 (it gives mu
        # back for a shape of 1e-300): the Gumbel quantile is the reference there, within
        # the term that return_level's Gumbel branch leaves out (sigma * xi * log(y)^2 / 2)
        expected = stats.gumbel_r.ppf(1 - 1 / m, loc=mu, scale=sigma)
        assert level == pytest.approx(expected, rel=1e-5, abs=1e-6)
        return
    expected = stats.genextreme.ppf(1 - 1 / m, -xi, loc=mu, scale=sigma)
    assert level == pytest.approx(expected, rel=1e-6, abs=1e-6)


def test_short_run_is_refused_plainly() -> None:
    m = synthetic_measurement(exp_windows(1, windows=10))
    a = advise_cell("idle / cyclic", m, budget=0.25, horizon_s=3600, cycle_ns=1_000_000)
    assert a is not None and a.fit is None
    assert a.unsupported.startswith("run too short: 10 measured windows")
    assert a.evt_cycle_ns is None
    assert a.observed_cycle_ns == a.observed_max_ns / 0.25
    assert a.safe is (a.observed_cycle_ns <= 1_000_000)


def test_trending_load_is_refused() -> None:
    windows = [w + 400 * k for k, w in enumerate(exp_windows(2, windows=60))]
    a = advise_cell("x", synthetic_measurement(windows), budget=0.25, horizon_s=3600,
                    cycle_ns=None)
    assert a is not None and a.unsupported.startswith("load not steady")


def test_steady_run_gets_an_estimate_and_a_cycle() -> None:
    a = advise_cell("x", synthetic_measurement(exp_windows(4, windows=120)), budget=0.25,
                    horizon_s=3600, cycle_ns=None)
    assert a is not None and a.unsupported == "" and a.fit is not None
    assert a.evt_cycle_ns == pytest.approx(a.fit.level_hi * 1000 / 0.25)
    assert a.required_cycle_ns >= a.observed_cycle_ns
    assert a.safe is None


@pytest.fixture(scope="module")
def sim_db(tmp_path_factory: pytest.TempPathFactory, probe_path: Path) -> str:
    """Run 1: default distribution, 40 s; run 2: constant 5 us with a 50 us spike every
    1000 samples (no tail to fit)."""
    return simulated_runs(tmp_path_factory.mktemp("adv"), probe_path,
                          ["1", "2:const,lat=5us,spike=50us,every=1000"])


def test_advise_exit_codes(sim_db: str) -> None:
    ok = cli("advise", "1", "--cycle", "1ms", "--db", sim_db)
    assert ok.exit_code == 0, ok.output
    assert "safe" in ok.output and "GEV" not in ok.output.split("\n")[0]
    unsafe = cli("advise", "1", "--cycle", "50us", "--db", sim_db)
    assert unsafe.exit_code == 1 and "NOT SAFE" in unsafe.output
    data = json.loads(cli("advise", "1", "--cycle", "1ms", "--json", "--db", sim_db).output)
    cell = data["cells"][0]
    assert data["safe"] is True and cell["extreme_value"]["level_ci95_us"][1] > 0
    assert cell["required_cycle_ns"] >= cell["cycle_from_observed_ns"]
    # budget 25 %: a 50 us spike needs a 200 us cycle by the observed rule
    flat = json.loads(cli("advise", "2", "--json", "--db", sim_db).output)["cells"][0]
    assert flat["observed_max_ns"] == 50_000 and flat["cycle_from_observed_ns"] == 200_000
    assert "no tail to fit" in flat["extreme_value_unsupported"]
    assert cli("advise", "2", "--cycle", "200us", "--db", sim_db).exit_code == 0
    assert cli("advise", "2", "--cycle", "199us", "--db", sim_db).exit_code == 1
    assert cli("advise", "2", "--cycle", "399us", "--budget", "12.5%",
               "--db", sim_db).exit_code == 1


@pytest.mark.parametrize("args", [
    ("--cycle", "fast"), ("--cycle", "0us"), ("--budget", "150%"), ("--budget", "a lot"),
    ("--horizon", "forever"), ("--cell", "nothing-like-this"),
])
def test_bad_input_exits_2(sim_db: str, args: tuple[str, ...]) -> None:
    done = cli("advise", "1", *args, "--db", sim_db)
    assert done.exit_code == 2, done.output
    assert len(done.output.strip().splitlines()) == 1


def test_unknown_run_exits_2(sim_db: str) -> None:
    for name in ("7", "host=none", "ref:loongson2f"):
        assert cli("advise", name, "--db", sim_db).exit_code == 2


@given(st.floats(min_value=0, max_value=1e15, allow_nan=False))
def test_durations_have_a_unit_and_no_exponent(ns: float) -> None:
    from rtbench.report.format import fmt_duration

    text = fmt_duration(ns)
    assert "e+" not in text and "e-" not in text and text.endswith((" ns", " µs", " ms", " s"))
    digits = text.split()[0].replace(",", "").replace(".", "")
    assert len(digits.lstrip("0")) <= max(3, len(text.split()[0].split(".")[0]))


def _advice(level_lo: float, level: float, level_hi: float, observed_ns: int):
    """A cell whose once-per-hour estimate (µs) is level [level_lo, level_hi]."""
    from rtbench.analysis.advise import CellAdvice

    fit = evt.GevFit(mu=1.0, sigma=1.0, xi=0.5, xi_lo=0.2, xi_hi=0.8, blocks=60, m=3600,
                     level=level, level_lo=level_lo, level_hi=level_hi, nll=0.0)
    return CellAdvice("idle / cyclic 1ms", observed_ns, observed_ns / 0.25, 60, 60.0, 1.0,
                      3600.0, 0.25, fit, "", 1.0, 1_000_000, 0)


def test_extrapolation_said_in_words_with_its_credibility() -> None:
    # issue 35: "85523079.7 [2895815.7, 157418610.5] µs" and "6.3e+05 ms"
    from rtbench.report.compare_text import advice_table, advice_words

    wild = _advice(2_895_815.7, 85_523_079.7, 157_418_610.5, 9_446_545)
    assert len(wild.doubts) == 2
    words = advice_words(wild, virtual=True)
    assert words is not None and words.startswith(
        "idle / cyclic 1ms: once per hour at most 157 s (estimate 85.5 s, 95 % interval "
        "2.90 s to 157 s; measured 60.0 s, largest latency 9.45 ms)")
    assert "this fit is not credible: its 95 % interval spans by a factor of 54" in words
    assert "host stalls" in words
    tame = _advice(40.0, 55.0, 80.0, 30_000)
    assert tame.doubts == []
    assert "credible by the rule in docs/advise.md" in (advice_words(tame, False) or "")
    from rich.console import Console

    console = Console(record=True, width=200)
    console.print(advice_table([wild, tame], "t"))
    text = console.export_text()
    assert "e+" not in text and "85.5 s [2.90 s, 157 s] — not credible" in text
    assert "630 s" in text  # the cycle the estimate needs: 157 s / 25 %


def test_advise_says_what_it_fits(sim_db: str) -> None:
    done = CliRunner().invoke(
        main, ["advise", "1", "--cycle", "1ms", "--verbose", "--db", sim_db],
        env={"COLUMNS": "120"})
    assert done.exit_code == 0, done.output
    assert "advise: fitting cell 1 of 1: " in done.stderr
    assert "once per hour at most" in done.stdout
    quiet = CliRunner().invoke(main, ["advise", "1", "--db", sim_db])
    assert quiet.stderr == ""  # not a terminal, no --verbose: nothing on stderr
