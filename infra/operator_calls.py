"""Operator calls over a web port (issue 32): a browser has no workload certificate, so the
operator's console RPCs served on a web port (matchmaking's and the gateway's) are authorized
by an operator's *session* instead — the token of a sign-in with the operator role of the
studio's issuer, sent as ``authorization: Bearer <session token>``. On the gRPC ports the same
RPCs stay the operator certificate's (``ServiceSpec.callers``, checked before the handler).

:func:`web_operator_token` tells a handler which path its call took: None for a gRPC call
(already authorized by its certificate), else the bearer token, which the handler must verify
(matchmaking's session store: a player's session is PERMISSION_DENIED, anything forged, expired
or ended UNAUTHENTICATED).
"""

from __future__ import annotations

from infra.web_calls import WebCallContext
from shared.errors import Unauthenticated

HEADER = "authorization"
SCHEME = "bearer "
MAX_TOKEN_CHARS = 2048


def is_web_call(context) -> bool:
    """Whether ``context`` is a call's over a web port (a browser's, without a certificate)."""
    return isinstance(context, WebCallContext)


def web_operator_token(context) -> str | None:
    """None when ``context`` is a gRPC call's; for a web call its bearer token (UNAUTHENTICATED
    when it sent none, or one too long to be a session token)."""
    if not is_web_call(context):
        return None
    value = dict(context.invocation_metadata()).get(HEADER, "")
    if not value.lower().startswith(SCHEME) or not value[len(SCHEME) :].strip():
        raise Unauthenticated(
            "the operator's console on a web port needs an operator's session: send "
            "'authorization: Bearer <session token>' (sign in with the operator role)",
            reason="MISSING_TOKEN",
            field=HEADER,
        )
    token = value[len(SCHEME) :].strip()
    if len(token) > MAX_TOKEN_CHARS:
        raise Unauthenticated(
            f"the bearer token has {len(token)} characters; at most {MAX_TOKEN_CHARS}",
            reason="MALFORMED_TOKEN",
            field=HEADER,
        )
    return token
