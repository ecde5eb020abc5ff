"""`rtbench ls` and `rtbench show` name where each run ran: the target, and the board's
name where a fleet inventory gave one."""

from __future__ import annotations

import json
from pathlib import Path

from rtbench.report.target import fmt_target
from rtbench.store import Store
from tests.conftest import RunCli

TARGETS = [
    ("local", {}),
    ("ssh://root@10.0.0.7", {"fleet": "f1", "board": "imx6-left"}),
    ("serial:///dev/ttyUSB0?baud=115200", {}),
    ("labgrid:rpi4-2", {"board": "rpi4 [red]"}),
]


def stored(tmp_path: Path) -> str:
    """A database holding one finished run per target of TARGETS."""
    url = f"sqlite:///{tmp_path}/runs.db"
    store = Store.open(url)
    try:
        for target, tags in TARGETS:
            run_id = store.create_run(
                suite="smoke", suite_source="", scale=1.0, hostname="board", target=target,
                sysinfo={}, preflight=[], tool_versions={}, command_line=["rtbench"],
                simulated=True, tags=tags)
            store.finish_run(run_id, "ok")
    finally:
        store.close()
    return url


def test_fmt_target_adds_the_inventory_name() -> None:
    assert fmt_target("local", {}) == "local"
    assert fmt_target("ssh://root@b", {"board": "left"}) == "ssh://root@b (left)"
    assert fmt_target("", {}) == "unknown"


def test_ls_and_show_name_the_target(tmp_path: Path, run_cli: RunCli) -> None:
    url = stored(tmp_path)
    done = run_cli("ls", "--db", url)
    assert done.returncode == 0, done.stderr
    assert "target" in done.stdout
    for target, tags in TARGETS:
        assert fmt_target(target, tags) in done.stdout
    listed = json.loads(run_cli("ls", "--db", url, "--json").stdout)
    assert [r["target"] for r in reversed(listed)] == [t for t, _ in TARGETS]
    show = run_cli("show", "2", "--db", url)
    assert show.returncode == 0, show.stderr
    assert "ssh://root@10.0.0.7 (imx6-left)" in show.stdout
    # a name with rich markup is shown as written, not interpreted
    assert "labgrid:rpi4-2 (rpi4 [red])" in run_cli("show", "4", "--db", url).stdout
