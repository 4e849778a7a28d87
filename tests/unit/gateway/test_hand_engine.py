"""The hand engine on in-process rules and scoring with a scripted wall (RULES §3-§9)."""

from __future__ import annotations

import pytest

from services.gateway.domain.hand import CLAIM, OWN_TURN, ROB_KONG
from shared import tiles as T
from shared.errors import FailedPrecondition
from shared.hand import waits
from shared.melds import MeldKind
from shared.table import (
    AddedKong,
    Chow,
    DeclareReady,
    Discard,
    ExposedKong,
    Pass,
    Pong,
    Win,
)
from tests.unit.gateway.scripted import ScriptedWall, engine, kinds

t = lambda s: T.parse(s)[0]  # noqa: E731

# Dealer 0 discards 5m: seat 1 (下家) may chow 34m, seat 2 may pong 55m.
CLAIM_HANDS = [
    "5m123456789p1122z",
    "34m11223344s567z",
    "55m789s789s1357p9m",
    "12678m2468p3467z",
]


def test_deal_prompts_the_dealer_first():
    eng, events = engine(ScriptedWall(CLAIM_HANDS, live="1s2s3s"))
    eng.start()
    assert kinds(events)[:2] == ["hand_started", "tiles_dealt"]
    assert list(eng.pending) == [0] and eng.pending[0].kind == OWN_TURN
    assert sum(eng.seats[0].counts) == 14 and sum(eng.seats[1].counts) == 13
    assert eng.tiles_accounted() == sum(len(T.parse(h)) for h in CLAIM_HANDS) + 3


def test_pong_beats_chow_and_the_ponger_discards_without_drawing():
    eng, _events = engine(ScriptedWall(CLAIM_HANDS, live="1s2s3s"))
    eng.start()
    eng.act(0, Discard(t("5m")))
    assert set(eng.pending) == {1, 2} and all(p.kind == CLAIM for p in eng.pending.values())
    assert eng.pending[1].options.chows == (t("3m"),)
    assert eng.pending[2].options.pong
    eng.act(1, Chow(t("3m")))
    assert set(eng.pending) == {2}  # nothing resolved before every seat answered
    eng.act(2, Pong())
    assert list(eng.pending) == [2] and eng.pending[2].kind == OWN_TURN
    assert eng.seats[2].melds[-1].kind is MeldKind.PONG
    assert eng.seats[2].melds[-1].from_seat == 0
    assert eng.claim_counts[2][0] == 1 and eng.seats[0].claimed == 1
    assert sum(eng.seats[2].counts) == 11  # 13 - 2, must discard now
    assert len(eng.wall.live) == 3  # no draw
    # the ponged 5m sits in seat 2's meld: the views list it, the rules' snapshot does not
    # (SeatState.discards are those still in front of the seat)
    assert eng.discard_piles()[0] == (t("5m"),)
    assert eng.snapshot().seats[0].discards == ()
    eng.act(2, Discard(t("9m")))
    assert eng.snapshot().seats[2].discards == (t("9m"),)


def test_all_pass_then_the_next_seat_draws():
    wall = ScriptedWall(CLAIM_HANDS, live="1s2s3s")
    eng, events = engine(wall)
    eng.start()
    eng.act(0, Discard(t("5m")))
    eng.act(1, Pass())
    eng.act(2, Pass())
    assert list(eng.pending) == [1] and eng.pending[1].kind == OWN_TURN
    assert eng.drawn[1] == t("1s")
    assert ("tile_drawn", {"seat": 1, "tile": "1s", "replacement": False, "tiles_left": 2}) in [
        (k, {x: d[x] for x in ("seat", "tile", "replacement", "tiles_left")})
        for k, d in events
        if k == "tile_drawn"
    ]


def test_a_refused_action_changes_nothing():
    eng, events = engine(ScriptedWall(CLAIM_HANDS, live="1s2s3s"))
    eng.start()
    before, n = eng.copy_state(), len(events)
    for seat, action in [
        (0, Discard(t("9s"))),  # not held
        (0, Pong()),  # not an own-turn action
        (1, Discard(t("3m"))),  # not seat 1's turn
        (0, DeclareReady(t("1p"))),  # not ready after that discard
        (0, AddedKong(t("1z"))),
        (0, Win()),
    ]:
        with pytest.raises(FailedPrecondition):
            eng.act(seat, action)
    assert eng.copy_state() == before and len(events) == n


