"""The `rtbench` command line, assembled: the top-level group and its commands, by name.

Every command lives in a module of rtbench/commands/.  The group knows each command's
name, module and one-line summary from the table below and imports a module only when
its command runs or shows its help, so `rtbench --help` and `rtbench --version` start
without loading rich, SQLAlchemy, numpy or matplotlib.
"""

from __future__ import annotations

import gc
import importlib
import sys
from typing import Any

import click

from rtbench import EXIT_ENV, EXIT_INTERRUPTED, EXIT_USAGE, __version__

# command name -> (module in rtbench/commands, the summary `rtbench --help` lists);
# tests/host/test_cli_lazy.py checks each summary against the command's own help
COMMANDS: dict[str, tuple[str, str]] = {
    "advise": ("advise", "Smallest safe cycle time from a run, by the 25 % rule: the "
                         "worst-case latency should stay within BUDGET of the cycle."),
    "compare": ("compare", "Compare runs cell by cell: p50/p99/p99.9/max with 95 % "
                           "intervals of the differences, overruns, exceedance rates, and "
                           "every environment fact that differs."),
    "cyclictest": ("cyclictest", "Run cyclictest's command line with rtprobe; print and "
                                 "store what it measured."),
    "db": ("db", "The results database: where it is, bring its schema up to date, prune "
                 "old runs."),
    "explain": ("explain", "Why the spikes of a run happened: causes ranked by the spikes "
                           "they led and the latency they took, and the time lines of the "
                           "worst spikes (needs a run measured with --trace, or an "
                           "imported trace)."),
    "export": ("interop", "Write a stored run in another format (JUnit, LAVA, KCIDB, "
                          "OpenMetrics, ...)."),
    "fleet": ("fleet", "Run a suite on every board of INVENTORY (a TOML file) at once, "
                       "each board its own stored run tagged fleet=ID and board=NAME; then "
                       "a summary per board and scenario and an HTML fleet report."),
    "import": ("interop", "Store the runs in files other tools wrote (or rtbench's JSON "
                          "export)."),
    "ls": ("ls", "List stored runs, newest first; SELECTOR keeps the matching ones "
                 "(host=box,kernel~rt,board=imx31: = equal, ~ contains, != / !~ the "
                 "opposite)."),
    "plot": ("plot", "Draw a figure of one or more runs (published reference runs join "
                     "where they have the figure)."),
    "preflight": ("preflight", "Check the system knobs that decide real-time results on a "
                               "target (default: this machine)."),
    "probe": ("probe", "Build rtprobe for the CPUs of boards."),
    "push": ("server", "Upload stored runs to a results server (same run twice: stored "
                       "once)."),
    "ref": ("ref", "Published reference runs (figures quoted from papers; not measured "
                   "here)."),
    "report": ("report", "Write a self-contained HTML report of a run, or of several runs "
                         "compared (differences with intervals, environment differences, "
                         "advisor, figures)."),
    "rm": ("rm", "Delete stored runs and everything stored with them (one transaction)."),
    "run": ("run", "Run a suite (built-in name or TOML file; default: quick) on a target "
                   "(default: this machine)."),
    "serve": ("server", "Serve the results database: web pages, the /api/v1 JSON API, "
                        "uploads."),
    "show": ("show", "Print everything stored about a run."),
    "suites": ("suites", "List the built-in suites, or validate and show one (name or "
                         "file)."),
    "tag": ("tag", "Add tags to a run, or remove them; print the run's tags."),
    "token": ("server", "Tokens of the results server (stored hashed in the database), "
                        "each with a scope."),
}


def short_help(summary: str, limit: int) -> str:
    """A command's summary for the --help list: its first line, cut at a word with
    "..." when longer than limit (click's own helper changed type between versions)."""
    line = summary.strip().splitlines()[0] if summary.strip() else ""
    if len(line) <= limit:
        return line
    cut = line[:max(limit - 3, 1)].rsplit(" ", 1)[0]
    return cut.rstrip(" ,;:") + "..."


