"""Conversion of ``mahjong.common.v1`` messages and enums to and from domain values.

Conventions (RULES.md §1, common.proto): a proto ``Tile`` value is the tile kind + 1 and a proto
``Seat`` value is the seat + 1, so 0 always means "not set". Every ``*_from_proto`` validates and
raises :class:`~shared.errors.InvalidArgument` whose message names the field (``field`` argument,
e.g. ``"discard.tile"``) and whose details carry it, so callers learn exactly what was wrong.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from mahjong.common.v1 import common_pb2

from shared import tiles as T
from shared.errors import InvalidArgument
from shared.hand.hand_type import HandType
from shared.melds import Meld, MeldError, MeldKind
from shared.ruleset import Ruleset, RulesetError, resolve_ruleset
from shared.table import NUM_SEATS

# Win kinds (RULES.md §6) by the labels the vectors and the CLI use; the value is the proto enum.
WIN_KINDS: dict[str, int] = {
    "self_draw": common_pb2.WIN_KIND_SELF_DRAW,  # 自摸
    "discard": common_pb2.WIN_KIND_DISCARD,  # 冲 / 点炮
    "rob_kong": common_pb2.WIN_KIND_ROB_KONG,  # 抢杠
    "eight_flowers": common_pb2.WIN_KIND_EIGHT_FLOWERS,  # 八花齐
}
_WIN_KIND_LABELS = {v: k for k, v in WIN_KINDS.items()}


# --- tiles -----------------------------------------------------------------------------------
def tile_to_proto(kind: int) -> int:
    """Domain tile kind (0-46) → proto ``Tile`` value (1-47)."""
    if not T.is_valid_kind(kind):
        raise ValueError(f"not a tile kind: {kind!r}")
    return kind + 1


def tile_from_proto(value: int, field: str = "tile") -> int:
    """Proto ``Tile`` value → kind; :class:`InvalidArgument` for unset or out of range."""
    if value == common_pb2.TILE_UNSPECIFIED:
        raise InvalidArgument(f"{field} is not set", field=field)
    if not 1 <= value <= T.NUM_TILE_KINDS:
        raise InvalidArgument(
            f"{field} has no tile value {value}; tiles are 1-{T.NUM_TILE_KINDS}", field=field
        )
    return value - 1


def tiles_to_proto(kinds: Iterable[int]) -> list[int]:
    return [tile_to_proto(k) for k in kinds]


def tiles_from_proto(values: Iterable[int], field: str = "tiles") -> list[int]:
    """Each element converted with :func:`tile_from_proto`; the error names ``field[i]``."""
    return [tile_from_proto(v, f"{field}[{i}]") for i, v in enumerate(values)]


def tile_from_proto_optional(value: int, field: str = "tile") -> int | None:
    """Like :func:`tile_from_proto` but ``TILE_UNSPECIFIED`` gives None."""
    return None if value == common_pb2.TILE_UNSPECIFIED else tile_from_proto(value, field)


# --- seats -----------------------------------------------------------------------------------
def seat_to_proto(seat: int | None) -> int:
    """Seat 0-3 → proto ``Seat`` value 1-4; None → ``SEAT_UNSPECIFIED``."""
    if seat is None:
        return common_pb2.SEAT_UNSPECIFIED
    if not isinstance(seat, int) or not 0 <= seat < NUM_SEATS:
        raise ValueError(f"seat {seat!r} out of range 0-3")
    return seat + 1


def seat_from_proto(value: int, field: str = "seat") -> int:
    """Proto ``Seat`` value → seat 0-3; :class:`InvalidArgument` for unset or out of range."""
    if value == common_pb2.SEAT_UNSPECIFIED:
        raise InvalidArgument(f"{field} is not set", field=field)
    if not 1 <= value <= NUM_SEATS:
        raise InvalidArgument(
            f"{field} value {value} out of range (SEAT_0..SEAT_3 = 1-4)", field=field
        )
    return value - 1


def seat_from_proto_optional(value: int, field: str = "seat") -> int | None:
    """Like :func:`seat_from_proto` but ``SEAT_UNSPECIFIED`` gives None."""
    return None if value == common_pb2.SEAT_UNSPECIFIED else seat_from_proto(value, field)


# --- melds -----------------------------------------------------------------------------------
def meld_to_proto(
    meld: Meld, claimed_tile: int | None = None, *, hide_concealed: bool = False
) -> common_pb2.Meld:
    """A domain meld as a proto ``Meld``. ``claimed_tile`` is the tile taken from the discard;
    with ``hide_concealed`` a concealed kong is sent without its tiles (another seat's view)."""
    pb = common_pb2.Meld(kind=int(meld.kind), from_seat=seat_to_proto(meld.from_seat))
    if not (hide_concealed and meld.kind is MeldKind.CONCEALED_KONG):
        pb.tiles.extend(tiles_to_proto(meld.tiles))
    if claimed_tile is not None:
        pb.claimed_tile = tile_to_proto(claimed_tile)
    return pb


def meld_from_proto(pb: common_pb2.Meld, field: str = "meld") -> Meld:
    """A proto ``Meld`` as a validated domain meld (shape checked by :meth:`Meld.validate`).

    The claimed tile, when set, must be one of the meld's tiles; read it with
    :func:`claimed_tile_from_proto`.
    """
    if pb.kind == common_pb2.MELD_KIND_UNSPECIFIED:
        raise InvalidArgument(f"{field}.kind is not set", field=f"{field}.kind")
    try:
        kind = MeldKind(pb.kind)
    except ValueError:
        raise InvalidArgument(
            f"{field}.kind has no meld kind value {pb.kind}", field=f"{field}.kind"
        ) from None
    tiles = tiles_from_proto(pb.tiles, f"{field}.tiles")
    from_seat = seat_from_proto_optional(pb.from_seat, f"{field}.from_seat")
    meld = Meld(kind, tuple(sorted(tiles)), from_seat)
    try:
        meld.validate()
    except MeldError as exc:
        raise InvalidArgument(f"{field}: {exc}", field=field) from None
    if kind is not MeldKind.CONCEALED_KONG and from_seat is None:
        raise InvalidArgument(
            f"{field}.from_seat is not set: a {kind.label} is claimed from a seat",
            field=f"{field}.from_seat",
        )
    claimed = claimed_tile_from_proto(pb, field)
    if claimed is not None and claimed not in meld.tiles:
        raise InvalidArgument(
            f"{field}.claimed_tile {T.format_tile(claimed)} is not in "
            f"{kind.label} {T.format_tiles(meld.tiles)}",
            field=f"{field}.claimed_tile",
        )
    return meld


def claimed_tile_from_proto(pb: common_pb2.Meld, field: str = "meld") -> int | None:
    return tile_from_proto_optional(pb.claimed_tile, f"{field}.claimed_tile")


def melds_to_proto(melds: Iterable[Meld]) -> list[common_pb2.Meld]:
    return [meld_to_proto(m) for m in melds]


def melds_from_proto(pbs: Sequence[common_pb2.Meld], field: str = "melds") -> list[Meld]:
    return [meld_from_proto(pb, f"{field}[{i}]") for i, pb in enumerate(pbs)]


# --- hand types and win kinds ----------------------------------------------------------------
def hand_type_to_proto(hand: HandType | None) -> int:
    """Domain :class:`HandType` (values equal the proto's) → proto; None → UNSPECIFIED."""
    return common_pb2.HAND_TYPE_UNSPECIFIED if hand is None else int(HandType(hand))


def hand_type_from_proto(value: int, field: str = "hand_type") -> HandType:
    if value == common_pb2.HAND_TYPE_UNSPECIFIED:
        raise InvalidArgument(f"{field} is not set", field=field)
    try:
        return HandType(value)
    except ValueError:
        raise InvalidArgument(f"{field} has no hand type value {value}", field=field) from None


def win_kind_to_proto(kind: str | None) -> int:
    """Win kind label (``self_draw``, ``discard``, ``rob_kong``, ``eight_flowers``) → proto."""
    if kind is None:
        return common_pb2.WIN_KIND_UNSPECIFIED
    try:
        return WIN_KINDS[kind]
    except KeyError:
        raise ValueError(
            f"unknown win kind {kind!r}; expected one of {', '.join(WIN_KINDS)}"
        ) from None


def win_kind_from_proto(value: int, field: str = "win_kind") -> str:
    """Proto ``WinKind`` → its label; :class:`InvalidArgument` for unset or unknown."""
    if value == common_pb2.WIN_KIND_UNSPECIFIED:
        raise InvalidArgument(f"{field} is not set", field=field)
    try:
        return _WIN_KIND_LABELS[value]
    except KeyError:
        raise InvalidArgument(f"{field} has no win kind value {value}", field=field) from None


# --- dice ------------------------------------------------------------------------------------
def dice_to_proto(dice: Sequence[int]) -> common_pb2.Dice:
    first, second = dice
    return common_pb2.Dice(first=first, second=second)


def dice_from_proto(pb: common_pb2.Dice, field: str = "dice") -> tuple[int, int]:
    for name in ("first", "second"):
        value = getattr(pb, name)
        if not 1 <= value <= 6:
            raise InvalidArgument(
                f"{field}.{name} is {value}; a die shows 1-6", field=f"{field}.{name}"
            )
    return pb.first, pb.second


# --- rulesets --------------------------------------------------------------------------------
def ruleset_to_ref(name: str, options: Mapping[str, object] | None = None) -> common_pb2.RulesetRef:
    """A ruleset reference; option values are sent as strings (``True`` → ``"true"``)."""
    opts = {
        k: (str(v).lower() if isinstance(v, bool) else str(v)) for k, v in (options or {}).items()
    }
    return common_pb2.RulesetRef(name=name, options=opts)


def ruleset_from_ref(ref: common_pb2.RulesetRef | None, field: str = "ruleset") -> Ruleset:
    """The ruleset a request names (empty name = the default preset) with its per-table option
    overrides applied; :class:`InvalidArgument` for an unknown preset or a bad option."""
    name = ref.name if ref is not None else ""
    options = dict(ref.options) if ref is not None else {}
    try:
        return resolve_ruleset(name, options)
    except RulesetError as exc:
        raise InvalidArgument(f"{field}: {exc}", field=field) from None
