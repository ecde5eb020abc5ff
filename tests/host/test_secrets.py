"""Secrets and URLs: the one secret-file reader (bounded, non-blocking, regular files of
one line), the one redactor, webhook URLs checked whole, ssh never reading a host as an
option, and `serve` refused an address in one line (the hostile cases of the CLI are in
test_corpus.py)."""

from __future__ import annotations

import base64
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rtbench.core.redact import has_credentials, redact
from rtbench.core.secretfile import SECRET_MAX_BYTES, SecretFileError, read_secret_file
from rtbench.server.webhooks import WebhookConfigError, check_url, http_post
from rtbench.targets import TargetUsageError
from rtbench.targets.ssh import SshTarget
from tests.parts import require_part

REPO = Path(__file__).resolve().parents[2]


def test_fifo_without_writer_is_refused_at_once(tmp_path: Path) -> None:
    """A FIFO nobody writes to: refused in well under a second, not waited on."""
    fifo = tmp_path / "token"
    os.mkfifo(fifo, 0o600)
    outcome: list[BaseException] = []

    def read() -> None:
        try:
            read_secret_file(fifo, "the token file")
        except SecretFileError as exc:
            outcome.append(exc)

    reader = threading.Thread(target=read, daemon=True)
    start = time.monotonic()
    reader.start()
    reader.join(10.0)
    if reader.is_alive():  # unblock the stuck open so the thread ends
        with open(fifo, "wb"):
            pass
        raise AssertionError("reading a FIFO without a writer waited")
    assert time.monotonic() - start < 5.0
    assert len(outcome) == 1 and "is a FIFO" in str(outcome[0])


def test_dev_zero_is_refused_unread() -> None:
    """/dev/zero (endless) is a character device: refused before a byte is read."""
    with pytest.raises(SecretFileError, match="character device"):
        read_secret_file("/dev/zero", "webhook secret file /dev/zero")


@pytest.mark.parametrize(("data", "message"), [
    (b"one\ntwo\n", "more than one line"), (b"a\rb", "more than one line"),
    (b"", "empty"), (b"\n \n", "empty"), (b"x" * (SECRET_MAX_BYTES + 1), "4096 bytes")])
def test_secret_is_one_line(tmp_path: Path, data: bytes, message: str) -> None:
    """Several lines, nothing, or too much: refused, the content never in the message."""
    path = tmp_path / "secret"
    path.write_bytes(data)
    with pytest.raises(SecretFileError, match=message) as info:
        read_secret_file(path, "the secret")
    assert "two" not in str(info.value)


def test_secret_file_kept_private(tmp_path: Path) -> None:
    """private: a secret other users may read is refused naming the fix; the line with
    surrounding white space is the secret."""
    path = tmp_path / "token"
    path.write_bytes(b"  rtb_abc\n")
    path.chmod(0o644)
    with pytest.raises(SecretFileError, match="chmod 600"):
        read_secret_file(path, "the token file", private=True)
    path.chmod(0o600)
    assert read_secret_file(path, "the token file", private=True) == b"rtb_abc"


@pytest.mark.parametrize(("text", "shown"), [
    ("cannot reach http://u:pw@h:8/x", "cannot reach http://u:***@h:8/x"),
    ("https://tok@h/", "https://***@h/"),
    ("http://u:p@ss@h/", "http://u:***@h/"),
    ("ssh://root@board", "ssh://root@board"),
    ("ssh://root:pw@board", "ssh://root:***@board"),
    ("postgresql+psycopg://rtbench@/db", "postgresql+psycopg://rtbench@/db"),
    ("postgresql+psycopg://a:b@h/db and http://x:y@z", "postgresql+psycopg://a:***@h/db "
     "and http://x:***@z"),
    ("mail me@host, see http://host/a@b", "mail me@host, see http://host/a@b"),
])
def test_redact(text: str, shown: str) -> None:
    """Passwords hidden in every URL of a text; web URLs' user names too; ssh logins and
    '@' outside the authority kept."""
    assert redact(text) == shown
    assert redact(shown) == shown


_WORD = st.text(st.characters(min_codepoint=33, max_codepoint=126,
                              blacklist_characters="/?#@:"), min_size=1, max_size=20)


@given(user=_WORD, password=st.text(st.characters(min_codepoint=33, max_codepoint=126,
                                                  blacklist_characters="/?#"),
                                    min_size=4, max_size=30),
       scheme=st.sampled_from(["http", "https", "postgresql+psycopg", "ssh"]))
def test_redact_never_shows_a_password(user: str, password: str, scheme: str) -> None:
    """Whatever the password holds (':' and '@' too), redact shows none of it."""
    url = f"{scheme}://{user}:{password}@host.example:8/p"
    assert f":{password}@" not in redact(f"error: {url} failed")
    assert has_credentials(url)


@pytest.mark.parametrize("url", [
    "http://h:99999/x", "http://h:0/", "http://h/\nX: y", "http://h/a b", "http://h\t/",
    "http://[::1/", "http://ex_ample!/", "http://h:8x/", "ftp://h/", "http:///x"])
def test_webhook_url_refused(url: str) -> None:
    """Ports outside 1-65535, white space and control characters, hosts that are no host
    names: refused in one line."""
    with pytest.raises(WebhookConfigError) as info:
        check_url(url)
    assert "\n" not in str(info.value)


def test_webhook_url_accepted() -> None:
    """Names, IPv4 and IPv6 addresses and a user:password are URLs a receiver has."""
    for url in ("http://h:8080/x", "https://ci.lab.example/hook?a=1", "http://[::1]:9/",
                "http://10.0.0.2/", "https://u:p@h/"):
        assert check_url(url) == url


