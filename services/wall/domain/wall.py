"""The physical wall of RULES.md §3: stacks of two in a ring, opened by the dice.

Positions and stacks: a set of ``N`` tiles (144; 152 or 148 in the 百搭 set, RULES-presets
§13.B.2) stands as ``S = N / 2`` stacks. Wall position ``p`` (0 … N − 1, the order
:mod:`services.wall.domain.shuffle` lays tiles out in) is stack ``p // 2``, the top tile when
``p`` is even and the bottom tile when odd. Seat ``w``'s wall is stacks
``⌊w·S/4⌋ … ⌊(w+1)·S/4⌋ − 1`` (18 each of 72; 19 each of 76; 18, 19, 18, 19 of 74).

Opening (开牌): with dice sum ``s``, counting the dealer as 1 in turn order, the wall of seat
``(dealer + s - 1) mod 4`` is opened; ``s`` of its stacks are skipped and the *break stack*
``⌊opened·S/4⌋ + s`` (mod ``S``) is where live draws start.

* **Live draws** (摸牌) go forward around the ring from the break stack: top, then bottom, then
  the next stack.
* **Replacement draws** (补张, after a kong or a flower) come from the other end: the stack just
  before the break stack, top then bottom, then the stack before that.
* Where the two ends meet, a draw takes whatever tile of that stack is still standing (the top
  one first).

The wall holds ``reserved`` tiles back (ruleset ``table.reserved_tiles``): once only those are
left, every draw fails with :class:`WallExhausted` and the hand is drawn (流局/荒).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from services.wall.domain.errors import WallExhausted
from shared import tiles as T
from shared.errors import FailedPrecondition, InvalidArgument

SEATS: Final = 4
STACKS: Final = 72  # of the standard 144-tile set
STACKS_PER_SEAT: Final = 18
DEALER_TILES: Final = 14
OTHER_TILES: Final = 13
DEALT_TILES: Final = DEALER_TILES + 3 * OTHER_TILES  # 53
_FULL_SET: Final = T.canonical_set()


def opened_seat(dealer: int, dice: Sequence[int]) -> int:
    """The seat whose wall the dice open: the dealer counts as 1, then turn order."""
    return (dealer + sum(dice) - 1) % SEATS


def seat_wall_start(seat: int, stacks: int = STACKS) -> int:
    """The first stack of ``seat``'s wall in a ring of ``stacks``: ``⌊seat·stacks/4⌋``."""
    return seat * stacks // SEATS


def break_stack(dealer: int, dice: Sequence[int], stacks: int = STACKS) -> int:
    """The stack live draws start from: ``sum(dice)`` stacks into the opened seat's wall."""
    return (seat_wall_start(opened_seat(dealer, dice), stacks) + sum(dice)) % stacks


def deal_order(dealer: int) -> list[tuple[int, int]]:
    """The deal as ``(seat, tiles taken)`` turns, in physical order (起牌): three rounds of four
    tiles each starting with the dealer, then one tile each, then the dealer's extra tile."""
    seats = [(dealer + i) % SEATS for i in range(SEATS)]
    return [(s, 4) for _ in range(3) for s in seats] + [(s, 1) for s in seats] + [(dealer, 1)]


