"""Table definitions (SQLAlchemy Core); docs/schema-db.md describes them.

The Alembic migrations in rtbench/store/migrations create the same tables;
tests/host/test_store.py checks that the two agree.  Only portable types are
used (Integer/BigInteger/Text/Float/Boolean/DateTime; JSON kept as Text) so
the same SQL runs on SQLite and PostgreSQL.
"""

from __future__ import annotations

from sqlalchemy import (
                        BigInteger,
                        Boolean,
                        Column,
                        DateTime,
                        Float,
                        ForeignKey,
                        Index,
                        Integer,
                        MetaData,
                        String,
                        Table,
                        Text,
                        UniqueConstraint,
                        false,
                        text,
)

metadata = MetaData()

hosts = Table(
    "hosts", metadata,
    Column("id", Integer, primary_key=True),
    Column("hostname", String(255), nullable=False),
    Column("arch", String(64), nullable=False),
    Column("cpu_model", String(255), nullable=False),
    Column("first_seen", DateTime(timezone=True), nullable=False),
    UniqueConstraint("hostname", "arch", "cpu_model",
                     name="uq_hosts_identity"),
)

runs = Table(
    "runs", metadata,
    Column("id", Integer, primary_key=True),
    Column("host_id", Integer, ForeignKey("hosts.id"), nullable=False),
    Column("suite", String(255), nullable=False),
    Column("suite_source", Text, nullable=False),
    Column("scale", Float, nullable=False),
    Column("status", String(32), nullable=False),
    Column("started_at", DateTime(timezone=True), nullable=False),
    Column("finished_at", DateTime(timezone=True)),
    Column("target", String(255), nullable=False),
    Column("kernel", String(255), nullable=False),
    Column("simulated", Boolean, nullable=False),
    # measured under CPU emulation (QEMU TCG): figures describe the emulator (0005_emulated)
    Column("emulated", Boolean, nullable=False, server_default=false()),
    Column("tool_versions", Text, nullable=False),
    Column("sysinfo", Text, nullable=False),
    Column("preflight", Text, nullable=False),
    Column("command_line", Text, nullable=False),
    Column("uid", String(64), nullable=False),
    Column("tags", Text, nullable=False, server_default="{}"),
    Column("source", Text, nullable=False, server_default="{}"),
    # why a run holds no evidence: a fleet board unreachable or failed (migration 0004_alert)
    Column("reason", Text),
    # the board it ran on: --board, the fleet inventory name, else the target's host
    Column("board", String(255), nullable=False, server_default=""),
    UniqueConstraint("uid", name="uq_runs_uid"),
)
Index("ix_runs_started_at", runs.c.started_at)
Index("ix_runs_host_id", runs.c.host_id)
Index("ix_runs_suite", runs.c.suite)
Index("ix_runs_kernel", runs.c.kernel)
Index("ix_runs_status", runs.c.status)
Index("ix_runs_board", runs.c.board)
# the check at ingest (0006_check_index): a board x suite's runs of one kernel, newest
# first, and its kernels from the index alone; the runs with tags (a tagged baseline)
Index("ix_runs_board_suite_kernel", runs.c.board, runs.c.suite, runs.c.simulated,
      runs.c.kernel, runs.c.started_at, runs.c.status, runs.c.id)
Index("ix_runs_tagged", runs.c.board, runs.c.suite, runs.c.simulated, runs.c.status,
      sqlite_where=text("tags != '{}'"), postgresql_where=text("tags != '{}'"))
# the matrix's marker of short runs reads only those (0007_cell_groups)
Index("ix_runs_short", runs.c.board, runs.c.suite, runs.c.kernel, runs.c.scale,
      sqlite_where=text("scale < 1"), postgresql_where=text("scale < 1"))

