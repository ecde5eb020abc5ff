"""Webhooks of `rtbench serve`: a JSON POST per event, signed, retried, recorded.

Events (docs/server.md): ``regression`` (the regression board found one in an uploaded
run), ``threshold_breach`` (an uploaded run whose verdict is FAIL) and ``board_offline``
(an uploaded fleet row whose status is ``unreachable``).  The body is signed with
HMAC-SHA256 under the shared secret (header X-Rtbench-Signature-256: sha256=HEX).  A
delivery is retried with exponential backoff (1, 2, 4, 8, 16 s: 6 attempts) until the
receiver answers 2xx; each delivery is a row of webhook_deliveries with its status.
Deliveries run on one thread of their own: an upload only puts events on its queue.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import heapq
import hmac
import itertools
import json
import queue
import re
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

import tomllib

from rtbench import __version__
from rtbench.redact import redact
from rtbench.secretfile import SecretFileError, read_secret_file
from rtbench.store import Store, StoreError
from rtbench.store.deliveries import add_delivery, update_delivery

EVENTS = ("regression", "threshold_breach", "board_offline")
SIGNATURE_HEADER = "X-Rtbench-Signature-256"
EVENT_HEADER = "X-Rtbench-Event"
DELIVERY_HEADER = "X-Rtbench-Delivery"
MAX_ATTEMPTS = 6
FIRST_DELAY_S = 1.0
TIMEOUT_S = 10.0
# a host name, an IPv4 address or (urlsplit took off the brackets) an IPv6 address
_HOST = re.compile(r"[A-Za-z0-9._~%-]+|[0-9A-Fa-f:.]+(%[A-Za-z0-9._~-]+)?")

# a POST: (url, body, headers, timeout) -> HTTP status (OSError when nothing answered)
Poster = Callable[[str, bytes, dict[str, str], float], int]


class WebhookConfigError(ValueError):
    """A webhook URL, secret file or config file that cannot be used (one line)."""


@dataclass(frozen=True)
class Hook:
    """One receiver: where events go, the secret they are signed with, which events."""

    url: str
    secret: bytes | None = None
    events: tuple[str, ...] = EVENTS


def sign(body: bytes, secret: bytes) -> str:
    """The signature header's value of body: 'sha256=' and the HMAC-SHA256 in hex."""
    return "sha256=" + hmac.new(secret, body, hashlib.sha256).hexdigest()


def check_url(url: str) -> str:
    """url when it is an http(s) URL with a host and a valid port, free of white space
    and control characters, else WebhookConfigError (the URL shown redacted)."""
    shown = redact(url)[:200]
    if any(ord(ch) <= 32 or ord(ch) == 127 for ch in url):
        raise WebhookConfigError(f"webhook URL {shown!r} holds white space or control "
                                 "characters (a newline?): give the URL alone")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise WebhookConfigError(f"webhook URL {shown!r}: the host or port is not valid "
                                 "(a port is 1 to 65535)") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise WebhookConfigError(f"webhook URL {shown!r} is not an http:// or "
                                 "https:// URL with a host")
    if port == 0 or not _HOST.fullmatch(parts.hostname):
        raise WebhookConfigError(f"webhook URL {shown!r}: the host or port is not valid "
                                 "(a port is 1 to 65535)")
    return url


def read_secret(path: Path) -> bytes:
    """The shared secret in path: one line, read by the bounded, non-blocking reader
    (rtbench.secretfile); WebhookConfigError else."""
    try:
        return read_secret_file(path, f"webhook secret file {path}")
    except SecretFileError as exc:
        raise WebhookConfigError(str(exc)) from None


def load_config(path: Path) -> list[Hook]:
    """The hooks of a lab's webhook file: [[webhook]] tables with url, and optionally
    secret_file (relative to the file) and events (a subset of EVENTS)."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise WebhookConfigError(f"webhook config {path}: cannot read it "
                                 f"({exc.strerror or exc})") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise WebhookConfigError(f"webhook config {path}: not valid TOML ({exc})") from None
    tables = data.get("webhook")
    extra = set(data) - {"webhook"}
    if extra or not isinstance(tables, list) or not tables:
        raise WebhookConfigError(f"webhook config {path}: give one or more [[webhook]] "
                                 "tables and nothing else")
    hooks = []
    for n, table in enumerate(tables, start=1):
        where = f"webhook config {path}, webhook {n}"
        if not isinstance(table, dict) or set(table) - {"url", "secret_file", "events"}:
            raise WebhookConfigError(f"{where}: keys are url, secret_file and events")
        url = table.get("url")
        if not isinstance(url, str):
            raise WebhookConfigError(f"{where}: url is missing")
        events = table.get("events", list(EVENTS))
        if not isinstance(events, list) or not events or \
                any(e not in EVENTS for e in events):
            raise WebhookConfigError(f"{where}: events is a list of {', '.join(EVENTS)}")
        secret_file = table.get("secret_file")
        if secret_file is not None and not isinstance(secret_file, str):
            raise WebhookConfigError(f"{where}: secret_file is a path")
        secret = None if secret_file is None else read_secret(path.parent / secret_file)
        hooks.append(Hook(check_url(url), secret, tuple(dict.fromkeys(events))))
    return hooks


def http_post(url: str, body: bytes, headers: dict[str, str], timeout: float) -> int:
    """POST body; the HTTP status (OSError when no answer came).  A user name and
    password in url are sent as HTTP basic authentication, not as part of the host."""
    url, auth = _split_credentials(url)
    if auth is not None:
        headers = {**headers, "Authorization": auth}
    request = urllib.request.Request(url, data=body, method="POST", headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)


def _split_credentials(url: str) -> tuple[str, str | None]:
    """url without its userinfo, and the basic authorization header it stood for."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url, None
    userinfo, _, hostport = parts.netloc.rpartition("@")
    user, _, password = userinfo.partition(":")
    token = base64.b64encode(f"{unquote(user)}:{unquote(password)}".encode()).decode()
    return urlunsplit(parts._replace(netloc=hostport)), f"Basic {token}"


