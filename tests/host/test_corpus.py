"""The bad-input corpus: every case a clean line, the documented exit code, nothing lost.

Each case below is data: what is given (rtprobe options, rtbench command lines, suite
files, NDJSON streams through a fake probe, broken databases, hostile strings, report
paths) and what must come back (exit code, a word naming the culprit).  For every case
the test asserts: the exit code of docs/commands.md, one error line naming the culprit,
no traceback, and every run stored before unchanged (a digest of each run's JSON); exit 2
also means no run was added.  rtbench runs in-process through click's CliRunner; rtprobe
and the fake probe are subprocesses.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from rtbench.cli import main
from rtbench.store import Store
from tests.host.robust_support import (
    base_env,
    db_digest,
    fake_probe,
    one_test_suite,
    run_statuses,
    write_suite,
)
from tests.host.synth_probe import synth_lines
from tests.parts import require_part

# every output of the corpus, checked once more at the end for "Traceback"
OUTPUTS: list[str] = []


@dataclass(frozen=True)
class Case:
    """One bad input and what must come back."""

    id: str
    kind: str  # probe | cli | suite | stream | db | text | path | import
    code: int
    culprit: tuple[str, ...]  # one of these (case-insensitive) names what was wrong
    args: tuple[str, ...] = ()
    data: Any = None
    extra: dict[str, Any] = field(default_factory=dict)


CASES: list[Case] = []


def add(case: Case) -> None:
    """Add a case (ids must be unique)."""
    CASES.append(case)


# ---------------------------------------------------------------- rtprobe options
PROBE_SUBCOMMANDS = ("cyclic", "periodic", "clock", "wakeup", "noise", "ctx", "ipc",
                     "event", "pi", "hackbench", "load cpu", "load io", "sysinfo")
PROBE_BAD_OPTIONS = (
    "--duration -1", "--duration abc", "--duration 99999999999d", "--cpus 1-0",
    "--cpus 99999", "--cpus abc", "--priority 100", "--priority -5", "--threshold x",
    "--interval 0", "--bogus", "--simulate abc", "--duration", "--warmup 1x", "--worst 65",
    "--policy fast", "--loops -3", "--raw-buffer 1000", "--rate 0", "--rate -1",
    "--duration 18446744073709551616ns", "--priority 99999999999999999999")
for _sub in PROBE_SUBCOMMANDS:
    for _opt in PROBE_BAD_OPTIONS:
        _words = _opt.split()
        add(Case(f"probe-{_sub.replace(' ', '-')}{_opt.replace(' ', '=')}", "probe", 2,
                 (_words[0], *_words[1:]), args=(*_sub.split(), *_words)))

# `describe --json --bogus` named --json as the unknown option
add(Case("probe-describe-json-bogus", "probe", 2, ("'--bogus'",),
         args=("describe", "--json", "--bogus")))

# ---------------------------------------------------------------- rtbench command lines
BIG = "9" * 30
for _args, _code, _culprit in (
        (("show", BIG), 2, ("RUN",)), (("show", "-1"), 2, ("-1",)),
        (("show", "abc"), 2, ("RUN",)), (("show", "0"), 2, ("RUN",)),
        (("show", "999"), 2, ("run 999",)), (("show",), 2, ("RUN",)),
        (("report", BIG), 2, ("RUN",)), (("report", "999"), 2, ("run 999",)),
        (("report", "x1"), 2, ("RUN",)), (("ls", "--limit", BIG), 2, ("--limit",)),
        (("ls", "--limit", "0"), 2, ("--limit",)), (("ls", "--limit", "x"), 2, ("--limit",)),
        (("ls", "--bogus"), 2, ("--bogus",)), (("nosuch",), 2, ("nosuch",)),
        (("run", "--scale", "inf"), 2, ("--scale",)),
        (("run", "--scale", "1e308"), 2, ("--scale",)),
        (("run", "--scale", "nan"), 2, ("--scale",)),
        (("run", "--scale", "-1"), 2, ("--scale",)), (("run", "--scale", "0"), 2, ("--scale",)),
        (("run", "--scale", "abc"), 2, ("--scale",)),
        (("run", "smoke", "--simulate", "abc", "--no-report"), 2, ("--simulate",)),
        (("run", "smoke", "--simulate", "1:bogus", "--no-report"), 2, ("--simulate",)),
        (("run", "smoke", "--simulate", "", "--no-report"), 2, ("--simulate",)),
        (("run", "smoke", "--simulate", "1:const,lat=-5us", "--no-report"), 2,
         ("--simulate",)),
        (("run", "smoke", "--no-report", "--report", "x.html"), 2, ("--no-report",)),
        (("run", "no-such-suite"), 2, ("no-such-suite",)),
        (("run", "/nonexistent/s.toml"), 2, ("/nonexistent/s.toml",)),
        (("run", "smoke", "--probe", "/nonexistent/rtprobe"), 3, ("--probe",)),
        (("run", "smoke", "--db", "notaurl://x"), 3, ("notaurl",)),
        (("run", "smoke", "--bogus"), 2, ("--bogus",)),
        (("run", "a", "b"), 2, ("'b'", "argument")),
        (("suites", "no-such"), 2, ("no-such",)), (("suites", "--scale", "x"), 2, ("--scale",)),
        (("suites", "smoke", "--scale", "inf"), 2, ("--scale",)),
        (("suites", "smoke", "--scale", "1e308"), 2, ("--scale",)),
        (("preflight", "--probe", "/nonexistent"), 3, ("--probe",)),
        (("preflight", "--bogus"), 2, ("--bogus",)),
        (("db", "migrate", "--db", "notaurl://x"), 3, ("notaurl",)),
        (("db", "nosuch"), 2, ("nosuch",)),
        (("show", "1", "--db", "postgresql+nodriver://x/y"), 3, ("nodriver",)),
        (("show", "1\x00"), 2, ("NUL",)), (("run", "smoke\x00x"), 2, ("NUL",)),
        (("report", "1", "-o", "x\x00.html"), 2, ("NUL",)),
        (("ls", "--db", "sqlite:///x\x00.db"), 2, ("NUL",)),
        (("run", "smoke", "--simulate", "1\x00"), 2, ("NUL",)),
        (("show", "1", "--db"), 2, ("--db",)), (("report", "1", "-o"), 2, ("-o",)),
        (("run", "--report"), 2, ("--report",)),
        (("-x",), 2, ("-x",)), (("db", "path", "--bogus"), 2, ("--bogus",)),
        (("run", "smoke", "--target", "bogus://x"), 2, ("bogus",)),
        (("run", "smoke", "--target", "local:extra"), 2, ("local:extra",)),
        (("run", "smoke", "--target", "ssh://"), 2, ("ssh",)),
        (("preflight", "--target", "bogus://x"), 2, ("bogus",)),
        (("run", "smoke", "--target"), 2, ("--target",)),
        (("run", "smoke", "--target", "ssh://[::1"), 2, ("ssh://[::1",)),
        (("preflight", "--target", "ssh://[::1"), 2, ("ssh://[::1",)),
        (("run", "smoke", "--target", "serial://[x/dev/tty"), 2, ("serial://[x",)),
        (("push", "1", "--server", "http://127.0.0.1:9", "--token-file", "/dev/zero"), 2,
         ("/dev/zero",)),
        (("fleet", "/dev/zero", "smoke"), 2, ("/dev/zero",)),
        (("export", BIG, "--format", "json"), 2, ("RUN",)),
        (("export", "999", "--format", "json"), 2, ("run 999",)),
        (("export", "1", "--format", "bogus"), 2, ("--format",)),
        (("export", "x", "--format", "json"), 2, ("RUN",)),
        (("import", "/nonexistent.json"), 2, ("/nonexistent.json",)),
        (("import", "/etc/hostname"), 2, ("/etc/hostname",)),
        (("import",), 2, ("FILE",)),
        (("cyclictest", "--bogus"), 2, ("--bogus",)),
        (("cyclictest", "-i", "abc"), 2, ("--interval",)),
        (("cyclictest", "-p", "100"), 2, ("priority", "-p")),
        # run ids: the range the server's API takes too (issue 36, item 15)
        (("show", "2147483648"), 2, ("from 1 to 2147483647",)),
        (("show", "9223372036854775807"), 2, ("from 1 to 2147483647",)),
        (("rm", "2147483648"), 2, ("from 1 to 2147483647",)),
        (("tag", "9223372036854775808", "a=b"), 2, ("from 1 to 2147483647",)),
        (("export", "2147483648", "--format", "json"), 2, ("from 1 to 2147483647",)),
        (("show", "\u00b2"), 2, ("\u00b2",)),
):
    add(Case("cli-" + "_".join(a.replace("\x00", "NUL")[:24] for a in _args), "cli", _code,
             _culprit, args=_args))

# ---------------------------------------------------------------- suite files
GOOD_HEAD = '[suite]\nname = "s"\n'
GOOD_TEST = '[[tests]]\ntest = "cyclic"\n'
DEEP_ARRAY = "a = " + "[" * 50000 + "]" * 50000 + "\n"
DEEP_TABLE = "a = " + "{b=" * 50000 + "1" + "}" * 50000 + "\n"
SUITES: list[tuple[str, str, tuple[str, ...]]] = [
    ("empty", "", ("suite",)),
    ("not-toml", "this is not toml", ("TOML",)),
    ("deep-array", DEEP_ARRAY, ("nested",)), ("deep-table", DEEP_TABLE, ("nested",)),
    ("binary", "\x00\x01\x02", ("TOML",)),
    ("no-suite-table", GOOD_TEST, ("suite",)),
    ("no-name", "[suite]\n" + GOOD_TEST, ("suite.name",)),
    ("name-int", "[suite]\nname = 3\n" + GOOD_TEST, ("suite.name",)),
    ("name-empty", '[suite]\nname = ""\n' + GOOD_TEST, ("suite.name",)),
    ("name-nul", '[suite]\nname = "a\\u0000b"\n' + GOOD_TEST, ("suite.name",)),
    ("name-1mb", '[suite]\nname = "' + "x" * 1_000_000 + '"\n' + GOOD_TEST, ("suite.name",)),
    ("unknown-top", GOOD_HEAD + "[bogus]\n" + GOOD_TEST, ("bogus",)),
    ("unknown-suite-key", '[suite]\nname = "s"\ncolour = 1\n' + GOOD_TEST, ("colour",)),
    ("scale-zero", '[suite]\nname = "s"\nscale = 0\n' + GOOD_TEST, ("suite.scale",)),
    ("scale-neg", '[suite]\nname = "s"\nscale = -1\n' + GOOD_TEST, ("suite.scale",)),
    ("scale-inf", '[suite]\nname = "s"\nscale = inf\n' + GOOD_TEST, ("suite.scale",)),
    ("scale-nan", '[suite]\nname = "s"\nscale = nan\n' + GOOD_TEST, ("suite.scale",)),
    ("scale-str", '[suite]\nname = "s"\nscale = "x"\n' + GOOD_TEST, ("suite.scale",)),
    ("no-tests", GOOD_HEAD, ("tests",)),
    ("tests-not-array", GOOD_HEAD + "tests = 3\n", ("tests",)),
    ("test-missing-kind", GOOD_HEAD + "[[tests]]\nname = \"x\"\n", ("tests[0].test",)),
    ("test-unknown-kind", GOOD_HEAD + '[[tests]]\ntest = "nope"\n', ("tests[0].test",)),
    ("test-unknown-key", GOOD_HEAD + GOOD_TEST + "colour = 2\n", ("colour",)),
    ("duration-zero", GOOD_HEAD + GOOD_TEST + 'duration = "0s"\n', ("tests[0].duration",)),
    ("duration-neg", GOOD_HEAD + GOOD_TEST + "duration = -3\n", ("tests[0].duration",)),
    ("duration-unit", GOOD_HEAD + GOOD_TEST + 'duration = "3 parsecs"\n',
     ("tests[0].duration",)),
    ("duration-huge", GOOD_HEAD + GOOD_TEST + 'duration = "99999999999999d"\n',
     ("tests[0].duration",)),
    ("duration-frac-ns", GOOD_HEAD + GOOD_TEST + 'duration = "1.5ns"\n',
     ("tests[0].duration",)),
    ("duration-bool", GOOD_HEAD + GOOD_TEST + "duration = true\n", ("tests[0].duration",)),
    ("warmup-bad", GOOD_HEAD + GOOD_TEST + 'warmup = "x"\n', ("tests[0].warmup",)),
    ("threshold-zero", GOOD_HEAD + GOOD_TEST + "thresholds = [0]\n",
     ("tests[0].thresholds",)),
    ("threshold-many", GOOD_HEAD + GOOD_TEST + "thresholds = [1,2,3,4,5,6,7,8,9]\n",
     ("tests[0].thresholds",)),
    ("threshold-str", GOOD_HEAD + GOOD_TEST + 'thresholds = ["abc"]\n',
     ("tests[0].thresholds",)),
    ("params-not-table", GOOD_HEAD + GOOD_TEST + "params = 3\n", ("tests[0].params",)),
    ("param-bad-name", GOOD_HEAD + GOOD_TEST + 'params = { "Bad Name" = 1 }\n',
     ("Bad Name",)),
    ("param-reserved", GOOD_HEAD + GOOD_TEST + "params = { duration = 1 }\n",
     ("params.duration",)),
    ("param-nul", GOOD_HEAD + GOOD_TEST + 'params = { mode = "a\\u0000b" }\n',
     ("params.mode",)),
    ("param-inf", GOOD_HEAD + GOOD_TEST + "params = { interval = inf }\n",
     ("params.interval",)),
    ("param-nan", GOOD_HEAD + GOOD_TEST + "params = { interval = nan }\n",
     ("params.interval",)),
    ("param-table", GOOD_HEAD + GOOD_TEST + "params = { mode = { a = 1 } }\n",
     ("params.mode",)),
    ("param-empty-list", GOOD_HEAD + GOOD_TEST + "params = { mode = [] }\n",
     ("params.mode",)),
    ("param-unknown-option", GOOD_HEAD + GOOD_TEST + "params = { frobnicate = 1 }\n",
     ("frobnicate",)),
    ("sweep-not-list", GOOD_HEAD + GOOD_TEST + 'sweep = { interval = "1ms" }\n',
     ("sweep.interval",)),
    ("sweep-huge", GOOD_HEAD + GOOD_TEST + "sweep = { a = [" + ",".join(map(str, range(100)))
     + "], b = [" + ",".join(map(str, range(100))) + "], c = ["
     + ",".join(map(str, range(1000))) + "] }\n", ("sweep",)),
    ("sweep-nul", GOOD_HEAD + GOOD_TEST + 'sweep = { mode = ["abs", "a\\u0000"] }\n',
     ("sweep.mode",)),
    ("dup-test-names", GOOD_HEAD + GOOD_TEST + GOOD_TEST, ("duplicate",)),
    ("scenarios-empty", GOOD_HEAD + "scenarios = []\n" + GOOD_TEST, ("scenarios",)),
    ("scenario-no-name", GOOD_HEAD + "[[scenarios]]\n" + GOOD_TEST, ("scenarios[0].name",)),
    ("scenario-dup", GOOD_HEAD + '[[scenarios]]\nname = "a"\n[[scenarios]]\nname = "a"\n'
     + GOOD_TEST, ("duplicate",)),
    ("scenario-name-nul", GOOD_HEAD + '[[scenarios]]\nname = "\\u0000"\n' + GOOD_TEST,
     ("scenarios[0].name",)),
    ("measure-backwards", GOOD_HEAD + '[[scenarios]]\nname = "a"\nmeasure_cpus = "1-0"\n'
     + GOOD_TEST, ("measure_cpus",)),
    ("measure-huge", GOOD_HEAD + '[[scenarios]]\nname = "a"\nmeasure_cpus = "0-99999999999"\n'
     + GOOD_TEST, ("measure_cpus",)),
    ("measure-letters", GOOD_HEAD + '[[scenarios]]\nname = "a"\nmeasure_cpus = "x"\n'
     + GOOD_TEST, ("measure_cpus",)),
    ("measure-absent-cpu", GOOD_HEAD + '[[scenarios]]\nname = "a"\nmeasure_cpus = "4000"\n'
     + GOOD_TEST, ("measure_cpus",)),
    ("load-cpus-backwards", GOOD_HEAD + '[defaults]\nload_cpus = "5-2"\n' + GOOD_TEST,
     ("load_cpus",)),
    ("settle-bad", GOOD_HEAD + '[defaults]\nsettle = "x"\n' + GOOD_TEST, ("settle",)),
    ("defaults-unknown", GOOD_HEAD + "[defaults]\ncolour = 1\n" + GOOD_TEST, ("colour",)),
    ("loads-not-list", GOOD_HEAD + '[[scenarios]]\nname = "a"\nloads = 3\n' + GOOD_TEST,
     ("loads",)),
    ("load-both", GOOD_HEAD + '[[scenarios]]\nname = "a"\n'
     'loads = [{ command = "true", kind = "cpu", rate = 5 }]\n' + GOOD_TEST, ("loads[0]",)),
    ("load-neither", GOOD_HEAD + '[[scenarios]]\nname = "a"\nloads = [{ instances = 1 }]\n'
     + GOOD_TEST, ("loads[0]",)),
    ("load-rate-zero", GOOD_HEAD + '[[scenarios]]\nname = "a"\n'
     'loads = [{ kind = "cpu", rate = 0 }]\n' + GOOD_TEST, ("rate",)),
    ("load-rate-neg", GOOD_HEAD + '[[scenarios]]\nname = "a"\n'
     'loads = [{ kind = "cpu", rate = -1 }]\n' + GOOD_TEST, ("rate",)),
    ("load-rate-inf", GOOD_HEAD + '[[scenarios]]\nname = "a"\n'
     'loads = [{ kind = "cpu", rate = inf }]\n' + GOOD_TEST, ("rate",)),
    ("load-no-rate", GOOD_HEAD + '[[scenarios]]\nname = "a"\nloads = [{ kind = "cpu" }]\n'
     + GOOD_TEST, ("rate",)),
    ("load-kind-unknown", GOOD_HEAD + '[[scenarios]]\nname = "a"\n'
     'loads = [{ kind = "gpu", rate = 1 }]\n' + GOOD_TEST, ("kind",)),
    ("load-io-no-dir", GOOD_HEAD + '[[scenarios]]\nname = "a"\n'
     'loads = [{ kind = "io", rate = 1 }]\n' + GOOD_TEST, ("dir",)),
    ("load-instances-huge", GOOD_HEAD + '[[scenarios]]\nname = "a"\n'
     'loads = [{ command = "true", instances = 100000 }]\n' + GOOD_TEST, ("instances",)),
    ("load-instances-zero", GOOD_HEAD + '[[scenarios]]\nname = "a"\n'
     'loads = [{ command = "true", instances = 0 }]\n' + GOOD_TEST, ("instances",)),
    ("load-command-empty", GOOD_HEAD + '[[scenarios]]\nname = "a"\n'
     'loads = [{ command = " " }]\n' + GOOD_TEST, ("command",)),
    ("load-command-nul", GOOD_HEAD + '[[scenarios]]\nname = "a"\n'
     'loads = [{ command = "sleep 1\\u0000" }]\n' + GOOD_TEST, ("command",)),
    ("load-rate-on-command", GOOD_HEAD + '[[scenarios]]\nname = "a"\n'
     'loads = [{ command = "true", rate = 3 }]\n' + GOOD_TEST, ("rate",)),
    ("load-option-unknown", GOOD_HEAD + '[[scenarios]]\nname = "a"\n'
     'loads = [{ kind = "cpu", rate = 5, options = { frob = 1 } }]\n' + GOOD_TEST,
     ("frob",)),
    ("ctx-duration", GOOD_HEAD + '[[tests]]\ntest = "ctx"\nduration = "1s"\n', ("duration",)),
    ("param-zero-interval", GOOD_HEAD + GOOD_TEST + 'params = { interval = "0ns" }\n',
     ("params.interval",)),
    ("param-shell-text", GOOD_HEAD + GOOD_TEST + 'params = { interval = "1ms; touch x" }\n',
     ("params.interval",)),
    ("param-bad-choice", GOOD_HEAD + GOOD_TEST + 'params = { mode = "bogus" }\n',
     ("params.mode",)),
    ("sweep-zero-interval", GOOD_HEAD + GOOD_TEST + 'sweep = { interval = ["1ms", "0us"] }\n',
     ("sweep.interval",)),
    ("defaults-zero-interval", GOOD_HEAD + '[defaults]\nparams = { interval = "-1ms" }\n'
     + GOOD_TEST, ("defaults.params.interval",)),
    ("int-65-bits", GOOD_HEAD + GOOD_TEST + "params = { loops = 36893488147419103232 }\n",
     ("TOML", "loops")),
]
# found only when the probe is asked (at `run`), not by `rtbench suites FILE`
NEEDS_PROBE = {"param-unknown-option", "measure-absent-cpu", "load-option-unknown"}
for _name, _body, _culprit in SUITES:
    add(Case(f"suite-{_name}", "suite", 2, _culprit, data=_body,
             extra={"needs_probe": _name in NEEDS_PROBE}))

# ---------------------------------------------------------------- NDJSON streams (fake probe)
GOOD, _ = synth_lines(seed=3, series=1, windows=3, per_window=50, warmup_windows=0)
START, WINDOWS, RESULT = GOOD[0], [ln for ln in GOOD if '"window"' in ln], GOOD[-1]


def _window(**change: Any) -> str:
    """The first good window with members changed (None: removed)."""
    obj = json.loads(WINDOWS[0])
    obj["index"] = 99
    for key, value in change.items():
        if value is None:
            obj.pop(key, None)
        else:
            obj[key] = value
    return json.dumps(obj)


def _result(**change: Any) -> str:
    """The good result with members changed (None: removed)."""
    obj = json.loads(RESULT)
    for key, value in change.items():
        if value is None:
            obj.pop(key, None)
        else:
            obj[key] = value
    return json.dumps(obj)


def _result_series(**change: Any) -> str:
    """The good result with its series entry's members changed."""
    obj = json.loads(RESULT)
    for key, value in change.items():
        obj["series"][0][key] = value
    return json.dumps(obj)


