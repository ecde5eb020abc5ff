"""The HTML pages: runs list, run (the HTML report), compare (the comparison report),
matrix, reference runs, login.

Server-rendered Jinja with autoescaping and the report's look; no script, no
CDN, so the dashboard works offline.  The numbers come from the same functions
as the JSON API (rtbench.server.views).
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from typing import Annotated, Literal
from urllib.parse import parse_qs, urlencode

from fastapi import APIRouter, Depends, HTTPException, Query, Request
from fastapi import Path as PathParam
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from markupsafe import Markup
from starlette.concurrency import run_in_threadpool

from rtbench.analysis.boardcheck import LIMIT
from rtbench.analysis.multicompare import summarize
from rtbench.analysis.reference import PUBLISHED_LABEL
from rtbench.reference import reference_run, reference_runs
from rtbench.report import compare_html
from rtbench.report.boardsvg import histogram_svg, history_svg
from rtbench.report.compare_summary import fmt_value
from rtbench.report.html import render_html
from rtbench.report.run_markers import run_markers
from rtbench.server.api import (
    INT32_MAX,
    Against,
    Baseline,
    Filter,
    Flag,
    HistoryRuns,
    Outcome,
    Text,
    analysed,
    clean_query,
    compare_ids,
    read_body,
    when_param,
)
from rtbench.server.auth import SESSION_COOKIE, require_read, token_holder
from rtbench.server.render import render_page
from rtbench.server.views import lab as lab_views
from rtbench.server.views import runs as run_views
from rtbench.server.views.paging import PAGE_MEASUREMENTS, plan_pages
from rtbench.server.views.regressions import regressions_json
from rtbench.store import Store
from rtbench.store.boards import board_histogram
from rtbench.store.queries import MAX_PER_PAGE, RunFilter, facets, list_runs_page
from rtbench.store.regressions import checks_of_run
from rtbench.store.runmarks import board_run_marks
from rtbench.store.sessions import create_session, end_session

router = APIRouter(include_in_schema=False)
_render_lock = threading.Lock()  # matplotlib figures are built one at a time
_CACHE_SIZE = 32


def _store(request: Request) -> Store:
    """The application's store."""
    store: Store = request.app.state.store
    return store


@router.get("/")
def index() -> RedirectResponse:
    """The runs list is the front page."""
    return RedirectResponse("/runs", status_code=303)


@router.get("/runs", response_class=HTMLResponse, dependencies=[Depends(require_read)])
def runs_page(request: Request, flt: Filter,
              page: Annotated[int, Query(ge=1, le=10**6)] = 1,
              per_page: Annotated[int, Query(ge=1, le=MAX_PER_PAGE)] = 50) -> str:
    """Stored runs, newest first, with filters and paging."""
    store = _store(request)
    result = list_runs_page(store, flt, page, per_page)
    current = {k: v for k, v in request.query_params.items() if k not in ("page",) and v}

    def page_link(number: int) -> str:
        return "/runs?" + urlencode({**current, "page": number})

    labels = {r.id: run_views.run_verdict_label(r) for r in result.runs}
    return render_page("runs.html.j2", result=result, facets=facets(store), flt=flt,
                       labels=labels,
                       refs=reference_runs(),
                       since=request.query_params.get("since", ""),
                       until=request.query_params.get("until", ""),
                       prev_link=page_link(result.page - 1) if result.page > 1 else None,
                       next_link=page_link(result.page + 1)
                       if result.page < result.pages else None)


