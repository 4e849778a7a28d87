"""Conversion of ``mahjong.rules.v1`` messages to and from :mod:`shared.table` and the hand
types, for the rules servicer and its clients (the gateway).

``*_from_proto`` validates and raises :class:`~shared.errors.InvalidArgument` naming the field:
a flower among concealed tiles, an impossible meld, a seat out of range, an unknown ruleset, a
table that cannot exist (:func:`shared.table.check_snapshot`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from mahjong.common.v1 import common_pb2
from mahjong.rules.v1 import rules_pb2

from infra.convert.common import (
    hand_type_to_proto,
    melds_from_proto,
    melds_to_proto,
    ruleset_from_ref,
    ruleset_to_ref,
    seat_from_proto,
    seat_from_proto_optional,
    seat_to_proto,
    tile_from_proto,
    tile_from_proto_optional,
    tile_to_proto,
    tiles_from_proto,
    tiles_to_proto,
)
from shared import table as TB
from shared.errors import InvalidArgument
from shared.hand import HandType
from shared.hand.decomposition import Decomposition
from shared.hand.input import check_flowers, counts_and_wildcards, counts_from_tiles
from shared.melds import Meld
from shared.ruleset import Ruleset, load_ruleset
from shared.tile_set import STANDARD, TileSet, check_hand_kinds, tile_set_of
from shared.tiles import from_counts

_LAST_KIND_FROM_PROTO = {int(k): k for k in TB.LastActionKind}


# --- hands -----------------------------------------------------------------------------------
def hand_from_proto(
    pb: rules_pb2.Hand, field: str = "hand"
) -> tuple[list[int], list[Meld], list[int]]:
    """(concealed counts, melds, flowers) of a ``Hand``: tiles, melds and flowers checked one
    by one; copies and the hand's size are the domain's to check (:func:`check_hand`)."""
    concealed = counts_from_tiles(
        tiles_from_proto(pb.concealed, f"{field}.concealed"), f"{field}.concealed"
    )
    melds = melds_from_proto(pb.melds, f"{field}.melds")
    flowers = tiles_from_proto(pb.flowers, f"{field}.flowers")
    check_flowers(flowers, f"{field}.flowers")
    return concealed, melds, flowers


def ruleset_hand_from_proto(
    pb: rules_pb2.Hand, ruleset: Ruleset, field: str = "hand"
) -> tuple[list[int], int, list[Meld], list[int]]:
    """(natural concealed counts, 百搭 held, melds, flowers) of a ``Hand`` judged under
    ``ruleset``: a tile its set does not have (1a-4a or 1j outside shanghai-baida), a bonus tile
    held (a dragon in the 百搭 set) or a bonus tile of another set among the flowers is
    INVALID_ARGUMENT naming the field."""
    ts = tile_set_of(ruleset)
    counts, jokers, melds, flowers = _hand_parts(pb, ts, field)
    check_hand_kinds(ts, counts, melds, jokers, field)
    return counts, jokers, melds, flowers


def _hand_parts(
    pb: rules_pb2.Hand | rules_pb2.SeatState, ts: TileSet, field: str
) -> tuple[list[int], int, list[Meld], list[int]]:
    """Concealed counts and 百搭, melds and flowers of a hand or a seat, each tile checked
    against the tile set ``ts``."""
    tiles = tiles_from_proto(pb.concealed, f"{field}.concealed")
    ts.check_tiles(tiles, f"{field}.concealed")
    counts, jokers = counts_and_wildcards(tiles, f"{field}.concealed")
    melds = melds_from_proto(pb.melds, f"{field}.melds")
    flowers = tiles_from_proto(pb.flowers, f"{field}.flowers")
    ts.check_tiles(flowers, f"{field}.flowers")
    check_flowers(flowers, f"{field}.flowers", dragons=ts.dragons_bonus, extras=ts.extras)
    return counts, jokers, melds, flowers


def hand_to_proto(
    counts: Sequence[int],
    melds: Sequence[Meld] = (),
    flowers: Sequence[int] = (),
    jokers: int = 0,
) -> rules_pb2.Hand:
    return rules_pb2.Hand(
        concealed=tiles_to_proto(from_counts(counts, jokers)),
        melds=melds_to_proto(melds),
        flowers=tiles_to_proto(flowers),
    )


def decomposition_to_proto(d: Decomposition) -> rules_pb2.Decomposition:
    return rules_pb2.Decomposition(
        pair=tile_to_proto(d.pair),
        sets=[
            rules_pb2.HandSet(
                kind=int(s.kind), tiles=tiles_to_proto(s.tiles), concealed=s.concealed
            )
            for s in d.sets
        ],
    )


def evaluation_to_proto(
    hand: HandType | None, eight_flowers: bool, decompositions: Sequence[Decomposition]
) -> rules_pb2.EvaluateHandResponse:
    return rules_pb2.EvaluateHandResponse(
        winning=hand is not None,
        hand_type=hand_type_to_proto(hand),
        eight_flowers=eight_flowers,
        decompositions=[decomposition_to_proto(d) for d in decompositions],
    )


# --- table snapshot --------------------------------------------------------------------------
def seat_state_from_proto(
    pb: rules_pb2.SeatState, field: str, ruleset: Ruleset | None = None
) -> TB.SeatState:
    """A seat; with ``ruleset``, a tile its set lacks (1a-4a, 1j outside shanghai-baida) is
    INVALID_ARGUMENT naming the field, and the seat's 百搭 are counted apart."""
    ts = tile_set_of(ruleset) if ruleset is not None else STANDARD
    counts, jokers, melds, flowers = _hand_parts(pb, ts, field)
    discards = tiles_from_proto(pb.discards, f"{field}.discards")
    ts.check_tiles(discards, f"{field}.discards")
    counts_and_wildcards(discards, f"{field}.discards")
    missed = tiles_from_proto(pb.missed_wins, f"{field}.missed_wins")
    counts_from_tiles(missed, f"{field}.missed_wins")
    return TB.SeatState(
        concealed=tuple(counts),
        melds=tuple(melds),
        flowers=tuple(flowers),
        discards=tuple(discards),
        declared_ready=pb.declared_ready,
        missed_wins=frozenset(missed),
        has_drawn=pb.has_drawn,
        wildcards=jokers,
    )


