"""The JSON API under /api/v1: runs (list, one, stats, upload), compare, matrix, refs.

Every route documents the statuses it answers with; the OpenAPI document is at
/api/v1/openapi.json.  An upload is rtbench-run/1 JSON (rtbench.interop.runjson),
read as a stream up to the server's size limit, and stored in one transaction;
the same run (same uid) uploaded again answers 200 with the id it already has.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, HTTPException, Query, Request
from fastapi import Path as PathParam
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from rtbench import RUN_ID_MAX, RUN_ID_RANGE
from rtbench.analysis.multicompare import summarize
from rtbench.analysis.reference import PUBLISHED_LABEL
from rtbench.bundle import RunDetail, start_problem
from rtbench.interop import runjson
from rtbench.interop.base import ImportFormatError
from rtbench.interop.runjson import run_to_json
from rtbench.reference import reference_run, reference_runs
from rtbench.report.compare_summary import summary_json
from rtbench.report.compare_text import comparison_json
from rtbench.server.alerts import upload_events
from rtbench.server.auth import require_read, require_write
from rtbench.server.views import lab as lab_views
from rtbench.server.views import regressions as regression_views
from rtbench.server.views import runs as run_views
from rtbench.server.webhooks import Dispatcher
from rtbench.server.writequeue import WriteQueue
from rtbench.store import RUN_STATUSES, Store
from rtbench.store.queries import MAX_PER_PAGE, RunFilter, facets, list_runs_page

INT32_MAX = RUN_ID_MAX
_ERROR = {"content": {"application/json": {"schema": {
    "type": "object", "properties": {"error": {"type": "string"}}, "required": ["error"]}}}}
READ_ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"description": "a token is needed to read (server started so)", **_ERROR},
    422: {"description": "a parameter is not valid", **_ERROR},
    503: {"description": "the database is not available", **_ERROR}}
Text = Annotated[str | None, Query(max_length=255)]
# a NUL or other control character never names anything stored
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")

router = APIRouter(prefix="/api/v1", tags=["api"])


def _store(request: Request) -> Store:
    """The application's store."""
    store: Store = request.app.state.store
    return store


def clean_query(value: str | None, name: str) -> str | None:
    """A query text without control characters ('' counts as absent)."""
    if value is not None and _CONTROL.search(value):
        raise HTTPException(422, f"{name}: control characters are not allowed")
    return value or None


def _utc(value: datetime | None) -> datetime | None:
    """A naive datetime taken as UTC."""
    if value is not None and value.tzinfo is None:
        return value.replace(tzinfo=timezone.utc)
    return value


def when_param(value: str | None, name: str) -> datetime | None:
    """An ISO date or date-time query value ('' counts as absent); naive is UTC."""
    if not value:
        return None
    try:
        when = datetime.fromisoformat(value.strip())
    except ValueError:
        raise HTTPException(422, f"{name}: {value[:40]!r} is not a date "
                                 "(YYYY-MM-DD or YYYY-MM-DDTHH:MM)") from None
    if not 1900 <= when.year <= 9000:
        raise HTTPException(422, f"{name}: the year must be between 1900 and 9000")
    return _utc(when)


def run_filter(host: Text = None, board: Text = None, kernel: Text = None,
               suite: Text = None, tag: Text = None,
               status: Annotated[str | None, Query(
                   max_length=32, description="one of " + ", ".join(RUN_STATUSES))] = None,
               since: Annotated[str | None, Query(
                   max_length=40, description="started at or after (ISO date)")] = None,
               until: Annotated[str | None, Query(
                   max_length=40, description="started before (ISO date)")] = None
               ) -> RunFilter:
    """The runs-list filter from query parameters (shared by pages and API)."""
    if status and status not in RUN_STATUSES:
        raise HTTPException(422, f"status: {status[:32]!r} is not one of "
                                 f"{', '.join(RUN_STATUSES)}")
    return RunFilter(host=clean_query(host, "host"), board=clean_query(board, "board"),
                     kernel=clean_query(kernel, "kernel"),
                     suite=clean_query(suite, "suite"), tag=clean_query(tag, "tag"),
                     status=status or None, since=when_param(since, "since"),
                     until=when_param(until, "until"))


Filter = Annotated[RunFilter, Depends(run_filter)]


@router.get("/health", responses={503: READ_ERRORS[503]})
def health(request: Request) -> dict[str, str]:
    """Whether the server and its database answer."""
    facets(_store(request), limit=1)
    return {"status": "ok"}