STREAMS: list[tuple[str, list[str | bytes], tuple[str, ...]]] = [
    ("not-json", ["{not json"], ("not valid JSON",)),
    ("array", ["[1,2,3]"], ("JSON object",)),
    ("wrong-schema", ['{"schema":"rtprobe/9","type":"window"}'], ("schema",)),
    ("unknown-type", ['{"schema":"rtprobe/1","type":"frob"}'], ("frob",)),
    ("deep", ['{"a":' * 50000 + "1" + "}" * 50000], ("nested",)),
    ("deep-array", ["[" * 50000 + "]" * 50000], ("nested",)),
    ("count-2^63", [_window(count=2**63)], ("count",)),
    ("count-2^64", [_window(count=2**64, sum_ns=1)], ("count",)),
    ("sum-2^70", [_window(sum_ns=2**70)], ("sum_ns",)),
    ("start-2^63", [_window(start_ns=2**63)], ("start_ns",)),
    ("min-neg-huge", [_window(min_ns=-(2**64))], ("min_ns",)),
    ("missing-count", [_window(count=None)], ("count",)),
    ("missing-series", [_window(series=None)], ("series",)),
    ("count-str", [_window(count="12")], ("count",)),
    ("count-float", [_window(count=1.5)], ("count",)),
    ("count-bool", [_window(count=True)], ("count",)),
    ("hist-not-list", [_window(hist=3)], ("hist",)),
    ("hist-bad-pair", [_window(hist=[[1, 2, 3]])], ("hist",)),
    ("hist-huge-count", [_window(hist=[[1, 2**64]])], ("hist",)),
    ("hist-bucket-past", [_window(hist=[[10**9, 50]], count=50)], ("hist",)),
    ("hist-sum-mismatch", [_window(hist=[[1, 2]], count=50)], ("count",)),
    ("exceed-str", [_window(exceed=["x"])], ("exceed",)),
    ("nan", ['{"schema":"rtprobe/1","type":"window","count":NaN}'], ("NaN",)),
    ("result-status", [_result(status="great")], ("status",)),
    ("result-series-str", [_result(series=["x"])], ("series",)),
    ("result-exceed-missing", [_result_series(exceed=[{"count": 1}])], ("threshold_ns",)),
    ("result-worst-huge", [_result_series(worst=[{"t_ns": 1, "latency_ns": 2**64}])],
     ("latency_ns",)),
    ("result-count-missing", [_result_series(count=None)], ("count",)),
    ("result-verdicts-str", [_result(verdicts=["x"])], ("verdicts",)),
    ("result-exit-huge", [_result(exit_code=2**80)], ("exit_code",)),
    ("start-series-str", [START.replace('"series": [{', '"series": ["x", {', 1)],
     ("series",)),
    ("invalid-utf8", [b"\xff\xfe{\x80}"], ("not valid JSON",)),
    # refused as it arrives (16 MiB bound), not kept whole and parsed
    ("line-40mb", ['{"schema":"rtprobe/1","type":"window","pad":"' + "x" * 40_000_000 + '"}'],
     ("longer than",)),
]
for _name, _lines, _culprit in STREAMS:
    add(Case(f"stream-{_name}", "stream", 3, _culprit, data=_lines))

