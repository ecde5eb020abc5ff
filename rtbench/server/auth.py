"""Who may read, upload and delete on `rtbench serve`: bearer tokens with a scope, and
the dashboard's login session.

Scopes nest (rtbench.store.tokens): read < upload < admin.  The API takes a bearer
token; the pages also take the login cookie, which holds a random session id
(rtbench.store.sessions), never a token.  The route modules (api.py, pages.py)
depend on these checks and app.py assembles the routes, so the checks live here,
below both, and no server module imports another back.
"""

from __future__ import annotations

from fastapi import HTTPException, Request
from starlette.concurrency import run_in_threadpool

from rtbench.server.guard import FailedAttempts
from rtbench.server.writequeue import WriteQueue
from rtbench.store import Store
from rtbench.store.sessions import session_identity
from rtbench.store.tokens import TokenIdentity, find_token, note_token_use

SESSION_COOKIE = "rtbench_session"
_HOW = {"read": "a read", "upload": "an upload", "admin": "an admin"}


def bearer_token(request: Request) -> str | None:
    """The token of an "Authorization: Bearer ..." header, or None."""
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()


def _lookup(store: Store, token: str | None) -> tuple[TokenIdentity, bool] | None:
    """The active token equal to token and whether its use is to be noted (None for
    none or an oversized one)."""
    if not token or len(token) > 200:
        return None
    return find_token(store, token)


def _client(request: Request) -> str:
    """The client's address as the failed-attempts guard keys it."""
    return request.client.host if request.client else "unknown"


def _not_blocked(request: Request) -> None:
    """429 for a client with too many failed attempts lately."""
    attempts: FailedAttempts = request.app.state.failed_attempts
    client = _client(request)
    wait_s = attempts.blocked_for_s(client)
    if wait_s > 0:
        raise HTTPException(429, f"too many wrong tokens from {client}; try again in "
                                 f"{wait_s:.0f} s", headers={"Retry-After": f"{wait_s:.0f}"})


async def token_holder(request: Request, token: str | None) -> TokenIdentity | None:
    """The active token equal to token, or None; a client with too many failed attempts
    lately is answered 429 without its token being looked at, and a wrong token counts
    as one."""
    _not_blocked(request)
    store: Store = request.app.state.store
    # the check only reads; the rare note of the token's use (once a minute) is the write
    # that queues, so an upload no longer waits in SQLite's write queue twice
    found = await run_in_threadpool(_lookup, store, token)
    if found is None:
        if token:
            request.app.state.failed_attempts.failed(_client(request))
        return None
    who, stale = found
    if stale:
        queue: WriteQueue = request.app.state.write_queue
        await run_in_threadpool(queue.run, lambda: note_token_use(store, who.token_id))
    return who


async def session_holder(request: Request) -> TokenIdentity | None:
    """The token behind the request's login cookie, or None."""
    session_id = request.cookies.get(SESSION_COOKIE)
    if not session_id:
        return None
    _not_blocked(request)
    store: Store = request.app.state.store
    found = await run_in_threadpool(session_identity, store, session_id)
    if found is None:
        request.app.state.failed_attempts.failed(_client(request))
    return found


def _refuse(who: TokenIdentity | None, needed: str, what: str) -> None:
    """401 without a valid token, 403 when its scope does not cover needed."""
    if who is None:
        raise HTTPException(401, f"{_HOW[needed]} token is needed to {what}: send "
                                 "'Authorization: Bearer TOKEN' (create one with "
                                 f"'rtbench token create NAME --scope {needed}')",
                            headers={"WWW-Authenticate": "Bearer"})
    if not who.allows(needed):
        raise HTTPException(403, f"token {who.name!r} has scope {who.scope}; {what} needs "
                                 f"{_HOW[needed]} token ('rtbench token create NAME "
                                 f"--scope {needed}')")


async def require_write(request: Request) -> None:
    """Uploads need a bearer token of scope upload or admin (401, 403 otherwise)."""
    _refuse(await token_holder(request, bearer_token(request)), "upload", "upload")


async def require_admin(request: Request) -> None:
    """Deleting and pruning runs needs a bearer token of scope admin."""
    _refuse(await token_holder(request, bearer_token(request)), "admin", "delete runs")


async def require_read(request: Request) -> None:
    """Reads need a token (any scope) or a login session only when the server was started
    with --read-token-required."""
    if not request.app.state.read_token_required:
        return
    token = bearer_token(request)
    who = await token_holder(request, token) if token else await session_holder(request)
    if who is None:
        raise HTTPException(401, "this server needs a token to read: log in at /login or "
                                 "send 'Authorization: Bearer TOKEN'",
                            headers={"WWW-Authenticate": "Bearer"})
