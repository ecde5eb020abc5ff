"""`rtbench cyclictest [cyclictest options]`: cyclictest's command line, rtprobe's measurement.

Scripts that call `cyclictest -p80 -t1 -n -i1000 -l10000` keep working: the options
of rt-tests 2.x (and the deprecated ones scripts still pass) are mapped onto
`rtprobe cyclic`, the output is what cyclictest prints (`T:` summary lines, the `-h`
histogram block, `-v` samples, the `--json` file) and the run is stored like any
other.  Where the meaning differs it says so once on stderr; an option it cannot
honour is refused by name (exit 2).
"""

from __future__ import annotations

import json
import platform
import select
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import click

from rtbench import EXIT_USAGE, __version__
from rtbench.cli import (
    DB_HELP,
    PROBE_HELP,
    TARGET_HELP,
    fail,
    handle_errors,
    open_store,
    open_target,
)
from rtbench.commands._cyclictest_args import (
    NOTE,
    CyclictestUsage,
    ProbePlan,
    histogram_block,
    json_document,
    parse_cyclictest_args,
    plan_probe,
    summary_lines,
    unit,
)
from rtbench.rtprobe.raw import read_raw


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
    @click.option("--target", "target_uri", metavar="URI", help=TARGET_HELP)
    @click.option("--probe", "probe_path", metavar="PATH", help=PROBE_HELP)
    @click.argument("cyclictest_args", nargs=-1, type=click.UNPROCESSED)
    @handle_errors
    def cyclictest_cmd(db_url: str | None, target_uri: str | None, probe_path: str | None,
                       cyclictest_args: tuple[str, ...]) -> None:
        """Run cyclictest's command line with rtprobe; print and store what it measured.

        Takes rt-tests 2.x cyclictest options (-p -t -a -i -l -D -h -H --histfile -q -v
        -N -m -n -b -c -r -x -S --json --policy --latency --default-system) and prints
        what cyclictest prints: the T: summary lines, the -h histogram block, -v samples
        and the --json file.  Options it cannot honour are refused by name (exit 2).

        \b
        Examples:
          rtbench cyclictest -p80 -t1 -n -i1000 -l10000
          rtbench cyclictest -m -p 90 -t -a -q -D 10m -h 400 --json=ct.json
        """
        from rtbench.run.runner import allowed_cpus

        argv = list(cyclictest_args)
        try:
            opts = parse_cyclictest_args(argv)
        except CyclictestUsage as exc:
            fail(str(exc), EXIT_USAGE)
        with open_target(target_uri, probe_path) as target:
            sysinfo = target.sysinfo()
            try:
                plan = plan_probe(opts, sorted(allowed_cpus(sysinfo)))
            except CyclictestUsage as exc:
                fail(str(exc), EXIT_USAGE)
            if plan.need_raw and target.name != "local":
                fail("-h/-H/-v need every sample, which rtbench cyclictest reads only on the "
                     "local target so far; drop them or run without --target", EXIT_USAGE)
            click.echo(NOTE, err=True)
            run_and_store(plan, argv, target, sysinfo, db_url)


def _pump(proc: Any) -> tuple[bytes, bytes, int]:
    """All stdout and stderr of a target process and its exit code; Ctrl-C interrupts it
    (rtprobe then writes its result and exits 4)."""
    out, err = bytearray(), bytearray()
    interrupted = False
    while True:
        try:
            fds = proc.fds()
            if fds:
                select.select(fds, [], [], 0.5)
            chunk_out, chunk_err = proc.read_available()
            out += chunk_out
            err += chunk_err
            code = proc.poll()
            if code is not None and proc.at_eof():
                return bytes(out), bytes(err), int(code)
            if not fds and code is None:
                select.select([], [], [], 0.1)
        except KeyboardInterrupt:
            if interrupted:
                proc.stop()
            else:
                proc.interrupt()
                interrupted = True


def run_and_store(plan: ProbePlan, argv: list[str], target: Any, sysinfo: dict[str, Any],
                  db_url: str | None) -> None:
    """Run rtprobe, print cyclictest's output, store the run, exit with rtprobe's code."""
    from rtbench.preflight import run_preflight
    from rtbench.rtprobe.records import ProbeOutput, RecordError
    from rtbench.targets.procstat import read_steal

    facts = run_preflight(sysinfo, read_steal(target.read_file))
    with tempfile.TemporaryDirectory(prefix="rtbench-cyclictest-") as tmp:
        raw_path = Path(tmp) / "raw.bin"
        args = list(plan.args) + (["--raw", str(raw_path)] if plan.need_raw else [])
        command = [target.probe_path(), *args]
        started = datetime.now(timezone.utc)
        out, err, code = _pump(target.start_probe(args))
        ended = datetime.now(timezone.utc)
        try:
            output = ProbeOutput.from_lines(out.decode("utf-8", "replace").splitlines())
        except RecordError as exc:
            fail(f"rtprobe's output could not be read: {exc}", 3)
        if output.result is None:
            message = err.decode(errors="replace").strip().splitlines()
            fail(message[-1] if message else f"rtprobe exited with {code} and no result",
                 code if code in (2, 3, 4) else 3)
        samples = read_raw(raw_path) if plan.need_raw and raw_path.exists() else {}
    series = list(output.result.series)
    act: dict[int, float] = {}
    for s in series:
        index = int(s["index"])
        if samples.get(index):
            act[index] = float(samples[index][-1])
        else:
            last = [w for w in output.windows if w.series == index and w.count]
            act[index] = last[-1].sum_ns / last[-1].count if last else 0.0
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
        text += summary_lines(plan, series, act, {})
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
        _write_text(plan.json_file, json.dumps(doc, indent=2) + "\n")
    store = open_store(db_url)
    try:
        run_id = store.create_run(
            suite="cyclictest", suite_source=" ".join(["rtbench", "cyclictest", *argv]),
            scale=1.0, hostname=target.hostname(), target=target.name, sysinfo=sysinfo,
            preflight=facts, tool_versions={"rtbench": __version__,
                                            "rtprobe": output.start.version
                                            if output.start else "",
                                            "python": platform.python_version()},
            command_line=sys.argv, simulated=False,
            source={"tool": "rtbench", "front_end": "cyclictest", "argv": argv})
        scenario_id = store.add_scenario(run_id, name="cyclictest", loads=[], load_cpus=None,
                                         measure_cpus=None)
        status = output.result.status
        store.add_measurement(scenario_id, name="cyclictest", test="cyclic",
                              params=dict(output.start.params) if output.start else {},
                              command=command, output=output, status=status,
                              thresholds_ns=[])
        store.finish_run(run_id, status)
    finally:
        store.close()
    click.echo(f"rtbench: run {run_id} stored ({status})", err=True)
    sys.exit(code)
