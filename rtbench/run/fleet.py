"""Run one suite on every board of a fleet at once: reserve all, then one thread each.

Each board gets its own Runner (rtbench.run.runner) and its own stored run, tagged
fleet=ID and board=NAME plus the board's inventory tags.  A board that cannot be reached,
fails its checks or loses its connection ends alone: the others go on.  A board that
ends before its run was stored still leaves a run row (status unreachable, error or
interrupted, with the reason), so a board's history shows its outages.  SIGINT, SIGTERM
and SIGHUP stop every board (each run is then stored 'interrupted').
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass, field
from datetime import datetime, timezone
from urllib.parse import urlsplit

from rtbench import EXIT_ENV, EXIT_INTERRUPTED, EXIT_USAGE
from rtbench.fleet.inventory import Board
from rtbench.run.events import BoardDone, BoardPhase, Event, OnBoardEvent
from rtbench.run.outcome import RunError
from rtbench.run.runner import Runner
from rtbench.run.save import MeasurementNotStored
from rtbench.run.stopflag import StopFlag
from rtbench.store import OUTAGE_STATUSES, Store, StoreError
from rtbench.suites.model import Suite, SuiteError
from rtbench.targets.base import Target, TargetError
from rtbench.targets.progress import Forwarded

# How often the main thread looks at its board threads (and lets signals in).
JOIN_TICK_S = 0.2


class FleetError(Exception):
    """The fleet cannot start (a board cannot be reserved): one line, with its exit code."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


def new_fleet_id(now: datetime | None = None) -> str:
    """A fresh fleet id: fleet-YYYYMMDDTHHMMSSZ-xxxx (UTC, 4 random hex digits)."""
    stamp = (now or datetime.now(timezone.utc)).strftime("%Y%m%dT%H%M%SZ")
    return f"fleet-{stamp}-{secrets.token_hex(2)}"


@dataclass
class FleetSetup:
    """What every board of the fleet runs, and where it stores."""

    suite: Suite
    db_url: str | None
    fleet_id: str
    command_line: list[str]
    simulate: str | None = None
    policy: str | None = None
    # turns a measurement the database refused into one line (the CLI keeps a recovery
    # file and says where)
    not_stored: Callable[[MeasurementNotStored], str] = field(default=str)
    accept_undefined: bool = False  # rtbench fleet --accept-undefined


def reserve_all(boards: list[tuple[Board, Target]], wait_s: float) -> None:
    """Reserve every board (Target.reserve), or none: when one cannot be reserved, those
    already reserved are released and FleetError says which board and why (exit 3)."""
    reserved: list[Target] = []
    try:
        for board, target in boards:
            try:
                target.reserve(wait_s)
            except TargetError as exc:
                raise FleetError(f"fleet: board {board.name} cannot be reserved ({exc}); "
                                 "no board was run", EXIT_ENV) from None
            reserved.append(target)
    except BaseException:
        release_all(reserved)
        raise


def release_all(targets: list[Target]) -> None:
    """Release every target's reservation (a no-op where nothing was reserved)."""
    for target in targets:
        with suppress(TargetError):
            target.release()


