"""Helpers of the rtprobe end-to-end tests: parsed runs and a reference of sim.h."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jsonschema.protocols import Validator

from tests.parts import needs_part

REPO = Path(__file__).resolve().parents[2]

Record = dict[str, Any]


@dataclass
class ProbeRun:
    """One finished rtprobe process: exit code, parsed NDJSON, stderr."""

    rc: int
    records: list[Record]
    stdout: str
    stderr: str
    by_type: dict[str, list[Record]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for rec in self.records:
            self.by_type.setdefault(str(rec.get("type")), []).append(rec)

    @property
    def start(self) -> Record:
        return self.by_type["start"][0]

    @property
    def result(self) -> Record:
        results = self.by_type.get("result", [])
        assert len(results) == 1, f"expected one result record, got {len(results)}"
        return results[0]

    @property
    def windows(self) -> list[Record]:
        return self.by_type.get("window", [])


def parse_ndjson(text: str) -> list[Record]:
    """Parse every line as one JSON object (fails on a partial or non-JSON line)."""
    return [json.loads(line) for line in text.splitlines() if line.strip()]


RunProbe = Callable[..., ProbeRun]


def is_root() -> bool:
    return os.geteuid() == 0


needs_root = needs_part("root", not is_root(), "needs root (RT scheduling, setpriv)")


MASK64 = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15


def sim_stream(seed: int, stream: int) -> Any:
    """Yield the splitmix64 draws of stream `stream` exactly as sim.h specifies."""
    state = (seed + (stream << 48) * GOLDEN) & MASK64
    while True:
        state = (state + GOLDEN) & MASK64
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        yield z ^ (z >> 31)


def sim_uniform(seed: int, stream: int, lo: int, hi: int, n: int) -> list[int]:
    """The first n samples of `uniform,min=lo,max=hi` on one stream."""
    draws = sim_stream(seed, stream)
    return [lo + next(draws) % (hi - lo + 1) for _ in range(n)]


def hist_index(value: int) -> int:
    """The loglin7 bucket of a value in ns (probe/src/lib/hist.h)."""
    if value < 128:
        return value
    k = value.bit_length() - 1
    return 128 + (k - 7) * 128 + ((value >> (k - 7)) & 127)


def validate_records(records: list[Record], validator: Validator) -> None:
    """Every record validates against the rtprobe/1 schema."""
    for rec in records:
        validator.validate(rec)


def assert_valid(run: ProbeRun, validator: Validator) -> None:
    """The run wrote records and every one validates against the rtprobe/1 schema."""
    assert run.records, run.stderr
    validate_records(run.records, validator)


def assert_usage_error(run: ProbeRun, option: str) -> None:
    """Bad input: exit 2, one stderr line naming the option, nothing measured or written."""
    assert run.rc == 2
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run.stderr
    assert option in lines[0]
    assert run.stdout == "", "nothing may be measured or written on bad input"
