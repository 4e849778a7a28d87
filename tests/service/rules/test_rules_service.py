"""RulesService over a real loopback gRPC server: every RPC, and every bad input answered
INVALID_ARGUMENT (or FAILED_PRECONDITION for an illegal action) naming the problem."""

from __future__ import annotations

import grpc
import pytest
from google.rpc import error_details_pb2
from grpc_status import rpc_status
from mahjong.common.v1 import common_pb2
from mahjong.rules.v1 import rules_pb2, rules_pb2_grpc

from infra.convert import common as C
from services.rules import convert as R
from services.rules.server import SERVICE_NAME, SPEC
from shared import tiles as T
from shared.hand import HandType
from shared.melds import Meld
from shared.table import Chow, Pass, Pong, Win, WinKind
from tests.conftest import load_vectors
from tests.support.grpc_server import serving
from tests.support.probes import health_status, list_services, rpc_error
from tests.unit.rules.builders import seat, table, tile

TIMEOUT = 10


@pytest.fixture(scope="module")
def stub():
    with serving(SPEC, reflection=True) as (_server, channel):  # reflection: off unless asked
        yield rules_pb2_grpc.RulesServiceStub(channel), channel


def hand_pb(concealed: str, melds=(), flowers: str = "") -> rules_pb2.Hand:
    return rules_pb2.Hand(
        concealed=C.tiles_to_proto(T.parse(concealed)),
        melds=[C.meld_to_proto(m) for m in melds],
        flowers=C.tiles_to_proto(T.parse(flowers)),
    )


def raw_meld(kind: int, tiles: str, from_seat: int = 1) -> common_pb2.Meld:
    """A meld as a client could send it, without any shape check."""
    return common_pb2.Meld(kind=kind, tiles=C.tiles_to_proto(T.parse(tiles)), from_seat=from_seat)


def error_of(fn):
    with pytest.raises(grpc.RpcError) as err:
        fn()
    status = rpc_status.from_call(err.value)
    info = error_details_pb2.ErrorInfo()
    if status and status.details:
        status.details[0].Unpack(info)
    return err.value.code(), err.value.details(), info


def test_health_and_reflection(stub):
    _, channel = stub
    assert health_status(channel, SERVICE_NAME) == "SERVING"
    assert SERVICE_NAME in list_services(channel)


def test_reflection_is_off_unless_asked_for():
    with serving(SPEC) as (_, channel):
        assert health_status(channel, SERVICE_NAME) == "SERVING"
        code, _, _ = rpc_error(lambda: list_services(channel))
    assert code == grpc.StatusCode.UNIMPLEMENTED


@pytest.mark.parametrize(
    "vector",
    load_vectors("rules.jsonl") + load_vectors("presets-rules.jsonl"),
    ids=lambda v: v["name"],
)
def test_rule_vectors_over_grpc(stub, vector):
    s, _ = stub
    melds = [Meld.from_json(m) for m in vector["melds"]]
    hand = hand_pb(vector["concealed"], melds)
    ref = C.ruleset_to_ref(vector.get("ruleset", ""), vector.get("options"))
    if "waits" in vector["expect"]:
        r = s.GetWaits(rules_pb2.GetWaitsRequest(hand=hand, ruleset=ref), timeout=TIMEOUT)
        assert T.format_tiles(C.tiles_from_proto(r.waits)) == vector["expect"]["waits"]
    else:
        r = s.EvaluateHand(rules_pb2.EvaluateHandRequest(hand=hand, ruleset=ref), timeout=TIMEOUT)
        want = vector["expect"]["hand"]
        assert r.winning == (want is not None)
        got = HandType(r.hand_type).label if r.hand_type else None
        assert got == want


def test_evaluate_reports_the_splits_and_eight_flowers(stub):
    s, _ = stub
    r = s.EvaluateHand(
        rules_pb2.EvaluateHandRequest(
            hand=hand_pb("11122233344455m", flowers="12345678f"),
            ruleset=common_pb2.RulesetRef(name="shanghai-classic"),
        ),
        timeout=TIMEOUT,
    )
    assert r.hand_type == common_pb2.HAND_TYPE_FULL_FLUSH_PONGS and r.eight_flowers
    assert len(r.decompositions) >= 2
    assert {C.tile_from_proto(d.pair) for d in r.decompositions} >= {T.parse("5m")[0]}


def test_ruleset_options_apply(stub):
    s, _ = stub
    hand = hand_pb("123456789p22255z")
    plain = s.EvaluateHand(rules_pb2.EvaluateHandRequest(hand=hand), timeout=TIMEOUT)
    assert plain.hand_type == common_pb2.HAND_TYPE_HALF_FLUSH
    ref = common_pb2.RulesetRef(options={"hands.honors_include_dragons": "false"})
    strict = s.EvaluateHand(rules_pb2.EvaluateHandRequest(hand=hand, ruleset=ref), timeout=TIMEOUT)
    assert not strict.winning