def seat_state_to_proto(st: TB.SeatState) -> rules_pb2.SeatState:
    return rules_pb2.SeatState(
        concealed=tiles_to_proto(from_counts(st.concealed, st.wildcards)),
        melds=melds_to_proto(st.melds),
        flowers=tiles_to_proto(st.flowers),
        discards=tiles_to_proto(st.discards),
        declared_ready=st.declared_ready,
        missed_wins=tiles_to_proto(sorted(st.missed_wins)),
        has_drawn=st.has_drawn,
    )


def last_action_from_proto(pb: rules_pb2.LastAction, field: str) -> TB.LastAction:
    kind = _LAST_KIND_FROM_PROTO.get(pb.kind)
    if kind is None:
        what = "is not set" if pb.kind == 0 else f"has no value {pb.kind}"
        raise InvalidArgument(f"{field}.kind {what}", field=f"{field}.kind")
    seat = seat_from_proto(pb.seat, f"{field}.seat")
    if kind is TB.LastActionKind.DEAL:
        tile = tile_from_proto_optional(pb.tile, f"{field}.tile")
    else:
        tile = tile_from_proto(pb.tile, f"{field}.tile")
    return TB.LastAction(kind, seat, tile)


def last_action_to_proto(last: TB.LastAction) -> rules_pb2.LastAction:
    return rules_pb2.LastAction(
        kind=int(last.kind),
        seat=seat_to_proto(last.seat),
        tile=0 if last.tile is None else tile_to_proto(last.tile),
    )


