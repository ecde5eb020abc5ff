"""Webhooks of `rtbench serve`: a POST per event and receiver, signed, retried, recorded.

Events (docs/server.md): ``regression`` (a regression confirmed on a board),
``regression_suspected`` (first suspected; only for receivers that ask for it),
``regression_resolved`` (a later run or kernel brought it back), ``threshold_breach``
(an uploaded run whose verdict is FAIL) and ``board_offline`` (an uploaded fleet row
whose status is ``unreachable``).  Each receiver has its body format
(rtbench.server.payloads: rtbench's JSON, Alertmanager's, Slack's text).  The body is
signed with HMAC-SHA256 under the receiver's secret (header X-Rtbench-Signature-256:
sha256=HEX).  A delivery is retried with exponential backoff (1, 2, 4, 8, 16 s: 6
attempts) until the receiver answers 2xx; each delivery is a row of webhook_deliveries
with its status.  Each receiver has a bounded queue and a thread of its own: an upload
only puts events on the queues, and a slow receiver delays no other.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import heapq
import hmac
import itertools
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
from rtbench.core.redact import redact
from rtbench.core.secretfile import SecretFileError, read_secret_file
from rtbench.server import payloads
from rtbench.store import Store, StoreError
from rtbench.store.deliveries import add_delivery, update_delivery

EVENTS = ("regression", "regression_suspected", "regression_resolved",
          "threshold_breach", "board_offline")
# a hook's events when it names none: every event but the suspicions
DEFAULT_EVENTS = ("regression", "regression_resolved", "threshold_breach", "board_offline")
SIGNATURE_HEADER = "X-Rtbench-Signature-256"
EVENT_HEADER = "X-Rtbench-Event"
DELIVERY_HEADER = "X-Rtbench-Delivery"
MAX_ATTEMPTS = 6
FIRST_DELAY_S = 1.0
TIMEOUT_S = 10.0
QUEUE_SIZE = 1000  # deliveries waiting per hook before new ones are dropped
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
    events: tuple[str, ...] = DEFAULT_EVENTS
    format: str = payloads.DEFAULT_FORMAT


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


def check_public_url(url: str) -> str:
    """url without its trailing '/' when it is an http(s) URL with a host and nothing
    after the path (no query, fragment or credentials), else WebhookConfigError."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - a port out of range raises here
    except ValueError:
        parts = None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname \
            or parts.query or parts.fragment or parts.username or parts.password \
            or any(not c.isprintable() or c.isspace() for c in url):
        raise WebhookConfigError(f"--public-url {url[:200]!r}: give the http:// or "
                                 "https:// URL the lab reaches this server at, without a "
                                 "query, fragment or credentials")
    return url.rstrip("/")


def read_secret(path: Path) -> bytes:
    """The shared secret in path: one line, read by the bounded, non-blocking reader
    (rtbench.core.secretfile); WebhookConfigError else."""
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
        if not isinstance(table, dict) or \
                set(table) - {"url", "secret_file", "events", "format"}:
            raise WebhookConfigError(f"{where}: keys are url, secret_file, events and "
                                     "format")
        fmt = table.get("format", payloads.DEFAULT_FORMAT)
        if fmt not in payloads.FORMATS:
            raise WebhookConfigError(f"{where}: format is one of "
                                     f"{', '.join(payloads.FORMATS)}")
        url = table.get("url")
        if not isinstance(url, str):
            raise WebhookConfigError(f"{where}: url is missing")
        events = table.get("events", list(DEFAULT_EVENTS))
        if not isinstance(events, list) or not events or \
                any(e not in EVENTS for e in events):
            raise WebhookConfigError(f"{where}: events is a list of {', '.join(EVENTS)}")
        secret_file = table.get("secret_file")
        if secret_file is not None and not isinstance(secret_file, str):
            raise WebhookConfigError(f"{where}: secret_file is a path")
        secret = None if secret_file is None else read_secret(path.parent / secret_file)
        hooks.append(Hook(check_url(url), secret, tuple(dict.fromkeys(events)), fmt))
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

    event: str
    body: bytes
    content_type: str
    delivery_id: int | None = None
    attempts: int = 0


def wants(hook: Hook, event: str, data: dict[str, Any]) -> bool:
    """Whether hook takes event: it is one of its events; a resolution of a regression
    that was only ever suspected goes only to hooks that take suspicions too."""
    if event not in hook.events:
        return False
    if event == "regression_resolved" and data.get("state") != "confirmed":
        return "regression_suspected" in hook.events
    return True


