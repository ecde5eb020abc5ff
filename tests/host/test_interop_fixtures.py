"""Importers of formats that cannot be produced here, on checked-in fixtures.

Where each fixture came from is in tests/host/data/README.md.
"""

from __future__ import annotations

from pathlib import Path

from rtbench.interop.base import importers

DATA = Path(__file__).parent / "data" / "interop"


def _read(name: str) -> tuple[str, list]:  # type: ignore[type-arg]
    """(detected format, runs) of a fixture."""
    data = (DATA / name).read_bytes()
    found = [n for n, imp in importers().items() if imp.detect(data[:4096], name)]
    assert len(found) == 1, found
    return found[0], importers()[found[0]].read(data, name)


def test_rtla_timerlat_hist() -> None:
    fmt, runs = _read("rtla-timerlat-hist.txt")
    assert fmt == "rtla-hist"
    irq, thread = runs[0].scenarios[0].measurements
    assert (irq.name, thread.name) == ("timerlat-irq", "timerlat-thread")
    for m, lo, avg, hi in ((irq, 0, 0, 16), (thread, 1, 5, 36)):
        s = m.series[0]
        assert s.cpu == 0 and s.count == 600002
        assert (s.min_ns, s.max_ns) == (lo * 1000, hi * 1000)
        assert m.data["tool_avg_ns"] == [avg * 1000]
        assert sum(c for _, c in s.hist) == 600002  # every count kept
    assert dict((v, c) for v, c in thread.data["tool_hist"][0] if c)[7] == 169347


def test_rtla_osnoise_hist_with_bucket_size() -> None:
    _, runs = _read("rtla-osnoise-hist.txt")
    (m,) = runs[0].scenarios[0].measurements
    assert m.name == "osnoise" and len(m.series) == 12
    assert [s.count for s in m.series][:3] == [55215, 54649, 54703]
    assert m.series[9].max_ns == 50_000 and m.data["bucket_step"] == 10
    assert m.data["tool_hist"][0][:2] == [[0, 42982], [10, 12224]]


def test_rtla_top_summaries_are_summary_only() -> None:
    _, runs = _read("rtla-timerlat-top.txt")
    irq, thread = runs[0].scenarios[0].measurements
    assert len(irq.series) == 23 and irq.series[0].cpu == 1
    assert thread.series[22].max_ns == 41_000 and thread.series[22].count == 12320
    assert irq.data["summary_only"] and not irq.series[0].hist
    _, runs = _read("rtla-osnoise-top.txt")
    (noise,) = runs[0].scenarios[0].measurements
    assert [s.max_ns for s in noise.series] == [56_000, 24_000, 39_000, 33_000]
    assert noise.data["counters"][0]["Noise"] == 304896


def test_lmbench_lines() -> None:
    _, runs = _read("lmbench.txt")
    ms = {m.name: m for m in runs[0].scenarios[0].measurements}
    assert set(ms) == {"lat_ctx-0k", "lat_ctx-16k", "fifo-latency", "pipe-latency",
                       "af-unix-sock-stream-latency", "pipe-bandwidth"}
    assert [s.label for s in ms["lat_ctx-0k"].series] == ["procs=2", "procs=4", "procs=8",
                                                          "procs=16"]
    assert ms["lat_ctx-0k"].series[0].max_ns == 2710 and ms["lat_ctx-0k"].params[
        "overhead_us"] == 1.12
    assert ms["fifo-latency"].data["tool_avg_ns"] == [5183.0]
    assert ms["pipe-bandwidth"].data["bandwidth_mb_s"] == 3874.62


def test_ltp_realtime_logs() -> None:
    _, runs = _read("ltp-sched_latency.txt")
    m = runs[0].scenarios[0].measurements[0]
    s = m.series[0]
    assert (m.name, s.count, s.min_ns, s.max_ns) == ("sched_latency", 10000, 13_000, 61_000)
    assert m.data["tool_quantiles_us"]["99.9"] == 41 and m.verdicts[0]["pass"] is True
    assert not s.hist  # quantiles are kept as printed, no histogram is invented
    _, runs = _read("ltp-async_handler.txt")
    m = runs[0].scenarios[0].measurements[0]
    assert m.status == "fail" and m.verdicts[0]["pass"] is False
    assert m.data["tool_avg_ns"] == [5064.4]
    _, runs = _read("ltp-gtod_latency.txt")
    assert runs[0].scenarios[0].measurements[0].series[0].count == 10_000_000
    _, runs = _read("ltp-pi_perf.txt")
    m = runs[0].scenarios[0].measurements[0]
    assert m.data["count_printed"] is False and m.data["tool_figures_us"]["max"] == 31


def test_cyclictest_json_nan_average_of_an_idle_thread() -> None:
    fmt, runs = _read("cyclictest-nan.json")
    assert fmt == "cyclictest-json"
    m = runs[0].scenarios[0].measurements[0]
    busy, idle = m.series
    assert (busy.count, busy.min_ns, busy.max_ns) == (500, 15_000, 1_116_000)
    assert (idle.count, idle.min_ns, idle.max_ns) == (0, None, None)
    assert m.data["tool_avg_ns"] == [48270.0, None]
    assert runs[0].source["tool_version"] == "1.10"
