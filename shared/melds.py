"""Melds (面子 declared sets): chow, pong and the three kinds of kong (RULES.md §4)."""

from __future__ import annotations

import enum
import itertools
from dataclasses import dataclass

from shared import tiles as T


class MeldKind(enum.IntEnum):
    """Values match the protobuf ``MeldKind`` enum (0 is UNSPECIFIED)."""

    CHOW = 1  # 吃 run of three from the 上家's discard
    PONG = 2  # 碰 three of a kind from a discard
    EXPOSED_KONG = 3  # 明杠 four of a kind from a discard
    ADDED_KONG = 4  # 上杠/蓄杠 a fourth tile added to an own pong
    CONCEALED_KONG = 5  # 暗杠 four of a kind drawn, kept face down

    @property
    def is_kong(self) -> bool:
        return self in (MeldKind.EXPOSED_KONG, MeldKind.ADDED_KONG, MeldKind.CONCEALED_KONG)

    @property
    def is_exposed(self) -> bool:
        """True for melds that break 门清: chow, pong, exposed and added kong."""
        return self is not MeldKind.CONCEALED_KONG

    @property
    def label(self) -> str:
        """Name used in JSON (vectors) and the CLI: ``chow``, ``added_kong``, …"""
        return self.name.lower()

    @classmethod
    def from_label(cls, label: str) -> MeldKind:
        try:
            return cls[label.upper()]
        except KeyError:
            raise ValueError(
                f"unknown meld kind {label!r}; expected one of " + ", ".join(k.label for k in cls)
            ) from None


class MeldError(ValueError):
    """A meld of an impossible shape."""


@dataclass(frozen=True, slots=True)
class Meld:
    """A declared set. ``tiles`` are kinds in canonical order; ``from_seat`` is the seat whose
    discard was claimed (None for a concealed kong). For an added kong it is the seat the
    original pong was claimed from."""

    kind: MeldKind
    tiles: tuple[int, ...]
    from_seat: int | None = None

    @property
    def first(self) -> int:
        return self.tiles[0]

    @property
    def is_kong(self) -> bool:
        return self.kind.is_kong

    def validate(self) -> None:
        """Raise :class:`MeldError` unless the tiles form this kind of meld."""
        # The common case first: a tuple of exact ints that is one of the kind's shapes (every
        # such tuple the full checks below pass, listed once), claimed from a seat 0-3 (none
        # for a concealed kong). Anything else (a bool or float tile, a list, a bad seat)
        # goes through the full checks, which name the problem.
        t = self.tiles
        kind = self.kind
        seat = self.from_seat
        if type(t) is tuple and type(kind) is MeldKind and t in _SHAPES[kind]:
            for k in t:
                if type(k) is not int:
                    break
            else:
                if seat is None:
                    return
                if type(seat) is int and kind is not MeldKind.CONCEALED_KONG and 0 <= seat <= 3:
                    return
        self._validate_fully()

    def _validate_fully(self) -> None:
        t = self.tiles
        name = self.kind.label
        if any(not T.is_valid_kind(k) or T.is_flower(k) for k in t):
            raise MeldError(f"{name} {T.format_tiles(t)} contains a flower or a bad tile")
        if self.kind is MeldKind.CHOW:
            if len(t) != 3:
                raise MeldError(f"chow needs 3 tiles, got {len(t)}")
            if not all(T.is_suited(k) for k in t):
                raise MeldError(f"chow {T.format_tiles(t)} is not of one suit: honors cannot chow")
            a, b, c = sorted(t)
            if not (b == a + 1 and c == b + 1 and T.suit_of(a) == T.suit_of(c)):
                raise MeldError(f"chow {T.format_tiles(t)} is not a run of three in one suit")
        else:
            want = 4 if self.kind.is_kong else 3
            if len(t) != want:
                raise MeldError(f"{name} needs {want} tiles, got {len(t)}")
            if len(set(t)) != 1:
                raise MeldError(f"{name} {T.format_tiles(t)} is not of identical tiles")
        if self.kind is MeldKind.CONCEALED_KONG:
            if self.from_seat is not None:
                raise MeldError("a concealed kong is not claimed from anyone")
        elif self.from_seat is not None and not 0 <= self.from_seat <= 3:
            raise MeldError(f"meld from seat {self.from_seat}: seats are 0-3")

    @classmethod
    def of(
        cls,
        kind: MeldKind | str,
        tiles: str | tuple[int, ...] | list[int],
        from_seat: int | None = None,
    ) -> Meld:
        """Build and validate a meld; ``tiles`` may be mpsz text."""
        k = MeldKind.from_label(kind) if isinstance(kind, str) else MeldKind(kind)
        ts = T.parse(tiles) if isinstance(tiles, str) else list(tiles)
        meld = cls(k, tuple(sorted(ts)), from_seat)
        meld.validate()
        return meld

    def to_json(self) -> dict:
        d: dict = {"kind": self.kind.label, "tiles": T.format_tiles(self.tiles)}
        if self.from_seat is not None:
            d["from"] = self.from_seat
        return d

    @classmethod
    def from_json(cls, d: dict) -> Meld:
        """From the vector format ``{kind, tiles, from}``."""
        return cls.of(d["kind"], d["tiles"], d.get("from"))


def _shapes() -> dict[MeldKind, frozenset[tuple[int, ...]]]:
    """Every tuple of tile kinds each kind of meld may hold, as :meth:`Meld.validate`'s full
    checks decide (tests/unit/shared/test_melds.py compares them): a run of three in one suit
    in any order for a chow; three, or four for a kong, of one kind that is no flower."""
    runs = frozenset(
        tiles
        for a in range(T.NUM_TILE_KINDS - 2)
        if T.is_suited(a) and T.is_suited(a + 2) and T.suit_of(a) == T.suit_of(a + 2)
        for tiles in itertools.permutations((a, a + 1, a + 2))
    )
    kinds = [k for k in range(T.NUM_TILE_KINDS) if not T.is_flower(k)]
    return {
        kind: runs
        if kind is MeldKind.CHOW
        else frozenset((k,) * (4 if kind.is_kong else 3) for k in kinds)
        for kind in MeldKind
    }


_SHAPES = _shapes()
