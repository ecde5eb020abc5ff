"""rtbench: run real-time latency suites with rtprobe, keep every run, analyse and report."""

__version__ = "0.1.0"

# Exit codes shared with rtprobe (DESIGN.md section 4).
EXIT_OK = 0
EXIT_FAIL = 1
EXIT_USAGE = 2
EXIT_ENV = 3
EXIT_INTERRUPTED = 4