def test_claim_options_resolution_and_validation(stub):
    s, _ = stub
    snap = table(
        {
            1: seat("1112223334446m", ready=True),
            2: seat("55m111222333p44p"),
            3: seat("111222333444z5m", ready=True),
        },
        ("discard", 0, "5m"),
    )
    pb = R.snapshot_to_proto(snap)
    r = s.GetClaimOptions(rules_pb2.GetClaimOptionsRequest(table=pb), timeout=TIMEOUT)
    opts = [R.claim_options_from_proto(o) for o in r.options]
    assert [o.seat for o in opts] == [1, 2, 3]
    assert opts[0].win.kind is WinKind.DISCARD and opts[2].win is not None
    assert opts[1].pong and opts[1].win is None
    claims = {1: Win(), 2: Pong(), 3: Win()}
    res = s.ResolveClaims(
        rules_pb2.ResolveClaimsRequest(table=pb, claims=R.claims_to_proto(claims)),
        timeout=TIMEOUT,
    )
    resolution = R.resolution_from_proto(res)
    assert resolution.winners == (1, 3) and resolution.taker is None
    res = s.ResolveClaims(
        rules_pb2.ResolveClaimsRequest(
            table=pb, claims=R.claims_to_proto({1: Pass(), 2: Pong(), 3: Pass()})
        ),
        timeout=TIMEOUT,
    )
    resolution = R.resolution_from_proto(res)
    assert (resolution.taker, resolution.action, resolution.missed_wins) == (2, Pong(), (1, 3))
    ok = rules_pb2.ValidateActionRequest(
        table=pb, seat=C.seat_to_proto(2), action=R.action_to_proto(Pong())
    )
    s.ValidateAction(ok, timeout=TIMEOUT)
    bad = rules_pb2.ValidateActionRequest(
        table=pb, seat=C.seat_to_proto(3), action=R.action_to_proto(Chow(tile("4m")))
    )
    code, message, info = error_of(lambda: s.ValidateAction(bad, timeout=TIMEOUT))
    assert code is grpc.StatusCode.FAILED_PRECONDITION
    assert "only seat 1, the discarder's 下家, may chow" in message
    assert info.reason == "ILLEGAL_NOW"


def test_own_turn_options(stub):
    s, _ = stub
    snap = table({0: seat("111z234567789p5z9s")}, ("draw", 0, "9s"))
    r = s.GetOwnTurnOptions(
        rules_pb2.GetOwnTurnOptionsRequest(
            table=R.snapshot_to_proto(snap), seat=C.seat_to_proto(0)
        ),
        timeout=TIMEOUT,
    )
    o = R.own_turn_options_from_proto(r.options)
    assert o.ready_discards == (tile("9s"),) and tile("5z") in o.discards
    code, message, _ = error_of(
        lambda: s.GetOwnTurnOptions(
            rules_pb2.GetOwnTurnOptionsRequest(
                table=R.snapshot_to_proto(snap), seat=C.seat_to_proto(2)
            ),
            timeout=TIMEOUT,
        )
    )
    assert code is grpc.StatusCode.FAILED_PRECONDITION and "not seat 2's" in message


def test_snapshot_round_trip():
    snap = table(
        {1: seat("1112344667899m", ready=True, missed="5m", flowers="13f", discards="9p")},
        ("discard", 0, "5m"),
    )
    assert R.snapshot_from_proto(R.snapshot_to_proto(snap)) == snap


def test_snapshot_carries_the_rulesets_overrides():
    snap = table({1: seat("1112344667899m")}, ("discard", 0, "5m"), ruleset="shanghai-classic")
    custom = snap.ruleset.with_overrides(
        {"ready.require_declare_ready": False, "table.reserved_tiles": 14}
    )
    pb = R.snapshot_to_proto(snap._replace(ruleset=custom))
    assert pb.ruleset.name == "shanghai-classic"
    assert dict(pb.ruleset.options) == {
        "ready.require_declare_ready": "false",
        "table.reserved_tiles": "14",
    }
    assert R.snapshot_from_proto(pb).ruleset.as_dict() == custom.as_dict()


