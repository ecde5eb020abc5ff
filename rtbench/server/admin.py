"""The admin part of the /api/v1 API: deleting runs one by one or in bulk, and pruning
old runs; every route needs an admin-scope bearer token.

Bulk deletes are a dry run unless `confirm=true`: they answer the runs that would go.
Each delete is one transaction; the rendered-page cache is emptied after it.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Query, Request
from fastapi import Path as PathParam
from starlette.concurrency import run_in_threadpool

from rtbench.bundle import RunSummary
from rtbench.server.api import _ERROR, INT32_MAX, NOT_FOUND, Filter
from rtbench.server.auth import require_admin
from rtbench.server.writequeue import WriteQueue
from rtbench.store import Store
from rtbench.store.queries import RunFilter
from rtbench.store.removal import (
    EXEMPT_TAGS,
    cutoff_of,
    delete_matching,
    delete_runs,
    expired_runs,
    matching_runs,
    prune,
)

router = APIRouter(prefix="/api/v1", tags=["admin"], dependencies=[Depends(require_admin)])
ADMIN_ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"description": "no valid token", **_ERROR},
    403: {"description": "the token's scope is not admin", **_ERROR},
    422: {"description": "a parameter is not valid", **_ERROR},
    503: {"description": "the database is not available", **_ERROR}}
Confirm = Annotated[bool, Query(description="really delete (default: a dry run listing "
                                            "what would be deleted)")]


def _listed(runs: list[RunSummary]) -> list[dict[str, Any]]:
    """The runs of a delete answer: id, host, suite, kernel, start, tags."""
    return [{"id": r.id, "hostname": r.hostname, "suite": r.suite, "kernel": r.kernel,
             "status": r.status, "started_at": r.started_at.isoformat(), "tags": r.tags}
            for r in runs]


async def _write(request: Request, action: Any) -> Any:
    """action() through the write queue, then the rendered-page cache emptied."""
    queue: WriteQueue = request.app.state.write_queue
    result = await run_in_threadpool(queue.run, action)
    request.app.state.report_cache.clear()
    return result


@router.delete("/runs/{run_id}", responses={**ADMIN_ERRORS, **NOT_FOUND})
async def delete_run(request: Request,
                     run_id: Annotated[int, PathParam(ge=1, le=INT32_MAX)]) -> dict[str, Any]:
    """Delete one run and everything stored with it (needs an admin token)."""
    store: Store = request.app.state.store
    deleted = await _write(request, lambda: delete_runs(store, [run_id]))
    return {"deleted": deleted}


def _has_filter(flt: RunFilter) -> bool:
    """Whether any filter is given (a bulk delete of everything is refused)."""
    return any(v is not None for v in vars(flt).values())


@router.delete("/runs", responses=ADMIN_ERRORS)
async def delete_selected(request: Request, flt: Filter, confirm: Confirm = False
                          ) -> dict[str, Any]:
    """Delete the runs the filters select (the runs list's filters; at least one): a dry
    run listing them unless confirm=true (needs an admin token)."""
    if not _has_filter(flt):
        raise HTTPException(422, "give at least one filter (host, kernel, suite, tag, "
                                 "status, since, until); deleting every run is refused")
    store: Store = request.app.state.store
    if not confirm:
        runs = await run_in_threadpool(matching_runs, store, flt)
        return {"dry_run": True, "count": len(runs), "runs": _listed(runs)}
    gone = await _write(request, lambda: delete_matching(store, flt))
    return {"dry_run": False, "count": len(gone), "runs": _listed(gone)}


@router.post("/prune", responses=ADMIN_ERRORS)
async def prune_old(request: Request,
                    older_than_days: Annotated[int, Query(ge=1, le=100_000, description=(
                        "delete runs started more than this many days ago"))],
                    confirm: Confirm = False) -> dict[str, Any]:
    """Retention: delete finished runs started more than older_than_days ago, except runs
    tagged keep or baseline; a dry run unless confirm=true (needs an admin token)."""
    store: Store = request.app.state.store
    cutoff = cutoff_of(timedelta(days=older_than_days))
    if not confirm:
        runs = await run_in_threadpool(expired_runs, store, cutoff)
    else:
        runs = await _write(request, lambda: prune(store, cutoff))
    return {"dry_run": not confirm, "cutoff": cutoff.isoformat(), "exempt_tags":
            list(EXEMPT_TAGS), "count": len(runs), "runs": _listed(runs)}
