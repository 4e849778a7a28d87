"""The tile set a ruleset plays with (RULES §1, RULES-presets §13.0, §13.B.1, §13.B.9).

``table.tile_set = "standard"`` is the 144 tiles of RULES §1. ``"baida"`` (shanghai-baida) adds
the options of ``[baida_tiles]``: four 百搭 ``1j`` (``wildcards = "dedicated"``; ``"flipped"``
has none, a wild kind is turned up per hand instead), the extra bonus tiles 老鼠 财神 猫 聚宝盆
``1a``-``4a`` (``extra_bonus_tiles``), and 白 发 中 as bonus tiles (``dragons_are_flowers``).

A kind outside a table's set is refused wherever a request names one for that table, with
:class:`~shared.errors.InvalidArgument` naming the field (:meth:`TileSet.check_tiles`).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from shared import tiles as T
from shared.errors import InvalidArgument
from shared.melds import Meld
from shared.ruleset import Ruleset


@dataclass(frozen=True)
class TileSet:
    """Which kinds exist, which are bonus tiles (exposed and replaced, 补花) and which are 百搭."""

    name: str = "standard"  # standard | baida
    extras: bool = False  # 1a-4a in the set
    dedicated_wildcards: bool = False  # 1j ×4 in the set
    flipped_wildcard: bool = False  # 翻百搭: a wild kind turned up per hand (§13.B.9)
    flipped_same: bool = False  # the indicator's own kind is wild (else the next kind)
    dragons_bonus: bool = False  # 白 发 中 are bonus tiles
    wildcard_discard: bool = True
    wildcard_fifth_copy: bool = True

    @property
    def has_wildcards(self) -> bool:
        return self.dedicated_wildcards or self.flipped_wildcard

    def tiles(self) -> list[int]:
        """The set's tiles in canonical order (the shuffle's starting order)."""
        return T.canonical_set(self.extras, self.dedicated_wildcards)

    @property
    def size(self) -> int:
        return len(self.tiles())

    def has_kind(self, k: int) -> bool:
        """Whether the set holds tiles of kind ``k``."""
        if T.is_extra(k):
            return self.extras
        if T.is_wildcard(k):
            return self.dedicated_wildcards
        return T.is_valid_kind(k)

    def is_bonus(self, k: int) -> bool:
        """A bonus tile (花) of this set: exposed and replaced, never held."""
        return T.is_bonus(k) or (self.dragons_bonus and T.is_dragon(k))

    def is_hand_kind(self, k: int) -> bool:
        """A kind that may be held, discarded or melded (a playing kind that is no bonus
        tile, or 1j)."""
        if T.is_wildcard(k):
            return self.dedicated_wildcards
        return T.is_playing(k) and not (self.dragons_bonus and T.is_dragon(k))

    def check_tiles(self, tiles: Iterable[int], field: str) -> None:
        """InvalidArgument naming ``field`` for the first tile this set does not have."""
        for i, k in enumerate(tiles):
            if not self.has_kind(k):
                name = T.format_tile(k) if T.is_valid_kind(k) else repr(k)
                raise InvalidArgument(
                    f"{field}[{i}] is {name}, which is not a tile of the {self.name} set "
                    f"(1a-4a and 1j exist only in shanghai-baida)",
                    field=f"{field}[{i}]",
                    tile=name,
                )

    def next_kind(self, k: int) -> int:
        """The kind after ``k`` for the flipped 百搭 (§13.B.9): 1→2→…→9→1 in a suit,
        东→南→西→北→东, 白→发→中→白."""
        if T.is_suited(k):
            base = k - k % 9
            return base + (k - base + 1) % 9
        if T.is_wind(k):
            return T.EAST + (k - T.EAST + 1) % 4
        if T.is_dragon(k):
            return T.WHITE + (k - T.WHITE + 1) % 3
        raise ValueError(f"{T.format_tile(k)} has no next kind")

    def wild_kind_for(self, indicator: int) -> int:
        """The wild kind a flipped indicator makes (``flipped_wild`` next or same)."""
        return indicator if self.flipped_same else self.next_kind(indicator)

    def indicator_for(self, wild: int) -> int:
        """The indicator tile that made the wild kind ``wild`` (the inverse of
        :meth:`wild_kind_for`: each cycle of :meth:`next_kind` is a ring)."""
        if self.flipped_same:
            return wild
        k = wild
        while (after := self.next_kind(k)) != wild:
            k = after
        return k


STANDARD = TileSet()


def tile_set_of(ruleset: Ruleset) -> TileSet:
    """The :class:`TileSet` of a ruleset (one object per distinct set of options)."""
    table = ruleset.sections.get("table")
    name = table.get("tile_set", "standard") if table is not None else "standard"
    if name != "baida":
        return STANDARD
    opts = ruleset.sections.get("baida_tiles")
    values = opts.as_dict() if opts is not None else {}
    return _baida(
        bool(values.get("extra_bonus_tiles", True)),
        str(values.get("wildcards", "dedicated")),
        str(values.get("flipped_wild", "next")),
        bool(values.get("dragons_are_flowers", True)),
        bool(values.get("wildcard_discard", True)),
        bool(values.get("wildcard_fifth_copy", True)),
    )


@functools.lru_cache(maxsize=64)
def _baida(
    extras: bool, wildcards: str, flipped_wild: str, dragons: bool, discard: bool, fifth: bool
) -> TileSet:
    return TileSet(
        name="baida",
        extras=extras,
        dedicated_wildcards=wildcards == "dedicated",
        flipped_wildcard=wildcards == "flipped",
        flipped_same=flipped_wild == "same",
        dragons_bonus=dragons,
        wildcard_discard=discard,
        wildcard_fifth_copy=fifth,
    )


def check_hand_kinds(
    ts: TileSet, counts: Sequence[int], melds: Sequence[Meld], jokers: int, what: str = "hand"
) -> None:
    """InvalidArgument naming ``what`` when a hand holds what the set makes a bonus tile (a
    dragon of the 百搭 set) or 百搭 it has none of (RULES-presets §13.0, §13.B.3: 百搭 are held
    concealed, never in a meld; at most four)."""
    if ts.dragons_bonus:
        for k in T.DRAGONS:
            if counts[k] or any(k in m.tiles for m in melds):
                raise InvalidArgument(
                    f"{what} holds {T.format_tile(k)}: dragons are bonus tiles in this set, "
                    "exposed and replaced, never held",
                    field=what,
                    tile=T.format_tile(k),
                )
    if jokers and not ts.dedicated_wildcards:
        raise InvalidArgument(
            f"{what} holds 1j: this ruleset's set has no 百搭 tiles", field=what, tile="1j"
        )
    if jokers > T.COPIES:
        raise InvalidArgument(f"{what} holds {jokers} 百搭; the set has {T.COPIES}", field=what)


def flipped_wild_kind(ts: TileSet, indicator: int | None, ruleset_name: str) -> int | None:
    """The wild kind a flipped 百搭 indicator makes (§13.B.9), or None on a table that flips
    none. InvalidArgument naming ``wild_indicator`` when an indicator is given to a table that
    flips none, is missing on one that does, or is no playing tile of the set (a bonus tile
    turned up is put aside and the next one turned)."""
    if not ts.flipped_wildcard:
        if indicator is not None:
            shown = T.format_tile(indicator) if T.is_valid_kind(indicator) else repr(indicator)
            raise InvalidArgument(
                f"ruleset {ruleset_name} has no flipped 百搭, but a wild indicator {shown} is "
                "given",
                field="wild_indicator",
            )
        return None
    if indicator is None:
        raise InvalidArgument(
            f"ruleset {ruleset_name} flips a 百搭 indicator (翻百搭): wild_indicator is required",
            field="wild_indicator",
        )
    if not T.is_valid_kind(indicator) or not T.is_playing(indicator) or ts.is_bonus(indicator):
        shown = T.format_tile(indicator) if T.is_valid_kind(indicator) else repr(indicator)
        raise InvalidArgument(
            f"wild indicator {shown} is not a playing tile (a bonus tile turned up is put "
            "aside and the next one turned)",
            field="wild_indicator",
        )
    return ts.wild_kind_for(indicator)


def check_indicator_copies(
    counts: Sequence[int], melds: Sequence[Meld], indicator: int, who: str
) -> None:
    """The flipped indicator is out of play (§13.B.9): InvalidArgument when the hand (natural
    ``counts`` before the wild kind is taken out, and ``melds``) holds four of its kind."""
    held = counts[indicator] + sum(m.tiles.count(indicator) for m in melds)
    if held > T.COPIES - 1:
        raise InvalidArgument(
            f"{who} holds {held} {T.format_tile(indicator)}, but the indicator, one of them, is "
            "out of play",
            field="concealed",
        )


def visible_counts(
    ts: TileSet, visible: Sequence[int], held: Sequence[int], field: str = "visible"
) -> list[int] | None:
    """The 34 counts of the ``visible`` tiles (those a hand's owner sees outside it: the
    discards, the other seats' exposed melds, the flipped indicator), which the rule that a
    百搭 may not be a fifth copy reads (``wildcard_fifth_copy`` false, §13.B.3); None when
    none are given. InvalidArgument naming ``field`` for a tile that is no playing tile of the
    set, or a kind seen and ``held`` (the hand's copies, melds included) more than four
    times."""
    if not visible:
        return None
    out = [0] * T.NUM_KINDS
    for i, k in enumerate(visible):
        if not T.is_valid_kind(k) or not ts.is_hand_kind(k):
            shown = T.format_tile(k) if T.is_valid_kind(k) else repr(k)
            raise InvalidArgument(
                f"{field}[{i}] is {shown}, which is no playing tile of the {ts.name} set (a "
                "bonus tile is no kind a 百搭 stands for: leave it out)",
                field=f"{field}[{i}]",
            )
        if k < T.NUM_KINDS:  # a discarded 1j stands for nothing
            out[k] += 1
    for k, n in enumerate(out):
        if n and n + held[k] > T.COPIES:
            raise InvalidArgument(
                f"{field} holds {n} {T.format_tile(k)} and the hand {held[k]}: more than the "
                f"{T.COPIES} copies of the set",
                field=field,
                tile=T.format_tile(k),
            )
    return out
