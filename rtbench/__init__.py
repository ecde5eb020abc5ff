"""rtbench: run real-time latency suites with rtprobe, keep every run, analyse and report."""

import os
from pathlib import Path

__version__ = "0.1.0"

# Exit codes shared with rtprobe (docs/design.md, "Exit codes").
EXIT_OK = 0
EXIT_FAIL = 1
EXIT_USAGE = 2
EXIT_ENV = 3
EXIT_INTERRUPTED = 4
EXIT_INCONCLUSIVE = 5  # rtbench only: a gate the evidence could not decide
# rtbench only: a run whose scenarios did not happen as defined (a load short of its
# target, a busy idle); `rtbench run --accept-undefined` exits as if they had
EXIT_NOT_AS_DEFINED = 6

# what every view of a run measured under CPU emulation (QEMU TCG) says of it
EMULATED_WORDS = "figures describe the emulator, not a board"

# A stored run's id: the runs table's INTEGER key, 32-bit in PostgreSQL, so the CLI and
# the server's API take the same range on every database.
RUN_ID_MAX = (1 << 31) - 1
RUN_ID_RANGE = f"run ids are whole numbers from 1 to {RUN_ID_MAX}"


def data_dir() -> Path:
    """$XDG_DATA_HOME/rtbench (default ~/.local/share/rtbench): database and reports."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "rtbench"