@router.get("/runs", dependencies=[Depends(require_read)], responses=READ_ERRORS)
def runs(request: Request, flt: Filter, page: Annotated[int, Query(ge=1, le=10**6)] = 1,
         per_page: Annotated[int, Query(ge=1, le=MAX_PER_PAGE)] = 50) -> dict[str, Any]:
    """Stored runs matching the filters, newest first, one page of them."""
    result = list_runs_page(_store(request), flt, page, per_page)
    return {"total": result.total, "page": result.page, "per_page": result.per_page,
            "pages": result.pages,
            "runs": [run_views.summary_json(r, result.arch.get(r.id), result.uid.get(r.id))
                     for r in result.runs]}


@router.get("/facets", dependencies=[Depends(require_read)], responses=READ_ERRORS)
def filter_values(request: Request) -> dict[str, list[str]]:
    """The hosts, kernels, suites and statuses the runs list can be filtered on."""
    return facets(_store(request))


NOT_FOUND: dict[int | str, dict[str, Any]] = {
    404: {"description": "no run has this id", **_ERROR}}


@router.get("/runs/{run_id}", dependencies=[Depends(require_read)],
            responses={**READ_ERRORS, **NOT_FOUND})
def run(request: Request, run_id: Annotated[int, PathParam(ge=1, le=INT32_MAX)]
        ) -> dict[str, Any]:
    """The whole run as rtbench-run/1 JSON (can be uploaded to another server as it is)."""
    return run_to_json(_store(request).get_run(run_id))


@router.get("/runs/{run_id}/stats", dependencies=[Depends(require_read)],
            responses={**READ_ERRORS, **NOT_FOUND})
def run_stats(request: Request, run_id: Annotated[int, PathParam(ge=1, le=INT32_MAX)]
              ) -> dict[str, Any]:
    """Latency statistics of every measurement of a run (series merged), in ns."""
    store = _store(request)
    detail = store.get_run(run_id)
    return run_views.compare_runs(store, [detail]).to_json()


def compare_ids(run: list[int] | None, ref: list[str] | None, baseline: int | None = None
                ) -> tuple[list[int], list[str]]:
    """The stored run ids (the baseline first: the given one, else the oldest) and the
    reference names of a compare request (422 when malformed)."""
    ids = sorted(set(run or []) | ({baseline} if baseline is not None else set()))
    if baseline is not None:
        ids.remove(baseline)
        ids.insert(0, baseline)
    names = list(dict.fromkeys(r.removeprefix("ref:") for r in ref or [] if r))
    for run_id in ids:
        if not 1 <= run_id <= INT32_MAX:
            raise HTTPException(422, f"run: {RUN_ID_RANGE}")
    for name in names:
        if not re.fullmatch(run_views.REF_NAME, name):
            raise HTTPException(422, f"ref: {name[:40]!r} is not a reference run name "
                                     "(see /api/v1/refs)")
    return ids, names


def analysed(store: Store, ids: list[int], names: list[str]) -> Any:
    """run_views.analysed_comparison with its refusals as HTTP errors (404, 422)."""
    try:
        return run_views.analysed_comparison(store, ids, names)
    except LookupError as exc:
        raise HTTPException(404, str(exc)) from None
    except run_views.CompareRefused as exc:
        raise HTTPException(422, str(exc)) from None


RunIds = Annotated[list[int] | None, Query(max_length=run_views.COMPARE_LIMIT,
                                           description="a stored run id (repeat)")]
RefNames = Annotated[list[str] | None, Query(max_length=run_views.COMPARE_LIMIT,
                                             description="a reference run name (repeat)")]
Against = Annotated[Literal["previous", "first"], Query(
    description="what each run's step in the summary is decided against: the run "
                "before it, or the first stored run")]
Baseline = Annotated[int | None, Query(ge=1, le=INT32_MAX, description="the stored run the "
                                       "others are measured against (default: the oldest)")]


@router.get("/compare", dependencies=[Depends(require_read)],
            responses={**READ_ERRORS, 404: {
                "description": "no run has this id, or no reference run this name",
                **_ERROR}})
