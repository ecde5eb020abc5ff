"""rtprobe's raw samples file (`--raw FILE`, docs/schema.md): read back per series."""

from __future__ import annotations

import struct
from pathlib import Path

RAW_MAGIC = b"RTPRAW01"
HEADER_BYTES = 32
WARMUP_FLAG = 1


def parse_raw(data: bytes) -> dict[int, list[int]]:
    """Measured latencies (ns, early wake-ups as 0) per series index, warm-up samples
    left out; {} when data does not start with a raw file's header."""
    out: dict[int, list[int]] = {}
    if len(data) < HEADER_BYTES or data[:8] != RAW_MAGIC:
        return out
    header, record = struct.unpack_from("<II", data, 8)
    for offset in range(header, len(data) - record + 1, record):
        _, latency_ns, series, flags = struct.unpack_from("<QqII", data, offset)
        if not flags & WARMUP_FLAG:
            out.setdefault(series, []).append(max(latency_ns, 0))
    return out


def read_raw(path: Path) -> dict[int, list[int]]:
    """parse_raw() of the raw file at path."""
    return parse_raw(path.read_bytes())
