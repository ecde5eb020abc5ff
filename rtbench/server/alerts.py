"""What an uploaded run tells the lab's webhooks: the events it raises and their data."""

from __future__ import annotations

from typing import Any

from rtbench.analysis.verdict import STATUS_FAILED
from rtbench.bundle import RunDetail


def run_facts(run: RunDetail, run_id: int) -> dict[str, Any]:
    """The run an event is about, as the webhook body names it."""
    return {"id": run_id, "url": f"/runs/{run_id}", "board": run.board,
            "hostname": run.hostname,
            "target": run.target, "kernel": run.kernel, "suite": run.suite,
            "status": run.status, "started_at": run.started_at.isoformat(),
            "simulated": run.simulated, "tags": dict(run.tags)}


def upload_events(run: RunDetail, run_id: int) -> list[tuple[str, dict[str, Any]]]:
    """The events of a newly stored run: threshold_breach when its verdict is FAIL,
    board_offline when it is a fleet board's unreachable row."""
    out: list[tuple[str, dict[str, Any]]] = []
    facts = run_facts(run, run_id)
    if run.status in STATUS_FAILED:
        failed = [f"{sc.name} / {m.name}" for sc in run.scenarios for m in sc.measurements
                  if m.status in STATUS_FAILED]
        out.append(("threshold_breach", {"run": facts, "failed_measurements": failed}))
    if run.status == "unreachable":
        out.append(("board_offline", {"run": facts, "board": run.board or run.hostname,
                                      "reason": run.reason}))
    return out
