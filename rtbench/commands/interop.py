"""`rtbench import` and `rtbench export`: other tools' files in, CI formats out.

Both are driven by the registry in rtbench/interop/base.py: a format is one module
in rtbench/interop/.  Import reads and checks every file before it stores anything;
each run is then stored whole in one transaction (Store.add_bundle), identified by
the file's sha256 and the run's index in it, so importing a file twice stores it once.
"""

from __future__ import annotations

import hashlib
import os
import stat
import sys
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, NoReturn

import click

from rtbench import EXIT_USAGE
from rtbench.bundle import RunDetail, board_of, start_problem
from rtbench.commands._common import (
    BOARD_HELP,
    DB_HELP,
    check_board,
    fail,
    handle_errors,
    open_store,
    path_error,
)
from rtbench.core.readlimit import IMPORT_MAX_BYTES, IMPORT_TOTAL_MAX_BYTES
from rtbench.core.stdoutcheck import write_stdout_bytes
from rtbench.interop._build import mark_partial, run_uid

HEAD_BYTES = 4096


def resolve_run(store: Any, text: str) -> int:
    """The id of the one stored run text names (an id, latest, latest~N or a selector
    matching one run, as every command takes); exit 2 otherwise."""
    from rtbench.commands._runs import stored_id

    return stored_id(store, text)


def _too_large(label: str) -> NoReturn:
    """Exit 2: label is over the bound of one imported file."""
    fail(_one_line(f"{label}: larger than {IMPORT_MAX_BYTES >> 20} MiB, the most one import "
                   "reads from a file; import the tool's summary (cyclictest -h or --json) "
                   "or split the file"), EXIT_USAGE)


def _read_input(name: str) -> tuple[bytes, str]:
    """The bytes of a file (or stdin for "-") and the name to show; a file over
    IMPORT_MAX_BYTES is refused (a regular file by its size, before it is read)."""
    if name == "-":
        data = sys.stdin.buffer.read(IMPORT_MAX_BYTES + 1)
        if len(data) > IMPORT_MAX_BYTES:
            _too_large("<stdin>")
        return data, "<stdin>"
    try:
        with open(name, "rb") as handle:
            info = os.fstat(handle.fileno())
            if stat.S_ISREG(info.st_mode) and info.st_size > IMPORT_MAX_BYTES:
                _too_large(name)
            data = handle.read(IMPORT_MAX_BYTES + 1)
    except OSError as exc:
        fail(_one_line(f"{name}: cannot read ({exc.strerror})"), EXIT_USAGE)
    if len(data) > IMPORT_MAX_BYTES:
        _too_large(name)
    return data, name


def read_file_runs(name: str, fmt: str | None, partial: bool = False
                   ) -> tuple[str, Any, list[RunDetail], int]:
    """(label, importer, runs, bytes read) of one file (or "-"), as `rtbench import`
    reads it: a regular file whose importer reads a path (rtbench's own JSON) is read by
    it a chunk at a time, any other whole (exit 2 on a bad file, as read_runs)."""
    if name != "-":
        try:
            with open(name, "rb") as handle:
                info = os.fstat(handle.fileno())
                head = handle.read(HEAD_BYTES) if stat.S_ISREG(info.st_mode) else None
        except OSError as exc:
            fail(_one_line(f"{name}: cannot read ({exc.strerror})"), EXIT_USAGE)
        if head is not None:
            if info.st_size > IMPORT_MAX_BYTES:
                _too_large(name)
            importer = _pick_importer(head, name, fmt)
            if hasattr(importer, "read_path"):
                return name, importer, read_runs(None, name, importer, partial), \
                    info.st_size
    data, label = _read_input(name)
    importer = _pick_importer(data, label, fmt)
    return label, importer, read_runs(data, label, importer, partial), len(data)


def _pick_importer(data: bytes, label: str, forced: str | None) -> Any:
    """The importer named by --format, else the first whose detect() accepts the file."""
    from rtbench.interop.base import importers

    found = importers()
    if forced is not None:
        if forced not in found:
            fail(f"--format {forced!r}: unknown; one of {', '.join(sorted(found))}",
                 EXIT_USAGE)
        return found[forced]
    head = data[:HEAD_BYTES]
    base = os.path.basename(label)
    for importer in found.values():
        if importer.detect(head, base):
            return importer
    fail(f"{label}: format not recognised; name it with --format "
         f"(one of {', '.join(sorted(found))})", EXIT_USAGE)