class Dispatcher:
    """Delivers events to every hook that wants them: one bounded queue and one thread
    per hook, so a slow or dead receiver never delays another."""

    def __init__(self, store: Store, hooks: list[Hook], *, post: Poster = http_post,
                 first_delay_s: float = FIRST_DELAY_S, max_attempts: int = MAX_ATTEMPTS,
                 timeout_s: float = TIMEOUT_S, queue_size: int = QUEUE_SIZE,
                 public_url: str = "") -> None:
        self.store = store
        self.hooks = hooks
        self.public_url = public_url
        self._workers = [_Worker(self, hook, post=post, first_delay_s=first_delay_s,
                                 max_attempts=max_attempts, timeout_s=timeout_s,
                                 queue_size=queue_size) for hook in hooks]

    def start(self) -> None:
        """Start each hook's delivery thread (once)."""
        for worker in self._workers:
            worker.start()

    def stop(self, timeout_s: float = 5.0) -> None:
        """Stop the threads; deliveries still waiting stay 'pending' in the database."""
        for worker in self._workers:
            worker.stop(timeout_s)

    def send(self, event: str, payload: dict[str, Any]) -> None:
        """Queue event for every hook that wants it, in the hook's format (never blocks:
        a hook whose queue is full gets the delivery recorded as failed instead)."""
        if event not in EVENTS:
            raise ValueError(f"unknown webhook event {event!r}")
        context = payloads.Context(datetime.now(timezone.utc), self.public_url, __version__)
        rendered: dict[str, payloads.Rendered] = {}
        for worker in self._workers:
            if wants(worker.hook, event, payload):
                fmt = worker.hook.format
                if fmt not in rendered:
                    rendered[fmt] = payloads.render(fmt, event, payload, context)
                worker.put(_Pending(event, rendered[fmt].body, rendered[fmt].content_type))

    def wait_idle(self, timeout_s: float) -> bool:
        """Wait until every queued delivery is delivered or has failed (tests, shutdown)."""
        deadline = time.monotonic() + timeout_s
        return all(w.wait_idle(max(0.0, deadline - time.monotonic()))
                   for w in self._workers)

    def record(self, item: _Pending, url: str) -> None:
        """Give item its delivery row (id 0 when the database cannot take it)."""
        if item.delivery_id is None:
            try:
                item.delivery_id = add_delivery(self.store, item.event, url,
                                                item.body.decode("utf-8"))
            except StoreError:
                item.delivery_id = 0  # delivered all the same; not recorded

    def update(self, item: _Pending, *, status: str, code: int | None,
               error: str | None) -> None:
        """Record an attempt's outcome on item's row (when it has one)."""
        if item.delivery_id:
            with contextlib.suppress(StoreError):
                update_delivery(self.store, item.delivery_id, status=status,
                                attempts=item.attempts, code=code, error=error)


class _Worker:
    """One hook's deliveries: its bounded inbox, its retries, its thread."""

    def __init__(self, owner: Dispatcher, hook: Hook, *, post: Poster,
                 first_delay_s: float, max_attempts: int, timeout_s: float,
                 queue_size: int) -> None:
        self.owner = owner
        self.hook = hook
        self.post = post
        self.first_delay_s = first_delay_s
        self.max_attempts = max_attempts
        self.timeout_s = timeout_s
        self._inbox: queue.Queue[_Pending | None] = queue.Queue(maxsize=queue_size)
        self._thread: threading.Thread | None = None
        self._busy = 0  # deliveries queued or waiting for a retry (under _lock)
        self._lock = threading.Lock()
        self._idle = threading.Event()
        self._idle.set()

    def start(self) -> None:
        """Start the delivery thread (once)."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._work, daemon=True,
                                            name=f"rtbench-webhook-{self.hook.url[:40]}")
            self._thread.start()

    def stop(self, timeout_s: float) -> None:
        """Ask the thread to stop and wait for it up to timeout_s."""
        if self._thread is not None:
            with contextlib.suppress(queue.Full):
                self._inbox.put(None, timeout=timeout_s)
            self._thread.join(timeout_s)
            self._thread = None

    def put(self, item: _Pending) -> None:
        """Queue item; when the inbox is full, record it as failed and drop it."""
        with self._lock:
            self._busy += 1
            self._idle.clear()
        try:
            self._inbox.put_nowait(item)
        except queue.Full:
            self.owner.record(item, self.hook.url)
            self.owner.update(item, status="failed", code=None,
                              error=f"the receiver's queue is full ({self._inbox.maxsize} "
                                    "deliveries waiting): dropped")
            self._done()

    def wait_idle(self, timeout_s: float) -> bool:
        """Wait until this hook has nothing queued or waiting for a retry."""
        return self._idle.wait(timeout_s)

    def _done(self) -> None:
        """One delivery finished (delivered, failed or dropped)."""
        with self._lock:
            self._busy -= 1
            if self._busy == 0:
                self._idle.set()

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
                if delay is None:
                    self._done()
                else:
                    heapq.heappush(waiting, (time.monotonic() + delay, next(order), due))

    def _attempt(self, item: _Pending) -> float | None:
        """One attempt; the delay before the next one, None when finished."""
        self.owner.record(item, self.hook.url)
        item.attempts += 1
        headers = {"Content-Type": item.content_type, EVENT_HEADER: item.event,
                   DELIVERY_HEADER: str(item.delivery_id),
                   "User-Agent": f"rtbench/{__version__}"}
        if self.hook.secret is not None:
            headers[SIGNATURE_HEADER] = sign(item.body, self.hook.secret)
        code: int | None = None
        error: str | None = None
        try:
            code = self.post(self.hook.url, item.body, headers, self.timeout_s)
        except (OSError, ValueError) as exc:
            error = f"{type(exc).__name__}: {exc}"[:300]
        ok = code is not None and 200 <= code < 300
        if not ok and error is None:
            error = f"the receiver answered {code}"
        last = ok or item.attempts >= self.max_attempts
        status = "delivered" if ok else ("failed" if last else "pending")
        self.owner.update(item, status=status, code=code, error=None if ok else error)
        return None if last else self.first_delay_s * 2 ** (item.attempts - 1)