# ---------------------------------------------------------------- hostile text stored and shown
HOSTILE = ("nightly[/bold][bold]", "vm[/]x", "idle[/]", "c[interval=50us]", "[red]x[/red]",
           "\x1b[2J\x1b]0;pwned\x07clear", "\x1b[31mred", "$x^2$", "$", "a$b$c",
           "<script>alert(1)</script>", "{{7*7}}", "{% raw %}", "\\", "x\\", "[link=file:///]x",
           ":smile:", "%s%n%x", "\u202eevil", "tab\there", "line\nbreak", "\r\rcr",
           "x" * 10_000, "[bold", "]", "[" * 1_000_000, "\x00nul\x00")
for _i, _text in enumerate(HOSTILE):
    add(Case(f"text-{_i}", "text", 0, (), data=_text))

# ---------------------------------------------------------------- report paths
for _name, _code, _culprit in (
        ("is-a-directory", 2, ("directory",)), ("under-a-file", 2, ("afile",)),
        ("name-too-long", 2, ("too long",)), ("read-only-fs", 2, ("not writable",)),
        ("full-fs", 3, ("No space",)), ("run-report-dir", 2, ("directory",)),
        ("run-report-under-file", 2, ("Not a directory",)),
        ("run-report-read-only", 3, ("Read-only", "not writable")),
        ("run-report-proc", 2, ("/proc/",)),
):
    add(Case(f"path-{_name}", "path", _code, _culprit, data=_name))

# ---------------------------------------------------------------- imports
REAL = Path(__file__).resolve().parent / "data" / "interop" / "real"


