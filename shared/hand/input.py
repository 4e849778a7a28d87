"""Checks of hand input from outside (requests, files): tile kinds, copies, tile counts.

Every failure is :class:`shared.errors.InvalidArgument` with a message naming the problem, so a
service answers INVALID_ARGUMENT and never crashes on a malformed hand.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Final

from shared import tiles as T
from shared.errors import InvalidArgument
from shared.melds import Meld, MeldError

WAITING_SIZE: Final = 13  # tiles of a hand between turns (a kong counts as 3)
COMPLETE_SIZE: Final = 14  # tiles of a hand that may win or must discard


def counts_from_tiles(tiles: Iterable[int], what: str = "concealed tiles") -> list[int]:
    """34-count array of natural hand tiles; a bonus tile, a 百搭 or an unknown kind among them
    is an error (:func:`counts_and_wildcards` accepts 百搭)."""
    counts, wildcards = counts_and_wildcards(tiles, what)
    if wildcards:
        raise InvalidArgument(
            f"百搭 1j among the {what}: only a preset with 百搭 wildcards (shanghai-baida) "
            f"holds them",
            field=what,
            tile="1j",
        )
    return counts


def counts_and_wildcards(
    tiles: Iterable[int], what: str = "concealed tiles"
) -> tuple[list[int], int]:
    """(34-count array, number of 百搭 ``1j``) of hand tiles; a bonus tile (flower, 1a-4a) or
    an unknown kind among them is an error. Whether the table has 百搭 at all is the caller's
    to check (:meth:`shared.tile_set.TileSet.check_tiles`)."""
    counts = [0] * T.NUM_KINDS
    wildcards = 0
    for k in tiles:
        if not T.is_valid_kind(k):
            raise InvalidArgument(f"{what}: {k!r} is not a tile", field=what)
        if T.is_wildcard(k):
            wildcards += 1
            continue
        if T.is_bonus(k):
            role = "flower" if T.is_flower(k) else "bonus tile"
            raise InvalidArgument(
                f"{role} {T.format_tile(k)} among the {what}: {role}s are exposed, not held",
                field=what,
                tile=T.format_tile(k),
            )
        counts[k] += 1
    return counts, wildcards


def check_counts_array(counts: Sequence[int], what: str = "concealed tiles") -> None:
    if len(counts) != T.NUM_KINDS:
        raise InvalidArgument(f"{what}: a count array has {T.NUM_KINDS} entries, not {len(counts)}")
    for k, n in enumerate(counts):
        if not isinstance(n, int) or n < 0:
            raise InvalidArgument(f"{what}: count {n!r} of {T.format_tile(k)} is not a count")


def check_melds(melds: Sequence[Meld], what: str = "melds") -> None:
    if len(melds) > 4:
        raise InvalidArgument(f"{what}: {len(melds)} melds; a hand has at most 4")
    for m in melds:
        try:
            m.validate()
        except MeldError as exc:
            raise InvalidArgument(f"{what}: {exc}", field=what) from None


def held_counts(counts: Sequence[int], melds: Sequence[Meld]) -> list[int]:
    """Copies of each kind in the concealed tiles and the melds together."""
    held = list(counts)
    for m in melds:
        for k in m.tiles:
            held[k] += 1
    return held


def check_copies(counts: Sequence[int], melds: Sequence[Meld], what: str = "hand") -> None:
    """No kind more than four times in the concealed tiles and melds together."""
    for k, n in enumerate(held_counts(counts, melds)):
        if n > T.COPIES:
            raise InvalidArgument(
                f"{what} holds {n} copies of {T.format_tile(k)}; there are only {T.COPIES}",
                tile=T.format_tile(k),
            )


def hand_size(counts: Sequence[int], melds: Sequence[Meld]) -> int:
    """Tiles of the hand with every meld (kongs too) counted as 3."""
    return sum(counts) + 3 * len(melds)


def check_hand(
    counts: Sequence[int],
    melds: Sequence[Meld],
    sizes: tuple[int, ...] = (WAITING_SIZE, COMPLETE_SIZE),
    what: str = "hand",
    jokers: int = 0,
) -> int:
    """Validate a hand (counts, melds, copies, size in ``sizes``; ``jokers`` 百搭 held beside
    the natural counts count towards the size); returns its size."""
    check_counts_array(counts, f"{what} concealed tiles")
    check_melds(melds, f"{what} melds")
    check_copies(counts, melds, what)
    size = hand_size(counts, melds) + jokers
    if size not in sizes:
        want = " or ".join(str(s) for s in sizes)
        held = sum(counts) + jokers
        raise InvalidArgument(
            f"{what} has {held} concealed tiles and {len(melds)} melds, {size} tiles in "
            f"all (a kong counts as 3); expected {want}",
            tiles=size,
        )
    return size


def check_flowers(
    flowers: Sequence[int], what: str = "flowers", dragons: bool = False, extras: bool = False
) -> None:
    """Exposed bonus tiles: flowers 1f-8f once each; with ``extras`` also 1a-4a once each, and
    with ``dragons`` (shanghai-baida, §13.B.1) the dragons 5z-7z up to four times each."""
    seen = [0] * T.NUM_TILE_KINDS
    for f in flowers:
        ok = T.is_valid_kind(f) and (
            T.is_flower(f) or (extras and T.is_extra(f)) or (dragons and T.is_dragon(f))
        )
        if not ok:
            name = T.format_tile(f) if T.is_valid_kind(f) else repr(f)
            role = "a bonus tile of this set" if dragons or extras else "a flower"
            raise InvalidArgument(f"{what}: {name} is not {role}", field=what)
        seen[f] += 1
        if seen[f] > T.copies_of(f):
            message = (
                f"{what}: {T.format_tile(f)} {seen[f]} times; the set has {T.copies_of(f)}"
                if T.is_dragon(f)
                else f"{what}: flower {T.format_tile(f)} twice; each flower exists once"
            )
            raise InvalidArgument(message, field=what)