def _report(request: Request, run_id: int, page: int = 1) -> tuple[str, int]:
    """The HTML report of one page of the run (cached per application once the run is
    finished), and how many pages the run has."""
    cache: OrderedDict[tuple[int, int], tuple[str, int]] = request.app.state.report_cache
    with _render_lock:
        cached = cache.get((run_id, page))
        if cached is not None:
            cache.move_to_end((run_id, page))
            return cached
    store = _store(request)
    plan = plan_pages(store.run_outline(run_id))
    pages = len(plan)
    if page > pages:
        raise HTTPException(404, f"run {run_id} has {pages} page(s), not {page}")
    # a huge run: only this part is read, and drawn without per-measurement figures
    # (each costs a matplotlib figure; `rtbench report` draws them all)
    detail = store.get_run(run_id, parts=plan[page - 1] if pages > 1 else None)
    with _render_lock:
        html = render_html(detail, figures=pages == 1)
        if detail.status != "running":
            cache[(run_id, page)] = (html, pages)
            while len(cache) > _CACHE_SIZE:
                cache.popitem(last=False)
    return html, pages


@router.get("/runs/{run_id}", response_class=HTMLResponse,
            dependencies=[Depends(require_read)])
def run_page(request: Request,
             run_id: Annotated[int, PathParam(ge=1, le=INT32_MAX)],
             page: Annotated[int, Query(ge=1, le=INT32_MAX)] = 1) -> str:
    """One run: the HTML report with the dashboard's navigation on top; a run of more
    than PAGE_MEASUREMENTS measurements in pages (?page=N), each saying which it is."""
    html, pages = _report(request, run_id, page)
    nav = render_page("nav.html.j2", run_id=run_id)
    store = _store(request)
    flags = board_run_marks(store, run_id=run_id)
    nav += render_page("run_flags.html.j2", run_id=run_id,
                       markers=run_markers(flags[run_id]) if run_id in flags else [],
                       checks=checks_of_run(store, run_id, lab_views.MARKED_OUTCOMES),
                       value=fmt_value, change=regression_change)
    if pages > 1:
        nav += render_page("run_pages.html.j2", run_id=run_id, page=page, pages=pages,
                           per_page=PAGE_MEASUREMENTS)
    # the report is one full page; the navigation goes right after its <body>
    # (user text in the report is escaped, so this tag occurs once)
    return html.replace("<body>", "<body>\n" + nav, 1)


@router.get("/compare", response_class=HTMLResponse, dependencies=[Depends(require_read)])
def compare_page(request: Request,
                 run: Annotated[list[int] | None, Query(max_length=run_views.COMPARE_LIMIT)]
                 = None,
                 ref: Annotated[list[str] | None, Query(max_length=run_views.COMPARE_LIMIT)]
                 = None, baseline: Baseline = None, against: Against = "previous") -> str:
    """The comparison report of the picked runs (stored and reference runs), as
    `rtbench compare -o` writes it; a page to pick them while fewer than two."""
    store = _store(request)
    ids, names = compare_ids(run, ref, baseline)
    if not ids or len(ids) + len(names) < 2:
        picked_refs = []
        for name in names:
            found = reference_run(name)
            if found is None:
                raise HTTPException(404, f"no reference run {name!r}; see /refs")
            picked_refs.append(found)
        picked = [store.get_run(run_id) for run_id in ids]
        message = ("" if not (ids or names) else "compare needs a stored run and one more "
                   "run (stored or reference)")
        return render_page("compare_pick.html.j2", picked=picked, picked_refs=picked_refs,
                           refs=reference_runs(), message=message)
    key = (tuple(ids), tuple(names), against)
    cache: OrderedDict[object, str] = request.app.state.report_cache
    with _render_lock:
        html = cache.get(key)
    if html is None:
        comp = analysed(store, ids, names)
        with _render_lock:
            html = compare_html.render(comp, summarize(comp, against))
            if all(v.run is None or v.run.status != "running" for v in comp.runs):
                cache[key] = html
                while len(cache) > _CACHE_SIZE:
                    cache.popitem(last=False)
    query = urlencode([("run", i) for i in ids] + [("ref", n) for n in names]
                      + [("baseline", ids[0])])
    nav = render_page("nav.html.j2", compare_api=f"/api/v1/compare?{query}")
    return html.replace("<body>", "<body>\n" + nav, 1)


