"""services.scoring.convert: requests survive the round trip domain → proto → domain, and a
settlement converts with every field."""

from __future__ import annotations

import pytest
from mahjong.common.v1 import common_pb2
from mahjong.scoring.v1 import scoring_pb2

from services.scoring import convert as S
from services.scoring.domain import settle_win
from services.scoring.vector_format import win_input
from shared import tiles as T
from shared.errors import InvalidArgument
from tests.conftest import load_vectors

WINS = [v for v in load_vectors("scoring.jsonl") if v.get("kind", "win") == "win"]


@pytest.mark.parametrize("vector", WINS, ids=[v["name"] for v in WINS])
def test_win_request_round_trip(vector):
    w = win_input(vector)
    back = S.win_input_from_proto(S.win_input_to_proto(w, vector["ruleset"]))
    assert back.winners == w.winners
    assert (back.win, back.from_seat, back.replacement, back.ready) == (
        w.win,
        w.from_seat,
        w.replacement,
        w.ready,
    )
    assert back.claims == w.claims
    assert back.context.ruleset.name == w.context.ruleset.name
    assert (back.context.stake, back.context.dealer, back.context.dice) == (
        w.context.stake,
        w.context.dealer,
        w.context.dice,
    )


def test_settlement_to_proto():
    s = settle_win(win_input(WINS[8]))  # 一炮多响, loss cap and rounding
    pb = S.settlement_to_proto(s)
    assert list(pb.payments) == [-50, 34, 16, 0]
    assert [(w.seat, w.hand, w.value) for w in pb.winners] == [
        (common_pb2.SEAT_1, common_pb2.HAND_TYPE_FULL_FLUSH_PONGS, 40),
        (common_pb2.SEAT_2, common_pb2.HAND_TYPE_HALF_FLUSH_PONGS, 20),
    ]
    assert pb.next_dealer == common_pb2.SEAT_1
    rounding = next(i for i in pb.breakdown if i.code == "ROUNDING")
    assert (rounding.amount, rounding.seat, rounding.other_seat) == (
        1,
        common_pb2.SEAT_0,
        common_pb2.SEAT_1,
    )
    assert rounding.unit == scoring_pb2.BREAKDOWN_UNIT_CHIPS and rounding.label_zh == "余数"


def test_claims_from_proto_name_the_field():
    req = S.win_input_to_proto(win_input(WINS[2]), "shanghai-qiaoma")
    req.claims[1].claimer = 0
    with pytest.raises(InvalidArgument, match=r"claims\[1\].claimer is not set"):
        S.win_input_from_proto(req)


PRESET_WINS = [v for v in load_vectors("presets-scoring.jsonl") if v.get("kind", "win") == "win"]


@pytest.mark.parametrize("vector", PRESET_WINS, ids=[v["name"] for v in PRESET_WINS])
def test_preset_request_round_trip(vector):
    w = win_input(vector)
    back = S.win_input_from_proto(S.win_input_to_proto(w, vector["ruleset"]))
    assert back.winners == w.winners
    assert (back.last_tile, back.replacement_after, back.feeder_hand, back.wild_indicator) == (
        w.last_tile,
        w.replacement_after,
        w.feeder_hand,
        w.wild_indicator,
    )


def test_visible_tiles_round_trip():
    w = win_input(dict(PRESET_WINS[0], visible="3399s"))
    assert w.visible == tuple(T.parse("3399s"))
    assert S.win_input_from_proto(S.win_input_to_proto(w, "shanghai-baida")).visible == w.visible


def test_preset_results_to_proto():
    by_name = {v["name"]: v for v in PRESET_WINS}
    old = next(v for n, v in by_name.items() if "海底捞月 self-draw" in n)
    pb = S.settlement_to_proto(settle_win(win_input(old)))
    (w,) = pb.winners
    assert w.hand == common_pb2.HAND_TYPE_STANDARD
    assert (w.old.hu, w.old.hu_rounded, w.old.fan) == (34, 34, 3)
    assert list(w.old.fan_items) == [
        scoring_pb2.OLD_FAN_MENQING,
        scoring_pb2.OLD_FAN_LAST_TILE,
        scoring_pb2.OLD_FAN_DRAGON_PONG,
    ]
    assert not w.HasField("baida")
    assert {i.unit for i in pb.breakdown} >= {
        scoring_pb2.BREAKDOWN_UNIT_HU,
        scoring_pb2.BREAKDOWN_UNIT_FAN,
    }
    baida = next(v for n, v in by_name.items() if "清一色对对胡" in n)
    (w,) = S.settlement_to_proto(settle_win(win_input(baida))).winners
    assert w.hand == common_pb2.HAND_TYPE_FULL_FLUSH_PONG_PONG
    assert (w.baida.multiplier, w.baida.wildcards, w.value) == (16, 1, 50)
    assert not w.HasField("old")
