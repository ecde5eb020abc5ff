"""`rtbench serve`, `rtbench push` and `rtbench token`: the lab's results server."""

from __future__ import annotations

import contextlib
import errno
import socket
from pathlib import Path

import click

from rtbench import EXIT_ENV, EXIT_USAGE
from rtbench.commands._common import DB_HELP, fail, handle_errors, make_console, open_store
from rtbench.commands._runs import RUN_HELP, resolve_all


def _bind(value: str) -> tuple[str, int]:
    """HOST:PORT split and checked (exit 2 when malformed)."""
    host, sep, port = value.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        fail(f"--bind {value!r} is not HOST:PORT (e.g. 127.0.0.1:8080)", EXIT_USAGE)
    return host.strip("[]"), int(port)


def _listen(host: str, port: int, bind: str) -> socket.socket:
    """A socket bound to host:port and listening (what uvicorn then serves on); one line
    and exit 3 when this machine refuses the address (a port below 1024 without root,
    an address in use or not on this machine)."""
    try:
        # IPv4 unless the host is an IPv6 address, as uvicorn chose ("localhost": 127.0.0.1)
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, family=socket.AF_INET6 if ":" in host else socket.AF_INET,
            type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0]
    except (OSError, UnicodeError) as exc:
        fail(f"--bind {bind}: cannot resolve {host!r} ({getattr(exc, 'strerror', None) or exc})",
             EXIT_USAGE)
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(2048)
    except OSError as exc:
        sock.close()
        why = {errno.EACCES: "permission denied: a port below 1024 needs root or "
                             "CAP_NET_BIND_SERVICE; choose a port from 1024 up",
               errno.EADDRINUSE: "the address is in use: stop what listens there or "
                                 "choose another port",
               errno.EADDRNOTAVAIL: "the address is not one of this machine's"}
        fail(f"cannot listen on {bind}: {why.get(exc.errno or 0, exc.strerror or exc)}",
             EXIT_ENV)
    sock.set_inheritable(True)
    return sock


def _loopback(host: str) -> bool:
    """Whether host names this machine only (127.0.0.0/8, ::1, localhost)."""
    import ipaddress

    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@click.command()
@click.option("--db", "db_url", metavar="URL", help=DB_HELP)
@click.option("--bind", default="127.0.0.1:8080", show_default=True, metavar="HOST:PORT",
              help="Address to listen on (put a reverse proxy in front for TLS).")
@click.option("--read-token-required", is_flag=True,
              help="Reading pages and the API needs a token too (default: reads are open).")
@click.option("--public", is_flag=True,
              help="Allow a --bind address other than loopback (plain HTTP: put a TLS "
                   "proxy in front).")
@click.option("--keep-days", type=click.IntRange(1, 100_000), metavar="N",
              help="Retention: delete runs started more than N days ago, at start and "
                   "hourly (runs tagged keep or baseline stay).")
@click.option("--webhook", "webhook_urls", multiple=True, metavar="URL",
              help="POST a JSON event here on a regression, a FAIL run and a board gone "
                   "offline (repeatable; docs/server.md).")
@click.option("--webhook-secret-file", type=click.Path(dir_okay=False, path_type=Path),
              help="Sign --webhook bodies with the secret in this file (HMAC-SHA256 in "
                   "the X-Rtbench-Signature-256 header).")
@click.option("--public-url", metavar="URL",
              help="the URL the lab reaches this server at (https://rt.lab.example): "
                   "links in webhook events are absolute under it")
@click.option("--webhook-config", type=click.Path(dir_okay=False, path_type=Path),
              help="The lab's webhooks as a TOML file of [[webhook]] tables (url, "
                   "secret_file, events, format).")
