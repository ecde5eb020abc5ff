"""The two small interfaces of interop, and the registry that finds them.

An importer turns one file's bytes into run bundles (rtbench.bundle.RunDetail, id 0);
an exporter writes one stored run as text or bytes.  Errors are ImportFormatError or
ExportFormatError with one line naming the file (or run) and what is wrong (exit 2).
"""

from __future__ import annotations

import importlib
import pkgutil
from abc import ABC, abstractmethod
from typing import Any, ClassVar

from rtbench.bundle import RunDetail


class ImportFormatError(ValueError):
    """A file that its importer cannot read; the message is one line (exit 2)."""


class IncompleteOutput(ImportFormatError):
    """A tool output that stops before its closing lines; runs holds what it has."""

    def __init__(self, message: str, runs: list[RunDetail]) -> None:
        """The one-line message (file, line, what is missing) and the runs read."""
        super().__init__(message)
        self.runs = runs


class ExportFormatError(ValueError):
    """A run that a format cannot express; the message is one line (exit 2)."""


class Importer(ABC):
    """Reads one kind of file into run bundles."""

    # the --format name, e.g. "rtbench-json", "cyclictest-json"
    name: ClassVar[str] = ""
    # a line for `rtbench import --help`
    summary: ClassVar[str] = ""

    @abstractmethod
    def detect(self, head: bytes, filename: str) -> bool:
        """True when the file (its first bytes and its name) looks like this format."""

    @abstractmethod
    def read(self, data: bytes, filename: str) -> list[RunDetail]:
        """The runs in the file; ImportFormatError when it cannot be read."""


class Exporter(ABC):
    """Writes one run in one format."""

    name: ClassVar[str] = ""
    summary: ClassVar[str] = ""
    # the file suffix a user would give it (".json", ".xml", ...)
    suffix: ClassVar[str] = ""

    @abstractmethod
    def export(self, run: RunDetail) -> bytes:
        """The run in this format; ExportFormatError when it cannot be expressed."""


def _subclasses(kind: Any) -> list[Any]:
    """Every concrete subclass of kind defined in the rtbench.interop modules."""
    import rtbench.interop as package

    found: list[Any] = []
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
        if info.name.startswith("_") or info.name == "base":
            continue
        module = importlib.import_module(f"rtbench.interop.{info.name}")
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, kind) and value is not kind \
                    and str(getattr(value, "name", "")) \
                    and value.__module__ == module.__name__:
                found.append(value)
    return found


def importers() -> dict[str, Importer]:
    """Every importer, by format name."""
    return {cls.name: cls() for cls in _subclasses(Importer)}


def exporters() -> dict[str, Exporter]:
    """Every exporter, by format name."""
    return {cls.name: cls() for cls in _subclasses(Exporter)}