@router.get("/refs", response_class=HTMLResponse, dependencies=[Depends(require_read)])
def refs_page(request: Request) -> str:
    """The published reference runs, and the newest stored runs to compare them with."""
    stored = list_runs_page(_store(request), RunFilter(), 1, 20).runs
    return render_page("refs.html.j2", refs=reference_runs(), note=PUBLISHED_LABEL,
                       stored=stored)


@router.get("/refs/{name}", response_class=HTMLResponse,
            dependencies=[Depends(require_read)])
def ref_page(request: Request, name: Annotated[str, PathParam(max_length=64)]) -> str:
    """One reference run: conditions, published figures, compare with a stored run."""
    found = reference_run(name) if re.fullmatch(run_views.REF_NAME, name) else None
    if found is None:
        raise HTTPException(404, f"no reference run {name[:64]!r}; see /refs")
    stored = list_runs_page(_store(request), RunFilter(), 1, 50).runs
    return render_page("ref.html.j2", ref=found,
                       cells=run_views.reference_json(found)["cells"], stored=stored)


Span = Annotated[Literal["runs", "nights", ""] | None, Query(
    description="the figures of the last N runs or nights (empty: every run)")]
Last = Annotated[int, Query(ge=1, le=1000, description="N of span")]


@router.get("/matrix", response_class=HTMLResponse, dependencies=[Depends(require_read)])
def matrix_page(request: Request, suite: Text = None, board: Text = None,
                simulated: Flag = 0, page: Annotated[int, Query(ge=1, le=10**6)] = 1,
                emulated: Flag = 0, span: Span = None, last: Last = 7) -> str:
    """Board x kernel matrix, one table per suite, from the per-run summaries; 100 boards
    a page (runs under CPU emulation only with ?emulated=1); the figures of every run, or
    of the last N runs or nights."""
    store = _store(request)
    span = span or None
    found = lab_views.matrix(store, suite=clean_query(suite, "suite"),
                            board=clean_query(board, "board"), simulated=bool(simulated),
                            page=page, emulated=bool(emulated), span=span, last=last)
    current = {k: v for k, v in request.query_params.items() if k != "page" and v}

    def page_link(number: int) -> str:
        return "/matrix?" + urlencode({**current, "page": number})

    return render_page("matrix.html.j2", tables=found.tables,
                       facets=facets(store, keys=("suite",)),
                       suite=suite or "", simulated=bool(simulated),
                       emulated=bool(emulated), found=found,
                       span=span, last=last, span_text=lab_views.span_text(span, last),
                       prev_link=page_link(page - 1) if page > 1 else None,
                       next_link=page_link(page + 1) if page < found.pages else None)


@router.get("/boards", response_class=HTMLResponse, dependencies=[Depends(require_read)])
def boards_page(request: Request, simulated: Flag = 0) -> str:
    """Every board with stored runs."""
    return render_page("boards.html.j2", boards=lab_views.boards_json(
        _store(request), bool(simulated)), simulated=bool(simulated))


@router.get("/boards/{name}", response_class=HTMLResponse,
            dependencies=[Depends(require_read)])