class Fleet:
    """Runs setup.suite on every board at once, telling on_board what each one does."""

    def __init__(self, setup: FleetSetup, boards: list[tuple[Board, Target]],
                 on_board: OnBoardEvent) -> None:
        self.setup = setup
        self.boards = boards
        self.on_board = on_board
        self.stop = StopFlag()
        self.results: dict[str, BoardDone] = {}
        self._lock = threading.Lock()

    def run(self) -> list[BoardDone]:
        """Run every board in a thread of its own; return their ends in inventory order.

        The stop signals' handlers are installed here (the main thread) and shared by
        every board's runner."""
        threads = [threading.Thread(target=self._board_thread, args=(board, target),
                                    name=f"fleet-{board.name}", daemon=True)
                   for board, target in self.boards]
        with self.stop.installed():
            for thread in threads:
                thread.start()
            while any(t.is_alive() for t in threads):
                for thread in threads:
                    thread.join(JOIN_TICK_S)
        return [self.results[board.name] for board, _ in self.boards]

    def _board_thread(self, board: Board, target: Target) -> None:
        """One board's whole life; whatever happens ends as its BoardDone."""
        try:
            done = self._run_board(board, target)
        except BaseException as exc:  # the last net: one board never takes the others
            done = BoardDone(board.name, None, "error", EXIT_ENV,
                             f"internal error ({type(exc).__name__}: {_line(exc)})")
        if done.run_id is None and done.status in OUTAGE_STATUSES:
            done = self._record_outage(board, done)
        with self._lock:
            self.results[board.name] = done
        self.on_board(board.name, done)

    def _record_outage(self, board: Board, done: BoardDone) -> BoardDone:
        """Store the run row of a board that ended before its run was stored; done with
        its id (unchanged, the store's failure added to its message, if that fails)."""
        suite = self.setup.suite
        tags = {**board.tags, "fleet": self.setup.fleet_id, "board": board.name}
        try:
            store = Store.open(self.setup.db_url, migrate=False)
            try:
                run_id = store.add_outage(
                    suite=suite.name, suite_source=suite.text or suite.source,
                    scale=suite.scale, hostname=outage_hostname(board), target=board.uri,
                    command_line=self.setup.command_line,
                    simulated=self.setup.simulate is not None, tags=tags,
                    status=done.status, reason=done.message or done.status,
                    board=board.name)
            finally:
                store.close()
        except StoreError as exc:
            note = f"; its {done.status} run row was not stored ({_line(exc)})"
            return BoardDone(done.board, None, done.status, done.exit_code,
                             (done.message or done.status) + note)
        return BoardDone(done.board, run_id, done.status, done.exit_code, done.message)

    def _tell(self, board: Board) -> Callable[[Event], None]:
        """The on_event of a board's runner."""
        return lambda event: self.on_board(board.name, event)

    def _run_board(self, board: Board, target: Target) -> BoardDone:
        """Connect, check, run; every failure is this board's BoardDone."""
        self.on_board(board.name, BoardPhase("connecting"))
        set_progress = getattr(target, "set_progress", None)
        if set_progress is not None:
            # a board's slow steps (probe build, push) show on its own line
            set_progress(Forwarded(lambda text: self.on_board(board.name, BoardPhase(text))))
        try:
            target.open()
        except TargetError as exc:
            return BoardDone(board.name, None, "unreachable", EXIT_ENV, _line(exc))
        runner: Runner | None = None
        try:
            if self.stop:
                return BoardDone(board.name, None, "interrupted", EXIT_INTERRUPTED,
                                 "stopped before it started")
            if board.arch is not None:
                actual = target.arch()
                if actual != board.arch:
                    return BoardDone(board.name, None, "error", EXIT_ENV,
                                     f"the board reports arch {actual}, the inventory says "
                                     f"{board.arch}; is the uri right?")
            self.on_board(board.name, BoardPhase("checking"))
            tags = {**board.tags, "fleet": self.setup.fleet_id, "board": board.name}
            runner = Runner(target, simulate=self.setup.simulate, policy=self.setup.policy,
                            on_event=self._tell(board), stop=self.stop, tags=tags,
                            board=board.name,
                            accept_undefined=self.setup.accept_undefined)
            runner.validate(self.setup.suite)
            store = Store.open(self.setup.db_url, migrate=False)
            try:
                self.on_board(board.name, BoardPhase("running"))
                outcome = runner.run(self.setup.suite, store, self.setup.command_line)
            finally:
                store.close()
            why = "; ".join(outcome.messages[:2]) if outcome.status != "ok" else None
            return BoardDone(board.name, outcome.run_id, outcome.status, outcome.exit_code,
                             why or None)
        except MeasurementNotStored as exc:
            return BoardDone(board.name, runner.run_id if runner else None, "error",
                             EXIT_ENV, self.setup.not_stored(exc))
        except RunError as exc:
            return BoardDone(board.name, _run_id(runner), "error", exc.code, _line(exc))
        except SuiteError as exc:
            return BoardDone(board.name, _run_id(runner), "error", EXIT_USAGE,
                             f"suite {_line(exc)}")
        except (TargetError, StoreError) as exc:
            status = "lost" if runner is not None and runner.lost else "error"
            return BoardDone(board.name, _run_id(runner), status, EXIT_ENV, _line(exc))
        finally:
            with suppress(TargetError):
                target.close()


def outage_hostname(board: Board) -> str:
    """The host a board's outage row is filed under: its URI's host, else its name."""
    try:
        host = urlsplit(board.uri).hostname
    except ValueError:
        host = None
    return host or board.name


def _run_id(runner: Runner | None) -> int | None:
    """The id of the run a runner stored, None when it stored none."""
    return runner.run_id or None if runner is not None else None


def _line(exc: BaseException) -> str:
    """An exception's first line, at most 300 characters."""
    lines = str(exc).strip().splitlines()
    return (lines[0] if lines else type(exc).__name__)[:300]
