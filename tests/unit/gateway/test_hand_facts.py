"""A hand's facts for the collusion signals, read from its events: wins off discards, claims,
and wins offered on a discard and not taken (passed)."""

from __future__ import annotations

from services.gateway.domain.events.kinds import (
    CLAIM,
    OWN_TURN,
    ActionTaken,
    HandResult,
    MeldDeclared,
    MeldFact,
    Prompt,
    PromptOptions,
    WinDeclared,
)
from services.gateway.domain.hand_facts import hand_facts
from services.gateway.tables.records import HandReport, decode_report, encode_report
from shared.melds import MeldKind
from shared.table import Discard, Pass, Pong, Win
from tests.support import arena


def claim_prompt(seat: int, source: int, win: bool) -> Prompt:
    return Prompt(seat, CLAIM, PromptOptions(win=win, pong=True, pass_=True), 0, 5, source)


def test_passed_wins_claims_and_wins_off_discards():
    events = [
        claim_prompt(2, 0, win=True),
        ActionTaken(2, Pass(), False),  # a win passed on seat 0's discard
        claim_prompt(1, 0, win=False),
        ActionTaken(1, Pong(), False),
        MeldDeclared(1, MeldFact(MeldKind.PONG, (5, 5, 5), 0, 5)),
        Prompt(1, OWN_TURN, PromptOptions(discards=(3,)), 0, None, None),
        ActionTaken(1, Discard(3), False),
        MeldDeclared(1, MeldFact(MeldKind.ADDED_KONG, (5, 5, 5, 5), 0, None)),  # no claim
        claim_prompt(3, 1, win=True),
        ActionTaken(3, Win(), False),
        WinDeclared(3, "discard", 3, 1, "plain"),
        claim_prompt(0, 2, win=True),  # the hand ended before seat 0 answered: nothing
    ]
    facts = hand_facts(events)
    assert facts.version == 1
    assert facts.passed_wins == ((2, 0),)
    assert facts.claims == ((1, 0),)
    assert facts.discard_wins == ((3, 1),)


def test_a_self_drawn_win_is_no_win_off_a_discard():
    facts = hand_facts([WinDeclared(2, "self_draw", 7, None, "plain")])
    assert facts.discard_wins == () and facts.passed_wins == ()


def test_facts_agree_with_the_hands_bots_play():
    """Through the gateway's own engine: the facts of each hand name as many claims as its
    claimed melds and the discard wins its result shows."""
    events: list = []
    result = arena.play_table(None, 8, seed=11, on_event=events.append)
    claims = wins = 0
    for hand in result.hands:
        mine = [e for e in events if e.hand_id == hand.hand_id]
        facts = hand_facts(mine)
        melds = [e for e in mine if isinstance(e, MeldDeclared)]
        assert len(facts.claims) == sum(
            m.meld.kind in (MeldKind.PONG, MeldKind.EXPOSED_KONG) for m in melds
        )
        assert len(facts.chows) == sum(m.meld.kind == MeldKind.CHOW for m in melds)
        assert all(source == (seat - 1) % 4 for seat, source in facts.chows)
        off = [(w.seat, hand.from_seat) for w in hand.winners if w.win_kind != "self_draw"]
        assert sorted(facts.discard_wins) == sorted(off)
        claims += len(facts.claims) + len(facts.chows)
        wins += len(facts.discard_wins)
        assert isinstance(hand, HandResult)
    assert claims > 0


def test_outbox_rows_keep_facts_and_read_older_rows():
    facts = hand_facts([claim_prompt(2, 0, True), ActionTaken(2, Pass(), False)])
    report = HandReport("h", "t", "quick/x", ("a", "b", "c", "d"), (1, -1, 0, 0), 0, facts=facts)
    assert decode_report(encode_report(report)) == report
    older = HandReport("h", "t", "quick/x", ("a", "b", "c", "d"), (1, -1, 0, 0), 0)
    assert decode_report(encode_report(older)).facts is None


def test_the_report_reads_the_hand_from_the_written_window_and_the_running_step():
    """The outbox row's facts: the hand's events already written (the table's window) and
    those of the step that settles it, none of the previous hand's."""
    from services.gateway.domain.events.log import LoggedEvent
    from services.gateway.tables.live import LiveTable
    from services.gateway.tables.reports import TableReports

    table = LiveTable("t1", "quick/x")
    old = claim_prompt(2, 0, True).replace(hand_id="h1")
    table.window = (
        0,
        [
            LoggedEvent(1, 0, old),
            LoggedEvent(2, 0, ActionTaken(2, Pass(), False, hand_id="h1")),
            LoggedEvent(3, 0, claim_prompt(1, 3, True).replace(hand_id="h2")),
        ],
    )
    table.unwritten = [(0, ActionTaken(1, Pass(), False, hand_id="h2"))]
    facts = TableReports._facts(table, {"hand_id": "h2"})
    assert facts.passed_wins == ((1, 3),)


def test_the_outbox_sends_the_facts_and_none_for_an_older_row():
    """RecordHand carries the row's facts as HandFacts (seats as the proto's Seat values); a
    row written before facts existed sends none (matchmaking counts it as a hand together)."""
    import grpc

    from infra.store.memory import MemoryStore
    from services.gateway.outbox import OutboxSender
    from services.gateway.tables import OUTBOX
    from tests.unit.gateway.test_outbox import FakeMatchmaking

    store = MemoryStore()
    facts = hand_facts(
        [
            claim_prompt(2, 0, True),
            ActionTaken(2, Pass(), False),
            MeldDeclared(1, MeldFact(MeldKind.CHOW, (4, 5, 6), 0, 5)),
        ]
    )
    players = ("a", "b", "c", "d")
    new = HandReport("h1", "t", "x", players, (1, -1, 0, 0), 0, facts=facts)
    old = HandReport("h2", "t", "x", players, (1, -1, 0, 0), 0)
    for r in (new, old):
        store.put(OUTBOX, r.key(), encode_report(r))
    sender = OutboxSender(store, grpc.insecure_channel("127.0.0.1:1"))
    sender.stub = fake = FakeMatchmaking(fail_first=0)
    assert sender.flush() == 2
    sent = {h.hand_id: h for h in fake.hands}
    assert sent["h1"].facts.version == 1
    assert [(p.seat, p.from_seat) for p in sent["h1"].facts.passed_wins] == [(3, 1)]
    assert [(p.seat, p.from_seat) for p in sent["h1"].facts.chows] == [(2, 1)]
    assert not sent["h2"].HasField("facts")