def snapshot_from_proto(
    pb: rules_pb2.TableSnapshot, field: str = "table", ruleset: Ruleset | None = None
) -> TB.TableSnapshot:
    """A checked :class:`shared.table.TableSnapshot` (InvalidArgument naming what is wrong)."""
    if len(pb.seats) != TB.NUM_SEATS:
        raise InvalidArgument(
            f"{field}.seats has {len(pb.seats)} seats; a table has {TB.NUM_SEATS}",
            field=f"{field}.seats",
        )
    ruleset = ruleset or ruleset_from_ref(pb.ruleset, f"{field}.ruleset")
    seats = tuple(
        seat_state_from_proto(s, f"{field}.seats[{i}]", ruleset) for i, s in enumerate(pb.seats)
    )
    if not pb.HasField("last_action"):
        raise InvalidArgument(f"{field}.last_action is not set", field=f"{field}.last_action")
    if pb.wall_remaining < 0:
        raise InvalidArgument(
            f"{field}.wall_remaining {pb.wall_remaining} is negative",
            field=f"{field}.wall_remaining",
        )
    counts = [[0] * TB.NUM_SEATS for _ in range(TB.NUM_SEATS)]
    for i, c in enumerate(pb.claim_counts):
        where = f"{field}.claim_counts[{i}]"
        a = seat_from_proto(c.claimer, f"{where}.claimer")
        b = seat_from_proto(c.from_seat, f"{where}.from_seat")
        if c.count < 0:
            raise InvalidArgument(f"{where}.count {c.count} is negative", field=f"{where}.count")
        counts[a][b] += c.count
    snap = TB.TableSnapshot(
        ruleset=ruleset,
        seats=seats,  # type: ignore[arg-type]
        dealer=seat_from_proto(pb.dealer, f"{field}.dealer"),
        turn=seat_from_proto(pb.turn, f"{field}.turn"),
        wall_remaining=pb.wall_remaining,
        last=last_action_from_proto(pb.last_action, f"{field}.last_action"),
        first_go_around=pb.first_go_around,
        claim_counts=tuple(tuple(row) for row in counts),
        wild_kind=tile_from_proto_optional(pb.wild_kind, f"{field}.wild_kind"),
    )
    TB.check_snapshot(snap)
    return snap


_REFS: dict[Ruleset, common_pb2.RulesetRef] = {}


def ruleset_ref_of(ruleset: Ruleset) -> common_pb2.RulesetRef:
    """The ``RulesetRef`` that resolves to ``ruleset``: its preset name plus every option that
    differs from the preset, so a resolved ruleset travels without its table's original
    reference (cached per ruleset object)."""
    ref = _REFS.get(ruleset)
    if ref is None:
        preset = load_ruleset(ruleset.name).as_dict()
        overrides = {
            f"{section}.{option}": value
            for section, values in ruleset.as_dict().items()
            for option, value in values.items()
            if preset[section][option] != value
        }
        if len(_REFS) > 256:
            _REFS.clear()
        ref = _REFS[ruleset] = ruleset_to_ref(ruleset.name, overrides)
    return ref


def snapshot_to_proto(
    snap: TB.TableSnapshot, ruleset_ref: common_pb2.RulesetRef | None = None
) -> rules_pb2.TableSnapshot:
    """``ruleset_ref`` defaults to :func:`ruleset_ref_of` the snapshot's ruleset."""
    return rules_pb2.TableSnapshot(
        ruleset=ruleset_ref if ruleset_ref is not None else ruleset_ref_of(snap.ruleset),
        seats=[seat_state_to_proto(s) for s in snap.seats],
        dealer=seat_to_proto(snap.dealer),
        turn=seat_to_proto(snap.turn),
        wall_remaining=snap.wall_remaining,
        last_action=last_action_to_proto(snap.last),
        first_go_around=snap.first_go_around,
        claim_counts=[
            rules_pb2.ClaimCount(claimer=seat_to_proto(a), from_seat=seat_to_proto(b), count=n)
            for a, row in enumerate(snap.claim_counts)
            for b, n in enumerate(row)
            if n
        ],
        wild_kind=0 if snap.wild_kind is None else tile_to_proto(snap.wild_kind),
    )


