"""换牌 tile swap (option ``table.tile_swap``, RULES §3): after the deal and 补花, every seat may
bury ``tile_swap_count`` tiles in the live wall and take as many from it, within
``tile_swap_seconds``; a seat that does not answer keeps its tiles. Flowers taken are replaced
at once (补花)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from services.gateway.domain.events.kinds import SWAP, TilesSwapped
from services.gateway.domain.hand.checks import check_swap
from services.gateway.domain.hand.deal import Round, expose_flowers, replacement_rounds
from services.gateway.domain.hand.state import STEP_PROMPT, Pending, SwapOptions
from shared.errors import FailedPrecondition
from shared.table import NUM_SEATS, Decision, TileSwap

if TYPE_CHECKING:
    from services.gateway.domain.hand.engine import HandEngine


def open_swap_window(h: HandEngine) -> None:
    """Prompt every seat, in dealer order, for its swap (same deadline for all)."""
    count = int(h.ruleset.table.tile_swap_count)
    ms = int(h.ruleset.table.tile_swap_seconds) * 1000
    cap = h.timer_cap
    deadline = h.now_ms() + (ms if cap is None else cap(ms))
    order = [(h.dealer + i) % NUM_SEATS for i in range(NUM_SEATS)]
    h.pending = {s: Pending(s, SWAP, SwapOptions(s, count), deadline) for s in order}
    for s in order:
        h.pending[s].sequence = h.emit_prompt(h.pending[s])


def answer_swap(
    h: HandEngine, p: Pending, action: Decision, auto: bool, request_id: str = ""
) -> None:
    """A seat's answer to the swap window. Every wall call is made first (the swap, then 补花 of
    the flowers it gave): if one fails nothing has changed, and the request sent again makes
    the same numbered calls, which the wall answers with the same tiles."""
    seat = p.seat
    check_swap(p, action, h.seats[seat].counts)
    taken: list[int] | None = None
    rounds: list[Round] = []
    number = h.wall_calls
    if isinstance(action, TileSwap):
        number += 1
        taken = h.wall.swap(h.hand_id, seat, list(action.tiles), number)
        flowers = [k for k in taken if h.is_bonus(k)]
        rounds, number, ran_out = replacement_rounds(h, seat, flowers, number)
        if ran_out is not None:
            raise FailedPrecondition(
                "no tile is left to replace the flowers this swap would take",
                reason="WALL_EXHAUSTED",
            )
    h.wall_calls = number
    h.actions += 1
    _apply_swap(h, seat, action, taken, rounds, auto, request_id)


def _apply_swap(
    h: HandEngine,
    seat: int,
    action: Decision,
    taken: list[int] | None,
    rounds: list[Round],
    auto: bool,
    request_id: str = "",
) -> None:
    """Apply a seat's 换牌 answer: the swap's tiles, then each 补花 round, all drawn already."""
    del h.pending[seat]
    h.emit_action(seat, action, auto, request_id)
    if isinstance(action, TileSwap) and taken is not None:
        s = h.seats[seat]
        for k in action.tiles:
            s.counts[k] -= 1
        for k in taken:
            if not h.is_bonus(k):
                s.counts[k] += 1
        s.changed()
        h.emit_event(
            TilesSwapped(
                seat=seat,
                buried=tuple(action.tiles),
                taken=tuple(taken),
                hand_id=h.hand_id,
                hand_number=h.number,
            )
        )
        expose_flowers(h, seat, rounds, "swap")
    if not h.pending:
        h._step, h._step_seat = STEP_PROMPT, h.dealer
        h.then()
