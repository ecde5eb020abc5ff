"""Who may read and write on `rtbench serve`: bearer tokens and the login cookie.

The route modules (api.py, pages.py) depend on these checks and app.py assembles the
routes, so the checks live here, below both, and no server module imports another
back.
"""

from __future__ import annotations

from fastapi import HTTPException, Request
from starlette.concurrency import run_in_threadpool

from rtbench.server.guard import FailedAttempts
from rtbench.server.writequeue import WriteQueue
from rtbench.store import Store
from rtbench.store.tokens import check_token

TOKEN_COOKIE = "rtbench_token"


def bearer_token(request: Request) -> str | None:
    """The token of an "Authorization: Bearer ..." header, or None."""
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()


def token_ok(store: Store, token: str | None) -> bool:
    """True when token names an active upload token."""
    return bool(token) and len(token or "") <= 200 and check_token(store, token or "") is not None


async def token_accepted(request: Request, token: str | None) -> bool:
    """Whether token is an active one; a client with too many failed attempts lately is
    answered 429 without its token being looked at, and a wrong token counts as one."""
    attempts: FailedAttempts = request.app.state.failed_attempts
    client = request.client.host if request.client else "unknown"
    wait_s = attempts.blocked_for_s(client)
    if wait_s > 0:
        raise HTTPException(429, f"too many wrong tokens from {client}; try again in "
                                 f"{wait_s:.0f} s", headers={"Retry-After": f"{wait_s:.0f}"})
    queue: WriteQueue = request.app.state.write_queue  # a check may note the token's use
    store: Store = request.app.state.store
    if await run_in_threadpool(queue.run, lambda: token_ok(store, token)):
        return True
    if token:
        attempts.failed(client)
    return False


async def require_write(request: Request) -> None:
    """Writes need a valid bearer token (401 otherwise)."""
    if not await token_accepted(request, bearer_token(request)):
        raise HTTPException(401, "a valid upload token is needed: send 'Authorization: "
                                 "Bearer TOKEN' (create one with 'rtbench token create NAME')",
                            headers={"WWW-Authenticate": "Bearer"})


async def require_read(request: Request) -> None:
    """Reads need a token only when the server was started with --read-token-required."""
    if not request.app.state.read_token_required:
        return
    token = bearer_token(request) or request.cookies.get(TOKEN_COOKIE)
    if not await token_accepted(request, token):
        raise HTTPException(401, "this server needs a token to read: log in at /login or "
                                 "send 'Authorization: Bearer TOKEN'",
                            headers={"WWW-Authenticate": "Bearer"})