def _half(name: str) -> bytes:
    """The first half of a real tool output (cut inside a line, as a full disk cuts)."""
    data = (REAL / name).read_bytes()
    half = data.index(b"\n", len(data) // 2)  # the end of a line past the middle
    return data[:half - 2]


def _noise(size: int = 4000, seed: int = 27) -> bytes:
    """Random printable characters in lines (not any tool's output)."""
    import random

    rng = random.Random(seed)
    alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 :.-#"
    text = "".join(rng.choice(alphabet) for _ in range(size))
    return ("\n".join(text[i:i + 70] for i in range(0, size, 70)) + "\n").encode()


IMPORTS: list[tuple[str, Any, str | None, tuple[str, ...]]] = [
    ("ct-h-half", _half("ct-h.txt"), None, ("cut short",)),
    ("ct-v-half", _half("ct-v.txt"), None, ("cut short",)),
    ("ct-q-half", _half("ct-q.txt"), None, ("cut short",)),
    ("os-half", _half("os.txt"), None, ("cut short",)),
    ("sng-half", _half("sng.txt"), None, ("cut short",)),
    ("hb-half", _half("hb.txt"), "hackbench", ("cut short",)),
    ("lmbench-half", lambda: _half("../lmbench.txt"), "lmbench", ("cut short",)),
    ("ct-h-no-closing-lines", lambda: b"".join(
        ln for ln in (REAL / "ct-h.txt").read_bytes().splitlines(keepends=True)
        if not ln.startswith((b"# Min", b"# Avg", b"# Max", b"# Total", b"# Hist",
                              b"# Thread"))), None, ("# Total", "cut short")),
    ("noise-as-cyclictest", _noise(), "cyclictest", ("cyclictest",)),
    ("blank-as-cyclictest", b"\n\n# only a comment\n", "cyclictest", ("no cyclictest",)),
    ("ct-negative-min", lambda: (REAL / "ct-q.txt").read_bytes().replace(
        b"Min:     15", b"Min:    -15"), None, ("line 2",)),
    ("sng-line-cut", lambda: b"".join((REAL / "sng.txt").read_bytes()
                                      .splitlines(keepends=True)[:20]), None,
     ("line 20",)),
    ("sng-no-completed-line", lambda: b"".join((REAL / "sng.txt").read_bytes()
                                               .splitlines(keepends=True)[:-1]), None,
     ("run completed",)),
    ("ct-json-as-oslat", lambda: (REAL / "ct.json").read_bytes(), "oslat-json",
     ("not of oslat",)),
    ("gtod-last-quantile-cut", lambda: b"".join((REAL.parent / "ltp-gtod_latency.txt")
                                                .read_bytes().splitlines(keepends=True)[:-1]),
     None, ("5 of the 6 quantile",)),
    ("ct-v-line-lost", lambda: b"".join(
        ln for i, ln in enumerate((REAL / "ct-v.txt").read_bytes().splitlines(keepends=True))
        if i != 10), None, ("line 11", "cycle 6")),
    ("rtla-top-all-huge-exponent", lambda: (REAL.parent / "rtla-timerlat-top-all.txt")
     .read_bytes().replace(b"ALL #283372 e0", b"ALL #283372 e999999999"), None,
     ("e999999999",)),
    ("rtla-top-all-cpu-row-lost", lambda: b"".join(
        ln for ln in (REAL.parent / "rtla-timerlat-top-all.txt").read_bytes()
        .splitlines(keepends=True) if not ln.startswith(b"  7 #")), None,
     ("271050",)),
    ("rtla-auto-half", lambda: _half("../rtla-timerlat-auto.txt"), None, ("cut short",)),
    # cut between two lines: before its last line, `Saving trace to` (issue 36, item 11)
    ("rtla-auto-last-line-cut", lambda: b"".join(
        (REAL.parent / "rtla-timerlat-auto.txt").read_bytes().splitlines(keepends=True)[:-1]),
     None, ("Saving trace to",)),
    ("rtla-auto-thread-last-line-cut", lambda: b"".join(
        (REAL.parent / "rtla-timerlat-auto-thread.txt").read_bytes()
        .splitlines(keepends=True)[:-1]), None, ("Saving trace to",)),
    ("rtla-auto-summary-cut", lambda: b"".join(
        (REAL.parent / "rtla-timerlat-auto.txt").read_bytes().splitlines(keepends=True)[:-3]),
     None, ("Saving trace to",)),
    ("rtla-auto-block-cut", lambda: b"".join(
        (REAL.parent / "rtla-timerlat-auto.txt").read_bytes().splitlines(keepends=True)[:30]),
     None, ("line 30", "closing the analysis of CPU 23")),
    ("noise-as-rtla-auto", _noise(), "rtla-timerlat-auto", ("no auto-analysis",)),
    ("trace-cmd-half", lambda: _half("../trace-cmd-report.txt"), None, ("cut short",)),
    ("trace-cmd-captured-half", lambda: _half("../../trace/captured-cyclictest-injector.txt"),
     "trace-cmd", ("cut short",)),
    ("noise-as-trace-cmd", _noise(), "trace-cmd", ("line 1", "not a trace line")),
    ("rtla-auto-as-trace-cmd", lambda: (REAL.parent / "rtla-timerlat-auto.txt").read_bytes(),
     "trace-cmd", ("not a trace line",)),
]


def _jd_raw(records: int) -> bytes:
    """A jitterdebugger samples.raw of that many records (2 CPUs, 10-90 us)."""
    import struct

    return b"".join(struct.pack("<IQQQ", i % 2, 100 + i // 4000, (i * 250_000) % 10**9,
                                10 + i % 80) for i in range(records))


# samples.raw has no count: a cut between records cannot be told (issue 36, item 3)
IMPORTS += [
    ("jd-raw-280-bytes", _jd_raw(10), None, ("completeness cannot be checked",)),
    ("jd-raw-half", lambda: _jd_raw(2000)[:28 * 1000], None, ("--partial",)),
    ("jd-raw-one-record", _jd_raw(1), "jitterdebugger-raw", ("record 1",)),
    ("jd-raw-ns-cut", _jd_raw(40), "jitterdebugger-raw-ns", ("--partial",)),
    ("jd-raw-cut-in-record", _jd_raw(10)[:270], "jitterdebugger-raw", ("28-byte",)),
]
for _name, _data, _fmt, _culprit in IMPORTS:
    add(Case(f"import-{_name}", "import", 2, _culprit, data=_data,
             extra={"format": _fmt}))

# ---------------------------------------------------------------- databases
for _name, _args, _code, _culprit in (
        ("corrupt-ls", ("ls",), 3, ("database",)),
        ("corrupt-show", ("show", "1"), 3, ("database",)),
        ("truncated-ls", ("ls",), 3, ("database",)),
        ("newer-schema-ls", ("ls",), 3, ("newer",)),
        ("newer-schema-run", ("run", "SUITE", "--no-report", "--simulate", "1"), 3,
         ("newer",)),
        ("read-only-run", ("run", "SUITE", "--no-report", "--simulate", "1"), 3,
         ("readonly", "read-only")),
        ("read-only-ls", ("ls",), 0, ()),
        ("directory-as-db", ("ls",), 3, ("database",)),
        ("full-disk-run", ("run", "SUITE", "--no-report", "--simulate", "1"), 3,
         ("full", "No space")),
        ("ro-wal-ls", ("ls",), 0, ()),
        ("ro-wal-show", ("show", "1"), 0, ()),
        ("ro-wal-export", ("export", "1", "--format", "json"), 0, ()),
        ("ro-wal-report", ("report", "1", "-o", "REPORT"), 0, ()),
        ("missing-ls", ("ls",), 2, ("does not exist",)),
        ("missing-show", ("show", "1"), 2, ("does not exist",)),
        ("missing-export", ("export", "1", "--format", "json"), 2, ("does not exist",)),
        # commands that change stored runs create no database either (issue 36, item 12)
        ("missing-rm", ("rm", "1"), 2, ("does not exist",)),
        ("missing-tag", ("tag", "1", "a=b"), 2, ("does not exist",)),
        ("missing-prune", ("db", "prune", "--older-than", "1d"), 2, ("does not exist",)),
        ("missing-here-rm", ("rm", "1"), 2, ("does not exist",)),
        ("missing-here-rm-bulk", ("rm", "host=x", "--yes"), 2, ("does not exist",)),
        ("missing-here-tag", ("tag", "1", "a=b"), 2, ("does not exist",)),
        ("missing-here-prune", ("db", "prune", "--older-than", "1d", "--yes"), 2,
         ("does not exist",)),
        ("bad-date-ls", ("ls",), 3, ("damaged",)),
        ("bad-date-show", ("show", "1"), 3, ("damaged",)),
        ("bad-date-export", ("export", "1", "--format", "json"), 3, ("damaged",)),
        ("bad-date-report", ("report", "1", "-o", "REPORT"), 3, ("damaged",)),
):
    add(Case(f"db-{_name}", "db", _code, _culprit, args=_args, data=_name))

# ---------------------------------------------------------------- secrets and URLs
# A password that no output may show (checked for every case that gives it).
PASSWORD = "s3cretPW9"
# what a secret file can be instead of one line of secret (made by _secret_file)
SECRET_FILES = (("fifo", ("FIFO",)), ("dev-zero", ("character device",)),
                ("directory", ("directory",)), ("socket", ("socket",)),
                ("multi-line", ("more than one line",)),
                ("crlf-two-lines", ("more than one line",)),
                ("nul-inside", ("more than one line",)), ("empty", ("empty",)),
                ("blank", ("empty",)), ("4097-bytes", ("4096 bytes",)),
                ("symlink-to-fifo", ("FIFO",)), ("missing", ("cannot read",)))
# serve on an address in use ({busy}): a case not refused fails there, never serves
SERVE = ("serve", "--bind", "{busy}")
SECRET_COMMANDS = (
    ("push", ("push", "1", "--server", "http://127.0.0.1:9", "--token-file", "{f}")),
    ("run-push", ("run", "smoke", "--simulate", "1", "--no-report", "--push",
                  "http://127.0.0.1:9", "--token-file", "{f}")),
    ("serve", (*SERVE, "--webhook", "http://127.0.0.1:9/h",
               "--webhook-secret-file", "{f}")),
    ("serve-config", (*SERVE, "--webhook-config", "{config}")),
)
for _what, _culprit in SECRET_FILES:
    for _cmd, _args in SECRET_COMMANDS:
        add(Case(f"secret-{_cmd}-{_what}", "secret", 2, _culprit, args=_args, data=_what))
add(Case("secret-push-world-readable", "secret", 2, ("chmod 600",),
         args=SECRET_COMMANDS[0][1], data="world-readable"))
# URLs: credentials never shown, invalid parts refused before anything starts
_CRED = f"u:{PASSWORD}@"
for _name, _args, _code, _culprit in (
        ("push-userinfo", ("push", "1", "--server", f"http://{_CRED}127.0.0.1:9"), 2,
         ("user name or password",)),
        ("push-token-as-user", ("push", "1", "--server", f"https://{PASSWORD}@127.0.0.1:9"),
         2, ("user name or password",)),
        ("push-password-with-at", ("push", "1", "--server",
                                   f"http://u:{PASSWORD}@x@127.0.0.1:9"), 2,
         ("user name or password",)),
        ("push-port-99999", ("push", "1", "--server", "http://127.0.0.1:99999"), 2,
         ("65535",)),
        ("push-port-0", ("push", "1", "--server", "http://127.0.0.1:0"), 2, ("65535",)),
        ("push-newline", ("push", "1", "--server", "http://127.0.0.1:9/\nx"), 2,
         ("http://",)),
        ("run-push-userinfo", ("run", "smoke", "--simulate", "1", "--no-report", "--push",
                               f"http://{_CRED}127.0.0.1:9"), 2, ("user name or password",)),
        ("run-push-port-99999", ("run", "smoke", "--simulate", "1", "--no-report", "--push",
                                 "http://127.0.0.1:99999"), 2, ("65535",)),
        ("serve-webhook-port-99999", (*SERVE, "--webhook", "http://127.0.0.1:99999/h"), 2,
         ("65535",)),
        ("serve-webhook-port-0", (*SERVE, "--webhook", "http://127.0.0.1:0/h"), 2,
         ("65535",)),
        ("serve-webhook-newline", (*SERVE, "--webhook", "http://127.0.0.1:9/h\nX-Evil: 1"),
         2, ("newline",)),
        ("serve-webhook-space", (*SERVE, "--webhook", "http://127.0.0.1:9/a b"), 2,
         ("white space",)),
        ("serve-webhook-bad-host", (*SERVE, "--webhook", "http://ex_ample!/h"), 2,
         ("host",)),
        ("serve-webhook-v6-unclosed", (*SERVE, "--webhook", "http://[::1/h"), 2,
         ("host",)),
        ("serve-webhook-password-bad-port", (*SERVE, "--webhook",
                                             f"http://{_CRED}127.0.0.1:99999/h"), 2,
         ("65535",)),
        ("serve-webhook-ftp", (*SERVE, "--webhook", "ftp://127.0.0.1/h"), 2, ("http://",)),
        ("serve-bind-not-here", ("serve", "--public", "--bind", "192.0.2.1:8080"), 3,
         ("192.0.2.1:8080", "not one of this machine")),
        ("ls-db-password", ("ls", "--db", f"postgresql+psycopg://{_CRED}127.0.0.1:9/x"), 3,
         ("127.0.0.1",)),
        ("ssh-password-bad-port", ("run", "smoke", "--target",
                                   f"ssh://root:{PASSWORD}@b:99999"), 2, ("port",)),
        # a host or user that ssh would read as an option
        ("ssh-host-option", ("run", "smoke", "--target",
                             "ssh://root@-oProxyCommand=true"), 2,
         ("-oproxycommand",)),
        ("ssh-host-option-only", ("preflight", "--target", "ssh://-oProxyCommand=x"), 2,
         ("-oproxycommand",)),
        ("ssh-host-option-encoded", ("run", "smoke", "--target", "ssh://root@%2DoFoo=x"), 2,
         ("-ofoo",)),
        ("ssh-user-option", ("run", "smoke", "--target", "ssh://-oProxyCommand=x@board"), 2,
         ("-oProxyCommand",)),
        ("ssh-host-port-option", ("run", "smoke", "--target", "ssh://-F:22"), 2, ("-f",)),
        ("fleet-ssh-host-option", ("fleet", "{inventory}", "smoke"), 2, ("-oproxycommand",)),
):
    add(Case(f"url-{_name}", "secret", _code, _culprit, args=_args))

assert len({c.id for c in CASES}) == len(CASES), "duplicate case ids"


# ================================================================= machinery
@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory, probe_path: Path) -> dict[str, Any]:
    """A database with two stored runs (simulated, and one with hostile names)."""
    base = tmp_path_factory.mktemp("corpus-template")
    url = f"sqlite:///{base / 'results.db'}"
    env = base_env(base, probe_path, url)
    suite = write_suite(base, one_test_suite(name="base[/]", scenario="idle[/]"))
    result = CliRunner().invoke(main, ["run", str(suite), "--simulate", "1", "--no-report"],
                                env=env)
    assert result.exit_code == 0, result.output
    fake = fake_probe(base, probe_path, GOOD)
    env2 = {**env, "RTBENCH_PROBE": str(fake)}
    suite2 = write_suite(base, one_test_suite(name="\x1b[2Jx[/]", test="t[a=1]"), "s2.toml")
    result = CliRunner().invoke(main, ["run", str(suite2), "--no-report"], env=env2)
    assert result.exit_code == 0, result.output
    return {"dir": base, "db": base / "results.db"}


