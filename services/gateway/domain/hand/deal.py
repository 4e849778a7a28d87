"""The deal and 补花 (replacing flowers, RULES §3): the wall's deal, then, in dealer order, each
seat's bonus tiles (flowers; in the 百搭 sets also the extras and dragons) shown and replaced
from the tail, in rounds while a replacement is itself one; then, under 翻百搭, the indicator
turned up. The same rounds serve the tiles a 换牌 takes (:mod:`.swap`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from services.gateway.domain.events.kinds import FlowersExposed, TilesDealt, WildFlipped
from services.gateway.domain.hand.state import STEP_DEAL_FLOWERS
from shared.table import NUM_SEATS, LastAction, LastActionKind

if TYPE_CHECKING:
    from services.gateway.domain.hand.engine import HandEngine

# One 补花 round: the flowers shown, their replacements, the tiles left after it.
Round = tuple[list[int], list[int], int]


def deal(h: HandEngine) -> None:
    """The wall's deal: each seat's tiles (flowers set aside for 补花), shown to each seat."""
    cfg = h.config
    hands, remaining = h.wall.deal(h.hand_id)
    if len(hands) != NUM_SEATS:
        raise ValueError(f"wall dealt {len(hands)} hands, not {NUM_SEATS}")
    h.remaining = remaining
    h._deal_flowers = []
    for seat, tiles in enumerate(hands):
        s = h.seats[seat]
        h._deal_flowers.append([k for k in tiles if h.is_bonus(k)])
        for k in tiles:
            if not h.is_bonus(k):
                s.counts[k] += 1
        s.changed()
    h.drawn[cfg.dealer] = hands[cfg.dealer][-1]
    h._deal_turn = 0
    h._step = STEP_DEAL_FLOWERS
    h.emit_event(
        TilesDealt(
            hands=tuple(tuple(t) for t in hands),
            tiles_left=h.remaining,
            hand_id=h.hand_id,
            hand_number=h.number,
        )
    )
    replace_deal_flowers(h)


def replace_deal_flowers(h: HandEngine) -> None:
    """补花 in dealer order, seat by seat (see :func:`replacement_rounds`): a seat's
    replacements are applied once they were all drawn, so a failed draw leaves the seat to be
    replaced again with the same numbers, which the wall answers with the same tiles."""
    cfg = h.config
    while h._deal_turn < NUM_SEATS:
        seat = (cfg.dealer + h._deal_turn) % NUM_SEATS
        rounds, number, ran_out = replacement_rounds(h, seat, h._deal_flowers[seat])
        h.wall_calls = number
        expose_flowers(h, seat, rounds, "deal")
        if ran_out is not None:
            h.remaining = ran_out
            h.finish_drawn_hand()
            return
        if seat == cfg.dealer:
            plain = [k for _, got, _ in rounds for k in got if not h.is_bonus(k)]
            if plain:
                h.drawn[seat] = plain[-1]
        h._deal_flowers[seat] = []
        h._deal_turn += 1
    if h.tile_set.flipped_wildcard and not h.flipped:
        flip_indicator(h)
    h.turn = cfg.dealer
    h.last = LastAction(LastActionKind.DEAL, cfg.dealer)
    h.after_deal()


def flip_indicator(h: HandEngine) -> None:
    """翻百搭 after the deal's 补花 (RULES-presets §13.B.9): the wall turns the indicator up from
    the replacement end; a call that fails is made again (the wall answers a repeat with the
    same flip) and nothing changes before it returns."""
    turned, remaining = h.wall.flip_indicator(h.hand_id)
    h.flipped = list(turned)
    h.remaining = remaining
    h.wild_kind = h.tile_set.wild_kind_for(turned[-1])
    h.emit_event(
        WildFlipped(
            indicator=turned[-1],
            wild=h.wild_kind,
            set_aside=tuple(turned[:-1]),
            tiles_left=remaining,
            hand_id=h.hand_id,
            hand_number=h.number,
        )
    )


def replacement_rounds(
    h: HandEngine, seat: int, flowers: list[int], number: int | None = None
) -> tuple[list[Round], int, int | None]:
    """补花 for the ``flowers`` ``seat`` shows: replacement draws from the tail, numbered on
    from ``number`` (default: the wall calls made so far), in rounds (a replacement that is a
    flower is replaced in the next). Nothing changes here; the caller applies the rounds
    (:func:`expose_flowers`) once all were drawn. Returns the rounds, the last number, and,
    when the drawable tiles ran out before every flower was replaced, the tiles left then
    (else None)."""
    number = h.wall_calls if number is None else number
    remaining = h.remaining
    reserved = h.reserved_tiles
    rounds: list[Round] = []
    while flowers:
        replacements: list[int] = []
        for _ in flowers:
            if remaining <= reserved:  # nothing drawable
                return rounds, number, remaining
            number += 1
            d = h.wall.draw_replacement(h.hand_id, seat, number)
            remaining = d.remaining
            replacements.append(d.tile)
        rounds.append((flowers, replacements, remaining))
        flowers = [k for k in replacements if h.is_bonus(k)]
    return rounds, number, None


def expose_flowers(h: HandEngine, seat: int, rounds: list[Round], draw: str) -> None:
    """Apply 补花 rounds drawn by :func:`replacement_rounds`: each round's flowers are shown,
    its replacements that are not flowers join the hand."""
    s = h.seats[seat]
    for flowers, replacements, remaining in rounds:
        s.flowers.extend(flowers)
        for k in replacements:
            if not h.is_bonus(k):
                s.counts[k] += 1
        s.changed()
        h.remaining = remaining
        h.emit_event(
            FlowersExposed(
                seat=seat,
                flowers=tuple(sorted(flowers)),
                replacements=tuple(replacements),
                draw=draw,
                tiles_left=h.remaining,
                hand_id=h.hand_id,
                hand_number=h.number,
            )
        )


def expose_flowers_drawn(h: HandEngine, seat: int, flower: int, replacement: bool) -> None:
    """A flower drawn in play is shown (the caller draws its replacement next)."""
    h.emit_event(
        FlowersExposed(
            seat=seat,
            flowers=(flower,),
            replacements=(),
            draw="replacement" if replacement else "live",
            tiles_left=h.remaining,
            hand_id=h.hand_id,
            hand_number=h.number,
        )
    )