# --- bad input ---------------------------------------------------------------------------------
BAD_HANDS = [
    ("five copies", hand_pb("11111m23456789p"), "5 copies of 1m"),
    ("too few tiles", hand_pb("123m456p"), "6 tiles in all"),
    ("too many tiles", hand_pb("123m456p789s111222z"), "15 tiles in all"),
    ("flower in hand", hand_pb("123m456p789s1122z3f"), "flower 3f among"),
    (
        "chow across suits",
        rules_pb2.Hand(
            concealed=C.tiles_to_proto(T.parse("1234567m111z")),
            melds=[raw_meld(common_pb2.MELD_KIND_CHOW, "1m2p3s")],
        ),
        "chow 1m2p3s is not a run of three in one suit",
    ),
    (
        "chow of honors",
        rules_pb2.Hand(
            concealed=C.tiles_to_proto(T.parse("1234567m111z")),
            melds=[raw_meld(common_pb2.MELD_KIND_CHOW, "123z")],
        ),
        "honors cannot chow",
    ),
    (
        "pong of different tiles",
        rules_pb2.Hand(
            concealed=C.tiles_to_proto(T.parse("1234567m111z")),
            melds=[raw_meld(common_pb2.MELD_KIND_PONG, "112z")],
        ),
        "pong 112z is not of identical tiles",
    ),
    ("unset tile", rules_pb2.Hand(concealed=[0] * 14), "hand.concealed[0] is not set"),
    ("tile out of range", rules_pb2.Hand(concealed=[99] * 14), "no tile value 99"),
]


@pytest.mark.parametrize(("name", "hand", "message"), BAD_HANDS, ids=[b[0] for b in BAD_HANDS])
@pytest.mark.parametrize("rpc", ["EvaluateHand", "GetWaits"])
def test_bad_hands_are_invalid_argument(stub, name, hand, message, rpc):
    s, _ = stub
    request = getattr(rules_pb2, f"{rpc}Request")(hand=hand)
    code, details, info = error_of(lambda: getattr(s, rpc)(request, timeout=TIMEOUT))
    assert code is grpc.StatusCode.INVALID_ARGUMENT, details
    assert message in details
    assert info.reason == "INVALID_ARGUMENT"


def test_unknown_ruleset(stub):
    s, _ = stub
    for ref, message in [
        (common_pb2.RulesetRef(name="no-such-rules"), "unknown ruleset 'no-such-rules'"),
        (common_pb2.RulesetRef(options={"ready.nope": "1"}), "unknown ruleset option"),
        (
            common_pb2.RulesetRef(options={"ready.require_declare_ready": "maybe"}),
            "takes true or false",
        ),
    ]:
        request = rules_pb2.GetWaitsRequest(hand=hand_pb("1112345678999m"), ruleset=ref)
        code, details, _ = error_of(lambda r=request: s.GetWaits(r, timeout=TIMEOUT))
        assert code is grpc.StatusCode.INVALID_ARGUMENT and message in details


def _snapshot_pb():
    return R.snapshot_to_proto(table({1: seat("1112344667899m")}, ("discard", 0, "5m")))


def _mutate(fn):
    pb = _snapshot_pb()
    fn(pb)
    return pb


BAD_TABLES = [
    ("three seats", lambda pb: pb.seats.pop(), "table.seats has 3 seats"),
    (
        "dealer out of range",
        lambda pb: setattr(pb, "dealer", 7),
        "table.dealer value 7 out of range",
    ),
    ("no last action", lambda pb: pb.ClearField("last_action"), "table.last_action is not set"),
    (
        "flower in a seat's hand",
        lambda pb: pb.seats[1].concealed.__setitem__(0, C.tile_to_proto(T.parse("2f")[0])),
        "flower 2f among the table.seats[1].concealed",
    ),
    (
        "wrong hand size",
        lambda pb: pb.seats[1].concealed.append(C.tile_to_proto(T.parse("9p")[0])),
        "seat 1 has 14 concealed tiles",
    ),
    (
        "fifth copy",
        lambda pb: pb.seats[1].concealed.__setitem__(12, C.tile_to_proto(T.parse("1m")[0])),
        "copies of 1m",
    ),
    (
        "impossible meld",
        lambda pb: pb.seats[2].melds.append(raw_meld(common_pb2.MELD_KIND_PONG, "123p")),
        "pong 123p is not of identical tiles",
    ),
    ("negative wall", lambda pb: setattr(pb, "wall_remaining", -3), "wall_remaining -3"),
]


@pytest.mark.parametrize(("name", "mutate", "message"), BAD_TABLES, ids=[b[0] for b in BAD_TABLES])
def test_bad_tables_are_invalid_argument(stub, name, mutate, message):
    s, _ = stub
    pb = _mutate(mutate)
    code, details, _ = error_of(
        lambda: s.GetClaimOptions(rules_pb2.GetClaimOptionsRequest(table=pb), timeout=TIMEOUT)
    )
    assert code is grpc.StatusCode.INVALID_ARGUMENT, details
    assert message in details


