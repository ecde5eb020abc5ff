"""Webhooks of `rtbench serve`: events POSTed to a receiver the test starts on loopback,
signed (HMAC-SHA256 verified here), retried after a 500, never twice after a 2xx, never
holding up the upload; every delivery recorded with its status."""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient
from server_helpers import bundle

from rtbench.cli import main
from rtbench.interop.runjson import dumps
from rtbench.server.app import create_app
from rtbench.server.webhooks import (
    DEFAULT_EVENTS,
    SIGNATURE_HEADER,
    Dispatcher,
    Hook,
    WebhookConfigError,
    load_config,
    sign,
)
from rtbench.store import Store
from rtbench.store.deliveries import list_deliveries
from rtbench.store.tokens import create_token

SECRET = b"lab-secret-0123"


class Receiver:
    """An HTTP receiver on 127.0.0.1 that answers the scripted codes, then 200."""

    def __init__(self, codes: list[int], hold: threading.Event | None = None) -> None:
        self.codes = list(codes)
        self.hold = hold  # when given, each request waits for it before it is answered
        self.received: list[tuple[dict[str, str], bytes]] = []
        self.lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                """Record the request; answer the next scripted code."""
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if owner.hold is not None:
                    owner.hold.wait(30.0)
                with owner.lock:
                    owner.received.append((dict(self.headers.items()), body))
                    code = owner.codes.pop(0) if owner.codes else 200
                self.send_response(code)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                """Quiet."""

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        """Stop serving."""
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture()
def receiver() -> Iterator[Receiver]:
    """A receiver that fails the first delivery with 500."""
    r = Receiver([500])
    yield r
    r.close()


def verified(headers: dict[str, str], body: bytes, secret: bytes) -> bool:
    """The receiver's check, as docs/server.md shows it."""
    expected = "sha256=" + hmac.new(secret, body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, headers.get(SIGNATURE_HEADER, ""))


def test_a_fail_run_upload_is_signed_retried_after_500_and_sent_once(
        receiver: Receiver, tmp_path: Path) -> None:
    store = Store.open(f"sqlite:///{tmp_path / 'r.db'}")
    hooks = Dispatcher(store, [Hook(receiver.url, SECRET)], first_delay_s=0.05)
    token = create_token(store, "ci")
    run = bundle(suite="nightly", hostname="imx8-3")
    run.status = "fail"
    with TestClient(create_app(store=store, webhooks=hooks)) as client:
        answer = client.post("/api/v1/runs", content=dumps(run),
                             headers={"Authorization": f"Bearer {token}"})
        assert answer.status_code == 201
        again = client.post("/api/v1/runs", content=dumps(run),
                            headers={"Authorization": f"Bearer {token}"})
        assert again.status_code == 200  # stored before: no second event
        assert hooks.wait_idle(10.0)
    time.sleep(0.2)  # a duplicate would arrive now
    assert len(receiver.received) == 2  # the 500, then the 200; nothing after
    for headers, body in receiver.received:
        assert verified(headers, body, SECRET)
        assert not verified(headers, body, b"another secret")
        assert headers["X-Rtbench-Event"] == "threshold_breach"
    event = json.loads(receiver.received[1][1])
    assert event["event"] == "threshold_breach"
    assert event["run"]["id"] == answer.json()["id"] and event["run"]["hostname"] == "imx8-3"
    (delivery,) = list_deliveries(store)
    assert (delivery.status, delivery.attempts, delivery.last_code) == ("delivered", 2, 200)
    hooks.stop()
    store.close()