def read_runs(data: bytes | None, label: str, importer: Any, partial: bool = False
              ) -> list[RunDetail]:
    """The runs of one file, each with its source and uid; exit 2 on a bad file (an
    incomplete one is kept with status 'partial' and the reason when partial).  data
    None: the importer reads the file named label itself (read_path, not held whole:
    only rtbench's own JSON, whose runs keep their uid and source)."""
    from rtbench.interop.base import ImportFormatError, IncompleteOutput

    if data is not None and len(data) > IMPORT_MAX_BYTES:
        _too_large(label)
    try:
        runs: list[RunDetail] = importer.read(data, os.path.basename(label)) \
            if data is not None else importer.read_path(label, os.path.basename(label))
    except IncompleteOutput as exc:
        if not partial:
            fail(_one_line(f"{exc}; --partial stores it as a partial run"), EXIT_USAGE)
        runs = exc.runs
        for run in runs:
            mark_partial(run, _one_line(str(exc)))
    except ImportFormatError as exc:
        fail(_one_line(str(exc)), EXIT_USAGE)
    except (ValueError, TypeError, KeyError, IndexError, OverflowError,
            RecursionError, AttributeError) as exc:
        fail(_one_line(f"{label}: cannot read as {importer.name} "
                       f"({type(exc).__name__}: {exc})"), EXIT_USAGE)
    if not runs:
        fail(f"{label}: no run found in it as {importer.name}", EXIT_USAGE)
    if data is None:
        return runs
    sha = hashlib.sha256(data).hexdigest()
    for index, run in enumerate(runs):
        if importer.name == "json":
            continue  # rtbench's own form keeps its uid and source: an exact round trip
        run.source = {**run.source, "format": importer.name,
                      "file": os.path.basename(label), "sha256": sha}
        run.uid = run_uid(sha, index)
        if run.source.get("started_at") == "unknown":
            run.started_at = _file_time(label)
            run.source["started_at"] = "file modification time" if label != "<stdin>" \
                else "import time"
    return runs


def _check_fits(batches: list[tuple[str, str, list[RunDetail]]]) -> None:
    """Exit 2 naming the file of a run the database would refuse (a kernel string too
    long, a NUL): checked before the database is opened, so a refused import neither
    creates a database nor leaves anything behind."""
    from rtbench.store import RUN_STATUSES
    from rtbench.store.checks import BundleRejected, check_bundle

    for label, _, runs in batches:
        for run in runs:
            try:
                check_bundle(run, RUN_STATUSES)
            except BundleRejected as exc:
                fail(_one_line(f"{label}: cannot be stored: {exc}"), EXIT_USAGE)


def _file_time(label: str) -> datetime:
    """The file's modification time (now for stdin), for files that state no time."""
    if label != "<stdin>":
        try:
            return datetime.fromtimestamp(os.stat(label).st_mtime, timezone.utc)
        except OSError:
            pass
    return datetime.now(timezone.utc)


def _one_line(text: str) -> str:
    """text on one line, without control characters, at most 300 characters."""
    flat = " ".join(text.split())
    clean = "".join(ch for ch in flat if ch.isprintable())
    return clean[:300]


def _parse_tags(values: tuple[str, ...]) -> dict[str, str]:
    """--tag k=v options as a dict."""
    tags: dict[str, str] = {}
    for value in values:
        key, sep, val = value.partition("=")
        if not sep or not key.strip():
            fail(f"--tag {value!r}: expected KEY=VALUE", EXIT_USAGE)
        tags[key.strip()] = val.strip()
    return tags


def write_atomic(path: Path, data: bytes) -> None:
    """Write data to path through a temporary file in the same directory and rename."""
    from rtbench.util.atomicfile import write_atomic as write_whole

    try:
        write_whole(path, data)
    except OSError as exc:
        path_error("cannot write", path, exc)


def print_formats(registry: dict[str, Any]) -> None:
    """The formats of an import or export registry as a table that fits the terminal."""
    from rtbench.commands._common import make_console
    from rtbench.report.layout import Column, FittedTable
    from rtbench.report.text import for_terminal

    rows: list[list[Any]] = [[for_terminal(name), for_terminal(entry.summary)]
                             for name, entry in sorted(registry.items())]
    make_console().print(FittedTable([Column("format", "left"), Column("what it reads "
                                      "or writes", "left", True)], rows))