@handle_errors
def serve(db_url: str | None, bind: str, read_token_required: bool, public: bool,
          keep_days: int | None, webhook_urls: tuple[str, ...],
          webhook_secret_file: Path | None, public_url: str | None,
          webhook_config: Path | None) -> None:
    """Serve the results database: web pages, the /api/v1 JSON API, uploads.

    \b
    Examples:
      rtbench serve                                  # http://127.0.0.1:8080, default DB
      rtbench serve --db postgresql+psycopg://rtbench@/rtbench --bind 0.0.0.0:8080 --public
      rtbench serve --read-token-required            # reads need a token as well
      rtbench serve --keep-days 90                   # prune runs older than 90 days
      rtbench serve --webhook https://chat.example/hook --webhook-secret-file hook.key
      rtbench serve --webhook-config lab-hooks.toml --public-url https://rt.lab.example

    Uploads (POST /api/v1/runs, `rtbench push`) always need a token from
    `rtbench token create NAME`; deleting runs through the API an admin token.
    """
    host, port = _bind(bind)
    if not public and not _loopback(host):
        fail(f"--bind {bind}: not a loopback address, so anyone who reaches it gets plain "
             "HTTP (tokens in clear); keep 127.0.0.1 behind a TLS proxy, or add --public",
             EXIT_USAGE)
    from rtbench.server.webhooks import (
        Dispatcher,
        Hook,
        WebhookConfigError,
        check_public_url,
        check_url,
        load_config,
        read_secret,
    )

    if webhook_secret_file is not None and not webhook_urls:
        fail("--webhook-secret-file signs --webhook deliveries: give --webhook URL too",
             EXIT_USAGE)
    try:
        secret = None if webhook_secret_file is None else read_secret(webhook_secret_file)
        hooks = [Hook(check_url(url), secret) for url in webhook_urls]
        base = "" if public_url is None else check_public_url(public_url)
        if webhook_config is not None:
            hooks += load_config(webhook_config)
    except WebhookConfigError as exc:
        fail(str(exc), EXIT_USAGE)
    # before the database: a refusal changes nothing; closed however serving ends
    with _listen(host, port, bind) as listening:
        try:
            import uvicorn

            from rtbench.server.app import create_app
        except ImportError as exc:
            fail(f"rtbench serve needs the server extra ({exc.name} is missing): "
                 "pip install 'rtbench[server]'", EXIT_ENV)
        from rtbench.server.retention import Retention
        from rtbench.store import Store

        store = Store.open(db_url)
        app = create_app(store=store, read_token_required=read_token_required,
                         webhooks=Dispatcher(store, hooks, public_url=base))
        click.echo(f"rtbench: serving {app.state.store.url} on http://{bind}/ (Ctrl-C stops)",
                   err=True)
        config = uvicorn.Config(app, host=host, port=port, log_level="warning",
                                server_header=False, proxy_headers=True)
        server = uvicorn.Server(config)
        retention = (Retention(app.state.store, app.state.write_queue, keep_days)
                     if keep_days else None)
        if retention is not None:
            click.echo(f"rtbench: keeping {keep_days} days of runs (pruned hourly; tags keep "
                       "and baseline exempt)", err=True)
            retention.start()
        try:
            with contextlib.suppress(SystemExit):  # uvicorn exits 1 when it cannot start
                server.run(sockets=[listening])
        finally:
            if retention is not None:
                retention.stop()
        if not server.started:
            fail(f"cannot serve on {bind}: the server did not start (see above)", EXIT_ENV)


@click.command(epilog=RUN_HELP)
@click.argument("runs", metavar="RUN...", nargs=-1, required=True)
@click.option("--server", "server_url", required=True, metavar="URL",
              help="The rtbench serve to upload to, e.g. http://lab:8080.")
@click.option("--token-file", type=click.Path(dir_okay=False, path_type=Path),
              help="File holding the upload token (default: RTBENCH_TOKEN).")
