"""The commands of the `rtbench` CLI, one module per command family.

Each public module here defines `register(main: click.Group) -> None`, which adds its
commands to a group; rtbench/cli.py names every command and imports its module only
when the command is used.  Shared helpers (errors, console, store, target, help texts)
are in `_common.py`; modules whose names start with `_` hold no commands.
"""
