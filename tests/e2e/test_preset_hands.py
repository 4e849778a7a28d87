"""shanghai-old and shanghai-baida tables over the real processes: four seats whose players
never act, so 托管 plays them with the planning bot; every message to every seat is checked for
information hiding, every hand is exported from the gateway's store and verified (wall
commitment with the preset's tile set, every action legal, all 144 or 152 tiles accounted for,
payments plus house zero), the chips of each table sum to zero and baida wins are self-drawn."""

from __future__ import annotations

import uuid

import pytest
from mahjong.common.v1 import common_pb2
from mahjong.gateway.v1 import gateway_pb2 as pb

from services.gateway.domain.replay import export_hand, table_header
from services.gateway.verify import verify_hand
from tests.e2e.test_bot_hands import PLAY_SECONDS, check_hiding, read_log, subscribe_all
from tests.support.events import json_log
from tests.support.tables import request_table

pytestmark = pytest.mark.integration

HANDS = 6


def _table(stub, ruleset: str, options: dict | None = None):
    seats = [
        pb.SeatAssignment(player_id=f"{ruleset[9:12]}{i}-{uuid.uuid4().hex[:6]}") for i in range(4)
    ]
    return request_table(
        stub, seats, ruleset=ruleset, options=options, max_hands=HANDS, tag="presets"
    )


def test_old_and_baida_tables_play_whole_hands(stack):
    stub = stack["stub"]
    tables = {name: _table(stub, name) for name in ("shanghai-old", "shanghai-baida")}
    flipped = _table(stub, "shanghai-baida", {"baida_tiles.wildcards": "flipped"})
    streams, threads = subscribe_all(stub, [*tables.values(), flipped])
    for th in threads:
        th.join(PLAY_SECONDS + 30)
    wildcards_seen = 0
    for name, t in tables.items():
        log = read_log(stack["db"], t.table_id)
        assert log[-1].kind == "table_finished", f"{name}: the table did not finish"
        assert sum(log[-1].event.chips) == 0
        header = table_header(t.table_id, log)
        assert header["ruleset"] == name
        hand_ids = [d["hand_id"] for _, _, k, d in json_log(log) if k == "hand_started"]
        assert len(hand_ids) == HANDS
        for hid in hand_ids:
            verdict = verify_hand(export_hand(header, log, hid))
            assert verdict.ok, f"{name} {hid}: {verdict.problems}"
        wins = [d for _, _, k, d in json_log(log) if k == "win_declared"]
        if name == "shanghai-baida":
            assert all(w["win_kind"] == "self_draw" for w in wins)
        for seat in range(4):
            events = streams[(t.table_id, seat)]
            assert events[-1].WhichOneof("kind") == "table_finished"
            assert check_hiding(seat, events) > 0
            for e in events:
                if e.WhichOneof("kind") == "tile_drawn":
                    wildcards_seen += e.tile_drawn.tile == common_pb2.TILE_1J
    assert wildcards_seen > 0, "no seat drew a 百搭 in six baida hands"
    log = read_log(stack["db"], flipped.table_id)
    assert log[-1].kind == "table_finished" and sum(log[-1].event.chips) == 0
    header = table_header(flipped.table_id, log)
    for hid in [d["hand_id"] for _, _, k, d in json_log(log) if k == "hand_started"]:
        verdict = verify_hand(export_hand(header, log, hid))
        assert verdict.ok, f"flipped {hid}: {verdict.problems}"
    assert len([d for _, _, k, d in json_log(log) if k == "wild_flipped"]) == HANDS
    for seat in range(4):
        events = streams[(flipped.table_id, seat)]
        assert sum(e.WhichOneof("kind") == "wild_flipped" for e in events) == HANDS