scenarios = Table(
    "scenarios", metadata,
    Column("id", Integer, primary_key=True),
    Column("run_id", Integer, ForeignKey("runs.id", ondelete="CASCADE"),
           nullable=False),
    Column("position", Integer, nullable=False),
    Column("name", String(255), nullable=False),
    Column("loads", Text, nullable=False),
    Column("load_cpus", String(255)),
    Column("measure_cpus", String(255)),
    Column("intensity", Text),
)
Index("ix_scenarios_run_id", scenarios.c.run_id)

measurements = Table(
    "measurements", metadata,
    Column("id", Integer, primary_key=True),
    Column("scenario_id", Integer,
           ForeignKey("scenarios.id", ondelete="CASCADE"), nullable=False),
    Column("position", Integer, nullable=False),
    Column("name", String(255), nullable=False),
    Column("test", String(64), nullable=False),
    Column("params", Text, nullable=False),
    Column("command", Text, nullable=False),
    Column("status", String(32), nullable=False),
    Column("exit_code", Integer),
    Column("reason", Text),
    Column("thresholds_ns", Text, nullable=False),
    Column("simulated", Boolean, nullable=False),
    Column("probe_version", String(64), nullable=False),
    Column("t0_unix_ns", BigInteger),
    Column("measured_ns", BigInteger),
    Column("elapsed_ns", BigInteger),
    Column("verdicts", Text, nullable=False),
    Column("data", Text, nullable=False),
    Column("start", Text, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
)
Index("ix_measurements_scenario_id", measurements.c.scenario_id)

series = Table(
    "series", metadata,
    Column("id", Integer, primary_key=True),
    Column("measurement_id", Integer,
           ForeignKey("measurements.id", ondelete="CASCADE"), nullable=False),
    Column("series_index", Integer, nullable=False),
    Column("label", String(255), nullable=False),
    Column("cpu", Integer),
    Column("count", BigInteger, nullable=False),
    Column("min_ns", BigInteger),
    Column("max_ns", BigInteger),
    Column("sum_ns", BigInteger, nullable=False),
    Column("overruns", BigInteger, nullable=False),
    Column("early", BigInteger, nullable=False),
    Column("exceed", Text, nullable=False),
    Column("worst", Text, nullable=False),
    Column("warmup", Text, nullable=False),
    Column("spikes_dropped", BigInteger, nullable=False),
    Column("raw_dropped", BigInteger, nullable=False),
    Column("error", Text),
    UniqueConstraint("measurement_id", "series_index",
                     name="uq_series_measurement_index"),
)

hist_buckets = Table(
    "hist_buckets", metadata,
    Column("measurement_id", Integer,
           ForeignKey("measurements.id", ondelete="CASCADE"),
           primary_key=True),
    Column("series_index", Integer, primary_key=True),
    Column("bucket", Integer, primary_key=True),
    Column("count", BigInteger, nullable=False),
)

windows = Table(
    "windows", metadata,
    Column("measurement_id", Integer,
           ForeignKey("measurements.id", ondelete="CASCADE"),
           primary_key=True),
    Column("series_index", Integer, primary_key=True),
    Column("window_index", Integer, primary_key=True),
    Column("warmup", Boolean, nullable=False),
    Column("start_ns", BigInteger, nullable=False),
    Column("end_ns", BigInteger, nullable=False),
    Column("count", BigInteger, nullable=False),
    Column("min_ns", BigInteger),
    Column("max_ns", BigInteger),
    Column("sum_ns", BigInteger, nullable=False),
    Column("overruns", BigInteger, nullable=False),
    Column("early", BigInteger, nullable=False),
    Column("exceed", Text, nullable=False),
    Column("hist", Text, nullable=False),
)

spikes = Table(
    "spikes", metadata,
    Column("id", Integer, primary_key=True),
    Column("measurement_id", Integer,
           ForeignKey("measurements.id", ondelete="CASCADE"), nullable=False),
    Column("series_index", Integer, nullable=False),
    Column("t_ns", BigInteger, nullable=False),
    Column("latency_ns", BigInteger, nullable=False),
    Column("threshold_ns", BigInteger, nullable=False),
)
Index("ix_spikes_measurement_id", spikes.c.measurement_id)

# a measurement's long arrays of numbers (data's tool_hist, tool_values_us, times_s ...)
# stored apart from its data, whose JSON holds null in their place: the elements'
# JSON text (no brackets), PIECE at a time (migration 0008_data_columns; datacolumns.py)
data_columns = Table(
    "data_columns", metadata,
    Column("measurement_id", Integer,
           ForeignKey("measurements.id", ondelete="CASCADE"), primary_key=True),
    Column("column_index", Integer, primary_key=True),
    Column("piece", Integer, primary_key=True),
    Column("path", Text, nullable=False),  # JSON: the keys and indices from data to it
    Column("body", Text, nullable=False),
)

# the `trace` records of a measurement's spikes (rtprobe --trace, or imported), each
# kept whole as its JSON text; series_index/t_ns/latency_ns link it to its spike
trace_spikes = Table(
    "trace_spikes", metadata,
    Column("id", Integer, primary_key=True),
    Column("measurement_id", Integer,
           ForeignKey("measurements.id", ondelete="CASCADE"), nullable=False),
    Column("series_index", Integer),
    Column("t_ns", BigInteger),
    Column("latency_ns", BigInteger),
    Column("record", Text, nullable=False),
)
Index("ix_trace_spikes_measurement_id", trace_spikes.c.measurement_id)

# the `trace_summary` record of a measurement (events enabled/missing, counts), as JSON
trace_info = Table(
    "trace_info", metadata,
    Column("measurement_id", Integer,
           ForeignKey("measurements.id", ondelete="CASCADE"), primary_key=True),
    Column("info", Text, nullable=False),
)

# upload tokens of `rtbench serve`: only the SHA-256 of each token is kept
tokens = Table(
    "tokens", metadata,
    Column("id", Integer, primary_key=True),
    Column("name", String(255), nullable=False),
    Column("token_sha256", String(64), nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("revoked_at", DateTime(timezone=True)),
    Column("last_used_at", DateTime(timezone=True)),
    # read, upload or admin (migration 0004_ops; tokens made before it are upload)
    Column("scope", String(16), nullable=False, server_default="upload"),
    UniqueConstraint("name", name="uq_tokens_name"),
    UniqueConstraint("token_sha256", name="uq_tokens_sha256"),
)

# login sessions of `rtbench serve`: the cookie holds a random session id, only its
# SHA-256 is kept; a session ends at expires_at or when its token is revoked
sessions = Table(
    "sessions", metadata,
    Column("id", Integer, primary_key=True),
    Column("session_sha256", String(64), nullable=False),
    Column("token_id", Integer, ForeignKey("tokens.id", ondelete="CASCADE"),
           nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("expires_at", DateTime(timezone=True), nullable=False),
    UniqueConstraint("session_sha256", name="uq_sessions_sha256"),
)
Index("ix_sessions_token_id", sessions.c.token_id)
# the regression board (migration 0004_alert): each new run of a board x cell checked
# against that board's baseline with the regression gate, one row per cell and metric
regressions = Table(
    "regressions", metadata,
    Column("id", Integer, primary_key=True),
    Column("run_id", Integer, ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
    Column("board", String(255), nullable=False),
    Column("suite", String(255), nullable=False),
    Column("kernel", String(255), nullable=False),
    Column("cell", String(1024), nullable=False),
    Column("metric", String(32), nullable=False),
    Column("outcome", String(32), nullable=False),
    Column("reason", Text, nullable=False),
    Column("baseline_kind", String(32), nullable=False),
    Column("baseline_kernel", String(255)),
    Column("baseline_runs", Text, nullable=False),
    Column("baseline_value", Float),
    Column("value", Float),
    Column("rel", Float),
    Column("started_at", DateTime(timezone=True), nullable=False),
    Column("checked_at", DateTime(timezone=True), nullable=False),
)
Index("ix_regressions_run_id", regressions.c.run_id)
Index("ix_regressions_board_outcome", regressions.c.board, regressions.c.outcome)
Index("ix_regressions_outcome_started", regressions.c.outcome, regressions.c.started_at)

# webhook deliveries of `rtbench serve --webhook` (migration 0004_alert)
webhook_deliveries = Table(
    "webhook_deliveries", metadata,
    Column("id", Integer, primary_key=True),
    Column("event", String(64), nullable=False),
    Column("url", Text, nullable=False),
    Column("body", Text, nullable=False),
    Column("status", String(32), nullable=False),
    Column("attempts", Integer, nullable=False),
    Column("last_code", Integer),
    Column("last_error", Text),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("finished_at", DateTime(timezone=True)),
)
Index("ix_webhook_deliveries_status", webhook_deliveries.c.status)

# one summary row per run x cell (scenario, measurement, series label), written in the
# transaction that stores the measurement: the matrix, history and regression pages
# read these instead of histograms (rtbench/store/cells.py computes them)
run_cells = Table(
    "run_cells", metadata,
    Column("id", Integer, primary_key=True),
    Column("run_id", Integer, ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
    Column("measurement_id", Integer,
           ForeignKey("measurements.id", ondelete="CASCADE"), nullable=False),
    Column("board", String(255), nullable=False),
    Column("suite", String(255), nullable=False),
    Column("kernel", String(255), nullable=False),
    Column("started_at", DateTime(timezone=True), nullable=False),
    Column("simulated", Boolean, nullable=False),
    Column("policy", String(32)),  # rtprobe's achieved policy (fifo, rr, other ...); NULL unknown
    Column("scenario", String(255), nullable=False),
    Column("measurement", String(255), nullable=False),
    Column("test", String(64), nullable=False),
    Column("series_label", String(255), nullable=False),
    Column("count", BigInteger, nullable=False),
    Column("max_ns", BigInteger),
    Column("p99_ns", BigInteger),
    Column("p999_ns", BigInteger),
    Column("measured_ns", BigInteger),
    Column("exceed", Text, nullable=False),  # JSON [[threshold_ns, samples above], ...]
    Column("threshold_ns", BigInteger),  # the smallest threshold (NULL: none)
    Column("above_threshold", BigInteger),  # samples above it (NULL: no threshold)
    Column("overruns", BigInteger, nullable=False),
)
Index("ix_run_cells_board_suite", run_cells.c.board, run_cells.c.suite,
      run_cells.c.started_at)
Index("ix_run_cells_run_id", run_cells.c.run_id)
Index("ix_run_cells_measurement_id", run_cells.c.measurement_id)
Index("ix_run_cells_matrix", run_cells.c.simulated, run_cells.c.board, run_cells.c.kernel,
      run_cells.c.suite)
# GET /metrics: the newest run per board x suite, read from the index alone (0004_ops)
Index("ix_run_cells_latest", run_cells.c.simulated, run_cells.c.board, run_cells.c.suite,
      run_cells.c.started_at)

# the matrix's aggregate of run_cells per board x kernel x suite x simulated x emulated,
# kept in the transaction that writes or deletes the cells (rtbench/store/cellgroups.py)
# so that the matrix and the boards list read tens of rows, not every run's cells
cell_groups = Table(
    "cell_groups", metadata,
    Column("board", String(255), primary_key=True),
    Column("kernel", String(255), primary_key=True),
    Column("suite", String(255), primary_key=True),
    Column("simulated", Boolean, primary_key=True),
    Column("emulated", Boolean, primary_key=True),
    Column("runs", Integer, nullable=False),  # runs with a cell in the group
    Column("newest_run_id", Integer, nullable=False),
    Column("worst_max_ns", BigInteger),
    Column("worst_p999_ns", BigInteger),
    Column("over_cells", Integer, nullable=False),  # cells whose max is above their threshold
    Column("under_cells", Integer, nullable=False),  # cells with a threshold and max at or below
    Column("unknown_cells", Integer, nullable=False),  # cells with a threshold but no max
    Column("threshold_ns", BigInteger),  # the smallest threshold
)
