"""加倍卡 at a table (RULES-items §2): a seated player doubles the next hand's payments; the
gateway holds the card at matchmaking first (:mod:`services.gateway.double_cards`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from services.gateway.domain.events.kinds import DoubleCardPlayed
from services.gateway.domain.session.config import BETWEEN_HANDS, WAITING
from shared.errors import FailedPrecondition

if TYPE_CHECKING:
    from services.gateway.domain.session.table import TableSession


def check(t: TableSession, seat: int) -> int:
    """Whether ``seat`` may play a 加倍卡 now (RULES-items §2): a seated player, not a bot,
    at a table whose ruleset allows it (``items.double_card``) and no tournament table,
    between hands or before the first deal, within ``items.double_cards_per_hand``. The
    number of the hand it would double; FailedPrecondition DOUBLE_CARD_* naming why not."""
    s = t.seats[seat]
    if s.bot:
        raise FailedPrecondition(
            f"seat {seat} is a bot: bots play no 加倍卡", reason="DOUBLE_CARD_BOT"
        )
    if not s.joined or s.left or not s.player_id:
        raise FailedPrecondition(
            f"seat {seat} has no player seated", reason="DOUBLE_CARD_NOT_SEATED"
        )
    items = t.config.ruleset.items
    if t.config.tag.startswith("tournament/") or not bool(items.double_card):
        raise FailedPrecondition(
            "this table does not allow 加倍卡", reason="DOUBLE_CARD_NOT_ALLOWED"
        )
    if t.phase not in (WAITING, BETWEEN_HANDS):
        raise FailedPrecondition(
            "a hand is running: play a 加倍卡 between hands", reason="DOUBLE_CARD_HAND_RUNNING"
        )
    number = t.hands_played + 1
    if t.doubled.get(number, ()).count(seat) >= int(items.double_cards_per_hand):
        raise FailedPrecondition(
            f"seat {seat} already played a 加倍卡 for hand {number}",
            reason="DOUBLE_CARD_ALREADY_PLAYED",
        )
    return number


def play(t: TableSession, seat: int) -> int:
    """``seat`` plays a 加倍卡 for the next hand (checked as :func:`check`):
    public (``double_card_played``); the hand's scoring doubles its payments."""
    number = check(t, seat)
    t.doubled[number] = tuple(sorted((*t.doubled.get(number, ()), seat)))
    hand_id, head_number = t.head()
    t.emit(DoubleCardPlayed(seat, number, hand_id, head_number))
    return number