# --- actions ---------------------------------------------------------------------------------
def action_from_proto(pb: rules_pb2.Action, field: str = "action") -> TB.Action:
    which = pb.WhichOneof("action")
    if which is None:
        raise InvalidArgument(f"{field} is not set", field=field)
    inner = getattr(pb, which)
    where = f"{field}.{which}"
    if which == "discard":
        return TB.Discard(tile_from_proto(inner.tile, f"{where}.tile"))
    if which == "declare_ready":
        return TB.DeclareReady(tile_from_proto(inner.discard, f"{where}.discard"))
    if which == "chow":
        return TB.Chow(tile_from_proto(inner.low, f"{where}.low"))
    if which == "pong":
        return TB.Pong()
    if which == "exposed_kong":
        return TB.ExposedKong()
    if which == "added_kong":
        return TB.AddedKong(tile_from_proto(inner.tile, f"{where}.tile"))
    if which == "concealed_kong":
        return TB.ConcealedKong(tile_from_proto(inner.tile, f"{where}.tile"))
    if which == "win":
        return TB.Win(eight_flowers=inner.eight_flowers)
    return TB.Pass()


def action_to_proto(action: TB.Action) -> rules_pb2.Action:
    if isinstance(action, TB.Discard):
        return rules_pb2.Action(discard=rules_pb2.DiscardAction(tile=tile_to_proto(action.tile)))
    if isinstance(action, TB.DeclareReady):
        return rules_pb2.Action(
            declare_ready=rules_pb2.DeclareReadyAction(discard=tile_to_proto(action.discard))
        )
    if isinstance(action, TB.Chow):
        return rules_pb2.Action(chow=rules_pb2.ChowAction(low=tile_to_proto(action.low)))
    if isinstance(action, TB.Pong):
        return rules_pb2.Action(pong=rules_pb2.PongAction())
    if isinstance(action, TB.ExposedKong):
        return rules_pb2.Action(exposed_kong=rules_pb2.ExposedKongAction())
    if isinstance(action, TB.AddedKong):
        return rules_pb2.Action(
            added_kong=rules_pb2.AddedKongAction(tile=tile_to_proto(action.tile))
        )
    if isinstance(action, TB.ConcealedKong):
        return rules_pb2.Action(
            concealed_kong=rules_pb2.ConcealedKongAction(tile=tile_to_proto(action.tile))
        )
    if isinstance(action, TB.Win):
        return rules_pb2.Action(win=rules_pb2.WinAction(eight_flowers=action.eight_flowers))
    if isinstance(action, TB.Pass):
        return rules_pb2.Action(pass_claim=rules_pb2.PassAction())
    raise ValueError(f"not an action: {action!r}")


def claims_from_proto(
    pbs: Sequence[rules_pb2.SeatClaim], field: str = "claims"
) -> dict[int, TB.Action]:
    out: dict[int, TB.Action] = {}
    for i, c in enumerate(pbs):
        seat = seat_from_proto(c.seat, f"{field}[{i}].seat")
        if seat in out:
            raise InvalidArgument(
                f"{field}[{i}]: seat {seat} claims twice", field=f"{field}[{i}].seat"
            )
        out[seat] = action_from_proto(c.action, f"{field}[{i}].action")
    return out


def claims_to_proto(claims: Mapping[int, TB.Action]) -> list[rules_pb2.SeatClaim]:
    return [
        rules_pb2.SeatClaim(seat=seat_to_proto(s), action=action_to_proto(a))
        for s, a in sorted(claims.items())
    ]


# --- options ---------------------------------------------------------------------------------
def win_option_to_proto(w: TB.WinOption) -> rules_pb2.WinOption:
    return rules_pb2.WinOption(
        hand_type=hand_type_to_proto(w.hand),
        win_kind=int(w.kind),
        win_tile=0 if w.win_tile is None else tile_to_proto(w.win_tile),
        replacement=w.replacement,
        big_hanging=w.big_hanging,
        concealed_hand=w.concealed_hand,
        heavenly=w.heavenly,
        earthly=w.earthly,
    )


