"""Claim resolution (RULES §4): every win stands (一炮多响); otherwise pong or kong takes the
tile over a chow (碰比吃优先). Seats that could win but passed get a 漏胡 mark (RULES §7)."""

from __future__ import annotations

from collections.abc import Mapping

from services.rules.domain.claims import claim_options
from services.rules.domain.validation import validate_action
from shared.errors import InvalidArgument
from shared.table import (
    Action,
    Chow,
    ClaimResolution,
    ExposedKong,
    Pass,
    Pong,
    TableSnapshot,
    Win,
    check_seat,
    seats_from,
)


def resolve_claims(snap: TableSnapshot, claims: Mapping[int, Action]) -> ClaimResolution:
    """Decide who takes the last discard (or robs the added kong).

    ``claims`` maps seats to their claim (Win, Pong, ExposedKong, Chow or Pass); a seat left
    out passes. Each claim is validated first (FailedPrecondition naming the illegal one).
    """
    options = {o.seat: o for o in claim_options(snap)}
    for seat, action in claims.items():
        check_seat(seat, "claiming seat")
        if not isinstance(action, Win | Pong | ExposedKong | Chow | Pass):
            raise InvalidArgument(f"seat {seat}: {type(action).__name__} is not a claim")
        validate_action(snap, seat, action)
    tile = snap.last.tile
    assert tile is not None
    order = seats_from(snap.last.seat)
    winners = tuple(s for s in order if isinstance(claims.get(s), Win))
    passed = tuple(
        s for s in order if options[s].win is not None and not isinstance(claims.get(s), Win)
    )
    if winners:
        return ClaimResolution(
            tile=tile,
            winners=winners,
            win_options={s: options[s].win for s in winners},  # type: ignore[misc]
            missed_wins=passed,
        )
    for kinds in ((Pong, ExposedKong), (Chow,)):
        for s in order:
            claim = claims.get(s)
            if isinstance(claim, kinds):
                return ClaimResolution(tile=tile, taker=s, action=claim, missed_wins=passed)
    return ClaimResolution(tile=tile, missed_wins=passed)