@pytest.fixture()
def case_env(tmp_path: Path, template: dict[str, Any],
             probe_path: Path) -> Iterator[dict[str, Any]]:
    """A copy of the template database and an environment pointing at it."""
    db = tmp_path / "results.db"
    shutil.copy(template["db"], db)
    url = f"sqlite:///{db}"
    yield {"tmp": tmp_path, "db": db, "url": url, "env": base_env(tmp_path, probe_path, url)}


def invoke(args: list[str], env: dict[str, str]) -> Result:
    """Run rtbench in-process; its output is kept for the traceback check."""
    result = CliRunner().invoke(main, args, env=env)
    OUTPUTS.append(result.output)
    return result


def check_error(result: Result, case: Case) -> None:
    """The exit code, one error line naming the culprit, no traceback."""
    text = result.output
    assert "Traceback" not in text, text[-3000:]
    assert result.exit_code == case.code, f"{case.id}: exit {result.exit_code}\n{text[-3000:]}"
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(f"{case.id}: {result.exception!r}")
    if case.code == 0:
        return
    errors = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(errors) == 1, f"{case.id}: stderr is not one line: {errors[:5]}"
    line = errors[0].lower()
    assert any(c.lower() in line for c in case.culprit), \
        f"{case.id}: {errors[0]!r} names none of {case.culprit}"


def _run_case(case: Case, ctx: dict[str, Any], probe_path: Path) -> None:
    """Dispatch one case to its kind."""
    before = db_digest(ctx["url"])
    count_before = len(before)
    if case.kind == "cli":
        result = invoke(list(case.args), ctx["env"])
        check_error(result, case)
    elif case.kind == "suite":
        path = write_suite(ctx["tmp"], case.data)
        result = invoke(["run", str(path), "--simulate", "1", "--no-report"], ctx["env"])
        check_error(result, case)
        if not case.extra["needs_probe"]:
            result = invoke(["suites", str(path)], ctx["env"])
            check_error(result, case)
    elif case.kind == "stream":
        _stream_case(case, ctx, probe_path)
    elif case.kind == "text":
        _text_case(case, ctx, probe_path)
    elif case.kind == "import":
        data = case.data() if callable(case.data) else case.data
        suffix = ".raw" if "jd-raw" in case.id else ".txt"  # detected by name and content
        path = ctx["tmp"] / f"{case.id}{suffix}"
        path.write_bytes(data)
        fmt = case.extra["format"]
        result = invoke(["import", str(path), *(["--format", fmt] if fmt else [])],
                        ctx["env"])
        check_error(result, case)
    after = db_digest(ctx["url"])
    assert {k: after[k] for k in before} == before, f"{case.id}: a stored run changed"
    if case.code == 2:
        assert len(after) == count_before, f"{case.id}: exit 2 but a run was stored"


@pytest.mark.parametrize("case", [c for c in CASES if c.kind == "probe"], ids=lambda c: c.id)
def test_probe_option(case: Case, probe_path: Path) -> None:
    """rtprobe: exit 2, one line naming the option, nothing on stdout."""
    done = subprocess.run([str(probe_path), *case.args], capture_output=True, text=True,
                          timeout=10, check=False)
    OUTPUTS.append(done.stdout + done.stderr)
    assert done.returncode == 2, (case.args, done.returncode, done.stderr)
    assert done.stdout == ""
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("rtprobe:")
    assert any(c in last for c in case.culprit), (case.args, last)


@pytest.mark.parametrize("case", [c for c in CASES if c.kind in ("cli", "suite")],
                         ids=lambda c: c.id)
def test_command_line_and_suite(case: Case, case_env: dict[str, Any],
                                probe_path: Path) -> None:
    """rtbench command lines and suite files."""
    _run_case(case, case_env, probe_path)


def _stream_case(case: Case, ctx: dict[str, Any], probe_path: Path) -> None:
    """A stream with two valid windows then the bad line(s), then a valid window: stored
    as `error` with the reason, every valid window kept."""
    lines: list[str | bytes] = [START, WINDOWS[0], WINDOWS[1], *case.data, WINDOWS[2]]
    fake = fake_probe(ctx["tmp"], probe_path, lines)
    suite = write_suite(ctx["tmp"], one_test_suite())
    env = {**ctx["env"], "RTBENCH_PROBE": str(fake)}
    result = invoke(["run", str(suite), "--no-report"], env)
    assert "Traceback" not in result.output
    assert result.exit_code == case.code, result.output[-3000:]
    assert any(c.lower() in result.output.lower() for c in case.culprit), result.output[-3000:]
    store = Store.open(ctx["url"])
    try:
        newest = store.list_runs(1)[0]
        run = store.get_run(newest.id)
    finally:
        store.close()
    assert run.status == "error"
    m = run.scenarios[0].measurements[0]
    assert m.status == "error"
    assert m.reason and any(c.lower() in m.reason.lower() for c in case.culprit), m.reason
    assert len(m.windows) == 3


