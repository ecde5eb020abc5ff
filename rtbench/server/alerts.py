"""What an uploaded run tells the lab's webhooks: the events it raises and their data.

Regression alerts have state: after each checked run, the regressions open on its board
(rtbench.analysis.openregs) are compared with those open before it.  A regression
*fires* once when it becomes confirmed (`regression`; receivers may also ask for
`regression_suspected`, sent when it is first suspected), *resolves* once when a later
run or kernel brings it back (`regression_resolved`), and nothing is sent while it stays
as it was.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from rtbench.analysis.openregs import CONFIRMED, SUSPECTED, OpenRegression
from rtbench.analysis.verdict import STATUS_FAILED
from rtbench.bundle import RunDetail


def link(public_url: str, path: str) -> str:
    """path under the server's public URL (absolute), or path itself when none is set."""
    return f"{public_url.rstrip('/')}{path}" if public_url else path


def run_facts(run: RunDetail, run_id: int, public_url: str = "") -> dict[str, Any]:
    """The run an event is about, as the webhook body names it."""
    return {"id": run_id, "url": link(public_url, f"/runs/{run_id}"), "board": run.board,
            "hostname": run.hostname,
            "target": run.target, "kernel": run.kernel, "suite": run.suite,
            "status": run.status, "started_at": run.started_at.isoformat(),
            "simulated": run.simulated, "tags": dict(run.tags)}


def upload_events(run: RunDetail, run_id: int, public_url: str = ""
                  ) -> list[tuple[str, dict[str, Any]]]:
    """The events of a newly stored run: threshold_breach when its verdict is FAIL,
    board_offline when it is a fleet board's unreachable row."""
    out: list[tuple[str, dict[str, Any]]] = []
    facts = run_facts(run, run_id, public_url)
    if run.status in STATUS_FAILED:
        failed = [f"{sc.name} / {m.name}" for sc in run.scenarios for m in sc.measurements
                  if m.status in STATUS_FAILED]
        out.append(("threshold_breach", {"run": facts, "failed_measurements": failed}))
    if run.status == "unreachable":
        out.append(("board_offline", {"run": facts, "board": run.board or run.hostname,
                                      "reason": run.reason}))
    return out


def _regression_data(reg: OpenRegression, run_id: int, kernel: str, public_url: str,
                     figures: dict[str, Any]) -> dict[str, Any]:
    """A regression event's data: what regressed, its state and runs, the run that
    changed it (with its link) and that run's figures (value, baseline, rel, reason)."""
    return {"board": reg.board, "suite": reg.suite, "cell": reg.cell, "metric": reg.metric,
            "kernel": reg.kernel, "kernels": list(reg.kernels), "state": reg.state,
            "first_run": reg.first_run, "first_seen": reg.first_seen.isoformat(),
            "confirmed_run": reg.confirmed_run, "runs": list(reg.runs),
            "board_url": link(public_url, f"/boards/{quote(reg.board, safe='')}"),
            **figures,
            "run": {"id": run_id, "kernel": kernel,
                    "url": link(public_url, f"/runs/{run_id}")}}


def regression_events(before: list[OpenRegression], after: list[OpenRegression], *,
                      run_id: int, kernel: str, public_url: str = "",
                      figures: dict[tuple[str, str, str, str], dict[str, Any]] | None = None
                      ) -> list[tuple[str, dict[str, Any]]]:
    """The alerts that run_id changed: `regression_suspected` for a key newly open as
    suspected, `regression` for one newly confirmed (open straight away as confirmed,
    or suspected before), `regression_resolved` for one open before and not after
    (its data has the state it had, so a receiver that never heard of a suspicion can
    leave its resolution out).  Unchanged regressions raise nothing."""
    figures = figures or {}
    old = {r.key: r for r in before}
    new = {r.key: r for r in after}
    out: list[tuple[str, dict[str, Any]]] = []
    for key, reg in sorted(new.items()):
        was = old.get(key)
        data = _regression_data(reg, run_id, kernel, public_url, figures.get(key, {}))
        if reg.state == CONFIRMED and (was is None or was.state != CONFIRMED):
            out.append(("regression", data))
        elif reg.state == SUSPECTED and was is None:
            out.append(("regression_suspected", data))
    for key, was in sorted(old.items()):
        if key not in new:
            data = _regression_data(was, run_id, kernel, public_url, figures.get(key, {}))
            data["resolved_kernel"] = kernel
            out.append(("regression_resolved", data))
    return out