@dataclass
class _Pending:
    """A delivery waiting for its next attempt."""

    hook: Hook
    event: str
    body: bytes
    delivery_id: int | None = None
    attempts: int = 0


class Dispatcher:
    """Delivers events to every hook that wants them, on a thread of its own."""

    def __init__(self, store: Store, hooks: list[Hook], *, post: Poster = http_post,
                 first_delay_s: float = FIRST_DELAY_S, max_attempts: int = MAX_ATTEMPTS,
                 timeout_s: float = TIMEOUT_S) -> None:
        self.store = store
        self.hooks = hooks
        self.post = post
        self.first_delay_s = first_delay_s
        self.max_attempts = max_attempts
        self.timeout_s = timeout_s
        self._inbox: queue.Queue[_Pending | None] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._idle = threading.Event()
        self._idle.set()

    def start(self) -> None:
        """Start the delivery thread (once)."""
        if self._thread is None and self.hooks:
            self._thread = threading.Thread(target=self._work, name="rtbench-webhooks",
                                            daemon=True)
            self._thread.start()

    def stop(self, timeout_s: float = 5.0) -> None:
        """Stop the thread; deliveries still waiting stay 'pending' in the database."""
        if self._thread is not None:
            self._inbox.put(None)
            self._thread.join(timeout_s)
            self._thread = None

    def send(self, event: str, payload: dict[str, Any]) -> None:
        """Queue event for every hook that wants it (never blocks, never raises)."""
        if event not in EVENTS:
            raise ValueError(f"unknown webhook event {event!r}")
        body = json.dumps({"event": event, "sent_at": datetime.now(timezone.utc).isoformat(),
                           "rtbench": __version__, **payload},
                          sort_keys=True, default=str).encode("utf-8")
        for hook in self.hooks:
            if event in hook.events:
                self._idle.clear()
                self._inbox.put(_Pending(hook, event, body))

    def wait_idle(self, timeout_s: float) -> bool:
        """Wait until every queued delivery is delivered or has failed (tests, shutdown)."""
        return self._idle.wait(timeout_s)

    def _work(self) -> None:
        """The delivery loop: new events from the inbox, retries when they fall due."""
        waiting: list[tuple[float, int, _Pending]] = []
        order = itertools.count()
        while True:
            timeout = None if not waiting else max(0.0, waiting[0][0] - time.monotonic())
            try:
                item = self._inbox.get(timeout=timeout)
                if item is None:
                    return
                heapq.heappush(waiting, (time.monotonic(), next(order), item))
            except queue.Empty:
                pass
            while waiting and waiting[0][0] <= time.monotonic():
                _, _, due = heapq.heappop(waiting)
                delay = self._attempt(due)
                if delay is not None:
                    heapq.heappush(waiting, (time.monotonic() + delay, next(order), due))
            if not waiting and self._inbox.empty():
                self._idle.set()

    def _attempt(self, item: _Pending) -> float | None:
        """One attempt; the delay before the next one, None when finished."""
        if item.delivery_id is None:
            try:
                item.delivery_id = add_delivery(self.store, item.event, item.hook.url,
                                                item.body.decode("utf-8"))
            except StoreError:
                item.delivery_id = 0  # delivered all the same; not recorded
        item.attempts += 1
        headers = {"Content-Type": "application/json", EVENT_HEADER: item.event,
                   DELIVERY_HEADER: str(item.delivery_id),
                   "User-Agent": f"rtbench/{__version__}"}
        if item.hook.secret is not None:
            headers[SIGNATURE_HEADER] = sign(item.body, item.hook.secret)
        code: int | None = None
        error: str | None = None
        try:
            code = self.post(item.hook.url, item.body, headers, self.timeout_s)
        except (OSError, ValueError) as exc:
            error = f"{type(exc).__name__}: {exc}"[:300]
        ok = code is not None and 200 <= code < 300
        if not ok and error is None:
            error = f"the receiver answered {code}"
        last = ok or item.attempts >= self.max_attempts
        status = "delivered" if ok else ("failed" if last else "pending")
        if item.delivery_id:
            with contextlib.suppress(StoreError):
                update_delivery(self.store, item.delivery_id, status=status,
                                attempts=item.attempts, code=code,
                                error=None if ok else error)
        return None if last else self.first_delay_s * 2 ** (item.attempts - 1)
