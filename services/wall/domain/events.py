"""What a hand's wall handed out: the event kinds and :class:`WallEvent`, one entry of the event
log that Reveal discloses and the verifier replays (:class:`~services.wall.domain.record.HandWall`
records them)."""

from __future__ import annotations

import functools
from typing import Any, Final, NamedTuple

from shared import tiles as T

DEAL, DRAW, REPLACEMENT, SWAP, INDICATOR = "deal", "draw", "replacement", "swap", "indicator"
EVENT_KINDS: Final = (DEAL, DRAW, REPLACEMENT, SWAP, INDICATOR)


class WallEvent(NamedTuple):
    """Something the wall handed out. ``sequence`` numbers events from 1; a deal is four events
    (one per seat, dealer first) with ``tiles`` in the order taken; a swap also lists
    ``buried``. (A named tuple: a hand holds ~100 of them, made again whenever it is replayed
    from its stored rows.)"""

    sequence: int
    kind: str
    seat: int
    tiles: tuple[int, ...]
    buried: tuple[int, ...] = ()

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "sequence": self.sequence,
            "kind": self.kind,
            "seat": self.seat,
            "tiles": T.format_tiles(self.tiles, sort=False),
        }
        if self.kind == SWAP:
            d["buried"] = T.format_tiles(self.buried, sort=False)
        return d

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> WallEvent:
        return cls(
            int(d["sequence"]),
            d["kind"],
            int(d["seat"]),
            tuple(T.parse(d["tiles"])),
            tuple(T.parse(d.get("buried", ""))),
        )


# WallEvent from its fields as one tuple: tuple.__new__ directly, without the named tuple's
# Python-level __new__ (every draw records one).
new_event: Final = functools.partial(tuple.__new__, WallEvent)
