"""A labgrid place claimed through its coordinator: reserve, acquire, resources, release.

This speaks to `labgrid-coordinator` with labgrid's own gRPC client session
(labgrid.remote.client.ClientSession), the way `labgrid-client reserve --wait` and
`labgrid-client acquire` do: a reservation whose filter is the place's name waits in
the coordinator's queue until the place is free, then the place is acquired (which locks
its resources on the exporters).  Every step is a short session (one at a time in the
process): none is left idle through a long run, and while one target waits in the queue
the others of a fleet can still reach the coordinator.

Only rtbench.targets.labgrid uses this module; labgrid is imported inside the functions,
so rtbench works without it until a labgrid target is asked for.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from rtbench.targets.base import TargetError, TargetUsageError
from rtbench.targets.progress import Progress, Silent

DEFAULT_COORDINATOR = "127.0.0.1:20408"
# Seconds to reach the coordinator before it counts as down.
CONNECT_TIMEOUT_S = 10.0
# Seconds between polls of a waiting reservation (labgrid-client's pace).
POLL_S = 1.0


@dataclass
class HeldPlace:
    """A place rtbench acquired: its name, the reservation token, the coordinator."""

    name: str
    token: str
    coordinator: str


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """labgrid's client logs failures on the root logger; rtbench says one line itself."""
    logging.disable(logging.CRITICAL)
    try:
        yield
    finally:
        logging.disable(logging.NOTSET)


def coordinator_address(query: str | None) -> str:
    """The coordinator to use: ?coordinator=, else LG_COORDINATOR, else labgrid's default."""
    return query or os.environ.get("LG_COORDINATOR") or DEFAULT_COORDINATOR


def _error_text(exc: BaseException) -> str:
    """One line from a labgrid or gRPC error."""
    details = getattr(exc, "details", None)
    text = details() if callable(details) else str(exc)
    lines = [ln.strip() for ln in str(text).splitlines() if ln.strip()]
    return lines[0][:200] if lines else type(exc).__name__


# One client session at a time in this process: gRPC shares one connection per address,
# and the coordinator takes a second session from the same peer for the first one.
_ONE_SESSION = threading.Lock()