def test_seat_out_of_range_and_unset_action(stub):
    s, _ = stub
    pb = _snapshot_pb()
    for seat_value, action, message in [
        (9, R.action_to_proto(Pong()), "seat value 9 out of range"),
        (0, R.action_to_proto(Pong()), "seat is not set"),
        (2, rules_pb2.Action(), "action is not set"),
        (
            2,
            rules_pb2.Action(chow=rules_pb2.ChowAction(low=C.tile_to_proto(T.parse("1f")[0]))),
            "chow needs a hand tile, got 1f",
        ),
    ]:
        request = rules_pb2.ValidateActionRequest(table=pb, seat=seat_value, action=action)
        code, details, _ = error_of(lambda r=request: s.ValidateAction(r, timeout=TIMEOUT))
        assert code is grpc.StatusCode.INVALID_ARGUMENT, details
        assert message in details
    twice = rules_pb2.ResolveClaimsRequest(
        table=pb, claims=R.claims_to_proto({1: Pass()}) + R.claims_to_proto({1: Pong()})
    )
    code, details, _ = error_of(lambda: s.ResolveClaims(twice, timeout=TIMEOUT))
    assert code is grpc.StatusCode.INVALID_ARGUMENT and "seat 1 claims twice" in details


@pytest.mark.parametrize(
    ("ruleset", "concealed", "flowers", "field"),
    [
        ("", "123m456p789s1j222z", "", "hand.concealed[9]"),
        ("shanghai-old", "123m456p789s222z2a", "", "hand.concealed[12]"),
        ("", "123m456p789s2222z", "1a", "hand.flowers[0]"),
        ("shanghai-baida", "123m456p789s1j555z", "", "hand"),
    ],
)
def test_tiles_outside_the_preset_are_invalid_argument_naming_the_field(
    stub, ruleset, concealed, flowers, field
):
    s, _ = stub
    req = rules_pb2.GetWaitsRequest(
        hand=hand_pb(concealed, flowers=flowers), ruleset=common_pb2.RulesetRef(name=ruleset)
    )
    code, message, info = rpc_error(lambda: s.GetWaits(req, timeout=TIMEOUT))
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    assert info.metadata["field"] == field, message


def test_no_fifth_copy_reads_what_the_seat_sees(stub):
    """baida_tiles.wildcard_fifth_copy false over gRPC: the snapshot's discards and the other
    seats' melds, and EvaluateHand's / GetWaits' visible tiles, count with the hand's own."""
    s, _ = stub
    capped = common_pb2.RulesetRef(
        name="shanghai-baida", options={"baida_tiles.wildcard_fifth_copy": "false"}
    )
    ruleset = C.ruleset_from_ref(capped)
    wild = seat("111m234p567p12s99s")._replace(wildcards=1)  # the drawn 百搭 can only be a 3s

    def own_wins(others):
        snap = table({0: wild, **others}, ("draw", 0, "1j"), ruleset=ruleset, avoid="3s")
        req = rules_pb2.GetOwnTurnOptionsRequest(
            table=R.snapshot_to_proto(snap), seat=C.seat_to_proto(0)
        )
        return R.own_turn_options_from_proto(s.GetOwnTurnOptions(req, timeout=TIMEOUT).options).wins

    other = "123p456p789p1z"
    assert own_wins({2: seat(other, [("pong", "333s", 3)])})
    assert not own_wins(
        {2: seat(other, [("pong", "333s", 3)]), 1: seat("123m456m789m1234z", discards="3s")}
    )
    hand = hand_pb("111m234p567p12s99s1j")
    seen = C.tiles_to_proto(T.parse("3333s"))
    r = s.EvaluateHand(rules_pb2.EvaluateHandRequest(ruleset=capped, hand=hand), timeout=TIMEOUT)
    assert r.winning
    req = rules_pb2.EvaluateHandRequest(ruleset=capped, hand=hand, visible=seen)
    assert not s.EvaluateHand(req, timeout=TIMEOUT).winning
    waits = rules_pb2.GetWaitsRequest(
        ruleset=capped, hand=hand_pb("111m234p567p12s99s"), visible=seen[:3]
    )
    assert C.tiles_from_proto(s.GetWaits(waits, timeout=TIMEOUT).waits) == T.parse("3s1j")
    bad = rules_pb2.EvaluateHandRequest(
        ruleset=capped, hand=hand, visible=C.tiles_to_proto(T.parse("5z"))
    )
    code, message, info = rpc_error(lambda: s.EvaluateHand(bad, timeout=TIMEOUT))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and info.metadata["field"] == "visible[0]"
    assert "no playing tile" in message