def test_an_unreachable_fleet_row_raises_board_offline(receiver: Receiver,
                                                       tmp_path: Path) -> None:
    receiver.codes.clear()
    store = Store.open(f"sqlite:///{tmp_path / 'r.db'}")
    hooks = Dispatcher(store, [Hook(receiver.url, None, ("board_offline",))],
                       first_delay_s=0.05)
    token = create_token(store, "ci")
    ok_run = bundle(hostname="rpi-2")
    offline = bundle(hostname="imx8-3", tags={"board": "imx8-3", "fleet": "f-1"})
    offline.status, offline.reason, offline.scenarios = "unreachable", "No route to host", []
    offline.board = "imx8-3"
    with TestClient(create_app(store=store, webhooks=hooks)) as client:
        for run in (ok_run, offline):
            assert client.post("/api/v1/runs", content=dumps(run),
                               headers={"Authorization": f"Bearer {token}"}
                               ).status_code == 201
        assert hooks.wait_idle(10.0)
    (only,) = receiver.received
    assert SIGNATURE_HEADER not in only[0]  # no secret configured: unsigned
    event = json.loads(only[1])
    assert (event["event"], event["board"], event["reason"]) == \
        ("board_offline", "imx8-3", "No route to host")
    hooks.stop()
    store.close()


def test_retries_are_bounded_and_the_failure_recorded(tmp_path: Path) -> None:
    r = Receiver([500] * 10)
    store = Store.open(f"sqlite:///{tmp_path / 'r.db'}")
    hooks = Dispatcher(store, [Hook(r.url, SECRET)], first_delay_s=0.01, max_attempts=3)
    hooks.start()
    hooks.send("regression", {"board": "b"})
    assert hooks.wait_idle(10.0)
    (delivery,) = list_deliveries(store)
    assert (delivery.status, delivery.attempts, delivery.last_code) == ("failed", 3, 500)
    assert len(r.received) == 3
    hooks.stop()
    r.close()
    store.close()


def test_a_slow_receiver_does_not_hold_up_the_upload(tmp_path: Path) -> None:
    hold = threading.Event()
    r = Receiver([], hold=hold)
    store = Store.open(f"sqlite:///{tmp_path / 'r.db'}")
    hooks = Dispatcher(store, [Hook(r.url, SECRET)])
    token = create_token(store, "ci")
    run = bundle()
    run.status = "fail"
    with TestClient(create_app(store=store, webhooks=hooks)) as client:
        # the receiver answers nothing until `hold` is set: the upload is answered anyway
        assert client.post("/api/v1/runs", content=dumps(run),
                           headers={"Authorization": f"Bearer {token}"}).status_code == 201
        assert r.received == [] and not hooks.wait_idle(0.0)
        hold.set()
        assert hooks.wait_idle(10.0)
    assert len(r.received) == 1
    hooks.stop()
    r.close()
    store.close()


def test_signature_is_hmac_sha256_of_the_body() -> None:
    body = b'{"event":"regression"}'
    assert sign(body, b"k") == "sha256=" + hmac.new(b"k", body, hashlib.sha256).hexdigest()


def test_lab_config_file(tmp_path: Path) -> None:
    (tmp_path / "hook.key").write_text("s3cret\n")
    path = tmp_path / "hooks.toml"
    path.write_text('[[webhook]]\nurl = "https://chat.lab/hook"\nsecret_file = "hook.key"\n'
                    'events = ["regression", "board_offline"]\n'
                    '[[webhook]]\nurl = "http://10.0.0.5:9000/rt"\n')
    first, second = load_config(path)
    assert first == Hook("https://chat.lab/hook", b"s3cret", ("regression", "board_offline"))
    assert second.secret is None and second.events == DEFAULT_EVENTS
    for bad in ('[[webhook]]\nurl = "ftp://x"\n', '[[webhook]]\nurl = "http://x"\n'
                'events = ["reboot"]\n', 'url = "http://x"\n',
                '[[webhook]]\nurl = "http://x"\nsecret_file = "missing.key"\n'):
        path.write_text(bad)
        with pytest.raises(WebhookConfigError):
            load_config(path)


@pytest.mark.parametrize("args, message", [
    (["--webhook", "ftp://x/hook"], "is not an http:// or https:// URL"),
    (["--webhook-secret-file", "k"], "give --webhook URL too"),
    (["--webhook", "http://127.0.0.1:1/h", "--webhook-secret-file", "nope.key"],
     "cannot read it"),
])
def test_serve_refuses_bad_webhook_options(args: list[str], message: str,
                                           tmp_path: Path) -> None:
    done = CliRunner().invoke(main, ["serve", "--db", f"sqlite:///{tmp_path / 'r.db'}",
                                     *args])
    assert done.exit_code == 2 and message in done.output
