"""Store URLs as they may be shown: the password (in the user info or as a ``password`` query
parameter) replaced by ``***``, so a URL can be logged, printed or put in an error message."""

from __future__ import annotations

from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

REDACTED = "***"


def redact_url(url: str) -> str:
    """``url`` with any password hidden; anything that does not parse is shown as its scheme
    alone (it might hold a password in a form this does not know)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url.split(":", 1)[0] + "://" + REDACTED
    netloc = parts.netloc
    userinfo, at, host = netloc.rpartition("@")
    if at and ":" in userinfo:
        netloc = f"{userinfo.split(':', 1)[0]}:{REDACTED}@{host}"
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        if any(k.lower() == "password" for k, _ in pairs):
            query = urlencode(
                [(k, REDACTED if k.lower() == "password" else v) for k, v in pairs], safe="*"
            )
    if (netloc, query) == (parts.netloc, parts.query):
        return url  # nothing hidden (urlunsplit would also drop the // of an empty host)
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