@pytest.mark.parametrize("case", [c for c in CASES if c.kind == "stream"], ids=lambda c: c.id)
def test_probe_stream(case: Case, case_env: dict[str, Any], probe_path: Path) -> None:
    """Malformed probe records: the valid windows stored, the measurement an error."""
    _run_case(case, case_env, probe_path)


def _text_case(case: Case, ctx: dict[str, Any], probe_path: Path) -> None:
    """A hostile string as suite, scenario, test and host name: run, ls, show, report all
    work and print it as text (no escape sequence reaches the terminal)."""
    text = case.data
    store = Store.open(ctx["url"])
    try:
        bundle = store.get_run(1)
        bundle.uid = uuid.uuid4().hex
        stored = text.replace("\x00", "")[:255]  # what the store takes (BundleInvalid)
        bundle.hostname = stored
        bundle.kernel = stored
        bundle.suite = stored
        bundle.scenarios[0].name = stored
        bundle.scenarios[0].measurements[0].name = stored
        bundle.scenarios[0].measurements[0].reason = text.replace("\x00", "")
        stored_id, _ = store.add_bundle(bundle)
    finally:
        store.close()
    safe = text.replace("\x00", "")[:1000]
    suite = write_suite(ctx["tmp"], one_test_suite(name=safe, scenario=safe + "-s",
                                                   test=safe + "-t"))
    fake = fake_probe(ctx["tmp"], probe_path, GOOD)
    env = {**ctx["env"], "RTBENCH_PROBE": str(fake)}
    outputs = []
    commands = [["run", str(suite), "--no-report"], ["ls"], ["show", str(stored_id)],
                ["suites", str(suite)]]
    if any(c in text for c in "$<{[\x1b"):
        # the report's figures and HTML (matplotlib takes a second a report)
        commands.append(["report", str(stored_id), "-o", str(ctx["tmp"] / "s.html")])
    for args in commands:
        result = invoke(args, env)
        assert result.exit_code == 0, (args, result.output[-3000:])
        assert "\x1b" not in result.output and "\x07" not in result.output
        assert "\u202e" not in result.output
        outputs.append(result.output)
    visible = " ".join(text.split())
    if not any(c in text for c in "\x00\x1b\r\n\u202e") and len(text) < 100:
        # the literal text survives (no markup eaten), in the table of `ls`
        assert visible[:12] in " ".join(outputs[1].split()), outputs[1][-2000:]
    if len(commands) == 5:
        html = (ctx["tmp"] / "s.html").read_text(encoding="utf-8")
        assert "<script>alert" not in html


@pytest.mark.parametrize("case", [c for c in CASES if c.kind == "import"], ids=lambda c: c.id)
def test_import(case: Case, case_env: dict[str, Any], probe_path: Path) -> None:
    """Cut, damaged and wrong-format tool outputs: exit 2 naming file and line, nothing
    stored."""
    _run_case(case, case_env, probe_path)


# the outputs whose importer knows the complete form: every cut at a line boundary fails
INTEROP = REAL.parent
LINE_CUT_COMPLETE = ("real/sng.txt", "real/hb.txt", "real/ct-q.txt", "real/ct-h.txt",
                     "real/os.txt", "ltp-async_handler.txt", "ltp-pi_perf.txt",
                     "ltp-sched_latency.txt", "ltp-gtod_latency.txt",
                     "rtla-timerlat-hist.txt", "rtla-osnoise-hist.txt",
                     "rtla-timerlat-auto.txt", "rtla-timerlat-auto-thread.txt")
# the outputs that carry no evidence of being whole: complete or cut, never stored 'ok'
# (timerlat top with its ALL line is whole; a cut before that line cannot be told)
LINE_CUT_UNVERIFIABLE = (("real/ct-v.txt", "partial"), ("lmbench.txt", "partial"),
                         ("rtla-osnoise-top.txt", "partial"),
                         ("rtla-timerlat-top.txt", "partial"),
                         ("rtla-timerlat-top-all.txt", "ok"),
                         ("trace-cmd-report.txt", "partial"))


@pytest.mark.parametrize("name", LINE_CUT_COMPLETE)
def test_every_line_boundary_cut_is_refused(name: str) -> None:
    """Each prefix of a real output ending at a line boundary is refused naming the file
    and a line, unless all it lacks is blank lines; the whole output is read."""
    from rtbench.interop.base import ImportFormatError, importers

    data = (INTEROP / name).read_bytes()
    base = Path(name).name
    importer = next(i for i in importers().values() if i.detect(data[:4096], base))
    assert importer.read(data, base)
    lines = data.splitlines(keepends=True)
    refused = 0
    for end in range(1, len(lines)):
        if not b"".join(lines[end:]).strip():
            continue  # only the trailing blank lines are missing: the output is complete
        with pytest.raises(ImportFormatError, match=rf"^{base}: (.*line|no |not a )"):
            importer.read(b"".join(lines[:end]), base)
        refused += 1
    assert refused >= 1


@pytest.mark.parametrize(("name", "whole_status"), LINE_CUT_UNVERIFIABLE)
def test_line_boundary_cut_without_evidence_is_never_ok(name: str, whole_status: str) -> None:
    """Formats with no closing line: the whole output is stored `whole_status`, every
    prefix ending at a line boundary is refused or stored 'partial' with the reason that
    completeness cannot be checked -- never 'ok'."""
    from rtbench.interop.base import ImportFormatError, importers

    data = (INTEROP / name).read_bytes()
    base = Path(name).name
    importer = next(i for i in importers().values() if i.detect(data[:4096], base))
    assert [run.status for run in importer.read(data, base)] == [whole_status]
    lines = data.splitlines(keepends=True)
    partial = 0
    for end in range(1, len(lines)):
        if not b"".join(lines[end:]).strip():
            continue
        try:
            runs = importer.read(b"".join(lines[:end]), base)
        except ImportFormatError as exc:
            assert str(exc).startswith(f"{base}: "), exc
            continue
        assert {run.status for run in runs} == {"partial"}, (name, end)
        assert all("completeness cannot be checked" in run.source["partial"] for run in runs)
        partial += 1
    assert partial >= 1


def test_rtla_auto_analysis_is_whole_only_with_its_saving_line() -> None:
    """rtla timerlat -a output ends with `Saving trace to`: without that line after the
    last analysis (a cut between two analyses, or before that last line) it is refused as
    incomplete, naming the line; --partial keeps what it holds."""
    from rtbench.interop.base import IncompleteOutput
    from rtbench.interop.timerlat_auto import TimerlatAutoImporter

    text = (INTEROP / "rtla-timerlat-auto-thread.txt").read_text(encoding="utf-8")
    assert [r.status for r in TimerlatAutoImporter().read(text.encode(), "aa.txt")] == ["ok"]
    cut = text[:text.index("  Saving trace to")]
    with pytest.raises(IncompleteOutput, match=r"^aa.txt: line \d+: cut short: no 'Saving "
                                               r"trace to' line") as err:
        TimerlatAutoImporter().read(cut.encode(), "aa.txt")
    assert [len(r.scenarios[0].measurements[-1].traces) for r in err.value.runs] == [1]
    early = cut.replace("## CPU 1 hit", "  Saving trace to t.txt\n## CPU 1 hit")
    with pytest.raises(IncompleteOutput, match="Saving trace to"):
        TimerlatAutoImporter().read(early.encode(), "aa.txt")


def test_unverifiable_import_is_stored_partial(case_env: dict[str, Any]) -> None:
    """`rtbench import` of an lmbench output (no evidence of being whole) stores it as
    'partial', says so on stderr, and `show` gives the verdict PARTIAL, not PASS."""
    path = case_env["tmp"] / "lmbench.txt"
    path.write_bytes((INTEROP / "lmbench.txt").read_bytes())
    stored = invoke(["import", str(path)], case_env["env"])
    assert stored.exit_code == 0, stored.output
    assert "completeness cannot be checked" in " ".join(stored.stderr.split())
    run_id = stored.stdout.split("run ")[1].split()[0]
    shown = invoke(["show", run_id], case_env["env"])
    assert shown.exit_code == 0 and "PARTIAL" in shown.output and "PASS" not in shown.output


@pytest.mark.parametrize(("name", "data", "args"), [
    ("unknown", b"garbage\n", ()),
    ("cut", b"".join((REAL / "sng.txt").read_bytes().splitlines(keepends=True)[:20]), ()),
    ("kernel-too-long", (REAL / "ct.json").read_bytes(), ("--kernel", "k" * 5000)),
    ("host-with-nul-free-but-long", (REAL / "ct.json").read_bytes(), ("--host", "h" * 300)),
])
def test_refused_import_creates_no_database(case_env: dict[str, Any], name: str,
                                            data: bytes, args: tuple[str, ...]) -> None:
    """An import refused for its file or for what the database would not take leaves no
    database (nor its lock file) where none was (issue 36, item 12)."""
    path = case_env["tmp"] / f"{name}.txt"
    path.write_bytes(data)
    target = case_env["tmp"] / "fresh"
    target.mkdir()
    refused = invoke(["import", str(path), "--db", f"sqlite:///{target / 'new.db'}", *args],
                     case_env["env"])
    assert refused.exit_code == 2, refused.output
    assert str(path.name) in one_line(refused.stderr)
    assert list(target.iterdir()) == []


BIDI = "\u202e\u202d\u2066\u2067\u2068\u2069\u200e\u200f\u061c\u2028\u2029\ufeff\u200b"


