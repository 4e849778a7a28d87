"""What one seat knows of the table (its own view): the input of every bot decision.

A bot sees exactly what a client of that seat sees through the gateway: its own concealed tiles,
melds and flowers, and the public facts of every seat (discards, melds with concealed kongs
hidden, flowers, 敲 flags) plus the tiles left in the wall. It never sees another seat's
concealed tiles or the wall, so the same bot can play in-process (托管, bot seats) and as a
remote client.
"""

from __future__ import annotations

from dataclasses import dataclass

from shared.melds import Meld, MeldKind
from shared.ruleset import Ruleset
from shared.table import NUM_SEATS, TableSnapshot
from shared.tiles import COPIES, NUM_KINDS

_HIDDEN_KONG = Meld(MeldKind.CONCEALED_KONG, ())


@dataclass(frozen=True, slots=True)
class SeatView:
    """A seat's own view. ``concealed`` is a 34-count array; ``discards``, ``melds_by_seat``,
    ``flowers_by_seat`` and ``ready`` are indexed by seat; another seat's concealed kong appears
    as a meld with no tiles."""

    seat: int
    ruleset: Ruleset
    concealed: tuple[int, ...]
    melds: tuple[Meld, ...] = ()
    flowers: tuple[int, ...] = ()
    declared_ready: bool = False  # 敲
    discards: tuple[tuple[int, ...], ...] = ((),) * NUM_SEATS
    melds_by_seat: tuple[tuple[Meld, ...], ...] = ((),) * NUM_SEATS
    ready: tuple[bool, ...] = (False,) * NUM_SEATS
    tiles_left: int = 0
    dealer: int = 0
    wildcards: int = 0  # 百搭 1j held beside ``concealed`` (shanghai-baida)
    wild_kind: int | None = None  # 翻百搭: the kind that is 百搭 this hand

    @classmethod
    def from_snapshot(
        cls,
        snapshot: TableSnapshot,
        seat: int,
        discards: tuple[tuple[int, ...], ...] | None = None,
    ) -> SeatView:
        """The view of ``seat`` taken from the rules' table snapshot (in-process play), with
        every other seat's concealed kongs hidden as they are from a remote client.
        ``discards``: every seat's discards as a client sees them, claimed ones included
        (``HandEngine.discard_piles``; the snapshot holds only those still in front)."""
        own = snapshot.seats[seat]
        melds_by_seat = tuple(
            s.melds if i == seat else tuple(_public_meld(m) for m in s.melds)
            for i, s in enumerate(snapshot.seats)
        )
        return cls(
            seat=seat,
            ruleset=snapshot.ruleset,
            concealed=own.concealed,
            melds=own.melds,
            flowers=own.flowers,
            declared_ready=own.declared_ready,
            discards=discards or tuple(s.discards for s in snapshot.seats),
            melds_by_seat=melds_by_seat,
            ready=tuple(s.declared_ready for s in snapshot.seats),
            tiles_left=snapshot.wall_remaining,
            dealer=snapshot.dealer,
            wildcards=own.wildcards,
            wild_kind=snapshot.wild_kind,
        )


def _public_meld(meld: Meld) -> Meld:
    return _HIDDEN_KONG if meld.kind is MeldKind.CONCEALED_KONG else meld


def unseen_counts(view: SeatView) -> list[int]:
    """Copies of each kind this seat has not seen anywhere (own hand, any meld, any discard):
    the tiles that may still be drawn or discarded by others."""
    left = [COPIES - c for c in view.concealed]
    for melds in view.melds_by_seat:
        for m in melds:
            for k in m.tiles:
                left[k] -= 1
    for discards in view.discards:
        for k in discards:
            if k < NUM_KINDS:
                left[k] -= 1
    # A claimed discard stays listed among its discarder's discards and also sits in the meld.
    for melds in view.melds_by_seat:
        for m in melds:
            if m.from_seat is None or not m.tiles:
                continue
            if m.kind is MeldKind.CHOW:
                pile = view.discards[m.from_seat]
                claimed = next((k for k in m.tiles if k in pile), None)
                if claimed is not None:
                    left[claimed] += 1
            else:
                left[m.tiles[0]] += 1
    return [n if n > 0 else 0 for n in left]
