"""Hide the credentials of URLs in text that rtbench prints, logs or stores.

`redact` is the one redactor: every error line goes through it (rtbench.commands._common),
and so does every URL shown or stored that a user gave (push and serve lines, webhook
deliveries).  In scheme://USERINFO@host the password (after the first ':') becomes ***;
for web URLs (http, https, ws, wss, ftp) a user name alone becomes *** too, since a token
is often given as the user name there.  A user name alone in other schemes (ssh://root@b,
postgresql://rtbench@/db) is a login, not a secret, and stays.
"""

from __future__ import annotations

import re

HIDDEN = "***"
# scheme://userinfo@ : the userinfo runs up to the authority's last '@' (a password may
# hold '@'); it cannot hold '/', '?', '#' or white space
_USERINFO = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.\-]*)://(?P<userinfo>[^/?#\s]*)@")
_WEB_SCHEMES = ("http", "https", "ws", "wss", "ftp")


def _hide(match: re.Match[str]) -> str:
    """The replacement of one scheme://userinfo@."""
    scheme, userinfo = match.group("scheme"), match.group("userinfo")
    user, colon, _password = userinfo.partition(":")
    if colon:
        hidden = f"{user}:{HIDDEN}" if user else HIDDEN
    elif scheme.lower() in _WEB_SCHEMES:
        hidden = HIDDEN
    else:
        hidden = userinfo
    return f"{scheme}://{hidden}@"


def redact(text: str) -> str:
    """text with the credentials of every URL in it hidden."""
    if "://" not in text:
        return text
    return _USERINFO.sub(_hide, text)


def has_credentials(url: str) -> bool:
    """True when url carries a user name or password (scheme://userinfo@host)."""
    return redact(url) != url or bool(_USERINFO.match(url.strip()))
