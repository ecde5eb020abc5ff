"""The fleet inventory: a TOML list of boards, read and checked strictly.

    [[targets]]
    name = "imx8-1"                        # unique; letters, digits, _ . -
    uri = "ssh://root@imx8-1.lab"          # any --target URI rtbench knows
    tags = { soc = "imx8mp", rack = "2" }  # key = "value" strings; --only soc=imx8mp
    arch = "aarch64"                       # optional: the `uname -m` the board must report
    ssh_config = "lab_ssh_config"          # ssh only: an ssh_config file for this board
    login = "root"                         # serial only: the console login name
    password_env = "IMX8_1_PASSWORD"       # serial only: the variable holding the password
    power_cycle = true                     # labgrid only: cycle its power before the run

The file holds no secret: a password is named by its environment variable, ssh uses the
agent, keys and ssh_config as usual.  Every mistake is InventoryError, one line naming the
file and the key (exit 2), raised before anything connects or is stored.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rtbench.core.readlimit import (
    INVENTORY_MAX_BYTES,
    InputTooLarge,
    read_text_limited,
    too_large_message,
)
from rtbench.rtprobe.provider import ProbeProvider
from rtbench.targets.base import (
    Target,
    TargetError,
    TargetUsageError,
    inventory_keys,
    open_target,
    target_class,
    target_schemes,
)

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
TAG_KEY = re.compile(r"^[A-Za-z0-9_.:-]{1,64}$")
COMMON_KEYS = ("name", "uri", "tags", "arch")
# tag keys the fleet sets itself, or that name a field of a stored run
RESERVED_TAGS = ("board", "fleet", "name", "host", "kernel", "suite", "status", "simulated")
SECRET_KEYS = ("password", "passphrase", "secret", "token", "key")


class InventoryError(Exception):
    """A mistake in the inventory or in --only: one line naming file and key (exit 2)."""


@dataclass(frozen=True)
class Board:
    """One board of the inventory, checked."""

    name: str
    uri: str
    tags: dict[str, str]
    arch: str | None = None
    # what open_target() gets (ssh_config, login, password): never shown or stored
    options: dict[str, Any] = field(default_factory=dict, repr=False)
    # labgrid only: cycle the board's power before its run (never implicit)
    power_cycle: bool = False

    def target(self, provider: ProbeProvider | None = None) -> Target:
        """The board's target, not opened yet; provider gives it its rtprobe (without
        one the target can be checked but not opened)."""
        target = open_target(self.uri, provider=provider, options=dict(self.options))
        if self.power_cycle:
            target.enable_power_cycle()
        return target

    def matches(self, key: str, value: str) -> bool:
        """True when --only KEY=VALUE selects this board (name= matches the name)."""
        if key == "name":
            return self.name == value
        return self.tags.get(key) == value


@dataclass(frozen=True)
class Inventory:
    """The boards of an inventory file, in file order."""

    path: Path
    boards: list[Board]


def load_inventory(path: Path, environ: Mapping[str, str] | None = None) -> Inventory:
    """Read and check the inventory file at path (environ: where password_env is looked
    up, default os.environ)."""
    env = os.environ if environ is None else environ
    where = str(path)
    try:
        text = read_text_limited(path, INVENTORY_MAX_BYTES)
    except FileNotFoundError:
        raise InventoryError(f"inventory {where}: no such file") from None
    except InputTooLarge:
        raise InventoryError(too_large_message(f"inventory {where}",
                                               INVENTORY_MAX_BYTES)) from None
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
        raise InventoryError(f"inventory {where}: cannot read ({why})") from None
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InventoryError(f"inventory {where}: not valid TOML ({exc})") from None
    except RecursionError:
        raise InventoryError(f"inventory {where}: not valid TOML (nested too deeply)") \
            from None
    unknown = sorted(set(doc) - {"targets"})
    if unknown:
        raise InventoryError(f"inventory {where}: unknown key {unknown[0]!r} (an inventory "
                             "holds [[targets]] tables only)")
    entries = doc.get("targets")
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise InventoryError(f"inventory {where}: targets: write one [[targets]] table per "
                             "board")
    if not entries:
        raise InventoryError(f"inventory {where}: targets: no board listed")
    boards: list[Board] = []
    for number, entry in enumerate(entries, start=1):
        board = _board(entry, number, path, env)
        for other in boards:
            if other.name == board.name:
                raise InventoryError(f"inventory {where}: targets #{number}: name "
                                     f"{board.name!r} is already used by targets "
                                     f"#{boards.index(other) + 1}")
            if other.uri == board.uri:
                raise InventoryError(
                    f"inventory {where}: target {board.name!r}: uri is the same board as "
                    f"{other.name!r} (a board takes one run at a time); on one machine "
                    "give each entry its own ?dir=")
        boards.append(board)
    return Inventory(path, boards)


def _board(entry: dict[str, Any], number: int, path: Path, env: Mapping[str, str]) -> Board:
    """Check one [[targets]] table (number counts from 1)."""
    here = f"inventory {path}: targets #{number}"
    name = entry.get("name")
    if name is None:
        raise InventoryError(f"{here}: name: missing (every board needs a unique name)")
    if not isinstance(name, str) or not NAME.match(name):
        raise InventoryError(f"{here}: name: {name!r} is not a name (1-64 letters, digits, "
                             "_ . -)")
    here = f"inventory {path}: target {name!r}"
    uri = entry.get("uri")
    if uri is None:
        raise InventoryError(f"{here}: uri: missing (e.g. ssh://root@board)")
    if not isinstance(uri, str) or not uri.strip():
        raise InventoryError(f"{here}: uri: write the target as a string URI")
    uri = uri.strip()
    scheme = uri.split(":", 1)[0].lower() if ":" in uri else uri.lower()
    transport = target_class(scheme)
    if transport is None:
        shown = ", ".join(f"{s}:" if s != "local" else s for s in target_schemes())
        raise InventoryError(f"{here}: uri: unknown scheme {scheme!r}; use one of {shown}")
    # keys only some kinds of target take: each transport names its own
    scheme_keys = inventory_keys()
    allowed = COMMON_KEYS + transport.inventory_keys
    for key in entry:
        if key in allowed:
            continue
        if key.lower() in SECRET_KEYS:
            raise InventoryError(f"{here}: {key}: secrets stay out of the inventory; name the "
                                 "environment variable that holds it (password_env = \"VAR\")")
        if any(key in keys for keys in scheme_keys.values()):
            owners = " and ".join(s for s, keys in scheme_keys.items() if key in keys)
            raise InventoryError(f"{here}: {key}: only for {owners} targets")
        raise InventoryError(f"{here}: unknown key {key!r} (known: {', '.join(allowed)})")
    tags = _tags(entry.get("tags", {}), here)
    arch = entry.get("arch")
    if arch is not None and (not isinstance(arch, str) or not arch.strip()
                             or not arch.isprintable()):
        raise InventoryError(f"{here}: arch: write the board's `uname -m` as a string "
                             "(e.g. \"aarch64\")")
    try:
        options = transport.inventory_options(entry, path.parent, env)
    except TargetUsageError as exc:
        raise InventoryError(f"{here}: {exc}") from None
    power_cycle = entry.get("power_cycle", False)
    if not isinstance(power_cycle, bool):
        raise InventoryError(f"{here}: power_cycle: write true or false")
    board = Board(name, uri, tags, arch.strip() if arch else None, options, power_cycle)
    try:
        board.target()
    except TargetUsageError as exc:
        raise InventoryError(f"{here}: uri: {exc}") from None
    except TargetError as exc:
        raise InventoryError(f"{here}: uri: {exc}") from None
    return board


def _tags(value: object, here: str) -> dict[str, str]:
    """The tags table: KEY = "VALUE" strings."""
    if not isinstance(value, dict):
        raise InventoryError(f"{here}: tags: write a table of strings, e.g. "
                             "tags = { soc = \"imx8mp\" }")
    tags: dict[str, str] = {}
    for key, text in value.items():
        if not TAG_KEY.match(key):
            raise InventoryError(f"{here}: tags.{key}: a tag key is 1-64 letters, digits, "
                                 "_ . : -")
        if key in RESERVED_TAGS:
            raise InventoryError(f"{here}: tags.{key}: that key is the fleet's own or names "
                                 "a run field; choose another")
        if not isinstance(text, str) or not text.isprintable():
            raise InventoryError(f"{here}: tags.{key}: write the value as a string "
                                 f"(e.g. {key} = \"{text}\")")
        tags[key] = text
    return tags


def parse_only(only: tuple[str, ...]) -> list[tuple[str, str]]:
    """The --only KEY=VALUE conditions; InventoryError for one without '='."""
    conditions = []
    for text in only:
        key, sep, value = text.partition("=")
        if not sep or not TAG_KEY.match(key):
            raise InventoryError(f"--only {text!r}: write KEY=VALUE (a tag, or name=BOARD)")
        conditions.append((key, value))
    return conditions


def select(inventory: Inventory, only: tuple[str, ...]) -> list[Board]:
    """The boards every --only condition selects; InventoryError when none is left."""
    conditions = parse_only(only)
    chosen = [b for b in inventory.boards
              if all(b.matches(key, value) for key, value in conditions)]
    if not chosen:
        keys = sorted({k for b in inventory.boards for k in b.tags})
        known = f" (its tags: {', '.join(keys)})" if keys else " (it has no tags)"
        raise InventoryError(f"inventory {inventory.path}: no board matches --only "
                             f"{','.join(only)}{known}")
    return chosen
