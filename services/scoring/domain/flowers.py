"""花 flower points of a winner (RULES §8; seed 001's table for shanghai-classic).

Sources: each flower tile; 底注花 (``flowers.base``, counted in every hand); suited kongs;
wind and dragon pongs and kongs. Three identical honor tiles held in the hand count as a pong
(3个一样的算一刻), the winning tile included and in any hand, 乱风向 too; four held without a
declared kong count as one pong. Suited pongs give nothing. An added kong is an exposed kong.

The points per source come from the ruleset's ``[flowers]`` section, compiled once per
ruleset into a per-kind table (:func:`flower_table`) so counting is a few array look-ups.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from services.scoring.domain.breakdown import Item, Unit, item
from shared import tiles as T
from shared.melds import Meld, MeldKind
from shared.ruleset import Ruleset

PONG, EXPOSED_KONG, CONCEALED_KONG = 0, 1, 2
_SHAPE_OF_MELD = {
    MeldKind.PONG: PONG,
    MeldKind.EXPOSED_KONG: EXPOSED_KONG,
    MeldKind.ADDED_KONG: EXPOSED_KONG,  # an added kong is an exposed kong
    MeldKind.CONCEALED_KONG: CONCEALED_KONG,
}
_SHAPE_WORD = ("pong", "exposed kong", "concealed kong")
# "1f 春", "7z 中": the text of each kind in breakdown details, built once
_KIND_TEXT = tuple(f"{T.format_tile(k)} {T.name_zh(k)}" for k in range(T.NUM_TILE_KINDS))


@dataclass(frozen=True, slots=True)
class FlowerTable:
    """Per kind and shape (pong, exposed kong, concealed kong): (花, breakdown code); a shape
    that gives no 花 (a suited pong) has 0 and no code ("")."""

    by_kind: tuple[tuple[tuple[int, str], ...], ...]
    flower_tile: int
    base: int


def flower_table(ruleset: Ruleset) -> FlowerTable:
    """Compile the ``[flowers]`` section of a ruleset (done once per ruleset, in
    :func:`services.scoring.domain.rules.scoring_rules`)."""
    f = ruleset.flowers
    rows: list[tuple[tuple[int, str], ...]] = []
    for k in range(T.NUM_KINDS):
        if T.is_suited(k):
            rows.append(
                (
                    (0, ""),
                    (f.suited_exposed_kong, "SUITED_EXPOSED_KONG"),
                    (f.suited_concealed_kong, "SUITED_CONCEALED_KONG"),
                )
            )
        else:
            group = "wind" if T.is_wind(k) else "dragon"
            rows.append(
                tuple(
                    (getattr(f, f"{group}_{shape}"), f"{group.upper()}_{shape.upper()}")
                    for shape in ("pong", "exposed_kong", "concealed_kong")
                )
            )
    return FlowerTable(tuple(rows), f.flower_tile, f.base)


def count_flowers(
    counts: Sequence[int],
    melds: Sequence[Meld],
    flower_tiles: Sequence[int],
    table: FlowerTable,
    seat: int | None = None,
) -> tuple[int, list[Item]]:
    """花 of a winning hand: ``counts`` are the concealed tiles *with* the winning tile, ``table``
    the compiled ``[flowers]`` of the ruleset. Returns the total and one breakdown item per
    source."""
    items: list[Item] = []
    total = 0
    if table.base:
        total += table.base
        items.append(item("BASE_FLOWERS", table.base, Unit.HUA, seat, detail="always counted"))
    if table.flower_tile:
        for f in flower_tiles:
            total += table.flower_tile
            items.append(
                item(
                    "FLOWER_TILE",
                    table.flower_tile,
                    Unit.HUA,
                    seat,
                    detail=_KIND_TEXT[f],
                )
            )
    for m in melds:
        shape = _SHAPE_OF_MELD.get(m.kind)
        if shape is None:
            continue  # a chow gives no 花
        hua, code = table.by_kind[m.first][shape]
        if hua:
            total += hua
            items.append(item(code, hua, Unit.HUA, seat, detail=_meld_text(m, _SHAPE_WORD[shape])))
    for k in range(27, T.NUM_KINDS):
        if counts[k] >= 3:  # three (or four undeclared) held honors count as one pong
            hua, code = table.by_kind[k][PONG]
            if hua:
                total += hua
                items.append(
                    item(
                        code,
                        hua,
                        Unit.HUA,
                        seat,
                        detail=f"{counts[k]}× {_KIND_TEXT[k]} held in hand",
                    )
                )
    return total, items


def _meld_text(m: Meld, shape: str) -> str:
    return f"{shape} {len(m.tiles)}× {_KIND_TEXT[m.first]}"