def board_page(request: Request, name: Annotated[str, PathParam(max_length=255)],
               suite: Text = None, simulated: Flag = 0, all_policies: Flag = 0,
               last: Annotated[int, Query(ge=1, le=1000)] = 10,
               runs: HistoryRuns = str(lab_views.HISTORY_RUNS),
               table: HistoryRuns = str(lab_views.TABLE_ROWS)) -> str:
    """One board's history per cell (its newest `runs` runs, or all; each cell's table
    lists the newest `table` of them, or all), and the combined histogram of its last
    runs."""
    store = _store(request)
    board = clean_query(name, "board") or ""
    newest = lab_views.history_runs(runs)
    found = lab_views.board_histories(store, board, suite=clean_query(suite, "suite"),
                                     simulated=bool(simulated),
                                     all_policies=bool(all_policies), newest_runs=newest)
    if not found and not lab_views.board_known(store, board):
        raise HTTPException(404, f"no run of board {board[:64]!r} is stored; see /boards")
    run_ids, pairs = board_histogram(store, board, suite=clean_query(suite, "suite"), last=last,
                                     simulated=None if simulated else False)
    title = (f"combined histogram of the last {len(run_ids)} run(s) of {board}"
             + (f", suite {suite}" if suite else ""))
    marks = (lab_views.regression_marks(store, board, clean_query(suite, "suite"),
                                       since=lab_views.oldest_drawn(found))
             if found else {})
    table_rows = lab_views.history_runs(table)
    # the markers are shown in the tables only: read for the runs they list
    run_marks = {run_id: run_markers(fields) for run_id, fields in board_run_marks(
        store, board, since=lab_views.oldest_drawn(found, table_rows)).items()} \
        if found else {}
    regressions = lab_views.board_regressions(store, board, clean_query(suite, "suite"))
    return render_page("board.html.j2", board=board, suite=suite or "", run_marks=run_marks,
                       regressions=regressions,
                       simulated=bool(simulated), all_policies=bool(all_policies),
                       histories=[(h, Markup(history_svg(h, lab_views.marks_for(h, marks))))
                                  for h in found],
                       combined=Markup(histogram_svg(pairs, title)), last=last,
                       runs=runs, newest_runs=newest, table=table,
                       table_rows=table_rows,
                       combined_runs=run_ids)


@router.get("/regressions", response_class=HTMLResponse,
            dependencies=[Depends(require_read)])
def regressions_page(request: Request, board: Text = None, suite: Text = None,
                     since: Annotated[str | None, Query(max_length=40)] = None,
                     outcome: Outcome = "regression") -> str:
    """The regression board: board, cell, metric, baseline -> new, the kernel it
    started on, as GET /api/v1/regressions returns it."""
    store = _store(request)
    data = regressions_json(store, board=board or None, suite=suite or None,
                            since=when_param(since, "since"), outcome=outcome)
    return render_page("regressions.html.j2", groups=data["regressions"],
                       counts=data["counts"], truncated=data["truncated"], board=board,
                       suite=suite, since=since, outcome=outcome,
                       suites=facets(store, keys=("suite",))["suite"], limit_pct=f"{LIMIT * 100:g}",
                       value=fmt_value, change=regression_change)


def regression_change(rel: float | None) -> str:
    """A relative change as '+725.8%' ('-' when unknown)."""
    return "-" if rel is None else f"{rel:+.1%}"


@router.get("/login", response_class=HTMLResponse)
def login_form() -> str:
    """A form to enter a token (servers started with --read-token-required)."""
    return render_page("login.html.j2", failed=False)


@router.post("/login")
async def login(request: Request) -> Response:
    """Check the token and start a login session: the HttpOnly cookie holds the session's
    random id, never the token."""
    body = await read_body(request, 4096)
    token = (parse_qs(body.decode("utf-8", "replace")).get("token") or [""])[0].strip()
    who = await token_holder(request, token)
    if who is None:
        return HTMLResponse(render_page("login.html.j2", failed=True), status_code=401)
    store = _store(request)
    session_id = await run_in_threadpool(request.app.state.write_queue.run,
                                         lambda: create_session(store, who))
    response = RedirectResponse("/runs", status_code=303)
    response.set_cookie(SESSION_COOKIE, session_id, httponly=True, samesite="strict",
                        secure=request.url.scheme == "https")
    return response


@router.post("/logout")
async def logout(request: Request) -> Response:
    """End the login session of the cookie (if any) and forget the cookie."""
    session_id = request.cookies.get(SESSION_COOKIE)
    if session_id:
        store = _store(request)
        await run_in_threadpool(request.app.state.write_queue.run,
                                lambda: end_session(store, session_id))
    response = RedirectResponse("/login", status_code=303)
    response.delete_cookie(SESSION_COOKIE)
    return response
