"""The client's side of the gateway contract: prompts and views into the bots' domain types,
actions into protos (mahjong_client/convert.py)."""

from __future__ import annotations

from mahjong.common.v1 import common_pb2
from mahjong.gateway.v1 import gateway_pb2

from mahjong_client.convert import (
    action_to_proto,
    options_from_prompt,
    view_from_proto,
)
from services.gateway.convert.actions import action_from_proto
from shared.hand.hand_type import HandType
from shared.melds import MeldKind
from shared.table import (
    AddedKong,
    Chow,
    ClaimOptions,
    ConcealedKong,
    DeclareReady,
    Discard,
    ExposedKong,
    OwnTurnOptions,
    Pass,
    Pong,
    Win,
    WinKind,
)
from shared.tiles import parse, parse_counts


def p(text: str) -> list[int]:
    """mpsz → proto tile values."""
    return [k + 1 for k in parse(text)]


def table(concealed: str, *, drawn: str = "", flowers: str = "", prompt=None):
    seats = [
        gateway_pb2.SeatView(seat=i + 1, discards=p("9s") if i == 2 else [], ready=i == 3)
        for i in range(4)
    ]
    seats[0].concealed.extend(p(concealed))
    if drawn:
        seats[0].drawn = p(drawn)[0]
    if flowers:
        seats[0].flowers.extend(p(flowers))
    seats[1].melds.append(common_pb2.Meld(kind=common_pb2.MELD_KIND_CONCEALED_KONG))
    seats[2].melds.append(
        common_pb2.Meld(kind=common_pb2.MELD_KIND_PONG, tiles=p("555z"), from_seat=1)
    )
    view = gateway_pb2.TableView(
        table_id="t",
        viewer=1,
        ruleset=common_pb2.RulesetRef(name="shanghai-qiaoma"),
        seats=seats,
        hand=gateway_pb2.HandView(tiles_left=42, dealer=3),
    )
    if prompt is not None:
        view.prompt.CopyFrom(prompt)
    return view


def own_prompt(**options) -> gateway_pb2.Prompt:
    return gateway_pb2.Prompt(
        seat=1,
        kind=gateway_pb2.PROMPT_KIND_OWN_TURN,
        options=gateway_pb2.Options(**options),
        tile=p("9m")[0],
    )


def test_view_from_proto_reads_the_seat_and_the_public_facts():
    prompt = own_prompt(discards=p("1m"))
    v = view_from_proto(table("123456789m1112z", prompt=prompt))
    assert v.seat == 0 and v.dealer == 2 and v.tiles_left == 42
    assert v.concealed == tuple(parse_counts("123456789m1112z"))
    assert v.melds_by_seat[1][0].kind is MeldKind.CONCEALED_KONG
    assert v.melds_by_seat[1][0].tiles == ()  # hidden from this seat
    assert v.melds_by_seat[2][0].tiles == tuple(parse("555z"))
    assert v.discards[2] == tuple(parse("9s"))
    assert v.ready == (False, False, False, True)


def test_a_drawn_tile_listed_apart_joins_the_hand_on_the_own_turn():
    prompt = own_prompt(discards=p("1m9m"))
    v = view_from_proto(table("12345678m11122z", drawn="9m"), prompt)
    assert sum(v.concealed) == 14
    assert v.concealed[parse("9m")[0]] == 1
    # already counted in concealed: not added twice
    v = view_from_proto(table("123456789m11122z", drawn="9m"), prompt)
    assert sum(v.concealed) == 14


def test_own_turn_options_with_a_win_described_from_the_tiles():
    prompt = own_prompt(
        discards=p("1m9m"), ready_discards=p("9m"), concealed_kongs=p("1z"), win=True
    )
    v = view_from_proto(table("123456789m11112z"), prompt)
    opts = options_from_prompt(prompt, v)
    assert isinstance(opts, OwnTurnOptions)
    assert opts.discards == tuple(parse("1m9m"))
    assert opts.ready_discards == tuple(parse("9m"))
    assert opts.concealed_kongs == tuple(parse("1z"))
    assert opts.wins and opts.wins[0].kind is WinKind.SELF_DRAW


def test_claim_options_with_chow_shapes_and_a_discard_win():
    prompt = gateway_pb2.Prompt(
        seat=1,
        kind=gateway_pb2.PROMPT_KIND_CLAIM,
        options=gateway_pb2.Options(
            pong=True,
            chows=[gateway_pb2.Chow(tiles=p("345m")), gateway_pb2.Chow(tiles=p("456m"))],
            win=True,
            **{"pass": True},
        ),
        tile=p("5m")[0],
        from_seat=4,
    )
    v = view_from_proto(table("12346789m11122z"), prompt)
    opts = options_from_prompt(prompt, v)
    assert isinstance(opts, ClaimOptions)
    assert opts.pong and not opts.exposed_kong
    assert opts.chows == tuple(parse("34m"))
    assert opts.win is not None and opts.win.kind is WinKind.DISCARD
    assert opts.win.hand is HandType.HALF_FLUSH


def test_actions_round_trip_through_the_servicer_converter():
    for action in (
        Discard(3),
        DeclareReady(30),
        Chow(parse("3s")[0]),
        Pong(),
        ExposedKong(),
        AddedKong(31),
        ConcealedKong(0),
        Win(),
        Pass(),
    ):
        assert action_from_proto(action_to_proto(action)) == action


def test_tiles_to_bury_become_a_tile_swap():
    pb = action_to_proto(tuple(parse("19m5p1z7z")))
    assert pb.WhichOneof("kind") == "tile_swap"
    assert list(pb.tile_swap.tiles) == p("19m5p1z7z")


def test_a_baida_view_counts_its_wildcards_and_names_the_win():
    prompt = own_prompt(discards=p("1m1j"), win=True)
    t = table("123m456p789s2224z1j", drawn="1j", prompt=prompt)
    t.ruleset.name = "shanghai-baida"
    v = view_from_proto(t, prompt)
    assert sum(v.concealed) == 13 and v.wildcards == 1
    opts = options_from_prompt(prompt, v)
    assert opts.wins[0].hand is HandType.PING_HU
    # the drawn 百搭 listed apart joins the hand
    t = table("123m456p789s2224z", drawn="1j", prompt=prompt)
    t.ruleset.name = "shanghai-baida"
    assert view_from_proto(t, prompt).wildcards == 1


def test_a_flipped_baida_view_carries_the_wild_kind_to_remote_bots():
    """翻百搭: the view names the indicator and the wild kind, so a remote bot plans with them."""
    prompt = own_prompt(discards=p("1m"), win=False)
    t = table("123m456p789s2224z", drawn="1m", prompt=prompt)
    t.ruleset.name = "shanghai-baida"
    t.ruleset.options["baida_tiles.wildcards"] = "flipped"
    t.hand.wild_indicator = p("4z")[0]
    t.hand.wild_kind = p("1z")[0]
    assert view_from_proto(t, prompt).wild_kind == parse("1z")[0]
    t.hand.ClearField("wild_kind")
    assert view_from_proto(t, prompt).wild_kind is None
