"""The FastAPI application of `rtbench serve`: pages, the /api/v1 API and errors.

create_app() wires one Store (SQLite or PostgreSQL) into the routes of
rtbench.server.api and rtbench.server.pages (whose token checks are in
rtbench.server.auth).  Every error becomes one line --
JSON under /api, a small HTML page elsewhere -- and never a stack trace; a
database that is down answers 503 and the next request after it is back works.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from rtbench import RUN_ID_RANGE, __version__
from rtbench.server import admin, api, metrics, pages
from rtbench.server.guard import FailedAttempts, SecurityHeaders
from rtbench.server.render import render_page
from rtbench.server.views.regressions import UploadChecker
from rtbench.server.webhooks import Dispatcher
from rtbench.server.writequeue import WriteQueue
from rtbench.store import BundleInvalid, RunNotFound, Store, StoreError, StoreUnavailable

MAX_UPLOAD_BYTES = 64 * 1024 * 1024
# the parameters that name a stored run by its id
RUN_ID_PARAMS = ("run_id", "run", "baseline")
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


def create_app(db_url: str | None = None, *, store: Store | None = None,
               read_token_required: bool = False,
               max_upload_bytes: int = MAX_UPLOAD_BYTES,
               webhooks: Dispatcher | None = None) -> FastAPI:
    """The application over the database at db_url (or an open store)."""
    app = FastAPI(title="rtbench results server", version=__version__,
                  description="Runs of rtbench: list, compare, the board x kernel matrix, "
                              "and uploads of rtbench-run/1 JSON with a bearer token.",
                  openapi_url="/api/v1/openapi.json", docs_url=None, redoc_url=None)
    app.state.store = store or Store.open(db_url)
    app.state.read_token_required = read_token_required
    app.state.max_upload_bytes = max_upload_bytes
    app.state.failed_attempts = FailedAttempts()
    app.state.write_queue = WriteQueue(app.state.store)
    # events of uploads go to the lab's webhooks on a thread of their own
    app.state.webhooks = webhooks or Dispatcher(app.state.store, [])
    app.state.webhooks.start()
    # each uploaded run is checked against its board's baseline after it is answered
    app.state.checker = UploadChecker(app.state.store, app.state.write_queue,
                                      app.state.webhooks)
    # (run id, page) -> (report, pages), or (run ids, reference names) -> comparison
    # (finished runs only)
    app.state.report_cache = OrderedDict()
    app.include_router(api.router)
    app.include_router(admin.router)
    app.include_router(metrics.router)
    app.include_router(pages.router)

    # every answer, errors too: no framing, no sniffing, nothing loaded elsewhere
    app.add_middleware(SecurityHeaders)

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
        what = first.get("msg", "is not valid")
        if where.split(".")[0] in RUN_ID_PARAMS:
            what = RUN_ID_RANGE  # the range the CLI takes too
        return error_response(request, 422, f"{where or 'request'}: {what}")

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