@pytest.mark.parametrize("mark", ["\u202e", "\u2067", "\u200f\u2028", "\ufeff\u200b"])
def test_imported_thread_names_reach_no_terminal_raw(case_env: dict[str, Any],
                                                     mark: str) -> None:
    """A trace whose thread names carry bidi overrides, isolates, separators or
    invisible marks: import, ls, show and explain print none of them (issue 36, item 14)."""
    text = (INTEROP / "trace-cmd-report.txt").read_text(encoding="utf-8")
    hostile = text.replace("python", f"py{mark}nohtyp").replace("cyclictest",
                                                                  f"cyclic{mark}test")
    path = case_env["tmp"] / f"evil{mark}.txt"
    path.write_text(hostile, encoding="utf-8")
    stored = invoke(["import", str(path), "--tag", f"who=a{mark}b"], case_env["env"])
    assert stored.exit_code == 0, stored.output
    run_id = stored.stdout.split("run ")[1].split()[0]
    for args in (["ls"], ["show", run_id], ["explain", run_id], ["tag", run_id, "x=1"]):
        result = invoke(args, case_env["env"])
        assert result.exit_code == 0, (args, result.output[-2000:])
        assert not set(BIDI) & set(result.output), (args, result.output[-2000:])
        OUTPUTS.append(result.output)
    explained = invoke(["explain", run_id], case_env["env"]).output
    assert "pynohtyp" in explained or "cyclictest" in explained, explained


def test_run_trace_that_cannot_trace_stores_nothing(case_env: dict[str, Any]) -> None:
    """`run --trace` (=on) where tracing cannot be used (a simulated run has no kernel
    events): exit 2 and one line with rtprobe's reason, nothing run, no database made;
    --trace=auto says in one line that the run goes on untraced, and explain then says
    the run asked for tracing and why it had none (issue 36, item 7)."""
    fresh = case_env["tmp"] / "fresh"
    fresh.mkdir()
    env = {**case_env["env"], "RTBENCH_DB": f"sqlite:///{fresh / 'r.db'}"}
    refused = invoke(["run", "smoke", "--simulate", "1", "--trace", "--no-report"], env)
    assert refused.exit_code == 2, refused.output[-2000:]
    line = one_line(refused.stderr)
    assert "--trace" in line and "simulated run has no kernel events" in line, line
    assert "run as root" not in line and "--trace-force" not in line
    assert list(fresh.iterdir()) == []
    auto = invoke(["run", "smoke", "--simulate", "1", "--trace=auto", "--no-report"], env)
    assert auto.exit_code == 0, auto.output[-2000:]
    said = [ln for ln in auto.stderr.splitlines() if "--trace=auto" in ln]
    assert len(said) == 1 and "goes on untraced" in said[0], auto.stderr[-2000:]
    run_id = auto.stdout.strip().splitlines()[-1].split()[1].rstrip(":")
    explained = invoke(["explain", run_id], env)
    text = " ".join(explained.output.split())
    assert "asked for tracing, but tracing could not be used (a simulated run" in text
    assert "measure with --trace (rtbench run" not in text


def one_line(stderr: str) -> str:
    """The only non-empty line of stderr."""
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, lines
    return lines[0]


def test_import_over_the_bound_is_refused_unread(case_env: dict[str, Any]) -> None:
    """A file one byte over the import bound (sparse: nothing is written) and stdin one
    byte over it: exit 2, one line naming the file and the bound, nothing stored."""
    from rtbench.core.readlimit import IMPORT_MAX_BYTES

    before = db_digest(case_env["url"])
    big = case_env["tmp"] / "huge-ct.txt"
    with open(big, "wb") as handle:
        handle.truncate(IMPORT_MAX_BYTES + 1)
    refused = invoke(["import", str(big), "--format", "cyclictest"], case_env["env"])
    assert refused.exit_code == 2, refused.output
    line = one_line(refused.stderr)
    assert str(big) in line and f"{IMPORT_MAX_BYTES >> 20} MiB" in line
    piped = CliRunner().invoke(main, ["import", "-", "--format", "cyclictest"],
                               input=b"\n" * (IMPORT_MAX_BYTES + 1), env=case_env["env"])
    assert piped.exit_code == 2 and "<stdin>" in one_line(piped.stderr), piped.output
    assert db_digest(case_env["url"]) == before


def test_import_files_over_the_total_bound_are_refused(case_env: dict[str, Any],
                                                       monkeypatch: pytest.MonkeyPatch
                                                       ) -> None:
    """Several files that add up to more than one import holds: exit 2 naming the file
    that crossed the bound, nothing stored (the bound lowered to 1 KiB for the test)."""
    import rtbench.commands.interop as interop_cmd

    monkeypatch.setattr(interop_cmd, "IMPORT_TOTAL_MAX_BYTES", 1024)
    before = db_digest(case_env["url"])
    names = []
    for index in range(3):
        path = case_env["tmp"] / f"ct-{index}.json"
        path.write_bytes((REAL / "ct.json").read_bytes())
        names.append(str(path))
    refused = invoke(["import", *names], case_env["env"])
    assert refused.exit_code == 2, refused.output
    assert "ct-1.json: the files of one import add up to more than" in one_line(refused.stderr)
    assert db_digest(case_env["url"]) == before


def test_gtod_quantile_lines_follow_the_iterations() -> None:
    """gtod_latency prints floor(log10(iterations)) - 1 quantiles: 99.0% up to 7 nines
    for its 10,000,000 iterations, none below 100 iterations."""
    from rtbench.interop.ltp import gtod_quantile_labels

    assert gtod_quantile_labels(10_000_000) == ["99.0", "99.9", "99.99", "99.999",
                                                "99.9999", "99.99999"]
    assert gtod_quantile_labels(999) == ["99.0"]
    assert gtod_quantile_labels(99) == []


@pytest.mark.parametrize("name", ("rtla-timerlat-top.txt", "rtla-osnoise-top.txt"))
def test_rtla_top_last_screen_cut_is_refused(name: str) -> None:
    """rtla top printing two screens, cut inside the second: refused naming the counts of
    CPUs; both screens whole are read (one screen alone has nothing to check against)."""
    from rtbench.interop.base import ImportFormatError, importers

    screen = (INTEROP / name).read_bytes()
    importer = importers()["rtla-top"]
    lines = screen.splitlines(keepends=True)
    rows = [i for i, line in enumerate(lines) if b"#" in line.split(b"|")[0][:12]]
    assert importer.read(screen + screen, name)
    for kept in range(rows[0], rows[-1]):  # the second screen's CPU rows up to kept
        cut = screen + b"".join(lines[:kept + 1])
        with pytest.raises(ImportFormatError, match=rf"^{name}: line \d+: .*last screen"):
            importer.read(cut, name)


def test_jitterdebugger_raw_is_stored_only_as_partial(case_env: dict[str, Any]) -> None:
    """A samples.raw cut to 280 bytes (10 whole records): refused without --partial,
    stored 'partial' with the reason with it, never 'ok' (issue 36, item 3)."""
    path = case_env["tmp"] / "samples.raw"
    path.write_bytes(_jd_raw(10))
    refused = invoke(["import", str(path)], case_env["env"])
    assert refused.exit_code == 2 and "--partial" in one_line(refused.stderr)
    stored = invoke(["import", "--partial", str(path)], case_env["env"])
    assert stored.exit_code == 0, stored.output
    run_id = stored.stdout.split("run ")[1].split()[0]
    shown = invoke(["show", run_id], case_env["env"])
    assert "PARTIAL" in shown.output and "PASS" not in shown.output
    assert "completeness cannot be checked" in " ".join(shown.output.split())


def test_import_partial_stores_the_reason(case_env: dict[str, Any]) -> None:
    """--partial keeps a cut output as a 'partial' run with the reason shown by ls and
    show; without it the same file is refused (exit 2) and nothing is stored."""
    cut = case_env["tmp"] / "cut.txt"
    cut.write_bytes(b"".join((REAL / "sng.txt").read_bytes().splitlines(keepends=True)[:20]))
    refused = invoke(["import", str(cut)], case_env["env"])
    assert refused.exit_code == 2, refused.output
    assert "--partial" in refused.output
    stored = invoke(["import", "--partial", str(cut)], case_env["env"])
    assert stored.exit_code == 0, stored.output
    run_id = stored.output.split("run ")[1].split()[0]
    listing = invoke(["ls"], case_env["env"])
    assert "partial" in listing.output and "run completed" in " ".join(listing.output.split())
    shown = invoke(["show", run_id], case_env["env"])
    assert shown.exit_code == 0 and "run completed" in " ".join(shown.output.split())
    assert "PARTIAL" in shown.output and "PASS" not in shown.output


@pytest.mark.parametrize("case", [c for c in CASES if c.kind == "text"], ids=lambda c: c.id)
def test_hostile_text(case: Case, case_env: dict[str, Any], probe_path: Path) -> None:
    """Hostile strings are text everywhere."""
    _run_case(case, case_env, probe_path)


def _secret_file(tmp: Path, what: str) -> Path:
    """A path that is not one line of secret: a FIFO with no writer, /dev/zero, a
    directory, a listening socket, several lines, too many bytes, ..."""
    path = tmp / f"secret-{what}"
    if what == "fifo":
        os.mkfifo(path, 0o600)
    elif what == "symlink-to-fifo":
        os.mkfifo(tmp / "the-fifo", 0o600)
        path.symlink_to(tmp / "the-fifo")
    elif what == "dev-zero":
        return Path("/dev/zero")
    elif what == "directory":
        path.mkdir(mode=0o700)
    elif what == "socket":
        import socket

        path = Path(tempfile.mkdtemp(prefix="rtb-")) / "s"  # a short path (108 bytes)
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(str(path))
        listener.listen(1)
        SOCKETS.append(listener)
    elif what != "missing":
        path.write_bytes({"multi-line": b"rtb_first\nrtb_second\n",
                          "crlf-two-lines": b"rtb_first\r\nrtb_second",
                          "nul-inside": b"rtb_a\x00b\n", "empty": b"", "blank": b" \n\n",
                          "4097-bytes": b"k" * 4097,
                          "world-readable": b"rtb_token\n"}[what])
        path.chmod(0o644 if what == "world-readable" else 0o600)
    return path


