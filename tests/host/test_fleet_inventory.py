"""The fleet inventory's strict checks, --only, all-or-nothing reservation, the summary."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from rtbench.analysis.fleet import board_summary, fleet_exit_code, worst_status
from rtbench.fleet.inventory import InventoryError, load_inventory, select
from rtbench.run.fleet import FleetError, new_fleet_id, reserve_all
from rtbench.targets.base import TargetError
from tests.cli_inprocess import run_in_process
from tests.conftest import REPO

GOOD = """
[[targets]]
name = "imx8-1"
uri = "ssh://root@imx8-1.lab?dir=/tmp/rtb"
tags = { soc = "imx8mp", rack = "2" }
arch = "aarch64"

[[targets]]
name = "am335x"
uri = "serial:///dev/ttyUSB0?baud=115200"
tags = { soc = "am335x" }
login = "root"
password_env = "AM335X_PASSWORD"
"""


def write(tmp_path: Path, text: str) -> Path:
    """An inventory file holding text."""
    path = tmp_path / "lab.toml"
    path.write_text(text)
    return path


def test_good_inventory_is_read_with_its_credentials_by_reference(tmp_path: Path) -> None:
    inventory = load_inventory(write(tmp_path, GOOD), {"AM335X_PASSWORD": "s3cret"})
    first, second = inventory.boards
    assert (first.name, first.arch, first.tags) == ("imx8-1", "aarch64",
                                                    {"soc": "imx8mp", "rack": "2"})
    assert second.options == {"login": "root", "password": "s3cret"}
    assert "s3cret" not in repr(second)
    target = second.target()
    assert target.login == "root" and target.password == "s3cret"
    assert [b.name for b in select(inventory, ("soc=am335x",))] == ["am335x"]
    assert [b.name for b in select(inventory, ("name=imx8-1",))] == ["imx8-1"]
    assert len(select(inventory, ())) == 2


BAD = [
    ("", "no such file"),
    ("[[targets]]\nname = 'a'\nuri = 'ssh://h'\ncolour = 'red'\n",
     "target 'a': unknown key 'colour'"),
    ("[[targets]]\nname = 'a'\nuri = 'ssh://h'\n[[targets]]\nname = 'a'\nuri = 'ssh://g'\n",
     "targets #2: name 'a' is already used by targets #1"),
    ("[[targets]]\nname = 'a'\nuri = 'ssh://h'\n[[targets]]\nname = 'b'\nuri = 'ssh://h'\n",
     "target 'b': uri is the same board as 'a'"),
    ("[[targets]]\nname = 'a'\nuri = 'telnet://h'\n", "target 'a': uri: unknown scheme 'telnet'"),
    ("[[targets]]\nname = 'a'\nuri = 'serial:///dev/ttyS0'\npassword_env = 'NOT_SET_X'\n",
     "target 'a': password_env: the environment variable NOT_SET_X is not set"),
    ("[[targets]]\nname = 'a'\nuri = 'serial:///dev/ttyS0'\npassword = 'x'\n",
     "target 'a': password: secrets stay out of the inventory"),
    ("[[targets]]\nname = 'a'\nuri = 'ssh://h'\npassword_env = 'HOME'\n",
     "target 'a': password_env: only for serial targets"),
    ("[[targets]]\nname = 'a'\nuri = 'ssh://h'\ntags = { fleet = 'x' }\n",
     "target 'a': tags.fleet: that key is the fleet's own"),
    ("[[targets]]\nname = 'a'\nuri = 'ssh://h'\ntags = { rack = 2 }\n",
     "target 'a': tags.rack: write the value as a string"),
    ("[[targets]]\nname = 'a b'\nuri = 'ssh://h'\n", "targets #1: name: 'a b' is not a name"),
    ("[[targets]]\nuri = 'ssh://h'\n", "targets #1: name: missing"),
    ("[[targets]]\nname = 'a'\n", "target 'a': uri: missing"),
    ("[[targets]]\nname = 'a'\nuri = 'ssh://h?speed=1'\n", "target 'a': uri: target"),
    ("[[targets]]\nname = 'a'\nuri = 'ssh://h'\nssh_config = 'nope'\n",
     "target 'a': ssh_config:"),
    ("[[targets]]\nname = 'a'\nuri = 'ssh://h'\npower_cycle = true\n",
     "target 'a': power_cycle: only for labgrid and labgrid-env targets"),
    ("[[targets]]\nname = 'a'\nuri = 'labgrid:p1'\npower_cycle = 'yes'\n",
     "target 'a': power_cycle: write true or false"),
    ("targets = []\n", "targets: no board listed"),
    ("[fleet]\nname = 'x'\n", "unknown key 'fleet'"),
    ("[[targets]\n", "not valid TOML"),
]


@pytest.mark.parametrize(("text", "message"), BAD)
def test_bad_inventory_is_one_line_naming_file_and_key(tmp_path: Path, text: str,
                                                       message: str) -> None:
    path = write(tmp_path, text) if text else tmp_path / "missing.toml"
    with pytest.raises(InventoryError) as caught:
        load_inventory(path, {"HOME": "/root"})
    line = str(caught.value)
    assert "\n" not in line and str(path) in line and message in line, line


def test_only_that_selects_no_board_is_an_error(tmp_path: Path) -> None:
    inventory = load_inventory(write(tmp_path, GOOD), {"AM335X_PASSWORD": "x"})
    with pytest.raises(InventoryError, match=r"no board matches --only soc=rk3399 "
                                             r"\(its tags: rack, soc\)"):
        select(inventory, ("soc=rk3399",))
    with pytest.raises(InventoryError, match="write KEY=VALUE"):
        select(inventory, ("soc",))


def test_cli_refuses_a_bad_inventory_before_anything_is_stored(tmp_path: Path) -> None:
    path = write(tmp_path, "[[targets]]\nname = 'a'\nuri = 'telnet://h'\n")
    env = {**os.environ, "XDG_DATA_HOME": str(tmp_path / "data"),
           "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    env.pop("RTBENCH_DB", None)
    for args in (["fleet", str(path), "smoke"],
                 ["fleet", str(write(tmp_path, GOOD)), "smoke", "--only", "soc=none"]):
        # in this process (tests/cli_inprocess.py): refused before anything is measured
        done = run_in_process(args, env, REPO, timeout=120)
        lines = done.stderr.strip().splitlines()
        assert done.returncode == 2 and len(lines) == 1, done.stderr
        assert str(tmp_path / "lab.toml") in lines[0]
    assert not (tmp_path / "data" / "rtbench" / "results.db").exists()


class FakeTarget:
    """Records reserve/release; refuses to be reserved when busy."""

    def __init__(self, busy: bool = False) -> None:
        self.busy = busy
        self.calls: list[str] = []

    def reserve(self, wait_s: float = 0.0) -> None:
        """Reserve, or TargetError when busy."""
        if self.busy:
            raise TargetError("place is reserved by someone else")
        self.calls.append(f"reserve {wait_s:g}")

    def release(self) -> None:
        """Release."""
        self.calls.append("release")


def test_one_board_that_cannot_be_reserved_releases_the_others(tmp_path: Path) -> None:
    inventory = load_inventory(write(tmp_path, GOOD), {"AM335X_PASSWORD": "x"})
    free, busy = FakeTarget(), FakeTarget(busy=True)
    pairs: list[Any] = list(zip(inventory.boards, [free, busy], strict=True))
    with pytest.raises(FleetError) as caught:
        reserve_all(pairs, 5.0)
    assert caught.value.code == 3
    assert "board am335x cannot be reserved (place is reserved" in str(caught.value)
    assert free.calls == ["reserve 5", "release"]
    both = [FakeTarget(), FakeTarget()]
    reserve_all(list(zip(inventory.boards, both, strict=True)), 0.0)
    assert [t.calls for t in both] == [["reserve 0"], ["reserve 0"]]


def test_summary_of_a_board_without_a_run_and_exit_codes() -> None:
    summary = board_summary("b1", "unreachable", 3, "connection refused", None)
    assert summary.scenarios == [] and summary.run_id is None
    assert fleet_exit_code([0, 1, 3, 0]) == 3 and fleet_exit_code([0, 4, 3]) == 4
    assert worst_status(["ok", "lost", "fail"]) == "lost"
    assert new_fleet_id().startswith("fleet-")


def test_board_text_is_data_in_the_terminal_and_the_html() -> None:
    from rich.console import Console

    from rtbench.report.fleet import FleetProgress, render_html, summary_table
    from rtbench.run.events import BoardDone, BoardPhase

    evil = "<script>x</script> [bold red]boom[/] \x1b[2J"
    summary = board_summary("b1", "unreachable", 3, evil, None)
    summary.hostname = "<b>host</b>"
    html = render_html("f-1", "smoke", "2026-11-23T00:00:00+00:00", [summary], 3)
    assert "<script>" not in html and "&lt;script&gt;" in html and "&lt;b&gt;host" in html
    console = Console(width=200, record=True, force_terminal=False)
    progress = FleetProgress(console, ["b1"])
    progress("b1", BoardPhase("connecting"))
    progress("b1", BoardDone("b1", None, "unreachable", 3, evil))
    console.print(summary_table("f-1", "smoke", [summary]))
    text = console.export_text()
    assert "[bold red]boom[/]" in text and "\x1b" not in text
    assert "b1 unreachable" in text and "b1 connecting" in text
