"""The operator's claim a gateway replica carries when it sends a console call (ListTables,
InspectTable, EndTable) on to the replica that runs the table (README "Operations").

A replica that forwards a call would otherwise be the caller the owner sees: the gateway's
certificate, not the operator's. So the forwarding replica, having authorized the operator
itself (the operator's certificate on its gRPC port, or an operator's session on its web port),
sends the operator's identity along as ``x-mahjong-operator-claim``: who the operator is, the
replica it came through, the RPC and its target, and when it was made, signed with the
deployment's seat-token secret (HMAC-SHA256; every gateway replica holds it, nothing else does).

The owner accepts a claim only (:func:`services.gateway.console.Console.operator`):

* from a caller whose verified certificate is the gateway's (its SPIFFE ID) on the mutual-TLS
  internal port — never on the public or the web port, never from a player, matchmaking or the
  operator's own certificate (PERMISSION_DENIED ``DELEGATION_REFUSED``);
* when its signature is this deployment's, it names this RPC and this target, and it was made
  less than :data:`CLAIM_TTL_MS` ago (PERMISSION_DENIED ``CLAIM_INVALID`` otherwise).

A gateway peer calling a console RPC without a claim is refused too (``CLAIM_MISSING``): a
replica acts only on an operator's behalf. The audit log's actor is then
``<operator> via gateway <replica id>``: both the operator and the gateway it came through.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from dataclasses import dataclass

from shared.errors import PermissionDenied

CLAIM_HEADER = "x-mahjong-operator-claim"
CLAIM_TTL_MS = 60_000
MAX_CLAIM_CHARS = 4096
VERSION = 1


@dataclass(frozen=True, slots=True)
class Claim:
    actor: str  # the operator: a certificate's subject or ``session:<player id>``
    via: str  # the gateway replica that authorized the operator and sent the call on
    method: str  # the console RPC
    target: str  # its table id ("" for ListTables)
    at_ms: int  # when it was made (Unix ms)

    @property
    def audit_actor(self) -> str:
        return f"{self.actor} via gateway {self.via}"


def _mac(secret: bytes, body: bytes) -> str:
    digest = hmac.new(secret, b"operator-claim\0" + body, hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).decode().rstrip("=")


def sign(secret: bytes, claim: Claim) -> str:
    """The claim as the header's value: ``<base64 JSON>.<base64 HMAC>``."""
    data = {"v": VERSION, "actor": claim.actor, "via": claim.via, "method": claim.method,
            "target": claim.target, "at_ms": claim.at_ms}  # fmt: skip
    body = json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode()
    return base64.urlsafe_b64encode(body).decode().rstrip("=") + "." + _mac(secret, body)


def _invalid(why: str) -> PermissionDenied:
    return PermissionDenied(
        f"the operator's claim ({CLAIM_HEADER}) is not valid: {why}",
        reason="CLAIM_INVALID",
        field=CLAIM_HEADER,
    )


def read(secret: bytes, value: str, method: str, target: str, now_ms: int) -> Claim:
    """The claim ``value`` carries, checked: this deployment's signature, for ``method`` on
    ``target``, made within :data:`CLAIM_TTL_MS` of ``now_ms``; else PERMISSION_DENIED
    ``CLAIM_INVALID``."""
    if len(value) > MAX_CLAIM_CHARS or value.count(".") != 1:
        raise _invalid("malformed")
    encoded, mac = value.split(".")
    try:
        body = base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4))
    except ValueError:
        raise _invalid("malformed") from None
    if not hmac.compare_digest(mac.encode(), _mac(secret, body).encode()):
        raise _invalid("its signature is not this deployment's gateways'")
    data = json.loads(body)
    if data.get("v") != VERSION:
        raise _invalid(f"version {data.get('v')!r} is not {VERSION}")
    claim = Claim(data["actor"], data["via"], data["method"], data["target"], data["at_ms"])
    if (claim.method, claim.target) != (method, target):
        raise _invalid(f"it was made for {claim.method} {claim.target!r}, not {method} {target!r}")
    if abs(now_ms - claim.at_ms) > CLAIM_TTL_MS:
        raise _invalid(f"it was made {now_ms - claim.at_ms} ms ago (at most {CLAIM_TTL_MS})")
    if not claim.actor or not claim.via:
        raise _invalid("it names no operator or no gateway")
    return claim