class RtbenchGroup(click.Group):
    """The top-level group: commands load on first use; click's usage errors become one
    line and exit 2."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        """Every command's name, without importing any of them."""
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """The command named cmd_name, its module imported now (None: no such command)."""
        entry = COMMANDS.get(cmd_name)
        if entry is None:
            return None
        module = importlib.import_module(f"rtbench.commands.{entry[0]}")
        scratch = click.Group()
        module.register(scratch)
        return scratch.commands.get(cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The command list of --help, from the table (no command module is imported)."""
        names = self.list_commands(ctx)
        if not names:
            return
        limit = formatter.width - 6 - max(len(name) for name in names)
        rows = [(name, short_help(COMMANDS[name][1], limit)) for name in names]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def main(self, args: Any = None, prog_name: str | None = None,
             complete_var: str | None = None, standalone_mode: bool = True,
             **extra: Any) -> Any:
        """Run the command line; a usage error is one `rtbench: ...` line, exit 2."""
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, False, **extra)
        from rtbench.core.stdoutcheck import tolerate_closed_reader

        tolerate_closed_reader()
        argv = sys.argv[1:] if args is None else list(args)
        for arg in argv:
            if isinstance(arg, str) and "\x00" in arg:
                from rtbench.report.text import for_terminal

                click.echo(f"rtbench: argument {for_terminal(arg)!r} contains a NUL byte",
                           err=True)
                sys.exit(EXIT_USAGE)
        try:
            code = super().main(args, prog_name, complete_var, False, **extra)
        except click.ClickException as exc:
            from rtbench.report.text import for_terminal

            ctx = getattr(exc, "ctx", None)
            where = " ".join(["rtbench", *(ctx.command_path.split()[1:] if ctx else [])])
            line = " ".join(for_terminal(exc.format_message()).split())
            click.echo(f"{where}: {line} (see --help)", err=True)
            code = EXIT_USAGE
        except click.Abort:
            click.echo("rtbench: interrupted", err=True)
            code = EXIT_INTERRUPTED
        except SystemExit as exc:
            code = exc.code
            if isinstance(sys.stdout, click.utils.PacifyFlushWrapper):
                # click's answer to a closed pipe (--help, db path | head -1) is exit 1
                # and this wrapper; the reader took what it wanted: a quiet exit 0
                from rtbench.core.stdoutcheck import silence_stdout

                silence_stdout()
                code = 0
        except OSError as exc:  # a command without handle_errors (--help, db path)
            from rtbench.core.stdoutcheck import reader_gone, silence_stdout, stdout_failed

            if exc.filename is None and reader_gone(exc):
                silence_stdout()
                sys.exit(0)  # the reader closed the pipe (`| head -1`): a quiet end
            if exc.filename is not None or not stdout_failed(exc):
                raise
            click.echo(f"rtbench: cannot write to stdout: {exc.strerror or exc}; the output "
                       "is incomplete", err=True)
            code = EXIT_ENV
        finally:
            # The command is done and its output written: keep the interpreter's final
            # garbage collection off the objects it made (a run's windows, figures),
            # which took 2-5 s after the last line of a quick run on a busy machine.
            gc.freeze()
        sys.exit(_checked_exit_code(code if isinstance(code, int) else 0))


def _checked_exit_code(code: int) -> int:
    """code, or exit 3 with one line when stdout did not take all that was written."""
    from rtbench.core.stdoutcheck import reader_gone, silence_stdout, stdout_fault

    fault = stdout_fault()
    if fault is None:
        return code
    gone = reader_gone(fault)
    silence_stdout()
    if gone:
        return code  # the reader closed the pipe after the command chose its code
    reason = fault.strerror if isinstance(fault, OSError) and fault.strerror else str(fault)
    if code in (0, 1):  # a failing command has said its one line already
        click.echo(f"rtbench: cannot write to stdout: {reason}; the output is incomplete",
                   err=True)
        return EXIT_ENV
    return code


@click.group(cls=RtbenchGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="rtbench")
@click.option("--width", type=click.IntRange(40, 1000), default=None, metavar="N",
              help="Lay tables out for N columns (default: COLUMNS, the terminal's width, "
                   "or 80 when output is not a terminal).")
def main(width: int | None) -> None:
    """rtbench: measure real-time latency with rtprobe, keep every run, report it.

    \b
    Examples:
      rtbench run                  # the quick suite on this machine
      rtbench ls                   # stored runs
      rtbench show 3               # everything stored about run 3
      rtbench report 3 -o r3.html  # self-contained HTML report
    """
    from rtbench.report.width import set_width

    set_width(width)
