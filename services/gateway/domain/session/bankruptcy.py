"""破产 at a table (RULES-items §4): a player whose silver no longer covers a hand leaves it, and a
bot takes the seat.

A table whose hands move silver (given ``hand_answer``) deals its next
hand only once matchmaking has answered the last hand's report: ``hand_answer(hand_id)`` is
None until then (asked again every :data:`ANSWER_POLL_MS`), else the seats whose player no
longer covers a hand, each with the bot that takes it. Each is applied before the deal
(``seat_bankrupt``, public): the seat is the bot's from then on, the player has left (荒番 is
reset, as when a player leaves), and their seat token acts no more.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from services.gateway.domain.events.kinds import SeatBankrupt
from shared.errors import InvalidArgument
from shared.table import NUM_SEATS

if TYPE_CHECKING:
    from services.gateway.domain.session.table import TableSession

# Matchmaking's answer to a settled hand's report (by hand id): None while it is not in yet,
# else the bankrupt seats (破产) and the bot taking each, ((seat, bot id), ...).
HandAnswer = Callable[[str], tuple[tuple[int, str], ...] | None]
ANSWER_POLL_MS = 100  # how often a table waiting for its last hand's answer asks again


def apply_hand_answer(t: TableSession) -> bool:
    """Matchmaking's answer to the last settled hand applied (its bankrupt seats taken by
    their bots): False while it is not in yet. Applying it again changes nothing."""
    if t.hand_answer is None or not t.last_hand_id:
        return True
    answer = t.hand_answer(t.last_hand_id)
    if answer is None:
        return False
    for seat, bot_id in answer:
        seat_bankrupt(t, seat, bot_id)
    return True


def seat_bankrupt(t: TableSession, seat: int, bot_id: str) -> None:
    """破产: the player of ``seat`` leaves after the hand and the bot ``bot_id`` takes the
    seat (``seat_bankrupt``, public). A seat a bot already plays is left as it is."""
    if not 0 <= seat < NUM_SEATS or not bot_id:
        raise InvalidArgument(f"no bankrupt seat {seat} with bot {bot_id!r}", field="seat")
    s = t.seats[seat]
    if s.bot:
        return
    event = SeatBankrupt(seat, s.player_id, bot_id, t.hands_played)
    t.emit(event)
    take_bankrupt_seat(t, event)


def take_bankrupt_seat(t: TableSession, event: SeatBankrupt) -> None:
    """The seat's state after ``event`` (also when a table is rebuilt from its log): the
    bot's, the player gone (荒番 reset, RULES §10), a 加倍卡 they played for the next hand
    void (its hold is released with the table)."""
    seat = event.seat
    s = t.seats[seat]
    t.bankrupt[seat] = event
    s.player_id, s.display_name, s.bot = event.bot_id, event.bot_id, True
    s.joined, s.left, s.auto_play, s.timeouts_in_row = True, False, False, 0
    t.auto_play_hidden.discard(seat)
    t.huangfan = 0
    number = t.hands_played + 1
    if seat in t.doubled.get(number, ()):
        t.doubled[number] = tuple(x for x in t.doubled[number] if x != seat)
