"""Items for silver, and operator grants (RULES-items §1): 房卡, 加倍卡 and 比赛卡 bought at the
deployment's prices (0 = not for sale), or granted from the house by an operator identity with
a reason. Each is one ledger transaction, once by its reference (the request id).

Prices (deployment flags ``--items-*-price``): ``double_card`` 50 and ``match_card`` 100 silver
as RULES-items §1 says; ``room_card`` 100 (this module's choice: the seeds give no price; a 房卡
opens a whole private session, and the welcome grant's 1,000 silver then buys ten).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from services.matchmaking.domain.economy import ledger
from services.matchmaking.domain.economy.ledger import HOUSE, ITEMS, SILVER, Leg
from services.matchmaking.domain.ports import Records
from services.matchmaking.domain.tables import live_seats
from shared.errors import FailedPrecondition, InvalidArgument

MAX_COUNT = 1000  # items per purchase
MAX_PRICE = 10**12  # silver per item: count × price stays far inside one leg's limit
MAX_GRANT = 10**12  # per asset in one operator grant
MAX_REASON = 200


@dataclass(frozen=True, slots=True)
class ItemPrices:
    """Silver per item; 0 = not for sale."""

    room_card: int = 100
    double_card: int = 50
    match_card: int = 100

    def __post_init__(self) -> None:
        for asset in ITEMS:
            price = getattr(self, asset)
            if not 0 <= price <= MAX_PRICE:
                raise ValueError(f"items.{asset}_price {price} is not in 0-{MAX_PRICE}")

    def of(self, asset: str) -> int:
        if asset not in ITEMS:
            raise InvalidArgument(
                f"{asset} is not an item for sale; items are {', '.join(ITEMS)}", field="asset"
            )
        return int(getattr(self, asset))

    def listing(self) -> list[tuple[str, int]]:
        return [(asset, self.of(asset)) for asset in ITEMS]


def _ref(kind: str, player_id: str, request_id: str) -> str:
    return f"{kind}/{player_id}/{request_id or uuid.uuid4().hex}"


def buy(
    store: Records,
    prices: ItemPrices,
    player_id: str,
    asset: str,
    count: int,
    request_id: str,
    now: float,
    seat_needs: live_seats.Held | None = None,
) -> int:
    """Buy ``count`` of an item with silver (one transaction: the player's silver to the house,
    the house's items to the player); the silver paid. InvalidArgument for a count outside
    1-1000 or no item; FailedPrecondition NOT_FOR_SALE, INSUFFICIENT_FUNDS (too little silver:
    nothing moves), SILVER_HELD_BY_SEAT (it would take the player below what their live seat,
    ``seat_needs``, needs kept: :mod:`~services.matchmaking.domain.tables.live_seats`)."""
    price = prices.of(asset)
    if not 1 <= count <= MAX_COUNT:
        raise InvalidArgument(f"count {count} is not in 1-{MAX_COUNT}", field="count")
    if price == 0:
        raise FailedPrecondition(
            f"{asset} is not for sale here (its price is 0)", reason="NOT_FOR_SALE", asset=asset
        )
    paid = price * count
    live_seats.require_kept(store, player_id, paid, f"buying {count} {asset}", seat_needs)
    note = f"{count} {asset} at {price} silver"
    legs = [
        Leg(player_id, SILVER, -paid, ledger.PURCHASE, note),
        Leg(HOUSE, SILVER, paid, ledger.PURCHASE, note),
        Leg(player_id, asset, count, ledger.PURCHASE, note),
        Leg(HOUSE, asset, -count, ledger.PURCHASE, note),
    ]
    ledger.transact(store, _ref("buy", player_id, request_id), legs, now)
    return paid


def grant(
    store: Records,
    player_id: str,
    assets: Sequence[tuple[str, int]],
    reason: str,
    operator: str,
    request_id: str,
    now: float,
) -> bool:
    """An operator's grant from the house (RULES-items §1): each amount > 0, a reason, the
    operator's identity kept in every entry's note; once by ``request_id`` (required). True
    when new, False for a repeat."""
    reason = (reason or "").strip()
    if not reason or len(reason) > MAX_REASON:
        raise InvalidArgument(
            f"a grant needs a reason of 1-{MAX_REASON} characters", field="reason"
        )
    if not request_id:
        raise InvalidArgument(
            "a grant needs a request_id (its idempotency key)", field="request_id"
        )
    if not assets:
        raise InvalidArgument("a grant needs at least one asset", field="assets")
    if ledger.is_bot(player_id) or player_id == HOUSE:
        raise InvalidArgument(f"{player_id} has no wallet to grant to", field="player_id")
    seen: set[str] = set()
    legs = []
    note = f"by {operator}: {reason}"
    for i, (asset, amount) in enumerate(assets):
        if asset in seen:
            raise InvalidArgument(f"{asset} appears twice", field=f"assets[{i}].asset")
        seen.add(asset)
        if not 1 <= amount <= MAX_GRANT:
            raise InvalidArgument(
                f"assets[{i}].amount {amount} is not in 1-{MAX_GRANT}", field=f"assets[{i}].amount"
            )
        legs += [
            Leg(player_id, asset, amount, ledger.OPERATOR_GRANT, note),
            Leg(HOUSE, asset, -amount, ledger.OPERATOR_GRANT, note),
        ]
    return ledger.transact(store, f"operator-grant/{request_id}", legs, now)
