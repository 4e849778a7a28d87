"""Checks of a 百搭 win before anything is settled (INVALID_ARGUMENT naming the problem).

On top of the checks every model makes (:mod:`services.scoring.domain.validate`): a self-draw
is the only win (no discard, no 抢杠, no 八花齐); every tile belongs to the table's set
(:class:`shared.tile_set.TileSet`: 1a-4a and 1j only where the options have them, dragons
only as bonus tiles when ``dragons_are_flowers``); bonus tiles are exposed, never held; melds
are natural (no 百搭, no tile of the flipped wild kind); the flipped indicator is given
exactly when the table flips one, and is a playing tile no hand holds four of; 14 tiles;
the ``visible`` tiles are playing tiles no hand holds a fifth copy of with them.

The 百搭 of a hand are the 1j tiles (``wildcards = "dedicated"``) or the tiles of the wild
kind (``"flipped"``), winning tile included.
"""

from __future__ import annotations

from dataclasses import dataclass

from services.scoring.domain.baida.rules import BaidaRules
from services.scoring.domain.model import WinInput, WinKind, WinnerHand
from services.scoring.domain.validate import (
    check_claimed_melds,
    check_win_request,
    check_win_tile_kind,
)
from shared import tiles as T
from shared.errors import InvalidArgument
from shared.hand.input import check_copies, check_flowers, counts_and_wildcards, held_counts
from shared.tile_set import check_indicator_copies, flipped_wild_kind, visible_counts


@dataclass(frozen=True, slots=True)
class BaidaChecked:
    """A winner that passed: natural counts with the winning tile, 百搭 held (winning tile
    included), the wild kind of a flipped table (None with dedicated 百搭), and with
    ``wildcard_fifth_copy`` false the 34 counts of what the winner sees outside the hand (the
    ``visible`` tiles and the indicator; None otherwise)."""

    hand: WinnerHand
    counts: list[int]
    jokers: int
    wild_kind: int | None
    visible: list[int] | None = None


def wild_kind_of(w: WinInput, rules: BaidaRules) -> int | None:
    return flipped_wild_kind(rules.tiles, w.wild_indicator, rules.name)


def check_baida_win(w: WinInput, rules: BaidaRules) -> list[BaidaChecked]:
    check_win_request(w, needs_dice=False)
    if w.win is not WinKind.SELF_DRAW:
        raise InvalidArgument(
            f"ruleset {rules.name} wins by self-draw only (RULES-presets §13.B.4), not "
            f"{w.win.value}",
            field="win",
        )
    wild = wild_kind_of(w, rules)
    return [_check_winner(w, h, rules, wild) for h in w.winners]


def _check_winner(w: WinInput, h: WinnerHand, rules: BaidaRules, wild: int | None) -> BaidaChecked:
    ts = rules.tiles
    who = f"seat {h.seat}"
    for i, k in enumerate(h.concealed):
        ts.check_tiles((k,), f"{who} concealed tiles")
        if not ts.is_hand_kind(k):
            raise InvalidArgument(
                f"{who} concealed tiles[{i}] is {T.format_tile(k)}, a bonus tile: bonus tiles "
                "are exposed and replaced, never held",
                field="concealed",
                tile=T.format_tile(k),
            )
    check_claimed_melds(h, who)
    for m in h.melds:
        kinds = set(m.tiles)
        if any(not ts.is_hand_kind(k) or T.is_wildcard(k) or k == wild for k in kinds):
            raise InvalidArgument(
                f"{who}: {m.kind.label} {T.format_tiles(m.tiles)}: declared melds are natural "
                "playing tiles only (no 百搭, no bonus tile)",
                field="melds",
            )
    ts.check_tiles(h.flowers, f"{who} flowers")
    check_flowers(h.flowers, f"{who} flowers", dragons=ts.dragons_bonus, extras=ts.extras)
    check_win_tile_kind(h.win_tile, who)
    if not ts.is_hand_kind(h.win_tile):
        raise InvalidArgument(
            f"{who}: {T.format_tile(h.win_tile)} completes no hand (a bonus tile is replaced)",
            field="win_tile",
        )
    counts, jokers = counts_and_wildcards((*h.concealed, h.win_tile), f"{who} concealed tiles")
    size = sum(counts) + jokers + 3 * len(h.melds)
    if size != 14:
        raise InvalidArgument(
            f"{who} has {len(h.concealed)} concealed tiles + the winning tile and "
            f"{len(h.melds)} melds: {size} tiles in all (a kong counts as 3); a winning hand "
            "has 14",
            field="concealed",
        )
    check_copies(counts, h.melds, who)
    seen = visible_counts(ts, (*w.visible, *_indicator(w)), held_counts(counts, h.melds))
    if jokers > T.COPIES:
        raise InvalidArgument(
            f"{who} holds {jokers} 百搭; the set has {T.COPIES}", field="concealed"
        )
    if wild is not None:
        assert w.wild_indicator is not None  # wild_kind_of requires it
        check_indicator_copies(counts, h.melds, w.wild_indicator, who)
        jokers = counts[wild]
        counts[wild] = 0
    return BaidaChecked(h, counts, jokers, wild, None if ts.wildcard_fifth_copy else seen)


def _indicator(w: WinInput) -> tuple[int, ...]:
    """The flipped indicator, face up aside: one of the tiles every player sees."""
    return () if w.wild_indicator is None else (w.wild_indicator,)
