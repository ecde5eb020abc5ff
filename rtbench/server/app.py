"""The FastAPI application of `rtbench serve`: pages, the /api/v1 API, errors, tokens.

create_app() wires one Store (SQLite or PostgreSQL) into the routes of
rtbench.server.api and rtbench.server.pages.  Every error becomes one line --
JSON under /api, a small HTML page elsewhere -- and never a stack trace; a
database that is down answers 503 and the next request after it is back works.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from typing import Any

from fastapi import FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, Response
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException

from rtbench import __version__
from rtbench.server.guard import SECURITY_HEADERS, FailedAttempts
from rtbench.server.render import render_page
from rtbench.server.writequeue import WriteQueue
from rtbench.store import BundleInvalid, RunNotFound, Store, StoreError, StoreUnavailable
from rtbench.store.tokens import check_token

MAX_UPLOAD_BYTES = 64 * 1024 * 1024
TOKEN_COOKIE = "rtbench_token"
log = logging.getLogger("rtbench.server")


def _one_line(text: object) -> str:
    """text on one line, at most 300 characters."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= 300 else flat[:297] + "..."


def _is_api(request: Request) -> bool:
    """True for requests to the JSON API."""
    return request.url.path.startswith("/api/")


def error_response(request: Request, status: int, message: str,
                   headers: dict[str, str] | None = None) -> Response:
    """One-line error: JSON {"error": ...} for the API, an HTML page for the pages."""
    message = _one_line(message)
    if _is_api(request):
        return JSONResponse({"error": message}, status_code=status, headers=headers)
    page = render_page("error.html.j2", status=status, message=message,
                       login=status == 401)
    return HTMLResponse(page, status_code=status, headers=headers)


def bearer_token(request: Request) -> str | None:
    """The token of an "Authorization: Bearer ..." header, or None."""
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()


def _token_ok(store: Store, token: str | None) -> bool:
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
    if await run_in_threadpool(queue.run, lambda: _token_ok(store, token)):
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


def create_app(db_url: str | None = None, *, store: Store | None = None,
               read_token_required: bool = False,
               max_upload_bytes: int = MAX_UPLOAD_BYTES) -> FastAPI:
    """The application over the database at db_url (or an open store)."""
    from rtbench.server import api, pages

    app = FastAPI(title="rtbench results server", version=__version__,
                  description="Runs of rtbench: list, compare, the board x kernel matrix, "
                              "and uploads of rtbench-run/1 JSON with a bearer token.",
                  openapi_url="/api/v1/openapi.json", docs_url=None, redoc_url=None)
    app.state.store = store or Store.open(db_url)
    app.state.read_token_required = read_token_required
    app.state.max_upload_bytes = max_upload_bytes
    app.state.failed_attempts = FailedAttempts()
    app.state.write_queue = WriteQueue(app.state.store)
    # (run id, page) -> (report, pages), or (run ids, reference names) -> comparison
    # (finished runs only)
    app.state.report_cache = OrderedDict()
    app.include_router(api.router)
    app.include_router(pages.router)

    @app.middleware("http")
    async def security_headers(request: Request, call_next: Any) -> Response:
        """Every answer, errors too: no framing, no sniffing, nothing loaded elsewhere."""
        response: Response = await call_next(request)
        for name, value in SECURITY_HEADERS.items():
            response.headers.setdefault(name, value)
        return response

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        """HTTP errors raised by routes (404, 401, 413 ...)."""
        return error_response(request, exc.status_code, str(exc.detail),
                              getattr(exc, "headers", None))

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, exc: RequestValidationError) -> Response:
        """Bad query or path parameters: 422 naming the first one."""
        errors: list[Any] = list(exc.errors())
        first = errors[0] if errors else {}
        where = ".".join(str(p) for p in first.get("loc", ()) if p not in ("query", "path"))
        return error_response(request, 422, f"{where or 'request'}: "
                                            f"{first.get('msg', 'is not valid')}")

    @app.exception_handler(RunNotFound)
    async def not_found(request: Request, exc: RunNotFound) -> Response:
        """A run id that is not stored."""
        return error_response(request, 404, str(exc).split(" is not in ", 1)[0] + " is not stored")

    @app.exception_handler(BundleInvalid)
    async def bundle_invalid(request: Request, exc: BundleInvalid) -> Response:
        """An upload that does not fit the database."""
        return error_response(request, 422, str(exc))

    @app.exception_handler(StoreUnavailable)
    async def unavailable(request: Request, exc: StoreUnavailable) -> Response:
        """The database is down or unreachable: 503, the server keeps running."""
        log.warning("database unavailable: %s", _one_line(exc))
        return error_response(request, 503, "the results database is not available "
                                            "right now; try again later",
                              {"Retry-After": "10"})

    @app.exception_handler(StoreError)
    async def store_error(request: Request, exc: StoreError) -> Response:
        """Any other database refusal: one line, no internals."""
        log.warning("database error: %s", _one_line(exc))
        return error_response(request, 503, "the results database refused the request; "
                                            "try again later")

    @app.exception_handler(Exception)
    async def internal(request: Request, exc: Exception) -> Response:
        """Anything unexpected: logged for the operator, one line for the client."""
        log.error("internal error on %s %s: %s: %s", request.method, request.url.path,
                  type(exc).__name__, _one_line(exc))
        return error_response(request, 500, "internal error; the server log has details")

    return app
