"""`rtbench cyclictest [cyclictest options]`: cyclictest's command line, rtprobe's measurement.

Scripts that call `cyclictest -p80 -t1 -n -i1000 -l10000` keep working: the options
of rt-tests 2.x (and the deprecated ones scripts still pass) are mapped onto
`rtprobe cyclic`, the output is what cyclictest prints (`T:` summary lines with the
measuring threads' ids, the `-h` histogram block, `-v` samples, the `--json` file).
The measurement is a one-test suite run by the runner, as `rtbench run` runs one (same
owner tracking, retries, recovery file and lost-connection handling), on any target.
The run is stored with the tag adhoc=cyclictest, which `latest` and selectors skip
unless they name it; `--no-store` keeps nothing.  Where the meaning differs it says so
once on stderr; an option it cannot honour is refused by name (exit 2).
"""

from __future__ import annotations

import shlex
import sys
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

from rtbench import EXIT_ENV, EXIT_USAGE
from rtbench.analysis.select import ADHOC_TAG as SELECT_ADHOC_TAG
from rtbench.commands._common import (
    BOARD_HELP,
    DB_HELP,
    PROBE_HELP,
    TargetOption,
    check_board,
    fail,
    handle_errors,
    keep_recovery,
    open_store,
    open_target,
)
from rtbench.commands._cyclictest_args import (
    NOTE,
    CyclictestOptions,
    CyclictestUsage,
    ProbePlan,
    histogram_block,
    json_document,
    parse_cyclictest_args,
    plan_probe,
    summary_lines,
    unit,
)
from rtbench.core.readlimit import InputTooLarge, read_limited
from rtbench.interop.rttestsjson import document_text
from rtbench.rtprobe.wire.raw import parse_raw

if TYPE_CHECKING:
    from rtbench.rtprobe.wire.records import ProbeOutput
    from rtbench.suites.model import Suite
    from rtbench.targets.base import Target

# the tag the runs of this front end carry; `latest` and selectors skip such runs
# unless they name the tag (rtbench.analysis.select)
ADHOC_TAG = (SELECT_ADHOC_TAG, "cyclictest")
# bytes of od's hex output per second a target's shell is given to print the raw file
RAW_FETCH_BYTES_PER_S = 20_000
# the samples file rtbench reads back (24 bytes a sample), and the part fetched at once
RAW_MAX_BYTES = 64 << 20
RAW_FETCH_PART_BYTES = 4 << 20


def _write_text(path: str, text: str) -> None:
    """Write text to path atomically (temp file and rename)."""
    from rtbench.commands.interop import write_atomic

    write_atomic(Path(path), text.encode())


def register(main: click.Group) -> None:
    """Add `cyclictest` to the CLI."""

    @main.command(name="cyclictest", context_settings={
        "ignore_unknown_options": True, "allow_extra_args": True,
        "help_option_names": ["--help"]})
    @click.option("--db", "db_url", metavar="URL", help=DB_HELP)
    @click.option("--no-store", is_flag=True,
                  help="Keep nothing: the run is measured and printed, not stored.")
    @click.option("--target", "target_uri", metavar="URI", cls=TargetOption)
    @click.option("--board", "board", metavar="NAME", help=BOARD_HELP)
    @click.option("--probe", "probe_path", metavar="PATH", help=PROBE_HELP)
    @click.argument("cyclictest_args", nargs=-1, type=click.UNPROCESSED)
    @handle_errors
    def cyclictest_cmd(db_url: str | None, no_store: bool, target_uri: str | None,
                       board: str | None, probe_path: str | None,
                       cyclictest_args: tuple[str, ...]) -> None:
        """Run cyclictest's command line with rtprobe; print and store what it measured.

        Takes rt-tests 2.x cyclictest options (-p -t -a -i -l -D -h -H --histfile -q -v
        -N -m -n -b -c -r -x -S --json --policy --latency --default-system) and prints
        what cyclictest prints: the T: summary lines, the -h histogram block, -v samples
        and the --json file.  Options it cannot honour are refused by name (exit 2).
        The run is stored tagged adhoc=cyclictest (`latest` skips it; name it by id or
        with the selector adhoc=cyclictest), or not at all with --no-store.

        \b
        Examples:
          rtbench cyclictest -p80 -t1 -n -i1000 -l10000
          rtbench cyclictest -m -p 90 -t -a -q -D 10m -h 400 --json=ct.json
          rtbench cyclictest -p80 -t -l 100000 --target ssh://root@board --no-store
        """
        argv = list(cyclictest_args)
        check_board(board)
        if no_store and db_url is not None:
            fail("--no-store and --db contradict each other; give one of them", EXIT_USAGE)
        try:
            opts = parse_cyclictest_args(argv)
        except CyclictestUsage as exc:
            fail(str(exc), EXIT_USAGE)
        with open_target(target_uri, probe_path) as target:
            run_on(target, opts, argv, db_url, no_store, board)