def register(main: click.Group) -> None:
    """Add `import` and `export` to the CLI."""

    @main.command(name="import")
    @click.argument("files", nargs=-1, metavar="FILE...|-")
    @click.option("--format", "fmt", metavar="F",
                  help="Read every file as this format (default: detected from content).")
    @click.option("--host", "host", metavar="NAME", help="Host name to store the runs under.")
    @click.option("--kernel", "kernel", metavar="K", help="Kernel release to store.")
    @click.option("--board", "board", metavar="NAME", help=BOARD_HELP)
    @click.option("--tag", "tags", multiple=True, metavar="K=V",
                  help="Label the imported runs (repeatable).")
    @click.option("--partial", is_flag=True,
                  help="Store an output cut before its end as a 'partial' run (with the "
                       "reason) instead of refusing it.")
    @click.option("--db", "db_url", metavar="URL", help=DB_HELP)
    @handle_errors
    def import_cmd(files: tuple[str, ...], fmt: str | None, host: str | None,
                   kernel: str | None, board: str | None, tags: tuple[str, ...],
                   partial: bool, db_url: str | None) -> None:
        """Store the runs in files other tools wrote (or rtbench's JSON export).

        The format is detected from the content; `--format` forces one.  Every file
        is read and checked before anything is stored; a file imported twice is
        stored once.  Formats: see docs/import-export.md or `--format help`.

        \b
        Examples:
          cyclictest -m -p80 -t1 -i1000 -l10000 --json=ct.json && rtbench import ct.json
          rtbench import --host board1 --tag lab=a oslat.txt hackbench.log
          rtbench export 3 --format json | rtbench import - --db sqlite:////tmp/b.db
        """
        from rtbench.interop.base import importers

        if fmt == "help":
            print_formats(importers())
            return
        if not files:
            fail("give at least one FILE (or - for stdin)", EXIT_USAGE)
        extra_tags = _parse_tags(tags)
        check_board(board)
        if files.count("-") > 1:
            fail("'-' (stdin) can be given once", EXIT_USAGE)
        batches: list[tuple[str, str, list[RunDetail]]] = []
        total_bytes = 0
        for name in files:
            # the runs are what is kept: not the file too while storing
            label, importer, runs, size = read_file_runs(name, fmt, partial)
            total_bytes += size
            if total_bytes > IMPORT_TOTAL_MAX_BYTES:
                fail(_one_line(f"{label}: the files of one import add up to more than "
                               f"{IMPORT_TOTAL_MAX_BYTES >> 20} MiB; import them in several "
                               "commands"), EXIT_USAGE)
            now = datetime.now(timezone.utc)
            for index, run in enumerate(runs):
                problem = start_problem(run.started_at, now)
                if problem is not None:
                    where = f"run {index + 1} of {label}" if len(runs) > 1 else label
                    fail(_one_line(f"{where}: {problem}; nothing was stored"), EXIT_USAGE)
            for run in runs:
                if host:
                    if run.board in ("", board_of(run.target, run.hostname)):
                        run.board = board_of(run.target, host)  # it followed the host
                    run.hostname = host
                if board:
                    run.board = board
                if kernel:
                    run.kernel = kernel
                run.tags = {**run.tags, **extra_tags}
            batches.append((label, importer.name, runs))
        _check_fits(batches)
        from rtbench.regress.board import RunCache, check_stored_run

        store = open_store(db_url)
        # one cache for the batch: runs of one board share (and become) each other's baseline
        cache = RunCache(store)
        try:
            for label, name, runs in batches:
                for run in runs:
                    run_id, created = store.add_bundle(run)
                    if created:
                        # its row as stored, its scenarios as imported (the store keeps
                        # them as given): reading them back would hold a long tool
                        # histogram's text again
                        stored = store.get_run(run_id, parts={})
                        cache.put(replace(stored, scenarios=run.scenarios))
                        check_stored_run(store, run_id, cache)
                    state = "stored" if created else "already stored"
                    click.echo(f"{_one_line(label)}: run {run_id} ({name}, {state})")
                    if run.status == "partial":
                        reason = _one_line(str(run.source.get("partial", "")))
                        click.echo(f"{_one_line(label)}: run {run_id} is partial, it passes "
                                   f"nothing: {reason}", err=True)
        finally:
            store.close()

    @main.command(name="export")
    @click.argument("run_ref", metavar="RUN", required=False)
    @click.option("--format", "fmt", required=True, metavar="F",
                  help="Output format (`--format help` lists them).")
    @click.option("-o", "--output", "output", type=click.Path(dir_okay=False, path_type=Path),
                  help="File to write (default: stdout).")
    @click.option("--kcidb-origin", "kcidb_origin", metavar="NAME",
                  help="KCIDB origin of the submitted objects (default: "
                       "$RTBENCH_KCIDB_ORIGIN, else rtbench).")
    @click.option("--board", "board", metavar="NAME",
                  help="openmetrics-history: only this board's runs.")
    @click.option("--suite", "suite", metavar="NAME",
                  help="openmetrics-history: only this suite's runs.")
    @click.option("--since", "since", metavar="YYYY-MM-DD",
                  help="openmetrics-history: only runs started on or after this day (UTC).")
    @click.option("--db", "db_url", metavar="URL", help=DB_HELP)
    @handle_errors
    def export_cmd(run_ref: str | None, fmt: str, output: Path | None,
                   kcidb_origin: str | None, board: str | None, suite: str | None,
                   since: str | None, db_url: str | None) -> None:
        """Write a stored run in another format (JUnit, LAVA, KCIDB, OpenMetrics, ...).

        `--format openmetrics-history` writes every stored run's figures instead, as
        timestamped OpenMetrics for `promtool tsdb create-blocks-from openmetrics`.

        \b
        Examples:
          rtbench export 3 --format junit -o rtbench-junit.xml
          rtbench export 3 --format lava          # lava-test-case lines
          rtbench export 3 --format kcidb --kcidb-origin mylab
          rtbench export 3 --format json | rtbench import - --db sqlite:////tmp/b.db
          rtbench export --format openmetrics-history -o lab.om
          promtool tsdb create-blocks-from openmetrics lab.om /var/lib/prometheus/metrics2
        """
        from rtbench.interop.base import ExportFormatError, exporters
        from rtbench.interop.openmetrics import HISTORY_FORMAT
        from rtbench.store import RunNotFound

        found = exporters()
        if fmt == "help":
            print_formats({**found, HISTORY_FORMAT: _HistoryFormat()})
            return
        if fmt == HISTORY_FORMAT:
            if run_ref is not None:
                fail(f"--format {HISTORY_FORMAT} writes every stored run; give no RUN (narrow "
                     "it with --board, --suite, --since)", EXIT_USAGE)
            _write(output, _history(db_url, board, suite, since))
            return
        if board is not None or suite is not None or since is not None:
            fail(f"--board, --suite and --since select runs for --format {HISTORY_FORMAT} "
                 "only; give the RUN to export", EXIT_USAGE)
        if kcidb_origin is not None and fmt != "kcidb":
            fail("--kcidb-origin applies to --format kcidb only", EXIT_USAGE)
        if run_ref is None:
            fail("give the RUN to export (an id or a selector; `rtbench ls` lists them)",
                 EXIT_USAGE)
        if fmt not in found:
            fail(f"--format {fmt!r}: unknown; one of "
                 f"{', '.join(sorted([*found, HISTORY_FORMAT]))}", EXIT_USAGE)
        store = open_store(db_url, reading=True)
        try:
            run_id = resolve_run(store, run_ref)
            try:
                run = store.get_run(run_id)
            except RunNotFound as exc:
                fail(str(exc), EXIT_USAGE)
        finally:
            store.close()
        try:
            if fmt == "kcidb":
                from rtbench.interop.kcidb import export_with_origin

                data = export_with_origin(run, kcidb_origin, os.environ)
            else:
                data = found[fmt].export(run)
        except ExportFormatError as exc:
            fail(_one_line(str(exc)), EXIT_USAGE)
        _write(output, data)


class _HistoryFormat:
    """The openmetrics-history entry of `--format help` (not a per-run exporter)."""

    summary = ("every stored run's figures as timestamped OpenMetrics, for promtool "
               "tsdb create-blocks-from openmetrics (give no RUN)")


def _write(output: Path | None, data: bytes) -> None:
    """data to stdout, or atomically to output."""
    if output is None:
        write_stdout_bytes(data)
    else:
        write_atomic(output, data)


def _history(db_url: str | None, board: str | None, suite: str | None,
             since: str | None) -> bytes:
    """The timestamped OpenMetrics of the stored real runs (those selected)."""
    from rtbench.interop.openmetrics import history_text
    from rtbench.store.cells import CellFilter, read_cells

    start: datetime | None = None
    if since is not None:
        try:
            start = datetime.strptime(since, "%Y-%m-%d").replace(tzinfo=timezone.utc)
        except ValueError:
            fail(f"--since {since!r}: expected a day as YYYY-MM-DD", EXIT_USAGE)
    store = open_store(db_url, reading=True)
    try:
        with store.transaction("read the stored cell summaries") as conn:
            rows = read_cells(conn, CellFilter(board=board, suite=suite, since=start))
    finally:
        store.close()
    return history_text(rows).encode()
