"""Login sessions of the results server's dashboard.

Logging in with a token creates a session: 32 random bytes the browser keeps in an
HttpOnly cookie, of which the database keeps only the SHA-256 (like tokens).  A
session carries its token's scope, ends at its expiry, at logout, or when its token
is revoked (rtbench.store.tokens.revoke_token deletes the token's sessions).
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import datetime, timedelta, timezone

from sqlalchemy import delete, insert, select

from rtbench.store import Store
from rtbench.store import schema as t
from rtbench.store.tokens import TokenIdentity

SESSION_LIFETIME = timedelta(hours=12)


def _digest(session_id: str) -> str:
    """The hex SHA-256 of a session id."""
    return hashlib.sha256(session_id.encode("utf-8")).hexdigest()


def create_session(store: Store, who: TokenIdentity,
                   lifetime: timedelta = SESSION_LIFETIME) -> str:
    """A new session for the token who (its id, shown only now); expired ones go."""
    session_id = secrets.token_urlsafe(32)
    now = datetime.now(timezone.utc)
    with store.transaction("start a login session") as conn:
        conn.execute(delete(t.sessions).where(t.sessions.c.expires_at <= now))
        conn.execute(insert(t.sessions).values(
            session_sha256=_digest(session_id), token_id=who.token_id, created_at=now,
            expires_at=now + lifetime))
    return session_id


def session_identity(store: Store, session_id: str) -> TokenIdentity | None:
    """The token of a live session (not expired, token not revoked), else None."""
    if not session_id or len(session_id) > 200:
        return None
    now = datetime.now(timezone.utc)
    query = (select(t.tokens.c.id, t.tokens.c.name, t.tokens.c.scope)
             .select_from(t.sessions.join(t.tokens, t.tokens.c.id == t.sessions.c.token_id))
             .where(t.sessions.c.session_sha256 == _digest(session_id),
                    t.sessions.c.expires_at > now, t.tokens.c.revoked_at.is_(None)))
    with store.transaction("check a login session") as conn:
        row = conn.execute(query).first()
    if row is None:
        return None
    return TokenIdentity(token_id=int(row.id), name=str(row.name), scope=str(row.scope))


def end_session(store: Store, session_id: str) -> None:
    """Forget a session (logout); an unknown one is ignored."""
    with store.transaction("end a login session") as conn:
        conn.execute(delete(t.sessions).where(
            t.sessions.c.session_sha256 == _digest(session_id)))
