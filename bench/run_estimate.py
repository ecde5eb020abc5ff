"""How a suite run's printed length compares with the time it takes (BENCHMARKS.md "Suite
run estimates"): runs each suite with `rtbench run ... --no-report`, reads the range its
first line prints (rtbench/run/estimate.py) and times from that line to the run's end.

    python bench/run_estimate.py [--target URI] [--simulate SEED] SUITE:SCALE...

Prints one line per run: suite, scale, the printed range, the time taken, and whether it
fell within; the machine's load average before and after.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SECONDS = re.compile(r"(?:(\d+) min)?\s*(?:(\d+) s)?")


def seconds_of(text: str) -> float:
    """'2 min 31 s' -> 151.0, '45 s' -> 45.0."""
    match = SECONDS.fullmatch(text.strip())
    if match is None or not any(match.groups()):
        raise ValueError(f"not a length: {text!r}")
    return 60.0 * int(match.group(1) or 0) + int(match.group(2) or 0)


def printed_range(line: str) -> tuple[float, float]:
    """The (low, high) of a run's first line ('about X: A to B here', or 'about X')."""
    found = re.search(r"about ([^:),]+)(?:: (.+?) to (.+?) (?:here|over \w+))?\)", line)
    if found is None:
        raise ValueError(f"no estimate in {line!r}")
    if found.group(2) is None:
        middle = seconds_of(found.group(1))
        return middle, middle
    return seconds_of(found.group(2)), seconds_of(found.group(3))


def one_run(suite: str, scale: str, target: str | None, simulate: str | None,
            db: Path) -> tuple[str, float, float, float, int]:
    """Run suite at scale; (first line, low, high, seconds from that line to the end,
    exit code)."""
    command = [sys.executable, "-m", "rtbench", "run", suite, "--scale", scale,
               "--no-report", "--db", str(db), "--accept-undefined"]
    if target:
        command += ["--target", target]
    if simulate:
        command += ["--simulate", simulate]
    env = {**os.environ, "COLUMNS": "400"}
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, env=env)
    assert proc.stdout is not None
    first = proc.stdout.readline()
    started = time.monotonic()
    proc.stdout.read()
    code = proc.wait()
    took = time.monotonic() - started
    low, high = printed_range(first)
    return first.strip(), low, high, took, code


def main() -> None:
    """Run each SUITE:SCALE and print its line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", metavar="SUITE:SCALE")
    parser.add_argument("--target")
    parser.add_argument("--simulate")
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory() as tmp:
        for n, item in enumerate(args.runs):
            suite, _, scale = item.partition(":")
            _, low, high, took, code = one_run(suite, scale or "1", args.target,
                                               args.simulate, Path(tmp) / f"r{n}.db")
            within = "within" if low <= took <= high else (
                "BELOW" if took < low else "ABOVE")
            print(f"{suite} --scale {scale}: printed {low:.0f}-{high:.0f} s, took "
                  f"{took:.1f} s ({within}), exit {code}")
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
