"""The store's errors: each one line for the user."""

from __future__ import annotations

from rtbench import EXIT_USAGE


class StoreError(Exception):
    """A database problem, worded as one line for the user."""


class RunNotFound(StoreError):
    """The run asked for is not in the database."""


class BundleInvalid(StoreError):
    """A run bundle that does not fit the database (refused before any write)."""


class StoreUnavailable(StoreError):
    """The database cannot be reached (server down, connection lost, locked)."""

class DatabaseMissing(StoreError):
    """A command that only reads named a database that does not exist."""

    code = EXIT_USAGE
