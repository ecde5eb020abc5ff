"""What protects `rtbench serve` from browsers and guessers: security headers on every
answer, and a limit on failed token attempts per client address.

The pages hold no script and load nothing from elsewhere, so the policy allows only the
server's own styles and images (figures are inline `data:` images) and forbids framing.
A client that presents a wrong token FAILED_LIMIT times within FAILED_WINDOW_S seconds is
answered 429 until the window has passed, so tokens cannot be guessed at line speed.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict, deque
from typing import Any

SECURITY_HEADERS = {
    "Content-Security-Policy": ("default-src 'none'; img-src 'self' data:; "
                                "style-src 'self' 'unsafe-inline'; form-action 'self'; "
                                "frame-ancestors 'none'; base-uri 'none'"),
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


class SecurityHeaders:
    """ASGI middleware: SECURITY_HEADERS on every answer (errors too) that does not set
    them itself.  Plain ASGI rather than Starlette's BaseHTTPMiddleware, which runs each
    request in a task group of its own with memory streams between (9 % of the server's
    Python time with 8 concurrent uploads, in a py-spy --gil profile)."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.headers = [(name.lower().encode("latin-1"), value.encode("latin-1"))
                        for name, value in SECURITY_HEADERS.items()]

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        """Pass the request on; add the missing headers to the answer's start."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: dict[str, Any]) -> None:
            """Send message, the headers added to an answer's start."""
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                present = {bytes(name).lower() for name, _ in headers}
                headers += [(n, v) for n, v in self.headers if n not in present]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_headers)


FAILED_LIMIT = 10
FAILED_WINDOW_S = 60.0
# the most client addresses remembered (the oldest are forgotten first)
MAX_CLIENTS = 10000


class FailedAttempts:
    """Failed token attempts per client address, in a sliding window."""

    def __init__(self, limit: int = FAILED_LIMIT, window_s: float = FAILED_WINDOW_S) -> None:
        self.limit = limit
        self.window_s = window_s
        self._by_client: OrderedDict[str, deque[float]] = OrderedDict()
        self._lock = threading.Lock()

    def _recent(self, client: str, now: float) -> deque[float]:
        """The client's failures still inside the window (older ones dropped)."""
        times = self._by_client.get(client)
        if times is None:
            return deque()
        while times and times[0] <= now - self.window_s:
            times.popleft()
        return times

    def blocked_for_s(self, client: str) -> float:
        """Seconds until client may try again (0: it may now)."""
        now = time.monotonic()
        with self._lock:
            times = self._recent(client, now)
            if len(times) < self.limit:
                return 0.0
            return max(0.0, times[0] + self.window_s - now)

    def failed(self, client: str) -> None:
        """Note one failed attempt of client."""
        now = time.monotonic()
        with self._lock:
            times = self._recent(client, now)
            times.append(now)
            while len(times) > self.limit:
                times.popleft()
            self._by_client[client] = times
            self._by_client.move_to_end(client)
            while len(self._by_client) > MAX_CLIENTS:
                self._by_client.popitem(last=False)
