"""Upload stored runs to an `rtbench serve` (what `rtbench push` and `run --push` do).

Plain urllib (no extra dependency on a board host): POST /api/v1/runs with the
run as rtbench-run/1 JSON and "Authorization: Bearer TOKEN".
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import SplitResult, urlsplit

from rtbench.bundle import RunDetail
from rtbench.core.redact import has_credentials, redact
from rtbench.core.secretfile import SecretFileError, read_secret_file
from rtbench.interop.runjson import dumps

# the most of a server's answer that is read (its answers are a few hundred bytes)
ANSWER_MAX_BYTES = 1 << 20


class PushError(Exception):
    """An upload that did not succeed; code is the rtbench exit code (2 or 3)."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


@dataclass
class Pushed:
    """What the server answered: its id for the run, and whether it was new."""

    server_id: int
    created: bool
    url: str


def read_token(token_file: Path | None) -> str:
    """The upload token: from token_file, else RTBENCH_TOKEN; PushError when neither.

    The token is never part of a message: a malformed one is described, not shown.
    """
    if token_file is not None:
        token = _token_from_file(token_file)
        where = f"the token file {token_file}"
    else:
        token = os.environ.get("RTBENCH_TOKEN", "").strip()
        where = "RTBENCH_TOKEN"
    if not token:
        raise PushError("no upload token: set RTBENCH_TOKEN or pass --token-file "
                        "(the server's admin creates one with 'rtbench token create NAME')", 2)
    if not all(33 <= ord(ch) < 127 for ch in token):
        raise PushError(f"{where}: the token must be one line of printable ASCII characters "
                        "without spaces (as 'rtbench token create' prints it)", 2)
    return token


def _token_from_file(token_file: Path) -> str:
    """The one-line token in a file that only its owner can read (the bounded,
    non-blocking secret reader); PushError else."""
    try:
        data = read_secret_file(token_file, f"the token file {token_file}", private=True)
    except SecretFileError as exc:
        raise PushError(str(exc), 2) from None
    try:
        return data.decode("ascii")
    except UnicodeDecodeError:
        raise PushError(f"the token file {token_file}: the token must be one line of "
                        "printable ASCII characters", 2) from None


def check_server_url(server: str) -> str:
    """The base URL of a results server (no trailing /); PushError when it is not an
    http(s) URL with a host, or carries a user name or password (the upload token is
    the credential; the URL is printed in messages)."""
    base = server.rstrip("/")
    parts: SplitResult | None
    try:
        parts = urlsplit(base)
        if parts.port == 0:  # raises ValueError on a port that is no number or > 65535
            parts = None
    except ValueError:
        parts = None
    shown = redact(server)[:200]
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname or \
            any(ord(ch) <= 32 or ord(ch) == 127 for ch in server):
        raise PushError(f"server {shown!r} is not an http:// or https:// URL with a host "
                        "(and a port from 1 to 65535)", 2)
    if has_credentials(base):
        raise PushError(f"server {shown!r}: a URL with a user name or password is not "
                        "used; rtbench authenticates with its upload token (RTBENCH_TOKEN "
                        "or --token-file): drop them from the URL", 2)
    return base


def push_run(run: RunDetail, server: str, token: str, timeout_s: float = 120.0) -> Pushed:
    """POST run to server (base URL like http://lab:8080); PushError on any failure."""
    base = check_server_url(server)
    request = urllib.request.Request(
        f"{base}/api/v1/runs", data=dumps(run).encode("utf-8"), method="POST",
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:  # noqa: S310
            answer = json.loads(response.read(ANSWER_MAX_BYTES))
    except urllib.error.HTTPError as exc:
        try:
            reason = json.loads(exc.read(ANSWER_MAX_BYTES)).get("error", "")
        except (ValueError, AttributeError, OSError):
            reason = ""
        code = 3 if exc.code >= 500 else 2
        raise PushError(f"server {base} refused run {run.id} ({exc.code}): "
                        f"{reason or exc.reason}", code) from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        raise PushError(f"cannot reach server {base}: {reason}", 3) from None
    return Pushed(server_id=int(answer["id"]), created=bool(answer["created"]),
                  url=f"{base}{answer.get('url', '')}")
