"""Fleet history: a board that ends before its run is stored still leaves a run row
(unreachable / error, with the reason) that lists, exports, uploads and counts as no
evidence."""

from __future__ import annotations

from pathlib import Path

from explain_helpers import cli
from fake_target import FakeTarget, Script

from rtbench.analysis.compare import view_of_run
from rtbench.analysis.verdict import list_verdict
from rtbench.fleet.inventory import Board
from rtbench.interop.runjson import dumps, loads
from rtbench.run.fleet import Fleet, FleetSetup, outage_hostname
from rtbench.store import Store
from rtbench.suites.parse import load_suite
from rtbench.targets.base import TargetError

NO_ROUTE = "ssh root@10.9.9.9: connect: No route to host; is the board powered?"


class Unreachable(FakeTarget):
    """A board whose connection cannot be opened."""

    def open(self) -> None:
        """Fail as an unreachable ssh board does."""
        raise TargetError(NO_ROUTE)


class WrongArch(FakeTarget):
    """A board that answers with another arch than the inventory says."""

    def open(self) -> None:
        """Connect (nothing to do)."""

    def arch(self) -> str:
        """Not what the inventory says."""
        return "x86_64"


def fleet_db(tmp_path: Path) -> str:
    """A fresh, migrated database."""
    url = f"sqlite:///{tmp_path / 'fleet.db'}"
    Store.open(url).close()
    return url


def test_unreachable_and_wrong_boards_leave_run_rows_with_the_reason(tmp_path: Path) -> None:
    url = fleet_db(tmp_path)
    setup = FleetSetup(suite=load_suite("smoke"), db_url=url, fleet_id="fleet-t-0001",
                       command_line=["rtbench", "fleet"], simulate="7")
    never = lambda args: Script(then="hang")  # noqa: E731 - nothing is ever started
    boards = [(Board("imx8-3", "ssh://root@imx8-3.lab/?dir=/tmp/rt", {"rack": "2"}),
               Unreachable(never)),
              (Board("rpi-1", "serial:///dev/ttyUSB0", {}, arch="aarch64"),
               WrongArch(never))]
    done = Fleet(setup, boards, lambda board, event: None).run()
    assert [d.status for d in done] == ["unreachable", "error"]
    assert all(d.run_id for d in done)
    with Store.open(url) as store:
        first, second = (store.get_run(d.run_id or 0) for d in done)
        listed = {r.id: r for r in store.list_runs()}
    assert (first.status, first.reason, first.hostname) == ("unreachable", NO_ROUTE,
                                                            "imx8-3.lab")
    assert first.tags == {"rack": "2", "fleet": "fleet-t-0001", "board": "imx8-3"}
    assert (first.board, second.board) == ("imx8-3", "rpi-1")
    assert first.scenarios == [] and first.kernel == "" and first.simulated
    assert second.status == "error" and "inventory says aarch64" in (second.reason or "")
    assert second.hostname == "rpi-1"  # a serial board is filed under its name
    # no evidence: nothing to compare, no pass in the runs list
    assert view_of_run(first).cells == []
    row = listed[first.id]
    assert list_verdict(row.status, row.measurement_count, row.checked_count) == "unreachable"
    shown = cli("show", str(first.id), "--db", url)
    assert f"UNREACHABLE: nothing was measured: {NO_ROUTE}" in " ".join(shown.output.split())


def test_an_outage_row_round_trips_through_the_bundle(tmp_path: Path) -> None:
    url = fleet_db(tmp_path)
    with Store.open(url) as store:
        run_id = store.add_outage(suite="smoke", suite_source="", scale=1.0,
                                  hostname="imx8-3.lab", target="ssh://root@imx8-3.lab",
                                  command_line=["rtbench", "fleet"], simulated=False,
                                  tags={"board": "imx8-3"}, status="unreachable",
                                  reason=NO_ROUTE, board="imx8-3")
        text = dumps(store.get_run(run_id))
    again = loads(text)
    assert (again.status, again.reason) == ("unreachable", NO_ROUTE)
    other = f"sqlite:///{tmp_path / 'other.db'}"
    with Store.open(other) as store:
        new_id, created = store.add_bundle(again)
        assert created and store.get_run(new_id).reason == NO_ROUTE
        assert store.get_run(new_id).board == "imx8-3"


def test_outage_host_is_the_uri_host_or_the_board_name() -> None:
    assert outage_hostname(Board("b", "ssh://u@10.0.0.2:2222/", {})) == "10.0.0.2"
    assert outage_hostname(Board("b", "labgrid:place-3", {})) == "b"
    assert outage_hostname(Board("b", "local", {})) == "b"