def test_drawn_hand_when_the_wall_is_empty():
    eng, events = engine(ScriptedWall(CLAIM_HANDS, live=""), huangfan=1)
    eng.start()
    eng.act(0, Discard(t("5m")))
    eng.act(1, Pass())
    eng.act(2, Pass())
    assert eng.finished and eng.outcome == "draw"
    assert kinds(events)[-3:] == ["hand_drawn", "hand_result", "seed_revealed"]
    assert eng.settlement.next_dealer == 0 and eng.settlement.next_huangfan == 2
    assert sum(eng.settlement.payments) == 0


def test_flower_drawn_in_play_is_exposed_and_replaced_from_the_tail():
    eng, events = engine(ScriptedWall(CLAIM_HANDS, live="3f1s", tail="9s"))
    eng.start()
    eng.act(0, Discard(t("5m")))
    eng.act(1, Pass())
    eng.act(2, Pass())
    assert eng.seats[1].flowers == [t("3f")] and eng.drawn[1] == t("9s")
    assert eng.replacement_draw
    exposed = [d for k, d in events if k == "flowers_exposed"][-1]
    assert exposed["draw"] == "live" and exposed["flowers"] == "3f"


# Seat 3 waits on 2p/5p (清一色 in pins); without 敲 required it may rob seat 1's added kong.
ROB_HANDS = [
    "5p19m19s28m37s12345z",
    "55p137m248s667z46m",
    "235m5679s11234z7z",
    "11p34p678p999p123p",
]


def test_rob_the_added_kong():
    overrides = {"ready.require_declare_ready": "false"}
    wall = ScriptedWall(ROB_HANDS, live="4s6z8m5p", tail="1s2s")
    eng, events = engine(wall, overrides=overrides)
    assert t("5p") in waits(T.parse_counts(ROB_HANDS[3]), (), eng.ruleset)
    eng.start()
    eng.act(0, Discard(t("5p")))

    def pass_claims():
        while eng.pending and next(iter(eng.pending.values())).kind == CLAIM:
            for seat in list(eng.pending):
                eng.act(seat, Pass())

    assert eng.pending[1].options.pong
    assert eng.pending[3].options.win is not None  # 5p wins for seat 3; it passes
    eng.act(3, Pass())
    eng.act(1, Pong())
    assert t("5p") in eng.seats[3].missed  # 漏胡 mark until seat 3 moves
    eng.act(1, Discard(t("1m")))
    pass_claims()
    for seat in (2, 3, 0):
        assert list(eng.pending) == [seat]
        eng.act(seat, Discard(eng.drawn[seat]))
        assert not eng.seats[seat].missed
        pass_claims()
    assert list(eng.pending) == [1] and eng.pending[1].options.added_kongs == (t("5p"),)
    eng.act(1, AddedKong(t("5p")))
    assert set(eng.pending) == {3} and eng.pending[3].kind == ROB_KONG
    with pytest.raises(FailedPrecondition):
        eng.act(3, Pong())
    eng.act(3, Win())
    assert eng.finished and eng.outcome == "win"
    result = [d for k, d in events if k == "hand_result"][-1]
    assert result["winners"][0]["win_kind"] == "rob_kong"
    assert result["payments"][1] < 0 and result["payments"][3] > 0
    assert sum(result["payments"]) + result["house"] == 0
    assert eng.seats[1].melds[0].kind is MeldKind.PONG  # the robbed kong goes back to a pong
    assert eng.tiles_accounted() == 13 * 3 + 14 + 4 + 2


def test_exposed_kong_takes_a_replacement_draw():
    hands = [
        "5m123456789p1122z",
        "34m11223344s567z",
        "555m789s789s1357p",
        "12678m2468p3467z",
    ]
    eng, _events = engine(ScriptedWall(hands, live="1s", tail="9s"))
    eng.start()
    eng.act(0, Discard(t("5m")))
    assert eng.pending[2].options.exposed_kong
    eng.act(1, Pass())
    eng.act(2, ExposedKong())
    assert eng.seats[2].melds[-1].kind is MeldKind.EXPOSED_KONG
    assert eng.drawn[2] == t("9s") and eng.replacement_draw
    assert list(eng.pending) == [2] and eng.pending[2].kind == OWN_TURN


def test_default_action_discards_the_drawn_tile_or_passes():
    eng, _ = engine(ScriptedWall(CLAIM_HANDS, live="1s2s3s"))
    eng.start()
    assert eng.default_action(0) == Discard(eng.drawn[0])
    eng.act(0, Discard(t("5m")))
    assert eng.default_action(1) == Pass()
