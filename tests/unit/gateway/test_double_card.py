"""加倍卡 at a table (RULES-items §2): who may play one and when, what the table records and
reports, and the hand's payments doubled by scoring — the same hand played with and without the
card (the same wall and bots) differ exactly by the doubling. Then PlayDoubleCard through the
TableManager with a bank of cards standing in for matchmaking."""

from __future__ import annotations

import pytest

from infra.store.memory import MemoryStore
from services.gateway.domain.events import kinds as K
from services.gateway.domain.restore import restore_session
from services.gateway.domain.session import Ports, Seat
from services.gateway.domain.session.config import BETWEEN_HANDS, PLAYING, WAITING
from shared.errors import FailedPrecondition, PermissionDenied
from tests.doubles.scheduler import ManualScheduler
from tests.support.sessions import SeededWall, inprocess_ports, local_table, session_config
from tests.support.stacks import table_manager, table_spec
from tests.unit.gateway.test_resume_steps import greedy


def table(
    seed: int,
    tag: str = "",
    overrides=None,
    max_hands: int = 1,
    between_ms: int = 0,
    ruleset: str = "shanghai-qiaoma",
):
    """Seat 0 a person on 托管 (played by the bots' policy), seat 1 open until joined, seats
    2-3 bots: the table waits for seat 1 (before the first deal)."""
    ports = Ports(SeededWall(seed), inprocess_ports().rules, inprocess_ports().scoring)
    seats = [
        Seat(player_id="p0", joined=True, auto_play=True),
        Seat(),
        Seat(player_id="b2", bot=True),
        Seat(player_id="b3", bot=True),
    ]
    config = session_config(
        "t-dc",
        overrides,
        ruleset=ruleset,
        max_hands=max_hands,
        first_dealer=0,
        tag=tag,
        between_hands_ms=between_ms,
    )
    return local_table(config, seats, ports=ports, policy=greedy)


def reason(fn) -> str:
    with pytest.raises(FailedPrecondition) as err:
        fn()
    return err.value.reason


def play(seed: int, doubled: bool):
    # shanghai-old: the greedy bots win some of these hands; no loss cap to stop the doubling
    t = table(seed, ruleset="shanghai-old")
    t.session.start()
    assert t.session.phase == WAITING
    if doubled:
        assert t.session.play_double_card(0) == 1
    t.session.join(1, "p1", "P1")
    t.session.seats[1].auto_play = True
    t.scheduler.drain()
    return t


def results(t):
    return [e for e in t.typed if isinstance(e, K.HandResult)]


def test_who_may_play_and_when():
    t = table(1, max_hands=2)
    s = t.session
    s.start()
    assert reason(lambda: s.play_double_card(1)) == "DOUBLE_CARD_NOT_SEATED"  # open seat
    assert reason(lambda: s.play_double_card(2)) == "DOUBLE_CARD_BOT"
    assert s.play_double_card(0) == 1  # before the first deal
    assert reason(lambda: s.play_double_card(0)) == "DOUBLE_CARD_ALREADY_PLAYED"
    s.join(1, "p1", "P1")
    assert s.phase == PLAYING
    assert reason(lambda: s.play_double_card(1)) == "DOUBLE_CARD_HAND_RUNNING"
    played = [e for e in t.typed if isinstance(e, K.DoubleCardPlayed)]
    assert [(e.seat, e.doubled_hand) for e in played] == [(0, 1)]
    started = next(e for e in t.typed if isinstance(e, K.HandStarted))
    assert started.doubled_seats == (0,)


def test_between_hands_the_next_hand_is_doubled():
    t = table(1, max_hands=2, between_ms=60_000)
    s = t.session
    s.start()
    s.join(1, "p1", "P1")
    s.seats[1].auto_play = True
    for _ in range(100_000):  # run the first hand to its end
        if s.phase == BETWEEN_HANDS:
            break
        t.scheduler.advance(1)
    assert s.phase == BETWEEN_HANDS
    assert s.play_double_card(1) == 2
    t.scheduler.drain()
    starts = [e for e in t.typed if isinstance(e, K.HandStarted)]
    assert [e.doubled_seats for e in starts] == [(), (1,)]
    hands = [d for k, d in t.reports if k == "hand"]
    assert [(h["hand_number"], h["doubled_seats"]) for h in hands] == [(1, []), (2, [1])]


@pytest.mark.parametrize(
    ("tag", "overrides"),
    [("tournament/t-1/round/1/table/0", None), ("", {"items.double_card": "false"})],
)
def test_tournament_tables_and_rulesets_without_the_card_refuse_it(tag, overrides):
    t = table(1, tag=tag, overrides=overrides)
    t.session.start()
    assert reason(lambda: t.session.play_double_card(0)) == "DOUBLE_CARD_NOT_ALLOWED"


