"""Checks of hand input from outside (requests, files): tile kinds, copies, tile counts.

Every failure is :class:`shared.errors.InvalidArgument` with a message naming the problem, so a
service answers INVALID_ARGUMENT and never crashes on a malformed hand.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from shared import tiles as T
from shared.errors import InvalidArgument
from shared.melds import Meld, MeldError

WAITING_SIZE = 13  # tiles of a hand between turns (a kong counts as 3)
COMPLETE_SIZE = 14  # tiles of a hand that may win or must discard


def counts_from_tiles(tiles: Iterable[int], what: str = "concealed tiles") -> list[int]:
    """34-count array of hand tiles; a flower or an unknown kind among them is an error."""
    counts = [0] * T.NUM_KINDS
    for k in tiles:
        if not T.is_valid_kind(k):
            raise InvalidArgument(f"{what}: {k!r} is not a tile", field=what)
        if T.is_flower(k):
            raise InvalidArgument(
                f"flower {T.format_tile(k)} among the {what}: flowers are exposed, not held",
                field=what,
                tile=T.format_tile(k),
            )
        counts[k] += 1
    return counts


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
) -> int:
    """Validate a hand (counts, melds, copies, size in ``sizes``); returns its size."""
    check_counts_array(counts, f"{what} concealed tiles")
    check_melds(melds, f"{what} melds")
    check_copies(counts, melds, what)
    size = hand_size(counts, melds)
    if size not in sizes:
        want = " or ".join(str(s) for s in sizes)
        raise InvalidArgument(
            f"{what} has {sum(counts)} concealed tiles and {len(melds)} melds, {size} tiles in "
            f"all (a kong counts as 3); expected {want}",
            tiles=size,
        )
    return size


def check_flowers(flowers: Sequence[int], what: str = "flowers") -> None:
    seen: set[int] = set()
    for f in flowers:
        if not T.is_valid_kind(f) or not T.is_flower(f):
            name = T.format_tile(f) if T.is_valid_kind(f) else repr(f)
            raise InvalidArgument(f"{what}: {name} is not a flower", field=what)
        if f in seen:
            raise InvalidArgument(
                f"{what}: flower {T.format_tile(f)} twice; each flower exists once", field=what
            )
        seen.add(f)
