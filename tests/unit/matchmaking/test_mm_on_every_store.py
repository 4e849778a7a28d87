"""The matchmaking service on each store backend (memory, SQLite, PostgreSQL): a tournament
of sixteen played to its final ranking through the ledger, and a second replica on the same
database that sees the same balances and books."""

from __future__ import annotations

import random

from services.matchmaking.domain.economy import ledger
from services.matchmaking.domain.tournaments import tournament as tournaments
from tests.support.identity import sign_in
from tests.unit.matchmaking.mm_fakes import make_service, settle_round


def test_a_tournament_to_its_final_ranking(backend):
    store = backend.open()
    mm, alloc, _ = make_service(store)
    tokens = [sign_in(mm, f"H{i}")[1] for i in range(8)]
    # an entry fee of 100 silver from each of the 8 humans: a pool of 800, paid 50/30/20
    t = mm.create_tournament(tokens[0], "Cup", "", 4, 2, 2, 8, entry_silver=100)
    for tok in tokens:
        mm.register_tournament(tok, t.tournament_id)
    humans = [mm.authenticate(tok).player_id for tok in tokens]
    assert [ledger.balance(store, p) for p in humans] == [900] * 8
    mm.start_tournament(tokens[0], t.tournament_id)
    rng = random.Random(3)
    house = sum(settle_round(mm, alloc, t.tournament_id, rng) for _ in range(2))
    t = mm.tournament(t.tournament_id)
    assert t.state == tournaments.FINISHED
    chips = ledger.chips_by_player(store, f"tournament/{t.tournament_id}")
    assert [s.chips for s in mm.final_ranking(t.tournament_id)] == sorted(
        chips.values(), reverse=True
    )
    prizes = {p.player_id: dict(p.assets).get("silver", 0) for p in t.prizes}
    assert sorted(p.rank for p in t.prizes) == [1, 2, 3]
    top3 = [s for s in mm.final_ranking(t.tournament_id)[:3]]
    # a bot's prize goes to the house (bots have no wallets)
    for s, share in zip(top3, (400, 240, 160), strict=True):
        assert prizes[s.player_id] == share
        if not s.bot:
            assert ledger.balance(store, s.player_id) == 900 + chips[s.player_id] + share
    assert house > 0
    assert ledger.balances(store, f"escrow/tournament/{t.tournament_id}")["silver"] == 0
    assert ledger.reconcile(store) == []
    other = backend.open()  # a second replica on the same database
    again, _, _ = make_service(other)
    player = mm.authenticate(tokens[1])
    assert again.account(player.player_id).silver == mm.account(player.player_id).silver
    assert ledger.reconcile(other) == []


def test_collusion_counts_on_the_store(backend):
    """A quick-match table's hands (settled with facts) are counted per ordered pair on this
    backend, once per hand id, and ranked; the four joined at one moment."""
    from services.matchmaking.domain.economy.ledger import HandReport
    from services.matchmaking.domain.integrity import scoring
    from services.matchmaking.domain.integrity.facts import HandFacts

    store = backend.open()
    mm, alloc, _ = make_service(store)
    for i in range(4):
        mm.join_queue(sign_in(mm, f"C{i}")[1], "", 0, f"10.0.0.{i}")
    mm.tick()
    (request, allocation), *_ = alloc.tables.values()
    seats = tuple(s.player_id for s in request.seats)
    facts = HandFacts(1, claims=((0, 1),), chows=((1, 0),))
    for h in range(3):
        report = HandReport(
            f"h{h}", allocation.table_id, request.tag, seats, (0, 0, 0, 0), facts=facts
        )
        assert mm.record_hand(report)
        assert not mm.record_hand(report)  # a repeat counts nothing
    pairs, token, total = mm.suspicious_pairs(0, "", False)
    assert total == 12 and token == ""
    by_pair = {(p.a, p.b): {e.signal: e.observed for e in p.evidence} for p in pairs}
    assert by_pair[(seats[0], seats[1])][scoring.CLAIMS] == 3
    assert by_pair[(seats[1], seats[0])][scoring.CHOWS] == 3
    assert by_pair[(seats[2], seats[3])][scoring.QUEUED] == 1
    assert all(p.hands == 3 for p in pairs)
