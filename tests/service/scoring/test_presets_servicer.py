"""ScoringService over a real loopback server for shanghai-old and shanghai-baida: every
preset vector, the preset fields of the contract (OldScore, BaidaScore, from_hand,
last_tile, replacement_after, wild_indicator), drawn hands, escapes, and bad input answered
INVALID_ARGUMENT naming the field."""

from __future__ import annotations

import grpc
import pytest
from mahjong.common.v1 import common_pb2
from mahjong.scoring.v1 import scoring_pb2

from services.scoring import convert as S
from services.scoring.vector_format import win_input
from tests.conftest import load_vectors
from tests.service.scoring.test_servicer import TIMEOUT
from tests.support.probes import rpc_error

VECTORS = load_vectors("presets-scoring.jsonl")
WINS = [v for v in VECTORS if v.get("kind", "win") == "win"]
DRAWS = [v for v in VECTORS if v.get("kind") == "draw"]


def request_for(vector) -> scoring_pb2.SettleWinRequest:
    options = {k: str(v) for k, v in (vector.get("options") or {}).items()}
    return S.win_input_to_proto(win_input(vector), vector["ruleset"], options)


def winner_json(w: scoring_pb2.WinnerResult, ruleset: str) -> dict:
    out = {
        "seat": w.seat - 1,
        "hand": common_pb2.HandType.Name(w.hand).removeprefix("HAND_TYPE_").lower(),
    }
    if ruleset == "shanghai-old":
        out |= {
            "hu": w.old.hu,
            "fan": w.old.fan,
            "fan_items": [
                scoring_pb2.OldFan.Name(i).removeprefix("OLD_FAN_").lower() for i in w.old.fan_items
            ],
        }
    else:
        out |= {"flowers": w.flowers, "multiplier": w.baida.multiplier}
    return out | {"value": w.value}


@pytest.mark.parametrize("vector", WINS, ids=[v["name"] for v in WINS])
def test_every_preset_win_vector(stub, vector):
    s = stub.SettleWin(request_for(vector), timeout=TIMEOUT).settlement
    expect = vector["expect"]
    assert (list(s.payments), s.house) == (expect["payments"], expect["house"])
    assert [winner_json(w, vector["ruleset"]) for w in s.winners] == expect["winners"]
    assert s.breakdown and all(i.code and i.label and i.label_zh for i in s.breakdown)
    assert (s.huangfan, s.next_huangfan) == (0, 0)


@pytest.mark.parametrize("vector", DRAWS, ids=[v["ruleset"] for v in DRAWS])
def test_drawn_hands(stub, vector):
    req = scoring_pb2.SettleDrawRequest(
        context=scoring_pb2.HandContext(
            ruleset=common_pb2.RulesetRef(name=vector["ruleset"]),
            stake=vector["stake"],
            dealer=vector["dealer"] + 1,
            huangfan=3,  # ignored: no 荒番 in these presets
        )
    )
    s = stub.SettleDraw(req, timeout=TIMEOUT).settlement
    assert list(s.payments) == vector["expect"]["payments"]
    assert (s.next_dealer, s.huangfan, s.next_huangfan) == (vector["dealer"] + 1, 0, 0)


@pytest.mark.parametrize(("ruleset", "penalty"), [("shanghai-old", 60), ("shanghai-baida", 6)])
def test_escapes_use_the_models_base(stub, ruleset, penalty):
    req = scoring_pb2.SettleEscapeRequest(
        context=scoring_pb2.HandContext(
            ruleset=common_pb2.RulesetRef(name=ruleset), stake=3, dealer=common_pb2.SEAT_0
        ),
        escaped_seat=common_pb2.SEAT_2,
    )
    s = stub.SettleEscape(req, timeout=TIMEOUT).settlement
    assert s.payments[2] == -penalty and sum(s.payments) + s.house == 0


def _invalid(stub, req) -> tuple[str, str]:
    code, message, info = rpc_error(lambda: stub.SettleWin(req, timeout=TIMEOUT))
    assert code is grpc.StatusCode.INVALID_ARGUMENT, message
    return message, info.metadata.get("field", "")


def _vector(name_part: str) -> dict:
    return next(v for v in WINS if name_part in v["name"])


def test_the_discarders_hand_is_required_for_nine_tiles_down(stub):
    req = request_for(_vector("九张落地包输"))
    req.ClearField("from_hand")
    message, field = _invalid(stub, req)
    assert field == "from_hand" and "三番叫胡" in message


def test_old_refuses_a_wildcard_and_a_discard_last_tile(stub):
    req = request_for(_vector("平胡 (mixed suits"))
    req.winners[0].concealed[0] = S.C.tile_to_proto(46)  # 1j
    assert _invalid(stub, req)[1] == "seat 1 concealed tiles"
    req = request_for(_vector("平胡 (mixed suits"))
    req.last_tile = True
    assert _invalid(stub, req)[1] == "last_tile"


def test_baida_refuses_a_discard_win_and_a_stray_indicator(stub):
    req = request_for(_vector("a 百搭 completes a chow"))
    req.win_kind = common_pb2.WIN_KIND_DISCARD
    req.from_seat = common_pb2.SEAT_0
    assert _invalid(stub, req)[1] == "win"
    req = request_for(_vector("a 百搭 completes a chow"))
    req.wild_indicator = S.C.tile_to_proto(3)
    assert _invalid(stub, req)[1] == "wild_indicator"


def test_bad_replacement_after_value(stub):
    req = request_for(_vector("杠上开花 after"))
    req.replacement_after = 7
    assert _invalid(stub, req)[1] == "replacement_after"


def test_flipped_wildcards_over_grpc(stub):
    vector = {
        "ruleset": "shanghai-baida",
        "stake": 1,
        "dealer": 0,
        "winners": [
            {
                "seat": 1,
                "concealed": "35p4p456s789s123m4z",
                "melds": [],
                "flowers": "",
                "win_tile": "4z",
            }
        ],
        "win": "self_draw",
        "wild_indicator": "3p",
    }
    req = S.win_input_to_proto(
        win_input(vector), "shanghai-baida", {"baida_tiles.wildcards": "flipped"}
    )
    s = stub.SettleWin(req, timeout=TIMEOUT).settlement
    assert s.winners[0].baida.wildcards == 1 and s.winners[0].value == 2
    req.ClearField("wild_indicator")
    assert _invalid(stub, req)[1] == "wild_indicator"
