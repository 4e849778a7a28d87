"""ScoringService over a real loopback server: every vector, draws, escapes, and bad input
answered INVALID_ARGUMENT naming the problem."""

from __future__ import annotations

import grpc
import pytest
from mahjong.common.v1 import common_pb2
from mahjong.scoring.v1 import scoring_pb2

from services.scoring import convert as S
from services.scoring.vector_format import win_input
from tests.conftest import load_vectors
from tests.support.probes import rpc_error

VECTORS = load_vectors("scoring.jsonl")
WINS = [v for v in VECTORS if v.get("kind", "win") == "win"]
TIMEOUT = 10


def request_for(vector) -> scoring_pb2.SettleWinRequest:
    return S.win_input_to_proto(win_input(vector), vector["ruleset"])


@pytest.mark.parametrize("vector", WINS, ids=[v["name"] for v in WINS])
def test_every_win_vector(stub, vector):
    s = stub.SettleWin(request_for(vector), timeout=TIMEOUT).settlement
    expect = vector["expect"]
    assert list(s.payments) == expect["payments"]
    assert s.house == expect["house"]
    got = [
        {
            "seat": w.seat - 1,
            "hand": common_pb2.HandType.Name(w.hand).removeprefix("HAND_TYPE_").lower(),
            "flowers": w.flowers,
            "value": w.value,
        }
        for w in s.winners
    ]
    assert got == expect["winners"]
    assert s.breakdown and all(i.code and i.label and i.label_zh for i in s.breakdown)
    assert s.next_dealer != common_pb2.SEAT_UNSPECIFIED


def test_escape_vector(stub):
    v = next(v for v in VECTORS if v.get("kind") == "escape")
    req = scoring_pb2.SettleEscapeRequest(
        context=scoring_pb2.HandContext(
            ruleset=common_pb2.RulesetRef(name=v["ruleset"]),
            stake=v["stake"],
            dealer=common_pb2.SEAT_0,
        ),
        escaped_seat=v["seat"] + 1,
    )
    s = stub.SettleEscape(req, timeout=TIMEOUT).settlement
    assert (list(s.payments), s.house) == (v["expect"]["payments"], v["expect"]["house"])
    assert [t.payee for t in s.transfers][-1] == common_pb2.SEAT_UNSPECIFIED  # the house


def test_draw_raises_huangfan_and_keeps_the_dealer(stub):
    req = scoring_pb2.SettleDrawRequest(
        context=scoring_pb2.HandContext(
            ruleset=common_pb2.RulesetRef(name="shanghai-classic"),
            stake=2,
            dealer=common_pb2.SEAT_2,
            huangfan=1,
            dice=common_pb2.Dice(first=4, second=4),
        )
    )
    s = stub.SettleDraw(req, timeout=TIMEOUT).settlement
    assert (s.next_dealer, s.huangfan, s.next_huangfan) == (common_pb2.SEAT_2, 3, 4)
    assert list(s.payments) == [0, 0, 0, 0]
    codes = [i.code for i in s.breakdown]
    assert codes[0] == "DRAWN_HAND" and "HUANGFAN_DICE" in codes


def _invalid(stub, req, method="SettleWin") -> str:
    code, message, info = rpc_error(lambda: getattr(stub, method)(req, timeout=TIMEOUT))
    assert code is grpc.StatusCode.INVALID_ARGUMENT, message
    assert info.domain == "mahjong" and info.reason  # ErrorInfo attached
    return message


def _base() -> scoring_pb2.SettleWinRequest:
    return request_for(WINS[0])  # pong-pong won on seat 3's discard


def test_a_claimed_win_that_is_no_win(stub):
    req = _base()
    del req.winners[0].concealed[:]
    req.winners[0].concealed.extend(S.C.tiles_to_proto([0, 1, 2, 12, 13, 14, 24, 25, 26, 27]))
    assert "is no allowed winning hand" in _invalid(stub, req)
    _, _, info = rpc_error(lambda: stub.SettleWin(req, timeout=TIMEOUT))
    assert info.reason == "NOT_A_WIN"


def test_tiles_that_do_not_add_up(stub):
    req = _base()
    req.winners[0].concealed.pop()
    assert "a winning hand has 14" in _invalid(stub, req)
    req = _base()
    # 7s pong in the melds plus two more 7s concealed: 5 copies
    req.winners[0].concealed[0] = S.C.tile_to_proto(24)
    req.winners[0].concealed[1] = S.C.tile_to_proto(24)
    assert "copies of 7s" in _invalid(stub, req)


def test_a_discarder_who_is_also_the_winner(stub):
    req = _base()
    req.from_seat = req.winners[0].seat
    assert "both the discarder and a winner" in _invalid(stub, req)


def test_a_seat_out_of_range(stub):
    req = _base()
    req.from_seat = 9
    assert "from_seat value 9 out of range" in _invalid(stub, req)
    req = _base()
    req.winners[0].seat = common_pb2.SEAT_UNSPECIFIED
    assert "winners[0].seat is not set" in _invalid(stub, req)


def test_a_negative_stake(stub):
    req = _base()
    req.context.stake = -3
    assert "stake -3 must be a positive" in _invalid(stub, req)


def test_an_unknown_ruleset(stub):
    req = _base()
    req.context.ruleset.name = "shanghai-moon"
    assert "unknown ruleset 'shanghai-moon'" in _invalid(stub, req)


def test_unset_win_kind_and_bad_escape(stub):
    req = _base()
    req.win_kind = common_pb2.WIN_KIND_UNSPECIFIED
    assert "win_kind is not set" in _invalid(stub, req)
    esc = scoring_pb2.SettleEscapeRequest(
        context=scoring_pb2.HandContext(stake=1, dealer=common_pb2.SEAT_0)
    )
    assert "escaped_seat is not set" in _invalid(stub, esc, "SettleEscape")


def test_a_rejected_request_leaves_the_server_serving(stub):
    req = _base()
    req.context.stake = 0
    _invalid(stub, req)
    assert list(stub.SettleWin(_base(), timeout=TIMEOUT).settlement.payments) == [0, 5, 0, -5]
