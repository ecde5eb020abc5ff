"""Build synthetic rtprobe/1 NDJSON streams for the host tests (no binary)."""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from rtbench.rtprobe.wire import loglin7 as hist

SCHEMA = "rtprobe/1"


def _pairs(values: np.ndarray) -> list[list[int]]:
    """Sparse histogram of values as JSON pairs."""
    idx, cnt = hist.from_values(values)
    return [[int(i), int(c)] for i, c in zip(idx, cnt, strict=True)]


def synth_lines(*, seed: int = 1, series: int = 2, windows: int = 3,
                per_window: int = 500, warmup_windows: int = 1,
                thresholds_ns: tuple[int, ...] = (50_000,),
                with_result: bool = True, simulated: bool = True
                ) -> tuple[list[str], dict[int, np.ndarray]]:
    """NDJSON lines of a cyclic run and the measured latencies per series."""
    rng = np.random.default_rng(seed)
    start: dict[str, Any] = {
        "schema": SCHEMA, "type": "start", "tool": "rtprobe",
        "version": "0.1.0", "test": "cyclic", "simulated": simulated,
        "simulate": "1" if simulated else None,
        "argv": ["rtprobe", "cyclic", "--duration", f"{windows}s"],
        "clock": "monotonic", "t0_ns": 1000, "t0_unix_ns": 1_700_000_000 * 10**9,
        "hist_layout": "loglin7", "window_ns": 10**9,
        "common": {"threads": series, "thresholds_ns": list(thresholds_ns),
                   "warmup_ns": warmup_windows * 10**9, "worst_n": 10},
        "params": {"interval_ns": 10**6, "mode": "abs"},
        "series": [{"index": i, "label": f"cpu{i}", "cpu": i}
                   for i in range(series)],
        "sysinfo": {"uname": {"release": "6.1.0-test", "machine": "x86_64",
                              "nodename": "box"},
                    "cpu_model": "Test CPU", "preempt_rt": False,
                    "clocksource": "tsc"},
    }
    lines = [json.dumps(start)]
    measured: dict[int, list[np.ndarray]] = {i: [] for i in range(series)}
    warm: dict[int, list[np.ndarray]] = {i: [] for i in range(series)}
    spikes: list[dict[str, Any]] = []
    for w in range(warmup_windows + windows):
        for s in range(series):
            lat = rng.lognormal(mean=8.5, sigma=0.6, size=per_window)
            lat = lat.astype(np.int64) + 1000
            is_warm = w < warmup_windows
            (warm if is_warm else measured)[s].append(lat)
            lines.append(json.dumps({
                "schema": SCHEMA, "type": "window", "series": s, "index": w,
                "warmup": is_warm, "start_ns": w * 10**9,
                "end_ns": (w + 1) * 10**9, "count": int(lat.size),
                "min_ns": int(lat.min()), "max_ns": int(lat.max()),
                "sum_ns": int(lat.sum()), "overruns": 1 if w == 2 else 0,
                "early": 0,
                "exceed": [int((lat >= t).sum()) for t in thresholds_ns],
                "hist": _pairs(lat)}))
            if not is_warm:
                for k in np.flatnonzero(lat >= min(thresholds_ns))[:3]:
                    spikes.append({"schema": SCHEMA, "type": "spike",
                                   "series": s,
                                   "t_ns": w * 10**9 + int(k) * 10**6,
                                   "latency_ns": int(lat[k]),
                                   "threshold_ns": min(thresholds_ns)})
    lines.extend(json.dumps(sp) for sp in spikes)
    all_measured = {s: np.concatenate(v) for s, v in measured.items()}
    if with_result:
        result_series = []
        for s in range(series):
            lat = all_measured[s]
            wl = np.concatenate(warm[s]) if warm[s] else np.zeros(0, int)
            order = np.argsort(-lat, kind="stable")[:10]
            result_series.append({
                "index": s, "label": f"cpu{s}", "cpu": s,
                "count": int(lat.size), "min_ns": int(lat.min()),
                "max_ns": int(lat.max()), "sum_ns": int(lat.sum()),
                "overruns": 1 if warmup_windows <= 2 < warmup_windows + windows
                else 0,
                "early": 0,
                "exceed": [{"threshold_ns": t, "count": int((lat >= t).sum())}
                           for t in thresholds_ns],
                "worst": [{"t_ns": int(k) * 10**6, "latency_ns": int(lat[k])}
                          for k in order],
                "warmup": {"count": int(wl.size),
                           "min_ns": int(wl.min()) if wl.size else None,
                           "max_ns": int(wl.max()) if wl.size else None,
                           "sum_ns": int(wl.sum()), "overruns": 0},
                "hist": _pairs(lat), "spikes_dropped": 0, "raw_dropped": 0,
                "error": None})
        lines.append(json.dumps({
            "schema": SCHEMA, "type": "result", "test": "cyclic",
            "status": "ok", "exit_code": 0, "reason": None,
            "simulated": simulated,
            "elapsed_ns": (windows + warmup_windows) * 10**9,
            "measured_ns": windows * 10**9, "series": result_series,
            "verdicts": [{"name": "threshold 50us", "pass": True,
                          "detail": "ok"}],
            "data": {}}))
    return lines, all_measured
