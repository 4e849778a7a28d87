"""The wall as one table's engine calls it: every call that hands out tiles or ends the hand
carries the table's ownership epoch (the lease's fencing token), so the wall itself refuses a
former owner (DrawRequest.owner_epoch; services.wall.domain.record.HandWall).

Why: a replica paused past its lease may resume mid-step and call the wall on decisions it
never wrote (its bot's, a claim); the new owner continues from the log and may make another
call under the same number. The wall takes the newer epoch's call as the truth, voids what the
older epoch was handed beyond the log, and refuses the older epoch from then on. So the log
and the wall agree without the step writing its events before each draw: one write per step.
A refusal is this replica's news that it lost the table, handled as a fenced write.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TypeVar

from services.gateway.domain.ports import (
    WallDraw,
    WallFence,
    WallFenced,
    WallHand,
    WallPort,
    WallReveal,
)

R = TypeVar("R")


class FencedWall:
    """A :class:`~services.gateway.domain.ports.WallPort` passing the table's ``fence.epoch()``
    with each call that hands out tiles or reveals the seed; ``fence.fenced`` is given the
    wall's refusal (and raises: the table is lost). ``fence``: the
    :class:`~services.gateway.domain.ports.WallFence` port, the table's
    :class:`~services.gateway.tables.wiring.TableLink`."""

    __slots__ = ("_fence", "_wall")

    def __init__(self, wall: WallPort, fence: WallFence) -> None:
        self._wall = wall
        self._fence = fence

    def _call(self, fn: Callable[..., R], *args) -> R:
        try:
            return fn(*args, epoch=self._fence.epoch())
        except WallFenced as exc:
            self._fence.fenced(exc)

    def new_hand(
        self, ruleset_name: str, overrides: Mapping[str, str], dealer: int, request_id: str
    ) -> WallHand:
        return self._wall.new_hand(ruleset_name, overrides, dealer, request_id)

    def deal(self, hand_id: str) -> tuple[list[list[int]], int]:
        return self._wall.deal(hand_id)  # one per hand: the same answer whoever asks

    def draw(self, hand_id: str, seat: int, number: int) -> WallDraw:
        return self._call(self._wall.draw, hand_id, seat, number)

    def draw_replacement(self, hand_id: str, seat: int, number: int) -> WallDraw:
        return self._call(self._wall.draw_replacement, hand_id, seat, number)

    def swap(self, hand_id: str, seat: int, buried: list[int], number: int) -> list[int]:
        return self._call(self._wall.swap, hand_id, seat, buried, number)

    def reveal(self, hand_id: str, number: int = 0) -> WallReveal:
        return self._call(self._wall.reveal, hand_id, number)

    def flip_indicator(self, hand_id: str) -> tuple[list[int], int]:
        return self._call(self._wall.flip_indicator, hand_id)
