"""Creating a table: the validated CreateTable request (:class:`TableSpec`), what identifies a
request (:func:`spec_fingerprint`, for CreateTable's idempotency by request id), and the signed
seat tokens of a table's player seats."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from services.gateway.domain.session import Seat
from services.gateway.domain.tokens import sign_seat_token
from shared.ruleset import Ruleset


@dataclass
class TableSpec:
    """A validated CreateTable request."""

    request_id: str
    ruleset: Ruleset
    ruleset_name: str
    overrides: dict[str, str]
    stake: int
    seats: list[Seat]
    max_hands: int
    tag: str
    first_dealer: int | None
    max_rounds: int = 0
    # Report its hands to matchmaking's ledger: only tables a service of the deployment created
    # (matchmaking's), never casual ones (``mahjong play``, tests, clients), which it refuses.
    report_hands: bool = True
    # How long the table waits for its open seats (0 = forever); None = the gateway's setting.
    seat_wait_ms: int | None = None
    # The table's deadline, Unix ms (0 = none): no hand is dealt after it.
    end_by_ms: int = 0
    # The room service fee (台费): chips per hand from each player's seat to the house.
    fee_per_hand: int = 0


def spec_fingerprint(spec: TableSpec) -> str:
    """SHA-256 (hex) of the canonical form of what a CreateTable asks for: every field that
    defines the table, as sorted JSON. The request id is the key, not part of it; who calls
    (``report_hands``, from the caller's token) is not part of the request either. A field
    added later is written only when set (``end_by_ms``), so a request id kept before it
    existed still matches the same request retried."""
    canonical = {
        "ruleset": spec.ruleset_name,
        "overrides": dict(sorted(spec.overrides.items())),
        "stake": spec.stake,
        "seats": [[s.player_id, s.display_name, s.bot] for s in spec.seats],
        "max_hands": spec.max_hands,
        "max_rounds": spec.max_rounds,
        "tag": spec.tag,
        "first_dealer": spec.first_dealer,
        "seat_wait_ms": spec.seat_wait_ms,
    }
    if spec.end_by_ms:
        canonical["end_by_ms"] = spec.end_by_ms
    if spec.fee_per_hand:
        canonical["fee_per_hand"] = spec.fee_per_hand
    raw = json.dumps(canonical, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(raw.encode()).hexdigest()


def seat_tokens(secret: bytes, table_id: str, seats) -> list[str]:
    """The signed token of every player seat ("" for bots and open seats)."""
    return [
        sign_seat_token(secret, table_id, i) if s.player_id and not s.bot else ""
        for i, s in enumerate(seats)
    ]