def run_on(target: Target, opts: CyclictestOptions, argv: list[str], db_url: str | None,
           no_store: bool, board: str | None = None) -> None:
    """Plan, run through the runner, print cyclictest's output, exit with the run's code."""
    from rtbench.run.checks import allowed_cpus
    from rtbench.run.events import MeasurementDone
    from rtbench.run.runner import Runner
    from rtbench.run.save import MeasurementNotStored

    measured: list[MeasurementDone] = []

    def on_event(event: object) -> None:
        """Keep the measurement's records for printing."""
        if isinstance(event, MeasurementDone):
            measured.append(event)

    # cyclictest's own exit codes: its command line defines no scenario, so a busy
    # machine does not make it exit 6 (the stored verdict still says so)
    runner = Runner(target, on_event=on_event, tags=dict([ADHOC_TAG]),
                    source={"tool": "rtbench", "front_end": "cyclictest", "argv": argv},
                    board=board, accept_undefined=True)
    try:
        plan = plan_probe(opts, sorted(allowed_cpus(runner.sysinfo())))
    except CyclictestUsage as exc:
        fail(str(exc), EXIT_USAGE)
    with raw_file(target, plan.need_raw) as raw_path:
        suite = one_test_suite(plan, argv, raw_path)
        runner.validate(suite)
        # wrapped to the terminal's width (the T: lines below keep cyclictest's layout)
        from rtbench.report.console import make_console as console_on

        console_on(sys.stderr).print(NOTE, markup=False, highlight=False)
        started = datetime.now(timezone.utc)
        with store_for(db_url, no_store) as store:
            try:
                outcome = runner.run(suite, store, sys.argv)
            except MeasurementNotStored as exc:
                keep_recovery(exc)
        ended = datetime.now(timezone.utc)
        output = measured[-1].output if measured else None
        if output is None or output.result is None:
            why = (outcome.messages or [f"rtprobe ended without a result ({outcome.status})"])
            fail(why[-1], outcome.exit_code or EXIT_ENV)
        samples = fetch_raw(target, raw_path) if raw_path is not None else {}
    print_output(plan, argv, output, samples, runner.sysinfo(), started, ended,
                 outcome.exit_code)
    if no_store:
        click.echo(f"rtbench: run not stored (--no-store; {outcome.status})", err=True)
    else:
        click.echo(f"rtbench: run {outcome.run_id} stored ({outcome.status}; tagged "
                   f"{ADHOC_TAG[0]}={ADHOC_TAG[1]})", err=True)
    sys.exit(outcome.exit_code)


def one_test_suite(plan: ProbePlan, argv: list[str], raw_path: str | None) -> Suite:
    """The suite of one scenario (no loads, no settling) and one cyclic test whose rtprobe
    arguments are the plan's."""
    from rtbench.run.runner import FixedArgsTest
    from rtbench.suites.model import Scenario, Suite

    args = list(plan.args) + (["--raw", raw_path] if raw_path is not None else [])
    policy = args[args.index("--policy") + 1] if "--policy" in args else "other"
    duration_ns = plan.expected_ns
    test = FixedArgsTest(name="cyclictest", test="cyclic", duration_ns=duration_ns,
                         warmup_ns=0, params={"policy": policy, "priority": plan.priority},
                         args=tuple(args))
    return Suite(name="cyclictest", description="rtbench cyclictest " + " ".join(argv),
                 source="rtbench cyclictest", scale=1.0,
                 scenarios=(Scenario(name="cyclictest", settle_ns=0),), tests=(test,),
                 text=" ".join(["rtbench", "cyclictest", *[shlex.quote(a) for a in argv]]))


@contextmanager
def store_for(db_url: str | None, no_store: bool) -> Iterator[Any]:
    """The results database, or with --no-store a private one deleted afterwards."""
    if not no_store:
        store = open_store(db_url)
        try:
            yield store
        finally:
            store.close()
        return
    from rtbench.store import Store

    with tempfile.TemporaryDirectory(prefix="rtbench-cyclictest-") as tmp:
        store = Store.open(f"sqlite:///{Path(tmp) / 'scratch.db'}")
        try:
            yield store
        finally:
            store.close()


