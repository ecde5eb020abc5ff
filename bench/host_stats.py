#!/usr/bin/env python3
"""Time the host's ingest and statistics of 10^7 latency samples.

The samples arrive as rtprobe writes them: compact NDJSON, per-second window
records with sparse histograms (the `hist` member last) plus a result record
(default: 2 series x 5000 windows x 1000 samples = 10^7, an 83-minute 1 kHz
run on two CPUs).  Timed separately:
parsing the NDJSON, storing the measurement (one transaction, SQLite in a
temporary directory), reading the run back, and the statistics (per series
and merged).  Generating the synthetic stream is not timed.

    python3 bench/host_stats.py [--series N] [--windows N] [--per-window N]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rtbench.analysis.stats import merged_stats, series_stats, stats_of_series  # noqa: E402
from rtbench.rtprobe.wire import loglin7 as hist  # noqa: E402
from rtbench.rtprobe.wire.records import ProbeOutput  # noqa: E402
from rtbench.store import Store  # noqa: E402

S = "rtprobe/1"


def dumps(obj: object) -> str:
    """One record as rtprobe writes it (compact JSON, no spaces)."""
    return json.dumps(obj, separators=(",", ":"))


def make_lines(series: int, windows: int, per_window: int) -> list[str]:
    """A synthetic NDJSON stream holding series*windows*per_window samples."""
    rng = np.random.default_rng(42)
    lines = [dumps({
        "schema": S, "type": "start", "version": "bench", "test": "cyclic",
        "simulated": True, "t0_unix_ns": 0,
        "common": {"thresholds_ns": [100_000]},
        "series": [{"index": i, "label": f"cpu{i}", "cpu": i}
                   for i in range(series)], "sysinfo": {}})]
    totals = [np.zeros(hist.BUCKETS, dtype=np.int64) for _ in range(series)]
    facts = [{"count": 0, "sum": 0, "min": None, "max": 0, "exc": 0}
             for _ in range(series)]
    for w in range(windows):
        for s in range(series):
            lat = (rng.lognormal(8.5, 0.6, per_window) + 1000).astype(np.int64)
            idx = hist.index(lat)
            counts = np.bincount(idx, minlength=hist.BUCKETS)
            totals[s] += counts
            nz = np.flatnonzero(counts)
            exc = int((lat >= 100_000).sum())
            f = facts[s]
            f["count"] += lat.size
            f["sum"] += int(lat.sum())
            f["min"] = int(lat.min()) if f["min"] is None else min(
                f["min"], int(lat.min()))
            f["max"] = max(f["max"], int(lat.max()))
            f["exc"] += exc
            lines.append(dumps({
                "schema": S, "type": "window", "series": s, "index": w,
                "warmup": False, "start_ns": w * 10**9,
                "end_ns": (w + 1) * 10**9, "count": per_window,
                "min_ns": int(lat.min()), "max_ns": int(lat.max()),
                "sum_ns": int(lat.sum()), "overruns": 0, "early": 0,
                "exceed": [exc],
                "hist": [[int(i), int(counts[i])] for i in nz]}))
    lines.append(dumps({
        "schema": S, "type": "result", "test": "cyclic", "status": "ok",
        "exit_code": 0, "measured_ns": windows * 10**9,
        "series": [{
            "index": s, "label": f"cpu{s}", "cpu": s,
            "count": facts[s]["count"], "min_ns": facts[s]["min"],
            "max_ns": facts[s]["max"], "sum_ns": facts[s]["sum"],
            "overruns": 0, "early": 0,
            "exceed": [{"threshold_ns": 100_000, "count": facts[s]["exc"]}],
            "worst": [], "warmup": {},
            "hist": [[int(i), int(totals[s][i])]
                     for i in np.flatnonzero(totals[s])]}
            for s in range(series)],
        "verdicts": [], "data": {}}))
    return lines


def main() -> int:
    """Run the benchmark and print one line per phase."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--series", type=int, default=2)
    ap.add_argument("--windows", type=int, default=5000)
    ap.add_argument("--per-window", type=int, default=1000)
    args = ap.parse_args()
    n = args.series * args.windows * args.per_window
    print(f"generating {n:,} samples "
          f"({args.series} series x {args.windows} windows)...")
    lines = make_lines(args.series, args.windows, args.per_window)
    times: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        out = ProbeOutput.from_lines(lines)
        times["parse NDJSON"] = time.perf_counter() - t
        store = Store.open(f"sqlite:///{tmp}/bench.db")
        run_id = store.create_run(
            suite="bench", suite_source="", scale=1.0, hostname="bench",
            target="local", sysinfo={}, preflight=[], tool_versions={},
            command_line=sys.argv, simulated=True)
        sc = store.add_scenario(run_id, name="idle", loads=[],
                                load_cpus=None, measure_cpus=None)
        t = time.perf_counter()
        store.add_measurement(sc, name="cyclic", test="cyclic", params={},
                              command=[], output=out, status="ok",
                              thresholds_ns=[100_000])
        times["store measurement"] = time.perf_counter() - t
        t = time.perf_counter()
        run = store.get_run(run_id)
        times["read run back"] = time.perf_counter() - t
        m = run.scenarios[0].measurements[0]
        t = time.perf_counter()
        per = [stats_of_series(s, m.measured_ns) for s in m.series]
        merged = merged_stats(m.series, m.measured_ns)
        times["statistics"] = time.perf_counter() - t
        # the windows' histograms are kept as text and decoded on demand
        # (e.g. by a report of the per-second series): not in the total
        t = time.perf_counter()
        window_samples = sum(int(w.hist_arrays()[1].sum())
                             for w in m.windows)
        decode_windows = time.perf_counter() - t
        # what `rtbench run` does once the probe has ended (the windows were
        # parsed and kept one a second while the run went on): parse the
        # result record, store the measurement, compute the statistics
        t = time.perf_counter()
        final = ProbeOutput.from_lines([lines[0], lines[-1]])
        store.add_measurement(sc, name="final", test="cyclic", params={},
                              command=[], output=final, status="ok",
                              thresholds_ns=[100_000])
        assert final.result is not None
        end_stats = [series_stats(
            r["hist"], count=r["count"], min_ns=r["min_ns"],
            max_ns=r["max_ns"], sum_ns=r["sum_ns"], overruns=r["overruns"],
            exceed=[(e["threshold_ns"], e["count"]) for e in r["exceed"]],
            measured_ns=final.result.measured_ns)
            for r in final.result.series]
        end_of_run = time.perf_counter() - t
        store.close()
    assert merged is not None and merged.samples == n
    assert window_samples == n
    for name, secs in times.items():
        print(f"{name:20s} {secs * 1000:9.1f} ms")
    print(f"{'total':20s} {sum(times.values()) * 1000:9.1f} ms  "
          f"(p99.999 = {merged.pct('p99.999')} ns, {len(per)} series)")
    assert sum(st.samples for st in end_stats) == n
    print(f"decoding every window histogram on demand: "
          f"{decode_windows * 1000:.1f} ms")
    print(f"end of run (parse result, store, statistics) of "
          f"{n:,} samples: {end_of_run * 1000:.1f} ms")
    per_window = sum(times[k] for k in ("parse NDJSON", "store measurement"))
    print(f"per-window stream ingest: {per_window / (len(lines) - 2) * 1e6:.0f}"
          f" us per window record")
    return 0


if __name__ == "__main__":
    sys.exit(main())