# listening sockets of the socket cases (closed at the end of the module)
SOCKETS: list[Any] = []


def _busy_address() -> str:
    """HOST:PORT of a socket listening here: serve cases bind to it, so a case that is not
    refused as it must be fails on the address in use rather than serving for ever."""
    import socket

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    SOCKETS.append(listener)
    return f"127.0.0.1:{listener.getsockname()[1]}"


BUSY = _busy_address()


def _secret_args(case: Case, tmp: Path) -> list[str]:
    """The case's arguments with {f} (the secret file), {config} (a webhook config naming
    it) and {inventory} (a fleet whose board's host reads as an ssh option) filled in."""
    args = list(case.args)
    if case.data is not None:
        secret = _secret_file(tmp, case.data)
        config = tmp / "hooks.toml"
        config.write_text(f'[[webhook]]\nurl = "http://127.0.0.1:9/h"\n'
                          f'secret_file = "{secret}"\n')
        args = [a.replace("{f}", str(secret)).replace("{config}", str(config)) for a in args]
    inventory = tmp / "fleet.toml"
    inventory.write_text('[[targets]]\nname = "b1"\n'
                         'uri = "ssh://root@-oProxyCommand=true"\n')
    return [a.replace("{inventory}", str(inventory)).replace("{busy}", BUSY) for a in args]


def _blocks(case: Case) -> bool:
    """True for a case that could wait forever where it is wrong (a FIFO without a
    writer): run in a child process with a timeout instead of in-process."""
    return case.data in ("fifo", "symlink-to-fifo")


@pytest.mark.parametrize("case", [c for c in CASES if c.kind == "secret"], ids=lambda c: c.id)
def test_secret_and_url(case: Case, case_env: dict[str, Any]) -> None:
    """Secret files that are not one line of secret (FIFOs without a writer, /dev/zero,
    sockets, several lines) and URLs with credentials or invalid parts: one line, exit 2
    (3 where the machine refuses), no password shown, nothing waits, nothing stored."""
    before = db_digest(case_env["url"])
    args = _secret_args(case, case_env["tmp"])
    if _blocks(case):
        try:
            done = subprocess.run([sys.executable, "-m", "rtbench", *args],
                                  env=case_env["env"], capture_output=True, text=True,
                                  timeout=30, check=False)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"{case.id}: still waiting after 30 s") from None
        result = Result(runner=CliRunner(), stdout_bytes=done.stdout.encode(),
                        stderr_bytes=done.stderr.encode(), output_bytes=(
                            done.stdout + done.stderr).encode(),
                        return_value=None, exit_code=done.returncode, exception=None)
        OUTPUTS.append(result.output)
    else:
        result = invoke(args, case_env["env"])
    check_error(result, case)
    assert PASSWORD not in result.output, result.output
    assert "rtb_first" not in result.output and "rtb_second" not in result.output
    assert db_digest(case_env["url"]) == before


@pytest.fixture(scope="module", autouse=True)
def _close_sockets() -> Iterator[None]:
    """Close the socket cases' listeners once the module is done."""
    yield
    for listener in SOCKETS:
        listener.close()


@pytest.fixture()
def small_fs(tmp_path: Path) -> Iterator[Path]:
    """A 1 MiB tmpfs of its own (unmounted after)."""
    mount = tmp_path / f"fs-{uuid.uuid4().hex[:8]}"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        require_part("tmpfs", f"cannot mount a tmpfs: {done.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def _fill(directory: Path) -> None:
    """Fill a file system to the last byte."""
    for name, size in (("filler", 65536), ("filler2", 512), ("filler3", 1)):
        fd = os.open(directory / name, os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            while True:
                os.write(fd, b"\0" * size)
        except OSError:
            pass
        finally:
            os.close(fd)


@pytest.mark.parametrize("case", [c for c in CASES if c.kind == "path"], ids=lambda c: c.id)
def test_report_path(case: Case, case_env: dict[str, Any], small_fs: Path) -> None:
    """Report paths that cannot be written: one line, exit 2 (wrong path) or 3 (machine)."""
    tmp = case_env["tmp"]
    (tmp / "afile").write_text("x")
    target = {
        "is-a-directory": tmp, "under-a-file": tmp / "afile" / "r.html",
        "name-too-long": tmp / ("x" * 300 + ".html"), "read-only-fs": small_fs / "r.html",
        "full-fs": small_fs / "r.html", "run-report-dir": tmp,
        "run-report-under-file": tmp / "afile" / "r.html",
        "run-report-read-only": small_fs / "sub" / "r.html",
        "run-report-proc": Path("/proc/rtbench-report.html")}[case.data]
    if case.data in ("read-only-fs", "run-report-read-only"):
        subprocess.run(["mount", "-o", "remount,ro", str(small_fs)], check=True)
    if case.data == "full-fs":
        _fill(small_fs)
    before = db_digest(case_env["url"])
    if case.data.startswith("run-"):
        suite = write_suite(tmp, one_test_suite())
        args = ["run", str(suite), "--simulate", "1", "--report", str(target)]
    else:
        args = ["report", "1", "-o", str(target)]
    result = invoke(args, case_env["env"])
    check_error(result, case)
    after = db_digest(case_env["url"])
    assert after == before
    assert not [p for p in small_fs.glob(".*tmp")], "a temporary file was left"


@pytest.mark.parametrize("case", [c for c in CASES if c.kind == "db"], ids=lambda c: c.id)
def test_database(case: Case, case_env: dict[str, Any], small_fs: Path) -> None:
    """Broken, newer, read-only and full databases: one line, nothing stored changed."""
    db: Path = case_env["db"]
    url = case_env["url"]
    tmp = case_env["tmp"]
    suite = write_suite(tmp, one_test_suite())
    before = db_digest(url) if not case.data.startswith(("corrupt", "truncated", "directory"))\
        else None
    if case.data.startswith("corrupt"):
        data = bytearray(db.read_bytes())
        data[100:4096] = b"\xa5" * (4096 - 100)
        data[0:16] = b"not a database!!"
        db.write_bytes(bytes(data))
    elif case.data.startswith("truncated"):
        db.write_bytes(db.read_bytes()[:1000])
    elif case.data.startswith("newer-schema"):
        conn = sqlite3.connect(db)
        conn.execute("UPDATE alembic_version SET version_num = 'ffff_from_the_future'")
        conn.commit()
        conn.close()
    elif case.data.startswith("ro-wal"):
        shutil.copy(db, small_fs / "ro.db")
        conn = sqlite3.connect(small_fs / "ro.db")
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        conn.close()  # the last connection checkpoints: no -wal, no -shm left
        subprocess.run(["mount", "-o", "remount,ro", str(small_fs)], check=True)
        url = f"sqlite:///{small_fs / 'ro.db'}"
        before = db_digest(url)
    elif case.data.startswith("missing-here"):
        url = f"sqlite:///{tmp / 'gone.db'}"  # its directory exists
        before = None
    elif case.data.startswith("missing"):
        url = f"sqlite:///{tmp / 'no' / 'such' / 'dir' / 'x.db'}"
        before = None
    elif case.data.startswith("bad-date"):
        conn = sqlite3.connect(db)
        conn.execute("UPDATE runs SET started_at = 'not a date' WHERE id = 1")
        conn.commit()
        conn.close()
        before = None
    elif case.data.startswith("directory"):
        db.unlink()
        db.mkdir()
    elif case.data.startswith("read-only"):
        shutil.copy(db, small_fs / "ro.db")
        conn = sqlite3.connect(small_fs / "ro.db")
        conn.execute("PRAGMA journal_mode=DELETE")
        conn.close()
        subprocess.run(["mount", "-o", "remount,ro", str(small_fs)], check=True)
        url = f"sqlite:///{small_fs / 'ro.db'}"
        before = db_digest(url)
    elif case.data.startswith("full-disk"):
        shutil.copy(db, small_fs / "full.db")
        url = f"sqlite:///{small_fs / 'full.db'}"
        before = db_digest(url)
        _fill(small_fs)
    env = {**case_env["env"], "RTBENCH_DB": url}
    args = [str(suite) if a == "SUITE" else str(tmp / "r.html") if a == "REPORT" else a
            for a in case.args]
    result = invoke(args, env)
    if case.data.startswith("full-disk"):
        # the run starts (its row fits) or not; either way one line and nothing lost
        assert "Traceback" not in result.output
        assert result.exit_code == 3, result.output[-3000:]
        for name in ("filler", "filler2", "filler3"):
            (small_fs / name).unlink()
        statuses = run_statuses(url)
        assert all(s != "ok" or i in before for i, s in statuses.items())
    else:
        check_error(result, case)
    if case.data.startswith("missing"):
        assert not (tmp / "no").exists(), "a reading command created the database"
        assert not list(tmp.glob("gone.db*")), "a command created the database"
    if before is not None:
        after = db_digest(url)
        assert {k: after[k] for k in before} == before


def test_corpus_is_large_and_clean() -> None:
    """At least 250 cases, and no traceback in any output the corpus produced."""
    assert len(CASES) >= 250
    assert sum(out.count("Traceback") for out in OUTPUTS) == 0