def test_a_doubled_hand_pays_twice_what_the_same_hand_pays_undoubled():
    checked = 0
    for seed in range(1, 40):
        plain, doubled = results(play(seed, False)), results(play(seed, True))
        assert len(plain) == len(doubled) == 1
        p, d = plain[0].payments, doubled[0].payments
        lines = [b for b in doubled[0].breakdown if b.code == "DOUBLE_CARD"]
        assert sum(d) + doubled[0].house == 0
        if p[0] == 0:
            assert d == p and not lines
            continue
        caps = [b for b in doubled[0].breakdown if b.code == "LOSS_CAP"]
        if not caps:
            assert d[0] == 2 * p[0]  # every payment of seat 0 doubled, both ways
            assert lines and "加倍卡" in lines[0].label
            checked += 1
        if checked >= 1:
            break
    assert checked >= 1, "no seed gave seat 0 a payment"


def test_a_restored_table_remembers_the_cards_played():
    t = table(1, max_hands=2)
    t.session.start()
    t.session.play_double_card(0)
    again = restore_session(
        "t-dc",
        t.log(),
        timers={},
        ports=inprocess_ports(),
        scheduler=ManualScheduler(),
        emit=lambda e: 0,
        report=lambda k, d: None,
        policy=greedy,
    )
    assert again.doubled == {1: (0,)} and again.phase == WAITING
    assert again.hand_config().doubled_seats == (0,)
    assert reason(lambda: again.play_double_card(0)) == "DOUBLE_CARD_ALREADY_PLAYED"


class Bank:
    """Matchmaking's holds, in memory: ``cards`` per player, refused when none is left."""

    def __init__(self, cards: dict[str, int]) -> None:
        self.cards = cards
        self.held: dict[tuple[str, str, int], int] = {}

    def hold(self, table_id, tag, player_id, hand_number, stake):
        key = (table_id, player_id, hand_number)
        if key not in self.held:
            if self.cards.get(player_id, 0) < 1:
                raise FailedPrecondition("none left", reason="DOUBLE_CARD_NONE_LEFT")
            self.cards[player_id] -= 1
            self.held[key] = 1
        return self.cards[player_id]

    def release(self, table_id, player_id, hand_number):
        if self.held.pop((table_id, player_id, hand_number), None):
            self.cards[player_id] += 1
            return True
        return False


def manager_table(bank, report_hands=True):
    m = table_manager(MemoryStore(), inprocess_ports(), seed=1)
    m.double_cards = bank
    # seat 2 open: the table waits (before the first deal)
    seats = [Seat(player_id="p0"), Seat(player_id="p1"), Seat(), Seat(player_id="b3", bot=True)]
    table_id, tokens = m.create_table(table_spec(seats, report_hands=report_hands), "")
    return m, table_id, tokens


def test_play_through_the_manager_holds_once_per_request_and_refuses_others():
    bank = Bank({"p0": 1, "p1": 0})
    m, tid, tokens = manager_table(bank)
    try:
        assert m.play_double_card(tid, tokens[0], "r1") == (1, 0)
        assert m.play_double_card(tid, tokens[0], "r1") == (1, 0)  # a retry: the same answer
        assert bank.cards == {"p0": 0, "p1": 0} and len(bank.held) == 1
        with pytest.raises(FailedPrecondition) as err:
            m.play_double_card(tid, tokens[1], "r2")
        assert err.value.reason == "DOUBLE_CARD_NONE_LEFT"
        _, spectator, _ = m.join(tid, "", "", None, True)
        with pytest.raises(PermissionDenied):
            m.play_double_card(tid, spectator, "r3")
        with pytest.raises(FailedPrecondition) as err:
            m.play_double_card(tid, tokens[0], "r4")  # a second card for the same hand
        assert err.value.reason == "DOUBLE_CARD_ALREADY_PLAYED"
        assert bank.cards == {"p0": 0, "p1": 0}
    finally:
        m.close()


def test_a_table_without_a_ledger_refuses_the_card():
    bank = Bank({"p0": 3})
    m, tid, tokens = manager_table(bank, report_hands=False)
    try:
        with pytest.raises(FailedPrecondition) as err:
            m.play_double_card(tid, tokens[0], "r1")
        assert err.value.reason == "DOUBLE_CARD_NOT_ALLOWED" and bank.cards == {"p0": 3}
    finally:
        m.close()