class Wall:
    """The standing wall: ``tiles[p]`` is the tile at position ``p``; ``taken[p]`` says whether
    it has left the wall (empty or None: none taken yet). Mutated by draws and swaps;
    serialised by the hand record; compared by its fields.

    A plain class rather than a dataclass: compiled (mypyc), a dataclass keeps the Python
    ``__init__`` dataclasses writes, and mypyc cannot build one with a ``bytearray`` field."""

    def __init__(
        self,
        tiles: list[int],
        start: int,  # the break stack
        reserved: int = 0,
        taken: bytearray | None = None,
        live_drawn: int = 0,
        replacements_drawn: int = 0,
    ) -> None:
        # After a 换牌 a position may hold a buried tile, so only the shape is checked here;
        # :meth:`build` checks that a fresh wall is the full set.
        size = len(tiles)
        if size < 2 * SEATS or size % 2 or min(tiles) < 0 or max(tiles) >= T.NUM_TILE_KINDS:
            raise ValueError("a wall has an even number of positions, each holding a tile kind")
        if not taken:
            taken = bytearray(size)
        if len(taken) != size:
            raise ValueError(f"a wall of {size} tiles has {size} taken flags")
        self.tiles = tiles
        self.start = start
        self.reserved = reserved
        self.taken: bytearray = taken
        self.live_drawn = live_drawn
        self.replacements_drawn = replacements_drawn
        self.size = size
        self.stacks = size // 2
        if not 0 <= self.start < self.stacks:
            raise ValueError(f"break stack {self.start} out of range 0-{self.stacks - 1}")
        if not 0 <= self.reserved < size:
            raise ValueError(f"reserved tiles {self.reserved} out of range 0-{size - 1}")

    def _fields(self) -> tuple[list[int], int, int, bytearray, int, int]:
        return (
            self.tiles,
            self.start,
            self.reserved,
            self.taken,
            self.live_drawn,
            self.replacements_drawn,
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Wall):
            return NotImplemented
        return self._fields() == other._fields()

    def __repr__(self) -> str:
        return (
            f"Wall(tiles={self.tiles!r}, start={self.start!r}, reserved={self.reserved!r}, "
            f"taken={self.taken!r}, live_drawn={self.live_drawn!r}, "
            f"replacements_drawn={self.replacements_drawn!r})"
        )

    @classmethod
    def build(
        cls,
        tiles: Sequence[int],
        dealer: int,
        dice: Sequence[int],
        reserved: int = 0,
        tile_set: Sequence[int] = _FULL_SET,
    ) -> Wall:
        """A fresh wall from shuffled tiles (a permutation of ``tile_set``, in canonical
        order; default the 144 of RULES §1), opened by the dealer's dice."""
        if sorted(tiles) != list(tile_set):
            raise ValueError(f"a wall holds exactly the {len(tile_set)} tiles of the set")
        return cls(list(tiles), break_stack(dealer, dice, len(tiles) // 2), reserved)

    # --- counts ---------------------------------------------------------------------------
    @property
    def remaining(self) -> int:
        """Tiles still standing."""
        return self.size - self.live_drawn - self.replacements_drawn

    @property
    def drawable(self) -> int:
        """Tiles that may still be drawn: remaining minus the reserved tiles."""
        return max(self.remaining - self.reserved, 0)

    # --- geometry --------------------------------------------------------------------------
    def stack_at(self, k: int) -> int:
        """The ``k``-th stack in live order (``k = 0`` is the break stack)."""
        return (self.start + k) % self.stacks

    def live_order(self) -> list[int]:
        """Every position in the order live draws would take them from a full wall."""
        return [2 * self.stack_at(k) + level for k in range(self.stacks) for level in (0, 1)]

    def standing(self) -> list[int]:
        """Positions still standing, in live order."""
        return [p for p in self.live_order() if not self.taken[p]]

    # --- draws -----------------------------------------------------------------------------
    def _take_from(self, ks: range) -> int:
        taken, start, stacks = self.taken, self.start, self.stacks
        for k in ks:
            p = 2 * ((start + k) % stacks)  # the stack's top (stack_at inlined: once a draw)
            if not taken[p]:
                taken[p] = 1
                return p
            p += 1
            if not taken[p]:
                taken[p] = 1
                return p
        raise AssertionError("no standing tile although the counts say otherwise")

    def _check_drawable(self, what: str) -> None:
        if self.drawable <= 0:
            raise WallExhausted(
                f"the wall is exhausted: no {what} left "
                f"({self.remaining} standing, {self.reserved} reserved)",
                remaining=self.remaining,
            )

    def draw_live(self) -> tuple[int, int]:
        """摸牌: the next tile from the front; returns ``(tile, position)``."""
        if self.size - self.live_drawn - self.replacements_drawn <= self.reserved:
            self._check_drawable("live draw")  # raises: nothing drawable
        # The first live_drawn positions in live order are gone, so start the scan there.
        p = self._take_from(range(self.live_drawn // 2, self.stacks))
        self.live_drawn += 1
        return self.tiles[p], p

    def draw_replacement(self) -> tuple[int, int]:
        """补张: the next tile from the tail (top, then bottom, then the stack before)."""
        if self.size - self.live_drawn - self.replacements_drawn <= self.reserved:
            self._check_drawable("replacement draw")  # raises: nothing drawable
        p = self._take_from(range(self.stacks - 1 - self.replacements_drawn // 2, -1, -1))
        self.replacements_drawn += 1
        return self.tiles[p], p

    def deal(self, dealer: int) -> list[list[int]]:
        """起牌: the starting hands by seat (dealer 14, others 13), each in the order taken."""
        if self.live_drawn or self.replacements_drawn:
            raise FailedPrecondition("the wall was drawn from before the deal", reason="DEALT")
        hands: list[list[int]] = [[] for _ in range(SEATS)]
        for seat, count in deal_order(dealer):
            for _ in range(count):
                hands[seat].append(self.draw_live()[0])
        return hands

    # --- 换牌 -----------------------------------------------------------------------------
    def swap(self, buried: Sequence[int], uniform) -> list[int]:
        """换牌 tile swap: each buried tile (in the order given) replaces the tile at a random
        standing position, chosen by ``uniform(n)`` among the standing positions in live order
        not yet used by this swap; returns the tiles taken out, in the same order."""
        candidates = self.standing()
        if len(buried) > len(candidates):
            raise WallExhausted(f"cannot swap {len(buried)} tiles: {len(candidates)} standing")
        taken: list[int] = []
        for tile in buried:
            if not T.is_valid_kind(tile):
                raise InvalidArgument(f"not a tile kind: {tile!r}")
            p = candidates.pop(uniform(len(candidates)))
            taken.append(self.tiles[p])
            self.tiles[p] = tile
        return taken