class Coordinator:
    """One client session with a labgrid coordinator (use with `with`; one at a time)."""

    def __init__(self, address: str, where: str) -> None:
        self.address = address
        self.where = where
        self.session: Any = None

    def __enter__(self) -> Coordinator:
        """Connect; TargetError (one line) when the coordinator does not answer."""
        _ONE_SESSION.acquire()
        try:
            self._connect()
        except BaseException:
            _ONE_SESSION.release()
            raise
        return self

    def _connect(self) -> None:
        """Start the session (TargetError when the coordinator does not answer)."""
        from labgrid.remote.client import ClientSession, ensure_event_loop
        from labgrid.util.proxy import proxymanager

        with _quiet():
            loop = ensure_event_loop()
            address = proxymanager.get_grpc_address(self.address, default_port=20408)
            session = ClientSession(address, loop)
            try:
                loop.run_until_complete(asyncio.wait_for(session.start(), CONNECT_TIMEOUT_S))
            except Exception as exc:
                with contextlib.suppress(Exception):
                    loop.run_until_complete(session.stop())
                with contextlib.suppress(Exception):
                    loop.run_until_complete(session.close())
                why = "no answer" if isinstance(exc, asyncio.TimeoutError) else _error_text(exc)
                raise TargetError(f"{self.where}: cannot reach the labgrid coordinator at "
                                  f"{self.address} ({why}); is labgrid-coordinator running "
                                  "there (set LG_COORDINATOR or ?coordinator=HOST:PORT)?") \
                    from exc
        self.session = session

    def __exit__(self, *exc: object) -> None:
        """Close the session."""
        session, self.session = self.session, None
        try:
            if session is not None:
                with _quiet():
                    with contextlib.suppress(Exception):
                        session.loop.run_until_complete(session.stop())
                    with contextlib.suppress(Exception):
                        session.loop.run_until_complete(session.close())
        finally:
            _ONE_SESSION.release()

    def _call(self, coro: Any) -> Any:
        """Run one coroutine of the session to completion (errors as one line)."""
        import grpc

        with _quiet():
            try:
                return self.session.loop.run_until_complete(coro)
            except grpc.aio.AioRpcError as exc:
                raise TargetError(f"{self.where}: the coordinator refused: "
                                  f"{_error_text(exc)}") from exc

    def place(self, name: str) -> Any:
        """The coordinator's record of place name; TargetUsageError when there is none."""
        place = self.session.places.get(name)
        if place is None:
            known = ", ".join(sorted(self.session.places)) or "none"
            raise TargetUsageError(f"{self.where}: no place {name!r} on the coordinator at "
                                   f"{self.address} (places: {known[:200]})")
        return place

    def request(self, name: str) -> str:
        """Queue a reservation for place name; its token."""
        from labgrid.remote.common import Reservation
        from labgrid.remote.generated import labgrid_coordinator_pb2 as pb2

        self.place(name)
        wanted = {"main": pb2.Reservation.Filter(filter={"name": name})}
        made = self._call(self.session.stub.CreateReservation(
            pb2.CreateReservationRequest(filters=wanted, prio=0.0)))
        return str(Reservation.from_pb2(made.reservation).token)

    def allocated(self, name: str, token: str) -> bool:
        """True once the coordinator gave place name to the reservation token (which
        keeps it alive); TargetError when the reservation ended otherwise."""
        from labgrid.remote.common import Reservation, ReservationState
        from labgrid.remote.generated import labgrid_coordinator_pb2 as pb2

        polled = self._call(self.session.stub.PollReservation(
            pb2.PollReservationRequest(token=token)))
        state = Reservation.from_pb2(polled.reservation).state
        if state is ReservationState.waiting:
            return False
        if state is not ReservationState.allocated:
            raise TargetError(f"{self.where}: the reservation of place {name} ended as "
                              f"{state.name}; try again")
        return True

    def acquire(self, name: str) -> None:
        """Acquire place name (allocated to our reservation): its resources are ours."""
        from labgrid.remote.generated import labgrid_coordinator_pb2 as pb2

        self._call(self.session.stub.AcquirePlace(pb2.AcquirePlaceRequest(placename=name)))
        self._call(self.session.sync_with_coordinator())

    def cancel(self, token: str) -> None:
        """Drop the reservation token (gone already is fine)."""
        from labgrid.remote.generated import labgrid_coordinator_pb2 as pb2

        with contextlib.suppress(TargetError):
            self._call(self.session.stub.CancelReservation(
                pb2.CancelReservationRequest(token=token)))

    def busy_text(self, name: str, wait_s: float) -> str:
        """Why place name could not be had: who acquired or reserved it."""
        self._call(self.session.sync_with_coordinator())
        place = self.place(name)
        who = f"acquired by {place.acquired}" if place.acquired else "reserved by someone else"
        waited = f" (waited {wait_s:g} s)" if wait_s > 0 else ""
        return (f"{self.where}: place {name} is {who}{waited}; wait until it is released "
                "(`labgrid-client who` shows who holds it) or give ?wait=SECONDS")

    def resources(self, held: HeldPlace, target: Any) -> None:
        """Add the acquired place's resources (as its exporters announce them) to the
        labgrid Target target, as labgrid's RemotePlace does."""
        from labgrid.factory import target_factory

        self._call(self.session.sync_with_coordinator())
        place = self.place(held.name)
        try:
            entries = self.session.get_target_resources(place)
        except Exception as exc:
            raise TargetError(f"{self.where}: cannot use the resources of place "
                              f"{held.name} ({_error_text(exc)})") from exc
        if not entries:
            raise TargetError(f"{self.where}: place {held.name} has no resources (is its "
                              "exporter running and does a match select them?)")
        for (name, _), entry in entries.items():
            made = target_factory.make_resource(target, entry.cls, name, dict(entry.args))
            made.avail = entry.avail
            made.extra = entry.extra

    def release(self, held: HeldPlace) -> None:
        """Release the place and drop the reservation (errors as one line)."""
        from labgrid.remote.generated import labgrid_coordinator_pb2 as pb2

        try:
            self._call(self.session.stub.ReleasePlace(
                pb2.ReleasePlaceRequest(placename=held.name)))
        finally:
            self.cancel(held.token)


def reserve_place(address: str, where: str, name: str, wait_s: float,
                  progress: Progress | None = None) -> HeldPlace:
    """Reserve place name at the coordinator address, waiting up to wait_s in its queue,
    then acquire it (progress shows the wait).  Each step is a short session, so other
    targets of this process (a fleet) can reach the coordinator while this one waits."""
    shown = progress if progress is not None else Silent()
    began = time.monotonic()
    shown.start(f"reserving labgrid place {name}")
    with Coordinator(address, where) as coordinator:
        token = coordinator.request(name)
    deadline = began + max(0.0, wait_s)
    try:
        while True:
            with Coordinator(address, where) as coordinator:
                if coordinator.allocated(name, token):
                    coordinator.acquire(name)
                    shown.done(f"held after {time.monotonic() - began:.0f} s")
                    return HeldPlace(name, token, address)
                if time.monotonic() >= deadline:
                    shown.done("not free in time")
                    raise TargetError(coordinator.busy_text(name, wait_s))
            shown.update(f"another user holds it; waited {time.monotonic() - began:.0f} "
                         f"of {wait_s:g} s")
            time.sleep(POLL_S)
    except BaseException:
        with contextlib.suppress(TargetError), Coordinator(address, where) as coordinator:
            coordinator.cancel(token)
        raise
