"""What a viewer — a seat, or a spectator (None) — may know of a table now (its view).

A seat sees its own concealed tiles and drawn tile, everyone's public facts (flowers, melds —
another seat's concealed kong face down, as :meth:`MeldFact.hidden` shows it —, discards, 敲,
托管, chips), whose turn it is and that turn's deadline, and its own pending prompt. A claim, 抢杠
or swap deadline is shown only to the seat prompted: the others must not learn that a claim
window is open. A 托管 started by a missed claim is the seat's own until announced.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from services.gateway.domain.events.kinds import OWN_TURN, MeldFact
from services.gateway.domain.hand import prompt_event
from services.gateway.domain.session import between_hands, escape
from services.gateway.domain.session.config import BETWEEN_HANDS, WAITING
from shared.table import LastActionKind

if TYPE_CHECKING:
    from services.gateway.domain.session.table import TableSession

# A view as the gateway's proto conversion reads it (services.gateway.convert.views).
SeatView = dict[str, Any]


def seat_view(t: TableSession, viewer: int | None) -> SeatView:
    """What ``viewer`` may know now (see the module doc)."""
    hand = t.hand
    seats = []
    waiting = between_hands.waiting_for(t)
    for i, s in enumerate(t.seats):
        d: dict[str, Any] = {
            "seat": i,
            "player_id": s.player_id,
            "display_name": s.display_name,
            "bot": s.bot or s.left,
            "auto_play": s.auto_play and (viewer == i or i not in t.auto_play_hidden),
            "left": s.left,
            "chips": s.chips,
            # between hands: has pressed Next (a bot, 托管, a player who left: at once)
            "next_ready": t.phase == BETWEEN_HANDS and i not in waiting,
        }
        if t.garden:
            d["garden_stack"] = t.garden_start + s.chips
        if hand is not None:
            h = hand.seats[i]
            shown = viewer == i or hand.finished
            d["concealed_count"] = sum(h.counts)
            d["melds"] = [MeldFact.of(m) if shown else MeldFact.of(m).hidden() for m in h.melds]
            d["flowers"] = list(h.flowers)
            d["discards"] = list(h.discards)
            d["claimed_discards"] = list(h.claimed_at)
            d["ready"] = h.ready
            if viewer == i:
                d["concealed"] = h.concealed_tiles()
                d["drawn"] = hand.drawn.get(i)
        seats.append(d)
    view: dict[str, Any] = {
        "table_id": t.config.table_id,
        "phase": t.phase,
        "viewer": viewer,
        "seats": seats,
        "hands_played": t.hands_played,
        "huangfan": t.huangfan,
        "dealer": t.dealer,
        "max_rounds": t.max_rounds,
        "rounds_played": t.rounds_played,
        "garden": t.garden,
        # while the table waits for open seats: when it gives up on them (0 = never)
        "seat_deadline_ms": t.seat_deadline_ms if t.phase == WAITING else 0,
        # between hands: when the next hand is dealt at the latest (0 = not between hands)
        "next_hand_ms": t.pause.deadline_ms if t.phase == BETWEEN_HANDS else 0,
        "escape_penalty": escape.escape_penalty(t),
    }
    if hand is not None:
        turn = next((p for p in hand.pending.values() if p.kind == OWN_TURN), None)
        own = hand.pending.get(viewer) if viewer is not None else None
        shown_p = turn if turn is not None else own
        discard = hand.last.kind is LastActionKind.DISCARD
        view["hand"] = {
            "hand_id": hand.hand_id,
            "hand_number": hand.config.hand_number,
            "dealer": hand.dealer,
            "dice": list(hand.dice),
            "commitment": hand.commitment,
            "kaibao": hand.kaibao,
            "huangfan": hand.huangfan,
            "tiles_left": hand.remaining,
            "to_act": turn.seat if turn is not None else None,
            "deadline_ms": shown_p.deadline_ms if shown_p is not None else 0,
            "last_discard": hand.last.tile if discard else None,
            "last_discard_seat": hand.last.seat if discard else None,
            "finished": hand.finished,
            # 翻百搭: the indicator turned up (public) and the kind that is 百搭 this hand
            "wild_indicator": hand.flipped[-1] if hand.flipped else None,
            "wild_kind": hand.wild_kind,
        }
        view["prompt"] = prompt_event(own) if own is not None else None
    return view
