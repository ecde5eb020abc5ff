"""Command groups of the `rtbench` CLI beyond the core ones in rtbench/cli.py.

Each module here defines `register(main: click.Group) -> None`, which adds its commands
to the top-level group; `register_all()` calls every one.  Adding a command is adding a
module (the shared helpers — handle_errors, fail, open_store, make_console — stay in
rtbench.cli).
"""

from __future__ import annotations

import importlib
import pkgutil

import click


def register_all(main: click.Group) -> None:
    """Add the commands of every module in this package to main."""
    import rtbench.commands as package

    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"rtbench.commands.{info.name}")
        module.register(main)
