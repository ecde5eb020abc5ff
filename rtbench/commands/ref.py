"""`rtbench ref`: the published reference results shipped with rtbench."""

from __future__ import annotations

import click
from rich.text import Text

from rtbench import EXIT_USAGE
from rtbench.commands._common import fail, handle_errors, make_console
from rtbench.core.valuetext import value_text
from rtbench.report.layout import Column, FittedTable


def register(main: click.Group) -> None:
    """Add `ref ls` and `ref show`."""

    @main.group()
    def ref() -> None:
        """Published reference runs (figures quoted from papers; not measured here).

        \b
        Examples:
          rtbench ref ls
          rtbench ref show loongson2f
          rtbench compare latest ref:loongson2f
        """

    @ref.command(name="ls")
    @handle_errors
    def ref_ls() -> None:
        """List the reference runs (use them as ref:NAME)."""
        from rtbench.reference import reference_runs

        columns = [Column("name", "left"), Column("what", "left", wrap=True),
                   Column("platform", "left", wrap=True), Column("cells"),
                   Column("source", "left", wrap=True)]
        rows: list[list[str | Text]] = [
            [f"ref:{r.name}", r.title, r.platform, str(len(r.cells)), f"reference/{r.file}"]
            for r in reference_runs()]
        make_console().print(FittedTable(columns, rows,
                                         title="reference runs: published, not measured here"))

    @ref.command(name="show")
    @click.argument("name")
    @handle_errors
    def ref_show(name: str) -> None:
        """Show one reference run: conditions and every published figure."""
        from rtbench.reference import reference_run, reference_runs

        found = reference_run(name.removeprefix("ref:"))
        if found is None:
            fail(f"no reference run {name!r}; use one of "
                 + ", ".join(r.name for r in reference_runs()), EXIT_USAGE)
        console = make_console()
        console.print(f"[bold]ref:{found.name}[/bold] — {found.title}", highlight=False)
        console.print(f"[bold yellow]{found.label}[/] (source: reference/{found.file})",
                      highlight=False)
        console.print(f"platform: {found.platform}\nkernel: {found.kernel}", highlight=False,
                      markup=False)
        for line in found.conditions:
            console.print(f"  # {line}", highlight=False, markup=False)
        from rtbench.analysis.reference import hist_quantile

        rows = []
        for c in found.cells:
            f = c.figures_ns

            def us(value: float | None) -> str:
                return "n/a" if value is None else f"{value / 1000:g}"
            p50 = hist_quantile(c, 0.5) if c.hist else None
            p99 = hist_quantile(c, 0.99) if c.hist else None
            other = "; ".join(f"{k}: {value_text(v)}" for k, v in c.other.items())
            if c.hist:
                other = (other + "; " if other else "") + \
                    f"histogram of {sum(n for _, n in c.hist):,} samples"
            rows.append([c.scenario, c.test, " ".join(f"{k}={value_text(v)}"
                                                      for k, v in c.params.items()) or "-",
                         c.label, us(f.get("min")), us(f.get("mean")), us(f.get("max")),
                         us(f.get("stddev")), us(p50), us(p99), other or "-"])
        columns = [Column("scenario", "left", wrap=True), Column("test", "left", wrap=True),
                   Column("params", "left", wrap=True),
                   Column("as published", "left", wrap=True)]
        columns += [Column(name) for name in ("min", "avg", "max", "stddev", "p50", "p99")]
        columns.append(Column("other", "left", wrap=True))
        console.print(FittedTable(columns, rows, title="published figures (µs; n/a: not "
                                  "printed in the paper)"))