def compare(request: Request, run: RunIds = None, ref: RefNames = None,
            baseline: Baseline = None, against: Against = "previous") -> dict[str, Any]:
    """Runs compared cell by cell as `rtbench compare --json` prints it: per cell and
    metric the difference to the baseline run with its 95 % bootstrap interval and a
    verdict (better / worse / no detectable difference), and the environment facts that
    differ.  Reference runs (ref=NAME, see /api/v1/refs) are compared beside stored runs.
    `summary`: runs as columns, each run's step decided by the regression gate (+10 %)."""
    ids, names = compare_ids(run, ref, baseline)
    comp = analysed(_store(request), ids, names)
    return {**comparison_json(comp), "summary": summary_json(summarize(comp, against))}


Outcome = Annotated[Literal["regression", "inconclusive"], Query(
    description="which checks: the regressions, or the ones the runs cannot decide")]


@router.get("/regressions", dependencies=[Depends(require_read)], responses=READ_ERRORS)
def regressions(request: Request, board: Text = None, suite: Text = None,
                since: Annotated[str | None, Query(
                    max_length=40, description="runs started at or after (ISO date)")]
                = None, outcome: Outcome = "regression") -> dict[str, Any]:
    """The regression board: each stored run checked against its board's baseline (a
    run tagged baseline, else the previous kernel's runs) by the regression gate;
    grouped per board, suite, cell, metric and the kernel it started on."""
    return regression_views.regressions_json(
        _store(request), board=clean_query(board, "board"), suite=clean_query(suite, "suite"),
        since=when_param(since, "since"), outcome=outcome)


@router.get("/refs", dependencies=[Depends(require_read)], responses=READ_ERRORS)
def refs() -> dict[str, Any]:
    """The published reference runs shipped with rtbench (figures quoted from papers)."""
    return {"note": PUBLISHED_LABEL,
            "refs": [run_views.reference_summary_json(r) for r in reference_runs()]}


@router.get("/refs/{name}", dependencies=[Depends(require_read)],
            responses={**READ_ERRORS, 404: {"description": "no reference run has this name",
                                            **_ERROR}})
def ref_detail(name: Annotated[str, PathParam(max_length=64)]) -> dict[str, Any]:
    """One reference run: platform, conditions and every published figure, in ns."""
    found = reference_run(name) if re.fullmatch(run_views.REF_NAME, name) else None
    if found is None:
        raise HTTPException(404, f"no reference run {name[:64]!r}; see /api/v1/refs")
    return run_views.reference_json(found)


Flag = Annotated[int, Query(ge=0, le=1, description="1: include them")]
# a board history's runs=: how many newest runs, or all
HistoryRuns = Annotated[str, Query(pattern=r"^(all|[1-9][0-9]{0,5})$",
                                   description="the newest N runs, or all")]
BOARD_NOT_FOUND: dict[int | str, dict[str, Any]] = {
    404: {"description": "no run of this board is stored", **_ERROR}}


@router.get("/matrix", dependencies=[Depends(require_read)], responses=READ_ERRORS)
def matrix(request: Request, suite: Text = None, board: Text = None,
           simulated: Flag = 0, page: Annotated[int, Query(ge=1, le=10**6)] = 1,
           per_page: Annotated[int, Query(ge=1, le=1000)] = lab_views.MATRIX_BOARDS,
           emulated: Flag = 0,
           span: Annotated[Literal["runs", "nights"] | None, Query(
               description="the figures of the last N runs or nights (absent: every "
                           "run, the worst ever)")] = None,
           last: Annotated[int, Query(ge=1, le=1000, description="N of span")] = 7
           ) -> dict[str, Any]:
    """Board x kernel matrix per suite from the per-run summaries, per_page boards a page:
    worst max and p99.9 (of every run, or of the last N runs or nights), threshold state,
    delta to the board's previous kernel, regression marks (simulated runs:
    ?simulated=1; runs under CPU emulation, whose figures describe the emulator, not a
    board: ?emulated=1)."""
    found = lab_views.matrix(_store(request), suite=clean_query(suite, "suite"),
                            board=clean_query(board, "board"), simulated=bool(simulated),
                            page=page, per_page=per_page, emulated=bool(emulated),
                            span=span, last=last)
    data = lab_views.matrix_json(found, bool(simulated), bool(emulated))
    data["span"] = {"kind": span or "every run", "last": last if span else None}
    return data


@router.get("/boards", dependencies=[Depends(require_read)], responses=READ_ERRORS)
def boards(request: Request, simulated: Flag = 0) -> dict[str, Any]:
    """Every board with stored runs: runs, suites, kernels, newest run."""
    return {"boards": lab_views.boards_json(_store(request), bool(simulated))}


