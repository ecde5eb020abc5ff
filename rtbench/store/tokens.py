"""Upload tokens of the results server: created, listed, revoked, checked.

A token is 32 random bytes shown once (URL-safe base64, prefixed "rtb_"); the
database keeps only its SHA-256, so a copied database does not hand out write
access.  Checking compares the hash with every active token's in constant time.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass
from datetime import datetime, timezone

from sqlalchemy import insert, select, update

from rtbench.store import Store, StoreError
from rtbench.store import schema as t

TOKEN_PREFIX = "rtb_"
NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$")


@dataclass
class TokenInfo:
    """One token as `rtbench token list` shows it (never the token itself)."""

    name: str
    created_at: datetime
    revoked_at: datetime | None
    last_used_at: datetime | None


def _digest(token: str) -> str:
    """The hex SHA-256 of a token's text."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def _utc(value: datetime | None) -> datetime | None:
    """Mark naive datetimes (SQLite) as UTC."""
    if value is None or value.tzinfo is not None:
        return value
    return value.replace(tzinfo=timezone.utc)


def create_token(store: Store, name: str) -> str:
    """Create a token called name and return its text (shown only now)."""
    if not NAME_PATTERN.match(name):
        raise StoreError(f"token name {name!r} is not valid: use 1-64 letters, digits, "
                         "'.', '_', '@' or '-', starting with a letter or digit")
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    with store.transaction(f"create token {name!r}") as conn:
        if conn.execute(select(t.tokens.c.id).where(t.tokens.c.name == name)).first():
            raise StoreError(f"a token called {name!r} exists already; revoke it or "
                             "choose another name")
        conn.execute(insert(t.tokens).values(
            name=name, token_sha256=_digest(token),
            created_at=datetime.now(timezone.utc)))
    return token


def list_tokens(store: Store) -> list[TokenInfo]:
    """Every token, oldest first, revoked ones included."""
    with store.transaction("list tokens") as conn:
        return [TokenInfo(name=r.name, created_at=_utc(r.created_at) or r.created_at,
                          revoked_at=_utc(r.revoked_at), last_used_at=_utc(r.last_used_at))
                for r in conn.execute(select(t.tokens).order_by(t.tokens.c.id))]


def revoke_token(store: Store, name: str) -> None:
    """Revoke the token called name (it stays listed, marked revoked)."""
    with store.transaction(f"revoke token {name!r}") as conn:
        row = conn.execute(select(t.tokens.c.id, t.tokens.c.revoked_at)
                           .where(t.tokens.c.name == name)).first()
        if row is None:
            raise StoreError(f"no token is called {name!r}; 'rtbench token list' "
                             "shows them")
        if row.revoked_at is None:
            conn.execute(update(t.tokens).where(t.tokens.c.id == row.id)
                         .values(revoked_at=datetime.now(timezone.utc)))


def check_token(store: Store, token: str) -> str | None:
    """The name of the active token equal to token, else None (constant-time compare)."""
    digest = _digest(token)
    with store.transaction("check a token") as conn:
        rows = conn.execute(select(t.tokens.c.id, t.tokens.c.name, t.tokens.c.token_sha256,
                                   t.tokens.c.last_used_at)
                            .where(t.tokens.c.revoked_at.is_(None))).all()
        match = None
        for row in rows:  # no early exit: every active hash is compared
            if hmac.compare_digest(row.token_sha256, digest):
                match = row
        if match is None:
            return None
        now = datetime.now(timezone.utc)
        last = _utc(match.last_used_at)
        if last is None or (now - last).total_seconds() > 60:  # at most one write a minute
            conn.execute(update(t.tokens).where(t.tokens.c.id == match.id)
                         .values(last_used_at=now))
        return str(match.name)
