"""A transport is one module of rtbench/targets/: its URI forms (the --target help), its
parsing and its fleet inventory keys live there, and the CLI and the fleet inventory ask
the registry (issue 38).  A toy transport, registered the way a new module would be,
shows up everywhere without another file changing."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

import pytest

import rtbench.targets.base as base
from rtbench.bundle import board_of
from rtbench.fleet.inventory import InventoryError, load_inventory
from rtbench.rtprobe.provider import ProbeProvider
from rtbench.targets.base import Target, TargetUsageError, target_help


class ToyTarget(Target):
    """A transport known only to this test: toy:NAME."""

    schemes: ClassVar[tuple[str, ...]] = ("toy",)
    uri_forms: ClassVar[tuple[str, ...]] = ("toy:NAME",)
    inventory_keys: ClassVar[tuple[str, ...]] = ("toy_colour",)

    def __init__(self, uri: str, colour: str | None) -> None:
        self.uri = uri
        self.colour = colour

    @classmethod
    def inventory_options(cls, entry: Mapping[str, Any], base_dir: Path,
                          env: Mapping[str, str]) -> dict[str, Any]:
        """toy_colour = "red" or "blue"."""
        colour = entry.get("toy_colour")
        if colour not in (None, "red", "blue"):
            raise TargetUsageError("toy_colour: write red or blue")
        return {} if colour is None else {"colour": colour}

    @classmethod
    def from_uri(cls, uri: str, *, provider: ProbeProvider | None = None,
                 options: dict[str, Any] | None = None) -> Target:
        """toy:NAME."""
        if not uri.removeprefix("toy:"):
            raise TargetUsageError(f"target {uri!r}: expected toy:NAME")
        return cls(uri, (options or {}).get("colour"))

    @classmethod
    def board_of_uri(cls, uri: str) -> str | None:
        """toy:NAME names the board NAME."""
        return uri.removeprefix("toy:") or None

    @property
    def name(self) -> str:
        """The URI."""
        return self.uri


# a toy: nothing runs on it, so what a real transport must do stays unwritten here
ToyTarget.__abstractmethods__ = frozenset()


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch) -> None:
    """The registry with the toy transport added, as a new targets/toy.py would be."""
    known = base._target_classes()
    monkeypatch.setattr(base, "_target_classes", lambda: {**known, "toy": ToyTarget})


def test_every_transport_is_in_the_target_help() -> None:
    text = target_help()
    for cls in base._target_classes().values():
        for form in cls.uri_forms:
            assert form in text
    # in the transports' help_order: the order rtbench always printed them in
    assert text.startswith("Where to measure, as a URI: local (default, this machine), ")
    assert text.endswith(" (docs/targets.md).")
    shipped = ["local (default", "ssh://[user@]host[:port]", "serial:///dev/ttyX?baud=115200",
               "labgrid:PLACE", "labgrid-env:FILE.yaml[:TARGET]"]
    assert [text.index(form) for form in shipped] == sorted(text.index(f) for f in shipped)


def test_a_new_transport_is_in_the_help_and_the_inventory(toy: None, tmp_path: Path) -> None:
    text = target_help()
    # after the transports rtbench ships (its help_order is the default)
    assert text.index("toy:NAME") > text.index("labgrid-env:FILE.yaml[:TARGET]")
    path = tmp_path / "lab.toml"
    path.write_text('[[targets]]\nname = "t1"\nuri = "toy:one"\ntoy_colour = "red"\n')
    board = load_inventory(path, {}).boards[0]
    assert board.options == {"colour": "red"}
    path.write_text('[[targets]]\nname = "t1"\nuri = "toy:one"\ntoy_colour = "green"\n')
    with pytest.raises(InventoryError, match=r"target 't1': toy_colour: write red or blue"):
        load_inventory(path, {})
    # its key is its own: another transport's entry refuses it
    path.write_text('[[targets]]\nname = "s1"\nuri = "ssh://root@b1"\ntoy_colour = "red"\n')
    with pytest.raises(InventoryError, match="toy_colour: only for toy targets"):
        load_inventory(path, {})


def test_a_new_transport_names_its_boards(monkeypatch: pytest.MonkeyPatch) -> None:
    # the board of a run stored without a name comes from its transport's rule
    assert board_of("toy:bench7", "(none)") == "toy-bench7"  # no toy transport yet
    known = base._target_classes()
    monkeypatch.setattr(base, "_target_classes", lambda: {**known, "toy": ToyTarget})
    assert board_of("toy:bench7", "(none)") == "bench7"
    assert board_of("toy:", "imx8") == "imx8"
    # the transports' own rules, asked the same way
    assert board_of("ssh://root@[fe80::1]:2222/x", "h") == "fe80::1"
    assert board_of("labgrid:rack3-imx8", "h") == "rack3-imx8"
    assert board_of("labgrid-env:lab.yaml", "h") == "h"