@pytest.fixture()
def basic_receiver() -> Iterator[tuple[str, list[dict[str, str]]]]:
    """An HTTP receiver on loopback recording each request's headers (answers 204)."""
    seen: list[dict[str, str]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            """Record the headers; answer 204."""
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            seen.append(dict(self.headers.items()))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            """Quiet."""

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()


def test_webhook_credentials_go_as_basic_auth(
        basic_receiver: tuple[str, list[dict[str, str]]]) -> None:
    """A user:password in a webhook URL is sent as HTTP basic authentication (urllib
    alone took it for part of the host name)."""
    address, seen = basic_receiver
    assert http_post(f"http://hook%40lab:p%3Aw@{address}/h", b"{}", {}, 10.0) == 204
    token = base64.b64encode(b"hook@lab:p:w").decode()
    assert seen[0]["Authorization"] == f"Basic {token}"


class _Recorder:
    """Stands in for subprocess: records each argv; the ssh master 'dies' at once."""

    def __init__(self) -> None:
        self.argvs: list[list[str]] = []
        self.real_popen = subprocess.Popen

    def popen(self, argv: list[str], **_: Any) -> Any:
        """A process that has exited with status 255 and no output."""
        self.argvs.append(list(argv))
        return self.real_popen([sys.executable, "-c", "raise SystemExit(255)"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    def run(self, argv: list[str], **_: Any) -> subprocess.CompletedProcess[bytes]:
        """A finished command (exit 255)."""
        self.argvs.append(list(argv))
        return subprocess.CompletedProcess(argv, 255, b"", b"")


def test_ssh_argv_ends_options_before_the_host(monkeypatch: pytest.MonkeyPatch,
                                               tmp_path: Path) -> None:
    """Every ssh command line puts '--' before the host, so no host reaches ssh as an
    option (ssh://root@-oProxyCommand=... ran its command before the fix)."""
    import rtbench.targets.ssh as ssh_module

    recorder = _Recorder()
    monkeypatch.setattr(ssh_module.subprocess, "Popen", recorder.popen)
    monkeypatch.setattr(ssh_module.subprocess, "run", recorder.run)
    target = SshTarget("board.lab", user="root", port=2222)
    target._dir = str(tmp_path)  # noqa: SLF001 - the argv is what is checked
    with pytest.raises(Exception, match="board.lab"):
        target._start_master()  # noqa: SLF001
    target._master = recorder.popen(["ssh"])  # noqa: SLF001 - a master to check and stop
    target._master.wait()  # noqa: SLF001
    target._master_alive()  # noqa: SLF001
    recorder.argvs.append(target._remote("true"))  # noqa: SLF001
    argvs = [argv for argv in recorder.argvs if argv[0] == "ssh" and len(argv) > 1]
    assert len(argvs) >= 2
    for argv in argvs:
        assert argv.index("--") == argv.index("board.lab") - 1, argv


@pytest.mark.parametrize("uri", ["ssh://root@-oProxyCommand=x", "ssh://-oProxyCommand=x@b",
                                 "ssh://%2DF@b", "ssh://root@%2Dx"])
def test_ssh_uri_refuses_option_words(uri: str) -> None:
    """A host or user starting with '-' is refused at URI parsing, in one line."""
    with pytest.raises(TargetUsageError, match="starts with '-'"):
        SshTarget.from_uri(uri)
    with pytest.raises(TargetUsageError):
        SshTarget("-oProxyCommand=x")


def test_serve_on_a_privileged_port_as_a_user_is_one_line(tmp_path: Path) -> None:
    """`serve --bind 127.0.0.1:80` without the right to bind it (as root: with
    CAP_NET_BIND_SERVICE dropped, as setpriv does): one line naming the port rule, exit 3
    (the machine refuses), no uvicorn ERROR line, no database created."""
    start = int(Path("/proc/sys/net/ipv4/ip_unprivileged_port_start").read_text())
    if start <= 80:
        pytest.skip("port 80 is open to every user here")  # not a part: a sysctl
    prefix: list[str] = []
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            require_part("util-linux", "setpriv drops the right to bind port 80")
        prefix = ["setpriv", "--bounding-set", "-net_bind_service"]
    env = {**os.environ, "PYTHONPATH": str(REPO), "XDG_DATA_HOME": str(tmp_path / "data")}
    env.pop("RTBENCH_DB", None)
    done = subprocess.run([*prefix, sys.executable, "-m", "rtbench", "serve", "--bind",
                           "127.0.0.1:80"], env=env, capture_output=True, text=True,
                          timeout=120, check=False)
    lines = [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]
    assert done.returncode == 3, done.stderr
    assert len(lines) == 1, lines
    assert "127.0.0.1:80" in lines[0] and "below 1024" in lines[0]
    assert not (tmp_path / "data").exists()


def test_serve_on_an_address_in_use_is_one_line(tmp_path: Path) -> None:
    """An address in use: one line saying so, exit 3, before the database is opened (no
    uvicorn ERROR line, no 'serving' line)."""
    import socket

    from click.testing import CliRunner

    from rtbench.cli import main

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        bind = f"127.0.0.1:{taken.getsockname()[1]}"
        db = tmp_path / "r.db"
        result = CliRunner().invoke(main, ["serve", "--bind", bind, "--db", f"sqlite:///{db}"])
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert result.exit_code == 3, result.output
    assert lines == [f"rtbench: cannot listen on {bind}: the address is in use: stop what "
                     "listens there or choose another port"]
    assert not db.exists()
