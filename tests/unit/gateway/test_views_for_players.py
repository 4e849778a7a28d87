"""What the web table reads to speak to a player (issue 33): the escape penalty a Leave would
cost, the discards another seat claimed, and each transfer's payee in the hand's result."""

from __future__ import annotations

from services.gateway.convert.events import event_to_proto
from services.gateway.domain.events import kinds as K
from services.gateway.domain.events.log import LoggedEvent
from services.gateway.domain.session import Seat
from tests.support.sessions import SeededWall, inprocess_ports, local_table, session_config
from tests.unit.gateway.test_resume_steps import greedy


def played(seed: int, stake: int = 1, ruleset: str = "shanghai-qiaoma"):
    """One hand of four greedy bots (they pong and win whenever they may) on a seeded wall."""
    ports = inprocess_ports()
    ports.wall = SeededWall(seed)
    config = session_config("t-view", ruleset=ruleset, max_hands=1, first_dealer=0)
    config.stake = stake
    bots = [Seat(player_id=f"b{i}", bot=True) for i in range(4)]
    t = local_table(config, bots, ports=ports, policy=greedy)
    t.play_out()
    return t


def test_the_view_names_the_escape_penalty():
    # RULES §9: escape_penalty_base 1 × stake × 底分 (base_points 2 + flowers.base 0)
    assert played(1).session.seat_view(0)["escape_penalty"] == 2
    assert played(1, stake=5).session.seat_view(0)["escape_penalty"] == 10


def test_claimed_discards_are_named_and_sit_in_a_meld_from_that_seat():
    claimed = 0
    for seed in range(6):
        t = played(seed)
        view = t.session.seat_view(None)
        for s in view["seats"]:
            for i in s["claimed_discards"]:
                tile = s["discards"][i]
                melds = [m for o in view["seats"] for m in o["melds"] if m.from_seat == s["seat"]]
                # a chow names its claimed tile; a pong or kong is of that tile
                assert any(
                    m.claimed == tile or (m.claimed is None and tile in m.tiles) for m in melds
                ), (seed, s["seat"], tile)
                claimed += 1
    assert claimed > 0  # greedy bots pong: some hand had a claim


def test_each_transfer_names_its_payee_in_the_proto():
    for seed in range(8):
        t = played(seed, ruleset="shanghai-old")  # greedy bots win some hands here (no 敲)
        result = next(e for e in t.typed if isinstance(e, K.HandResult))
        transfers = [b for b in result.breakdown if b.code == "TRANSFER"]
        if not transfers:
            continue  # a drawn hand
        for b in transfers:
            assert b.other_seat is not None and b.other_seat != b.seat
        received = [0] * 4
        for b in transfers:
            received[b.other_seat] += b.amount
            received[b.seat] -= b.amount
        if not result.house:  # the transfers are the payments
            assert tuple(received) == tuple(result.payments)
        pb = event_to_proto(LoggedEvent(1, 0, result), result)
        lines = [b for b in pb.hand_result.breakdown if b.code == "TRANSFER"]
        assert [b.other_seat - 1 for b in lines] == [b.other_seat for b in transfers]
        return
    raise AssertionError("no hand of these seeds was won")