@click.option("--db", "db_url", metavar="URL", help=DB_HELP)
@handle_errors
def push(runs: tuple[str, ...], server_url: str, token_file: Path | None,
         db_url: str | None) -> None:
    """Upload stored runs to a results server (same run twice: stored once).

    \b
    Examples:
      RTBENCH_TOKEN=rtb_... rtbench push 3 4 --server http://lab:8080
      rtbench push latest host=box,kernel~rt --server http://lab:8080
      rtbench push 7 --server https://results.lab --token-file ~/.rtbench-token
    """
    from rtbench.server.client import PushError, check_server_url, push_run, read_token
    from rtbench.store import RunNotFound

    try:
        check_server_url(server_url)
        token = read_token(token_file)
    except PushError as exc:
        fail(str(exc), exc.code)
    store = open_store(db_url, reading=True)
    try:
        run_ids = resolve_all(store, runs)
        for item in run_ids:
            if not isinstance(item, int):
                fail(f"ref:{item.name} is a published reference run, not a stored one; "
                     "every server already has it", EXIT_USAGE)
        for run_id in run_ids:
            try:
                run = store.get_run(run_id)
            except RunNotFound as exc:
                fail(str(exc), EXIT_USAGE)
            try:
                pushed = push_run(run, server_url, token)
            except PushError as exc:
                fail(str(exc), exc.code)
            state = "stored" if pushed.created else "already there"
            click.echo(f"run {run_id} -> {pushed.url} ({state})")
    finally:
        store.close()


@click.group()
def token() -> None:
    """Tokens of the results server (stored hashed in the database), each with a scope.

    \b
    Scopes (each allows what the ones before it allow):
      read    read pages and the API of a server started with --read-token-required
      upload  upload runs (POST /api/v1/runs, rtbench push); the default
      admin   delete and prune runs through the API

    \b
    Examples:
      rtbench token create lab-ci      # an upload token, printed once
      rtbench token create grafana --scope read
      rtbench token create ops --scope admin
      rtbench token list
      rtbench token revoke lab-ci      # also ends its login sessions
    """


@token.command("create")
@click.argument("name")
@click.option("--scope", type=click.Choice(["read", "upload", "admin"]), default="upload",
              show_default=True, help="What the token may do (see 'rtbench token --help').")
@click.option("--db", "db_url", metavar="URL", help=DB_HELP)
@handle_errors
def token_create(name: str, scope: str, db_url: str | None) -> None:
    """Create a token called NAME and print it (it is shown only this once)."""
    from rtbench.store import StoreError
    from rtbench.store.tokens import create_token

    store = open_store(db_url)
    try:
        text = create_token(store, name, scope)
    except StoreError as exc:
        fail(str(exc), EXIT_USAGE)
    finally:
        store.close()
    click.echo(text)


@token.command("list")
@click.option("--db", "db_url", metavar="URL", help=DB_HELP)
@handle_errors
def token_list(db_url: str | None) -> None:
    """List the tokens (names and dates; the tokens themselves are not stored)."""
    from rtbench.report.layout import Column, FittedTable
    from rtbench.report.text import for_terminal
    from rtbench.store.tokens import list_tokens

    store = open_store(db_url)
    try:
        tokens = list_tokens(store)
    finally:
        store.close()
    minute = "%Y-%m-%d %H:%M"
    rows: list[list[str]] = [
        [for_terminal(info.name), info.scope, info.created_at.strftime(minute),
         info.last_used_at.strftime(minute) if info.last_used_at else "never",
         "revoked " + info.revoked_at.strftime("%Y-%m-%d") if info.revoked_at else "active"]
        for info in tokens]
    make_console().print(FittedTable(
        [Column("name", "left", True), Column("scope", "left"), Column("created", "left"),
         Column("last used", "left"), Column("state", "left")], rows))


@token.command("revoke")
@click.argument("name")
@click.option("--db", "db_url", metavar="URL", help=DB_HELP)
@handle_errors
def token_revoke(name: str, db_url: str | None) -> None:
    """Revoke the token called NAME: it is refused from now on, its logins end."""
    from rtbench.store import StoreError
    from rtbench.store.tokens import revoke_token

    store = open_store(db_url)
    try:
        revoke_token(store, name)
    except StoreError as exc:
        fail(str(exc), EXIT_USAGE)
    finally:
        store.close()
    click.echo(f"token {name} revoked")


def register(main: click.Group) -> None:
    """Add serve, push and token to the CLI."""
    main.add_command(serve)
    main.add_command(push)
    main.add_command(token)
