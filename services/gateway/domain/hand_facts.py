"""A hand's facts for matchmaking's collusion signals (``RecordHandRequest.facts``, version 1),
read from the hand's own events: who won off whose discard (冲, and 抢杠 off an added kong),
who claimed whose discard (碰 / 明杠; 吃 apart, since only a seat's 上家 feeds it), and who
was offered 胡 on another seat's discard and did not take it (a passed win, 漏胡 by choice, the
timer's pass included: letting a win's time run out passes it)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from services.gateway.domain.events.kinds import (
    CLAIM,
    ROB_KONG,
    ActionTaken,
    MeldDeclared,
    Prompt,
    TableEvent,
    WinDeclared,
)
from shared.melds import MeldKind
from shared.table import Win

FACTS_VERSION = 1
CLAIMED_KINDS = (MeldKind.PONG, MeldKind.EXPOSED_KONG)


@dataclass(frozen=True, slots=True)
class HandFacts:
    """(seat that acted, seat whose discard) pairs, in the order they happened."""

    version: int = FACTS_VERSION
    discard_wins: tuple[tuple[int, int], ...] = ()
    claims: tuple[tuple[int, int], ...] = ()
    passed_wins: tuple[tuple[int, int], ...] = ()
    chows: tuple[tuple[int, int], ...] = ()


def hand_facts(events: Iterable[TableEvent]) -> HandFacts:
    """The facts of one hand's events (those of other hands must be left out by the caller)."""
    wins: list[tuple[int, int]] = []
    claims: list[tuple[int, int]] = []
    passed: list[tuple[int, int]] = []
    chows: list[tuple[int, int]] = []
    offered: dict[int, int] = {}  # seat -> the seat whose discard it may win on, unanswered
    for e in events:
        if isinstance(e, Prompt):
            offered.pop(e.seat, None)
            if e.kind in (CLAIM, ROB_KONG) and e.options.win and e.from_seat is not None:
                offered[e.seat] = e.from_seat
        elif isinstance(e, ActionTaken):
            source = offered.pop(e.seat, None)
            if source is not None and not isinstance(e.action, Win):
                passed.append((e.seat, source))
        elif isinstance(e, WinDeclared):
            if e.from_seat is not None and e.from_seat != e.seat:
                wins.append((e.seat, e.from_seat))
        elif isinstance(e, MeldDeclared):
            meld = e.meld
            if meld.from_seat is None:
                continue
            if meld.kind in CLAIMED_KINDS:
                claims.append((e.seat, meld.from_seat))
            elif meld.kind == MeldKind.CHOW:
                chows.append((e.seat, meld.from_seat))
    return HandFacts(FACTS_VERSION, tuple(wins), tuple(claims), tuple(passed), tuple(chows))
