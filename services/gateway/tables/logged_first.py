"""The wall as one table's engine calls it: before each call that hands out tiles, the events
the running step emitted so far are written to the table's log (:meth:`TableManager.step`
writes a step's events at once, at its end).

Why: the wall answers a numbered call (draw, replacement draw, swap) repeated under the same
number with its first answer, so the numbers must mean the same call on whichever replica
makes it. A replica that took the table over continues from the log; with everything before
a numbered call in the log, its call under that number is the one the former owner made or
would have made. Were a step's decisions (a bot's discard, a claim) still unwritten when the
former owner — paused past its lease, then resumed — made its call, the new owner could make
a different call under the same number (its bot deciding otherwise) and be handed the former
owner's tile. Writing first keeps the former owner's late call to a repeat of what the log
already leads to; the write itself is fenced, so its events never land.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from services.gateway.domain.ports import WallDraw, WallHand, WallPort, WallReveal


class LoggedFirstWall:
    """A :class:`~services.gateway.domain.ports.WallPort` that calls ``write_pending`` before
    every call handing out tiles, then the wall."""

    __slots__ = ("_wall", "_write_pending")

    def __init__(self, wall: WallPort, write_pending: Callable[[], None]) -> None:
        self._wall = wall
        self._write_pending = write_pending

    def new_hand(
        self, ruleset_name: str, overrides: Mapping[str, str], dealer: int, request_id: str
    ) -> WallHand:
        return self._wall.new_hand(ruleset_name, overrides, dealer, request_id)

    def deal(self, hand_id: str) -> tuple[list[list[int]], int]:
        return self._wall.deal(hand_id)  # one per hand: the same answer whoever asks

    def draw(self, hand_id: str, seat: int, number: int) -> WallDraw:
        self._write_pending()
        return self._wall.draw(hand_id, seat, number)

    def draw_replacement(self, hand_id: str, seat: int, number: int) -> WallDraw:
        self._write_pending()
        return self._wall.draw_replacement(hand_id, seat, number)

    def swap(self, hand_id: str, seat: int, buried: list[int], number: int) -> list[int]:
        self._write_pending()
        return self._wall.swap(hand_id, seat, buried, number)

    def reveal(self, hand_id: str) -> WallReveal:
        return self._wall.reveal(hand_id)

    def flip_indicator(self, hand_id: str) -> tuple[list[int], int]:
        return self._wall.flip_indicator(hand_id)  # one per hand, after the deal