@contextmanager
def raw_file(target: Target, needed: bool) -> Iterator[str | None]:
    """Where rtprobe writes every sample (-h, -H, -v), on the target: a private temporary
    directory on this machine, a unique /tmp name elsewhere (removed afterwards)."""
    if not needed:
        yield None
        return
    if target.name == "local":
        with tempfile.TemporaryDirectory(prefix="rtbench-cyclictest-") as tmp:
            yield str(Path(tmp) / "raw.bin")
        return
    path = f"/tmp/rtbench-cyclictest-{uuid.uuid4().hex}.raw"
    try:
        yield path
    finally:
        from rtbench.targets import TargetError

        # a target that is gone keeps the file: nothing can be removed there
        with suppress(TargetError):
            target.run(f"rm -f {shlex.quote(path)}", timeout_s=30.0)


def fetch_raw(target: Target, path: str) -> dict[int, list[int]]:
    """The samples of the raw file on the target (empty when rtprobe wrote none)."""
    if target.name == "local":
        raw = Path(path)
        if not raw.exists():
            return {}
        try:
            return parse_raw(read_limited(raw, RAW_MAX_BYTES))
        except InputTooLarge:
            _raw_too_large(path, target.name)
    size = target.run(f"wc -c < {shlex.quote(path)}", timeout_s=30.0)
    if size.returncode != 0 or not size.stdout.strip().isdigit():
        return {}
    total = int(size.stdout.strip())
    if total > RAW_MAX_BYTES:
        _raw_too_large(path, target.name)
    parts: list[bytes] = []
    for offset in range(0, total, RAW_FETCH_PART_BYTES):
        # in parts: od prints about 3.1 characters a byte, and a target's run() keeps at
        # most 16 MiB of a command's output
        length = min(RAW_FETCH_PART_BYTES, total - offset)
        timeout_s = 30.0 + 3 * length / RAW_FETCH_BYTES_PER_S
        done = target.run(f"od -A n -v -t x1 -j {offset} -N {length} {shlex.quote(path)}",
                          timeout_s=timeout_s)
        if done.returncode != 0:
            fail(f"cannot read the samples file {path} on target {target.name}: "
                 f"{(done.stderr.strip().splitlines() or ['od failed'])[-1]}", EXIT_ENV)
        parts.append(bytes.fromhex("".join(done.stdout.split())))
    return parse_raw(b"".join(parts))


def _raw_too_large(path: str, target_name: str) -> NoReturn:
    """Exit 3: the samples file is over what rtbench reads back."""
    fail(f"the samples file {path} on target {target_name} is larger than "
         f"{RAW_MAX_BYTES >> 20} MiB, the most rtbench reads back (about 2.8 million "
         "samples); measure fewer loops for -h/-H/-v, or drop them", EXIT_ENV)


def print_output(plan: ProbePlan, argv: list[str], output: ProbeOutput,
                 samples: dict[int, list[int]], sysinfo: dict[str, Any],
                 started: datetime, ended: datetime, code: int) -> None:
    """Print what cyclictest prints (and write its --histfile and --json files); output
    has its result record."""
    from rtbench.analysis.frontend import act_ns

    assert output.result is not None
    series = list(output.result.series)
    act = {int(s["index"]): act_ns(int(s["index"]), samples, output.windows) or 0.0
           for s in series}
    tids = {int(s["index"]): int(s["tid"]) for s in series if s.get("tid") is not None}
    text: list[str] = []
    if "--no-pmqos" not in plan.args:
        held = plan.args[plan.args.index("--pmqos-us") + 1] if "--pmqos-us" in plan.args \
            else "0"
        text.append(f"# /dev/cpu_dma_latency set to {held}us")
    hists: dict[int, dict[int, int]] = {}
    if plan.verbose:
        for s in series:
            index = int(s["index"])
            for cycle, ns in enumerate(samples.get(index, [])):
                text.append(f"{index:8d}:{cycle:8d}:{unit(ns, plan.nsecs):8d}")
    elif not (plan.hist_buckets is not None and plan.quiet):
        text += summary_lines(plan, series, act, tids)
    if plan.hist_buckets is not None:
        block, hists = histogram_block(plan, series, samples)
        if plan.histfile:
            _write_text(plan.histfile, "\n".join(block) + "\n")
        else:
            text += block
    dropped = sum(int(s.get("raw_dropped") or 0) for s in series)
    if plan.need_raw and dropped:
        click.echo(f"rtbench cyclictest: {dropped} samples were dropped from the per-sample "
                   "copy; the histogram and -v lines miss them (the T: lines do not)",
                   err=True)
    click.echo("\n".join(text))
    if plan.json_file:
        doc = json_document(plan, argv, series, hists, sysinfo, started, ended, code)
        _write_text(plan.json_file, document_text(doc))
