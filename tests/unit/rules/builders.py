"""Small builders of table snapshots for the rules tests (mpsz text in, dataclasses out)."""

from __future__ import annotations

from collections.abc import Sequence

from shared.hand.input import held_counts
from shared.melds import Meld
from shared.ruleset import Ruleset, load_ruleset
from shared.table import LastAction, LastActionKind, SeatState, TableSnapshot, check_snapshot
from shared.tiles import NUM_KINDS, parse, parse_counts


def tile(text: str) -> int:
    (k,) = parse(text)
    return k


def seat(
    concealed: str,
    melds: Sequence[Meld | tuple] = (),
    *,
    ready: bool = False,
    missed: str = "",
    flowers: str = "",
    discards: str = "",
) -> SeatState:
    ms = tuple(m if isinstance(m, Meld) else Meld.of(*m) for m in melds)
    return SeatState(
        concealed=tuple(parse_counts(concealed)),
        melds=ms,
        flowers=tuple(parse(flowers)),
        discards=tuple(parse(discards)),
        declared_ready=ready,
        missed_wins=frozenset(parse(missed)),
    )


def table(
    seats: dict[int, SeatState],
    last: tuple[str, int, str | None],
    *,
    ruleset: Ruleset | str = "shanghai-qiaoma",
    dealer: int = 0,
    wall: int = 50,
    first_go_around: bool = False,
    avoid: str = "",
) -> TableSnapshot:
    """A checked snapshot. ``seats`` holds the seats under test; every other seat gets a
    13-tile filler hand of suited tiles left over, avoiding the last tile, its neighbours and
    the kinds in ``avoid``, so a filler can never win, pong, kong or chow it.
    ``last`` is (kind label, seat, tile)."""
    rs = load_ruleset(ruleset) if isinstance(ruleset, str) else ruleset
    kind, by, t = last
    left = [4] * NUM_KINDS
    for st in seats.values():
        for k, n in enumerate(held_counts(st.concealed, st.melds)):
            left[k] -= n
    banned = set(parse(avoid))
    if t is not None:
        k0 = tile(t)
        banned.update(k for k in range(k0 - 2, k0 + 3) if 0 <= k < NUM_KINDS)
        if kind == "discard":
            left[k0] -= 1
    order = [k for k in range(27) if k not in banned]
    all_seats = []
    for s in range(4):
        if s in seats:
            all_seats.append(seats[s])
            continue
        counts = [0] * NUM_KINDS
        need = 13
        for k in order:
            take = min(left[k], need)
            counts[k] += take
            left[k] -= take
            need -= take
            if not need:
                break
        assert not need, "not enough tiles left for a filler hand"
        all_seats.append(SeatState(concealed=tuple(counts)))
    lk = LastActionKind[kind.upper()]
    snap = TableSnapshot(
        ruleset=rs,
        seats=tuple(all_seats),  # type: ignore[arg-type]
        dealer=dealer,
        turn=by,
        wall_remaining=wall,
        last=LastAction(lk, by, None if t is None else tile(t)),
        first_go_around=first_go_around,
    )
    check_snapshot(snap)
    return snap
