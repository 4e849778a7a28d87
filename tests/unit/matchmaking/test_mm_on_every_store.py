"""The matchmaking service on each store backend (memory, SQLite, PostgreSQL): a tournament
of sixteen played to its final ranking through the ledger, and a second replica on the same
database that sees the same balances and books."""

from __future__ import annotations

import random

from services.matchmaking import ledger, tournaments
from tests.unit.matchmaking.mm_fakes import make_service, settle_round


def test_a_tournament_to_its_final_ranking(backend):
    store = backend.open()
    mm, alloc, _ = make_service(store)
    tokens = [mm.register(f"H{i}")[1] for i in range(8)]
    t = mm.create_tournament(tokens[0], "Cup", "", 4, 2, 2, [], 8)
    for tok in tokens:
        mm.register_tournament(tok, t.tournament_id)
    mm.start_tournament(tokens[0], t.tournament_id)
    rng = random.Random(3)
    house = sum(settle_round(mm, alloc, t.tournament_id, rng) for _ in range(2))
    t = mm.tournament(t.tournament_id)
    assert t.state == tournaments.FINISHED
    chips = ledger.chips_by_player(store, f"tournament/{t.tournament_id}")
    assert [s.chips for s in t.final_ranking] == sorted(chips.values(), reverse=True)
    assert ledger.balance(store, ledger.HOUSE) == house
    assert ledger.reconcile(store) == []
    other = backend.open()  # a second replica on the same database
    again, _, _ = make_service(other)
    player = mm.authenticate(tokens[1])
    assert again.account(player.player_id).silver == mm.account(player.player_id).silver
    assert ledger.reconcile(other) == []