@router.get("/boards/{name}/history", dependencies=[Depends(require_read)],
            responses={**READ_ERRORS, **BOARD_NOT_FOUND})
def board_history(request: Request, name: Annotated[str, PathParam(max_length=255)],
                  suite: Text = None, simulated: Flag = 0,
                  all_policies: Flag = 0,
                  runs: HistoryRuns = str(lab_views.HISTORY_RUNS)) -> dict[str, Any]:
    """Per cell of the board: max, p99.9 and exceedance rate per run over time, kernel
    changes and thresholds (simulated / non-real-time runs only when asked), of the
    board's newest `runs` runs (default 365; all: every run)."""
    board = clean_query(name, "board") or ""
    newest = lab_views.history_runs(runs)
    found = lab_views.board_histories(_store(request), board, suite=clean_query(suite, "suite"),
                                     simulated=bool(simulated),
                                     all_policies=bool(all_policies), newest_runs=newest)
    if not found and not lab_views.board_known(_store(request), board):
        raise HTTPException(404, f"no run of board {board[:64]!r} is stored; see "
                                 "/api/v1/boards")
    data = lab_views.history_json(board, found, newest)
    data["open_regressions"] = lab_views.open_regressions_json(
        lab_views.board_regressions(_store(request), board, clean_query(suite, "suite")))
    return data


async def read_body(request: Request, limit: int) -> bytes:
    """The request body, refused with 413 as soon as it passes limit bytes."""
    declared = request.headers.get("content-length")
    if declared is not None:
        if not declared.isdigit():
            raise HTTPException(400, "Content-Length is not a number")
        if int(declared) > limit:
            raise HTTPException(413, f"the upload is {int(declared)} bytes; this server "
                                     f"takes at most {limit}")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise HTTPException(413, f"the upload is larger than {limit} bytes, the most "
                                     "this server takes")
        chunks.append(chunk)
    return b"".join(chunks)


def parse_upload(body: bytes) -> RunDetail:
    """An uploaded run: 400 when the body is not JSON, 422 when not a valid run or its
    start is not a true date (before 2000, or more than a day ahead)."""
    try:
        run = runjson.loads(body, "run")
    except runjson.NotJson as exc:
        raise HTTPException(400, f"the body is not valid JSON: {exc}") from None
    except ImportFormatError as exc:
        raise HTTPException(422, str(exc)) from None
    problem = start_problem(run.started_at, datetime.now(timezone.utc))
    if problem is not None:
        raise HTTPException(422, f"run.started_at: {problem}")
    return run


_STORED = {"type": "object", "required": ["id", "created", "url"], "properties": {
    "id": {"type": "integer"}, "created": {"type": "boolean"}, "url": {"type": "string"}}}
UPLOAD_RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {"description": "this run (same uid) was stored before; its id", "content": {
        "application/json": {"schema": _STORED}}},
    201: {"description": "stored", "content": {
        "application/json": {"schema": _STORED}}},
    400: {"description": "the body is not JSON", **_ERROR},
    401: {"description": "no valid upload token", **_ERROR},
    413: {"description": "the body is larger than the server takes", **_ERROR},
    422: {"description": "not a valid rtbench-run/1 document", **_ERROR},
    503: {"description": "the database is not available", **_ERROR}}


@router.post("/runs", status_code=201, responses=UPLOAD_RESPONSES,
             dependencies=[Depends(require_write)],
             openapi_extra={"requestBody": {"required": True, "content": {
                 "application/json": {"schema": {
                     "type": "object", "description": "a run as rtbench-run/1 JSON "
                     "(`rtbench export RUN --format json`)"}}}}})
async def upload(request: Request) -> JSONResponse:
    """Store one run sent as rtbench-run/1 JSON (needs a bearer token)."""
    body = await read_body(request, request.app.state.max_upload_bytes)
    detail = await run_in_threadpool(parse_upload, body)
    queue: WriteQueue = request.app.state.write_queue
    store = _store(request)
    run_id, created = await run_in_threadpool(queue.run, lambda: store.add_bundle(detail))
    if created:
        dispatcher: Dispatcher = request.app.state.webhooks
        for event, payload in upload_events(detail, run_id, dispatcher.public_url):
            dispatcher.send(event, payload)
        request.app.state.checker.submit(run_id, detail.scenarios)
    return JSONResponse({"id": run_id, "created": created, "url": f"/runs/{run_id}"},
                        status_code=201 if created else 200)
