"""Verdicts with three outcomes: PASS only when thresholds were set and held, "measured,
no thresholds set" otherwise, and scenarios that did not happen as defined are flagged."""

from __future__ import annotations

from explain_helpers import exp_windows, synthetic_measurement, synthetic_run

from rtbench.analysis.scenario_check import scenario_flags
from rtbench.analysis.verdict import verdict_of
from rtbench.report.verdict import verdict_lines


def test_a_run_without_thresholds_is_not_a_pass() -> None:
    # issue 24: "PASS: 49 measurements within every threshold" with no threshold set
    run = synthetic_run([synthetic_measurement(exp_windows(1))])
    run.status = "ok"
    verdict = verdict_of(run)
    assert verdict.headline.startswith("MEASURED, NO THRESHOLDS SET: 1 measurement")
    assert "PASS" not in verdict.headline and verdict.status == "measured"


def test_pass_names_the_measurements_that_had_no_threshold() -> None:
    checked = synthetic_measurement(exp_windows(1))
    checked.thresholds_ns = [50_000_000]
    run = synthetic_run([checked, synthetic_measurement(exp_windows(2), name="other")])
    run.status = "ok"
    assert verdict_of(run).headline.startswith(
        "PASS: 1 of 2 measurements within every threshold; 1 had none set")
    run.scenarios[0].measurements = [checked]
    assert verdict_of(run).headline.startswith("PASS: 1 measurement within every threshold")


def test_a_load_short_of_its_target_is_flagged() -> None:
    loads = [{"kind": "cpu", "target": 80, "achieved": 36.8, "unit": "%"}]
    (flag,) = scenario_flags(loads, {"loads": loads}, None)
    assert "load cpu reached 36.8 of its 80 % target (46%" in flag
    assert scenario_flags([{**loads[0], "achieved": 70.0}], {"loads": [
        {**loads[0], "achieved": 70.0}]}, None) == []
    maxed = [{"kind": "cpu", "target": "max", "achieved": 10.0}]
    assert scenario_flags(maxed, {"loads": maxed}, None) == []
    unknown = [{"kind": "net", "target": 1000, "achieved": None, "unit": "packets/s"}]
    assert "not measured" in scenario_flags(unknown, {"loads": unknown}, None)[0]


def test_a_busy_idle_scenario_is_flagged_in_the_verdict_and_html() -> None:
    # issue 24: "idle" measured with the CPU 66 % busy, and the verdict said nothing
    run = synthetic_run([synthetic_measurement(exp_windows(1))])
    run.status, run.id, run.simulated = "ok", 1, False
    sc = run.scenarios[0]
    sc.measure_cpus = "1"
    sc.intensity = {"cpu_busy_pct": 66.0,
                    "cpu_busy_pct_per_cpu": {"cpu0": 98.0, "cpu1": 100.0, "cpu2": 34.0}}
    verdict = verdict_of(run)
    # issue 35: not a pass, and not "measured" either
    assert verdict.headline.startswith("NOT AS DEFINED in 1 case (below)")
    assert verdict.status == "not_as_defined"
    assert verdict.not_as_defined == [
        "idle: no load was defined, but the CPUs that did not measure (CPUs 0, 2) were "
        "66 % busy (above 20 %): something else ran"]
    text = "\n".join(line for _, line in verdict_lines(verdict))
    assert "scenarios not as defined" in text and "66 % busy" in text
    from rtbench.report.html import render_html

    assert "Scenarios not as defined" in render_html(run)
    run.simulated = True  # synthetic latencies: listed, but it does not decide
    verdict = verdict_of(run)
    assert verdict.headline.startswith("MEASURED, NO THRESHOLDS SET")
    assert "does not decide its verdict" in verdict.not_as_defined[0]
    sc.intensity["cpu_busy_pct_per_cpu"] = {"cpu0": 3.0, "cpu1": 100.0}
    assert verdict_of(run).not_as_defined == []


def test_a_lost_run_is_told_straight() -> None:
    # issue 24: "LOST: 0 measurements of 2 could not run", and --break-on advice
    done = synthetic_measurement(exp_windows(1))
    done.status = "fail"
    cut = synthetic_measurement(exp_windows(2, windows=15), name="cyclic-250us")
    cut.status = "lost"
    run = synthetic_run([done, cut])
    run.status = "lost"
    verdict = verdict_of(run)
    assert verdict.headline.startswith(
        "LOST: the connection to the target broke; 1 measurement finished, "
        "idle / cyclic-250us cut short (15,000 samples kept); the measurements after it "
        "never started")
    text = "\n".join(line for _, line in verdict_lines(verdict))
    assert "--break-on" not in text and "the link to the target broke" in text


def test_an_imported_run_is_not_a_pass_on_its_report_page() -> None:
    # issue 24: an imported cyclictest run with a 9.5 ms max showed PASS on the dashboard
    # (its run page is this HTML report)
    import json

    from rtbench.interop.base import importers
    from rtbench.report.html import render_html

    doc = {"file_version": 1, "cmdline:": "cyclictest -m -p 80 -t1 -i 1000", "return_code": 0,
           "num_threads": 1, "thread": {"0": {"histogram": {}, "cycles": 5000, "min": 7,
                                              "max": 9500, "avg": 20.5, "cpu": 0}}}
    run = importers()["cyclictest-json"].read(json.dumps(doc).encode(), "ct.json")[0]
    run.id = 1
    page = render_html(run)
    assert "Verdict: MEASURED, NO THRESHOLDS SET" in page and "Verdict: PASS" not in page


def test_the_live_line_of_a_cut_measurement_counts_its_windows() -> None:
    # issue 24: the live line said "0 samples" for a measurement that stored 15,886
    from rtbench.report.live import measurement_line
    from rtbench.rtprobe.wire.records import ProbeOutput
    from rtbench.run.events import MeasurementDone

    m = synthetic_measurement(exp_windows(3, windows=4, per_window=500))
    line = measurement_line(MeasurementDone("idle", "cyclic-1ms", "cyclic", "lost",
                                            ProbeOutput(windows=list(m.windows))))
    assert "2,000 samples" in line and "4 windows" in line
    assert f"max {max(w.max_ns for w in m.windows) / 1000:.1f}" in line