def win_option_from_proto(pb: rules_pb2.WinOption, field: str = "win") -> TB.WinOption:
    try:
        hand = HandType(pb.hand_type)
        kind = TB.WinKind(pb.win_kind)
    except ValueError:
        raise InvalidArgument(f"{field}: hand_type or win_kind not set", field=field) from None
    return TB.WinOption(
        hand=hand,
        kind=kind,
        win_tile=tile_from_proto_optional(pb.win_tile, f"{field}.win_tile"),
        replacement=pb.replacement,
        big_hanging=pb.big_hanging,
        concealed_hand=pb.concealed_hand,
        heavenly=pb.heavenly,
        earthly=pb.earthly,
    )


def own_turn_options_to_proto(o: TB.OwnTurnOptions) -> rules_pb2.OwnTurnOptions:
    return rules_pb2.OwnTurnOptions(
        seat=seat_to_proto(o.seat),
        discards=tiles_to_proto(o.discards),
        ready_discards=tiles_to_proto(o.ready_discards),
        concealed_kongs=tiles_to_proto(o.concealed_kongs),
        added_kongs=tiles_to_proto(o.added_kongs),
        wins=[win_option_to_proto(w) for w in o.wins],
    )


def own_turn_options_from_proto(pb: rules_pb2.OwnTurnOptions) -> TB.OwnTurnOptions:
    return TB.OwnTurnOptions(
        seat=seat_from_proto(pb.seat, "options.seat"),
        discards=tuple(tiles_from_proto(pb.discards, "options.discards")),
        ready_discards=tuple(tiles_from_proto(pb.ready_discards, "options.ready_discards")),
        concealed_kongs=tuple(tiles_from_proto(pb.concealed_kongs, "options.concealed_kongs")),
        added_kongs=tuple(tiles_from_proto(pb.added_kongs, "options.added_kongs")),
        wins=tuple(win_option_from_proto(w, f"options.wins[{i}]") for i, w in enumerate(pb.wins)),
    )


def claim_options_to_proto(o: TB.ClaimOptions) -> rules_pb2.ClaimOptions:
    pb = rules_pb2.ClaimOptions(
        seat=seat_to_proto(o.seat),
        pong=o.pong,
        exposed_kong=o.exposed_kong,
        chows=tiles_to_proto(o.chows),
        missed_win=o.missed_win,
    )
    if o.win is not None:
        pb.win.CopyFrom(win_option_to_proto(o.win))
    return pb


def claim_options_from_proto(pb: rules_pb2.ClaimOptions, field: str = "options") -> TB.ClaimOptions:
    return TB.ClaimOptions(
        seat=seat_from_proto(pb.seat, f"{field}.seat"),
        win=win_option_from_proto(pb.win, f"{field}.win") if pb.HasField("win") else None,
        pong=pb.pong,
        exposed_kong=pb.exposed_kong,
        chows=tuple(tiles_from_proto(pb.chows, f"{field}.chows")),
        missed_win=pb.missed_win,
    )


def resolution_to_proto(r: TB.ClaimResolution) -> rules_pb2.ResolveClaimsResponse:
    pb = rules_pb2.ResolveClaimsResponse(
        tile=tile_to_proto(r.tile),
        winners=[
            rules_pb2.Winner(seat=seat_to_proto(s), win=win_option_to_proto(r.win_options[s]))
            for s in r.winners
        ],
        taker=seat_to_proto(r.taker),
        missed_wins=[seat_to_proto(s) for s in r.missed_wins],
    )
    if r.action is not None:
        pb.action.CopyFrom(action_to_proto(r.action))
    return pb


def resolution_from_proto(pb: rules_pb2.ResolveClaimsResponse) -> TB.ClaimResolution:
    winners = tuple(seat_from_proto(w.seat, f"winners[{i}].seat") for i, w in enumerate(pb.winners))
    return TB.ClaimResolution(
        tile=tile_from_proto(pb.tile, "tile"),
        winners=winners,
        win_options={
            s: win_option_from_proto(w.win, f"winners[{i}].win")
            for i, (s, w) in enumerate(zip(winners, pb.winners, strict=True))
        },
        taker=seat_from_proto_optional(pb.taker, "taker"),
        action=action_from_proto(pb.action) if pb.HasField("action") else None,
        missed_wins=tuple(seat_from_proto(s, "missed_wins") for s in pb.missed_wins),
    )
