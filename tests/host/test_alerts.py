"""Regression alerts with state, end to end through uploads: a planted regression fires
once when confirmed (and once when suspected, for a receiver that asks), resolves once
when a later kernel brings it back, and sends nothing while unchanged; links are
absolute under --public-url; each receiver gets its own format (rtbench's JSON,
Alertmanager's webhook, Slack's text); a slow receiver delays no other."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from test_webhooks import Receiver

from bench.lab_data import Lab, make_run
from rtbench.interop.runjson import dumps
from rtbench.server.app import create_app
from rtbench.server.webhooks import (
    DEFAULT_EVENTS,
    EVENTS,
    Dispatcher,
    Hook,
    WebhookConfigError,
    check_public_url,
    load_config,
)
from rtbench.store import Store
from rtbench.store.deliveries import list_deliveries
from rtbench.store.tokens import create_token

PUBLIC = "https://rt.lab.example/rtbench"
# board 0 regresses from kernel 1 on; CLEAN: the same board with no regression at all
PLANTED = Lab(boards=2, kernels=3, runs=3, regressed_board=0, regressed_from=1)
CLEAN = Lab(boards=2, kernels=3, runs=3, regressed_board=99, regressed_from=1)


def upload_nights(client: TestClient, token: str, app: Any, plan: list[tuple[Lab, int, int]]
                  ) -> None:
    """Upload the runs of plan (lab, kernel, run) for both boards, each checked in turn."""
    for lab, kernel, run in plan:
        for board in range(2):
            answer = client.post("/api/v1/runs", content=dumps(make_run(lab, board, kernel,
                                                                        run)),
                                 headers={"Authorization": f"Bearer {token}"})
            assert answer.status_code == 201
            app.state.checker.wait()


def events_of(receiver: Receiver) -> list[tuple[str, dict[str, Any]]]:
    """(event header, parsed body) of every request the receiver got."""
    return [(h["X-Rtbench-Event"], json.loads(b)) for h, b in receiver.received]


@pytest.fixture(scope="module")
def lab_alerts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[Any]]:
    """One lab uploaded through the API with four receivers: default events, suspicions
    too, Alertmanager and Slack formats; what each received, in order."""
    tmp = tmp_path_factory.mktemp("alerts")
    receivers = {name: Receiver([]) for name in ("plain", "suspected", "am", "slack")}
    hooks = [Hook(receivers["plain"].url, b"k"),
             Hook(receivers["suspected"].url, None, EVENTS),
             Hook(receivers["am"].url, None, DEFAULT_EVENTS, "alertmanager"),
             Hook(receivers["slack"].url, None, DEFAULT_EVENTS, "slack")]
    store = Store.open(f"sqlite:///{tmp / 'r.db'}")
    dispatcher = Dispatcher(store, hooks, first_delay_s=0.05, public_url=PUBLIC)
    token = create_token(store, "ci")
    app = create_app(store=store, webhooks=dispatcher)
    phases: list[int] = []
    with TestClient(app) as client:
        # kernel 0: the baseline; kernel 1: regressed on board 0 (3 runs); kernel 2:
        # back to normal (3 runs); then more unchanged runs of kernel 2
        plan = [(PLANTED, 0, r) for r in range(3)] + [(PLANTED, 1, r) for r in range(3)]
        plan += [(CLEAN, 2, r) for r in range(3)]
        for step in plan:
            upload_nights(client, token, app, [step])
            assert dispatcher.wait_idle(10.0)
            phases.append(len(receivers["suspected"].received))
        assert app.state.checker.failures == []
    deliveries = list_deliveries(store, limit=1000)
    dispatcher.stop()
    store.close()
    out: dict[str, list[Any]] = {name: events_of(r) for name, r in receivers.items()}
    out["phases"] = phases
    out["deliveries"] = deliveries
    for r in receivers.values():
        r.close()
    return out


def test_a_regression_fires_once_when_confirmed_and_resolves_once(
        lab_alerts: dict[str, list[Any]]) -> None:
    events = lab_alerts["plain"]
    assert [e for e, _ in events] == ["regression", "regression_resolved"]
    fired, resolved = (body for _, body in events)
    assert (fired["board"], fired["kernel"], fired["state"]) == \
        ("board-0000", PLANTED.kernel_names[1], "confirmed")
    assert fired["confirmed_run"] == fired["run"]["id"] and len(fired["runs"]) >= 2
    assert resolved["resolved_kernel"] == CLEAN.kernel_names[2]
    assert (resolved["cell"], resolved["metric"]) == (fired["cell"], fired["metric"])
    # never the unchanged board, never again after it resolved
    assert all(body["board"] == "board-0000" for _, body in events)


def test_suspicion_is_sent_only_to_the_receivers_that_ask(
        lab_alerts: dict[str, list[Any]]) -> None:
    names = [e for e, _ in lab_alerts["suspected"]]
    assert names == ["regression_suspected", "regression", "regression_resolved"]
    phases = lab_alerts["phases"]
    # suspected at the regressed kernel's first run, nothing during the baseline
    assert phases[2] == 0 and phases[3] == 1
    # the confirmation by the third run of the regressed kernel at the latest
    assert phases[5] == 2
    assert phases[-1] == 3 and phases[-2] <= 3  # resolved, then nothing more


def test_links_are_absolute_under_the_public_url(lab_alerts: dict[str, list[Any]]) -> None:
    for _, body in lab_alerts["plain"]:
        assert body["run"]["url"] == f"{PUBLIC}/runs/{body['run']['id']}"
        assert body["board_url"] == f"{PUBLIC}/boards/board-0000"


def test_alertmanager_receiver_gets_firing_then_resolved_with_one_fingerprint(
        lab_alerts: dict[str, list[Any]]) -> None:
    bodies = [body for _, body in lab_alerts["am"]]
    assert [b["status"] for b in bodies] == ["firing", "resolved"]
    for b in bodies:
        assert b["version"] == "4" and b["externalURL"] == PUBLIC
        (alert,) = b["alerts"]
        assert alert["labels"]["alertname"] == "RtbenchRegression"
        assert alert["labels"]["board"] == "board-0000"
        assert alert["generatorURL"].startswith(f"{PUBLIC}/runs/")
        assert "run" not in alert["labels"]
    firing, resolved = (b["alerts"][0] for b in bodies)
    assert firing["fingerprint"] == resolved["fingerprint"]
    assert firing["endsAt"] == "0001-01-01T00:00:00Z"
    assert resolved["endsAt"] > resolved["startsAt"]


def test_slack_receiver_gets_one_line_of_text_with_the_link(
        lab_alerts: dict[str, list[Any]]) -> None:
    texts = [body["text"] for _, body in lab_alerts["slack"]]
    assert len(texts) == 2 and all(set(b) == {"text"} for _, b in lab_alerts["slack"])
    assert texts[0].startswith("rtbench: confirmed regression on board-0000")
    assert "resolved" in texts[1]
    assert all(f"<{PUBLIC}/runs/" in t and "\n" not in t for t in texts)


def test_every_delivery_is_recorded_delivered(lab_alerts: dict[str, list[Any]]) -> None:
    deliveries = lab_alerts["deliveries"]
    assert len(deliveries) == 2 + 3 + 2 + 2
    assert {d.status for d in deliveries} == {"delivered"}


def test_a_slow_receiver_delays_no_other(tmp_path: Path) -> None:
    hold = threading.Event()
    slow, quick = Receiver([], hold=hold), Receiver([])
    store = Store.open(f"sqlite:///{tmp_path / 'r.db'}")
    dispatcher = Dispatcher(store, [Hook(slow.url), Hook(quick.url)])
    dispatcher.start()
    started = time.monotonic()
    for n in range(3):
        dispatcher.send("board_offline", {"board": f"b{n}", "reason": "gone"})
    deadline = time.monotonic() + 10.0
    while len(quick.received) < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert len(quick.received) == 3 and slow.received == []
    assert time.monotonic() - started < 5.0
    hold.set()
    assert dispatcher.wait_idle(10.0) and len(slow.received) == 3
    dispatcher.stop()
    for r in (slow, quick):
        r.close()
    store.close()


def test_a_full_queue_drops_and_records_instead_of_blocking(tmp_path: Path) -> None:
    hold = threading.Event()
    slow = Receiver([], hold=hold)
    store = Store.open(f"sqlite:///{tmp_path / 'r.db'}")
    dispatcher = Dispatcher(store, [Hook(slow.url)], queue_size=2)
    dispatcher.start()
    started = time.monotonic()
    for n in range(6):
        dispatcher.send("board_offline", {"board": f"b{n}"})
    assert time.monotonic() - started < 1.0  # send never waits for the receiver
    hold.set()
    assert dispatcher.wait_idle(10.0)
    dropped = [d for d in list_deliveries(store) if d.status == "failed"]
    assert dropped and all("queue is full" in (d.last_error or "") for d in dropped)
    assert len(slow.received) + len(dropped) == 6
    dispatcher.stop()
    slow.close()
    store.close()


def test_config_takes_a_format_per_receiver(tmp_path: Path) -> None:
    path = tmp_path / "hooks.toml"
    path.write_text('[[webhook]]\nurl = "http://127.0.0.1:9/a"\nformat = "alertmanager"\n'
                    '[[webhook]]\nurl = "http://127.0.0.1:9/b"\nformat = "slack"\n'
                    'events = ["regression", "regression_suspected"]\n'
                    '[[webhook]]\nurl = "http://127.0.0.1:9/c"\n')
    a, b, c = load_config(path)
    assert (a.format, b.format, c.format) == ("alertmanager", "slack", "rtbench")
    assert c.events == DEFAULT_EVENTS and "regression_suspected" not in c.events
    path.write_text('[[webhook]]\nurl = "http://127.0.0.1:9/a"\nformat = "teams"\n')
    with pytest.raises(WebhookConfigError, match="format is one of"):
        load_config(path)


@pytest.mark.parametrize("url", ["ftp://x", "https://x/?q=1", "https://u:p@x/",
                                 "https://x/#top", "https://x\n.example", "https://x:99999/"])
def test_a_bad_public_url_is_refused(url: str) -> None:
    with pytest.raises(WebhookConfigError, match="--public-url"):
        check_public_url(url)


def test_a_public_url_loses_its_trailing_slash() -> None:
    assert check_public_url("https://rt.lab.example/base/") == "https://rt.lab.example/base"
