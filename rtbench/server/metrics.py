"""`GET /metrics`: the newest figures of every board x suite x cell for Prometheus.

Read from the per-run summaries (run_cells, one query: rtbench.store.latest), never
from histograms.  Every family is a gauge: each sample is the value of the newest run
of its cell, which goes down as well as up when a new run arrives (a counter must
never decrease, so a run's sample count or overruns are not counters here).  Labels:
board, kernel (of that run), suite, scenario, test, series -- the scheme of every
export (rtbench/interop/cellmetrics.py) -- plus threshold (in seconds) on the
exceedance family; the run id is the value of rtbench_cell_run_id, never a label.
A figure the run could not give (p99.9 of too few samples) has no sample: it is
unknown, not zero.  Prometheus text 0.0.4 by default; OpenMetrics 1.0 when the scraper
asks for it (Accept).  Simulated runs are left out.  The text is written by
rtbench/interop/openmetrics.py (latest_text), the one writer of both formats.
"""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request
from fastapi.responses import PlainTextResponse, Response
from starlette.concurrency import run_in_threadpool

from rtbench.interop.openmetrics import latest_text
from rtbench.server.auth import require_read
from rtbench.store import Store
from rtbench.store.latest import latest_cells

router = APIRouter(tags=["metrics"])
_TEXT = {"schema": {"type": "string"}}
METRICS_RESPONSES: dict[int | str, dict[str, object]] = {
    200: {"description": "Prometheus text 0.0.4, or OpenMetrics 1.0 when Accept asks",
          "content": {"text/plain": _TEXT, "application/openmetrics-text": _TEXT}},
    401: {"description": "a token is needed to read (server started so)", "content": {
        "application/json": {"schema": {"type": "object"}}}},
    503: {"description": "the database is not available", "content": {
        "application/json": {"schema": {"type": "object"}}}}}


def wants_openmetrics(accept: str) -> bool:
    """Whether an Accept header asks for OpenMetrics text."""
    return "application/openmetrics-text" in accept.lower()


@router.get("/metrics", dependencies=[Depends(require_read)],
            response_class=PlainTextResponse, responses=METRICS_RESPONSES)
async def metrics(request: Request) -> Response:
    """The newest figures per board x suite x cell, Prometheus or OpenMetrics text."""
    store: Store = request.app.state.store
    rows = await run_in_threadpool(latest_cells, store)
    openmetrics = wants_openmetrics(request.headers.get("accept", ""))
    body, media_type = await run_in_threadpool(latest_text, rows, openmetrics)
    return Response(body, media_type=media_type)
