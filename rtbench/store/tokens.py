"""Tokens of the results server: created, listed, revoked, checked, with a scope.

A token is 32 random bytes shown once (URL-safe base64, prefixed "rtb_"); the
database keeps only its SHA-256, so a copied database does not hand out write
access.  Checking compares the hash with every active token's in constant time.
Scopes nest: a read token reads (when the server asks for a token to read), an
upload token also uploads, an admin token also deletes and prunes runs.  Revoking a
token ends its login sessions (rtbench.store.sessions) in the same transaction.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass
from datetime import datetime, timezone

from sqlalchemy import delete, insert, select, update

from rtbench.store import Store, StoreError
from rtbench.store import schema as t
from rtbench.store.utc import as_utc

TOKEN_PREFIX = "rtb_"
NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$")
# each scope allows what the ones before it allow
SCOPES = ("read", "upload", "admin")
USE_NOTE_S = 60.0  # a token's last use is written at most once this often


@dataclass
class TokenInfo:
    """One token as `rtbench token list` shows it (never the token itself)."""

    name: str
    created_at: datetime
    revoked_at: datetime | None
    last_used_at: datetime | None
    scope: str


@dataclass(frozen=True)
class TokenIdentity:
    """Who an accepted token (or login session) is: its row id, name and scope."""

    token_id: int
    name: str
    scope: str

    def allows(self, needed: str) -> bool:
        """Whether this scope covers the needed one (read < upload < admin)."""
        return scope_rank(self.scope) >= scope_rank(needed)


def scope_rank(scope: str) -> int:
    """The position of scope in SCOPES; an unknown scope ranks below read."""
    return SCOPES.index(scope) if scope in SCOPES else -1


def _digest(token: str) -> str:
    """The hex SHA-256 of a token's text."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def create_token(store: Store, name: str, scope: str = "upload") -> str:
    """Create a token called name with scope and return its text (shown only now)."""
    if scope not in SCOPES:
        raise StoreError(f"token scope {scope!r} is not one of {', '.join(SCOPES)}")
    if not NAME_PATTERN.match(name):
        raise StoreError(f"token name {name!r} is not valid: use 1-64 letters, digits, "
                         "'.', '_', '@' or '-', starting with a letter or digit")
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    with store.transaction(f"create token {name!r}") as conn:
        if conn.execute(select(t.tokens.c.id).where(t.tokens.c.name == name)).first():
            raise StoreError(f"a token called {name!r} exists already; revoke it or "
                             "choose another name")
        conn.execute(insert(t.tokens).values(
            name=name, token_sha256=_digest(token), scope=scope,
            created_at=datetime.now(timezone.utc)))
    return token


def list_tokens(store: Store) -> list[TokenInfo]:
    """Every token, oldest first, revoked ones included."""
    with store.transaction("list tokens") as conn:
        return [TokenInfo(name=r.name, created_at=as_utc(r.created_at) or r.created_at,
                          revoked_at=as_utc(r.revoked_at), last_used_at=as_utc(r.last_used_at),
                          scope=r.scope)
                for r in conn.execute(select(t.tokens).order_by(t.tokens.c.id))]


def revoke_token(store: Store, name: str) -> None:
    """Revoke the token called name (it stays listed, marked revoked) and end its login
    sessions."""
    with store.transaction(f"revoke token {name!r}") as conn:
        row = conn.execute(select(t.tokens.c.id, t.tokens.c.revoked_at)
                           .where(t.tokens.c.name == name)).first()
        if row is None:
            raise StoreError(f"no token is called {name!r}; 'rtbench token list' "
                             "shows them")
        if row.revoked_at is None:
            conn.execute(update(t.tokens).where(t.tokens.c.id == row.id)
                         .values(revoked_at=datetime.now(timezone.utc)))
        conn.execute(delete(t.sessions).where(t.sessions.c.token_id == row.id))


def check_token(store: Store, token: str, needed: str = "upload") -> str | None:
    """The name of the active token equal to token whose scope covers needed, else None."""
    found = token_identity(store, token)
    return found.name if found is not None and found.allows(needed) else None


def token_identity(store: Store, token: str) -> TokenIdentity | None:
    """The active token equal to token, else None (constant-time compare); notes its use."""
    found = find_token(store, token)
    if found is None:
        return None
    who, stale = found
    if stale:
        note_token_use(store, who.token_id)
    return who


def find_token(store: Store, token: str) -> tuple[TokenIdentity, bool] | None:
    """The active token equal to token (constant-time compare) and whether its last use
    is older than USE_NOTE_S (then note_token_use() should record this one); reads only,
    so a server checks tokens without queueing behind SQLite's one writer."""
    digest = _digest(token)
    with store.transaction("check a token") as conn:
        rows = conn.execute(select(t.tokens.c.id, t.tokens.c.name, t.tokens.c.token_sha256,
                                   t.tokens.c.last_used_at, t.tokens.c.scope)
                            .where(t.tokens.c.revoked_at.is_(None))).all()
    match = None
    for row in rows:  # no early exit: every active hash is compared
        if hmac.compare_digest(row.token_sha256, digest):
            match = row
    if match is None:
        return None
    last = as_utc(match.last_used_at)
    stale = last is None or (datetime.now(timezone.utc) - last).total_seconds() > USE_NOTE_S
    return TokenIdentity(token_id=int(match.id), name=str(match.name),
                         scope=str(match.scope)), stale


def note_token_use(store: Store, token_id: int) -> None:
    """Record now as the last use of token token_id."""
    with store.transaction("note a token's use") as conn:
        conn.execute(update(t.tokens).where(t.tokens.c.id == token_id)
                     .values(last_used_at=datetime.now(timezone.utc)))
