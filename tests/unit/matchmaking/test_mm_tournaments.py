import random

import pytest

from services.matchmaking.domain.economy import ledger
from services.matchmaking.domain.tournaments import tournament as tournaments
from services.matchmaking.domain.tournaments.records import list_ids, running_ids
from services.matchmaking.domain.tournaments.seating import meetings
from shared.errors import (
    AlreadyExists,
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    PermissionDenied,
)
from tests.support.identity import sign_in
from tests.unit.matchmaking.mm_fakes import make_service, settle_round


def setup(mm, humans=8, bots=8, rounds=3, hands=2, stake=4):
    tokens = [sign_in(mm, f"H{i}")[1] for i in range(humans)]
    creator = tokens[0]
    t = mm.create_tournament(creator, "Spring Cup", "", stake, rounds, hands, bots)
    for tok in tokens:
        mm.register_tournament(tok, t.tournament_id)
    return creator, tokens, t.tournament_id


def test_sixteen_entrants_three_rounds_to_a_final_ranking():
    mm, alloc, _ = make_service()
    creator, _tokens, tid = setup(mm)
    rng = random.Random(7)
    t = mm.start_tournament(creator, tid)
    assert t.state == tournaments.RUNNING and t.current_round == 1
    assert running_ids(mm.tournament_records) == [tid]
    assert len(alloc.tables) == 4
    house = 0
    met: set = set()
    for round_no in (1, 2, 3):
        t = mm.tournament(tid)
        assert t.current_round == round_no
        tables = mm.tournament_tables(tid)
        assert all(x.table_id for x in tables) and len(tables) == 4
        seats = [tuple(x.seats) for x in tables]
        assert not (meetings(seats) & met)  # nobody meets again
        met |= meetings(seats)
        requests = [alloc.by_table(x.table_id) for x in tables]
        assert {r.max_hands for r in requests} == {2}
        assert {r.tag for r in requests} == {
            f"tournament/{tid}/round/{round_no}/table/{i}" for i in range(4)
        }
        if round_no > 1:
            # Swiss: the leader of the last standings heads the first table.
            assert tables[0].seats[0] == mm.round_standings(t.tournament_id)[-1][0].player_id
        house += settle_round(mm, alloc, tid, rng)
        t = mm.tournament(tid)
        assert len(mm.round_standings(t.tournament_id)) == round_no
    t = mm.tournament(tid)
    assert t.state == tournaments.FINISHED
    assert mm.final_ranking(t.tournament_id) == mm.round_standings(t.tournament_id)[-1]
    assert running_ids(mm.tournament_records) == []  # ticks no longer look at it
    chips = ledger.chips_by_player(mm.store, f"tournament/{tid}")
    assert [s.chips for s in mm.final_ranking(t.tournament_id)] == sorted(
        chips.values(), reverse=True
    )
    assert {s.player_id: s.chips for s in mm.final_ranking(t.tournament_id)} == chips
    humans = [e.player_id for e in t.entrants if not e.bot]
    start_total = 8 * 1000
    # bots have no wallets: each human's silver moved by exactly its chips (the house took the
    # bots' side and the escape shares, `house` of them)
    assert sum(ledger.balance(mm.store, p) for p in humans) == start_total + sum(
        chips.get(p, 0) for p in humans
    )
    assert house > 0 and ledger.reconcile(mm.store) == []


def test_round_waits_for_every_reported_hand_even_after_table_finished():
    mm, alloc, _ = make_service()
    creator, _, tid = setup(mm, humans=4, bots=0, rounds=2, hands=1)
    mm.start_tournament(creator, tid)
    (table,) = mm.tournament_tables(tid)
    request = alloc.by_table(table.table_id)
    mm.table_finished(table.table_id, request.tag, 1)
    mm.tick()
    assert mm.tournament(tid).current_round == 1  # the hand is not in the ledger yet
    report = ledger.HandReport("h1", table.table_id, request.tag, table.seats, (3, -1, -1, -1))
    mm.record_hand(report)
    mm.tick()
    t = mm.tournament(tid)
    assert t.current_round == 2 and mm.round_standings(t.tournament_id)[0][0].chips == 3


def test_registration_errors():
    mm, _, _ = make_service()
    _creator, tokens, tid = setup(mm, humans=4, bots=0)
    with pytest.raises(AlreadyExists):
        mm.register_tournament(tokens[1], tid)
    with pytest.raises(NotFound):
        mm.register_tournament(tokens[1], "t-nope")
    poor, _, _ = make_service(starting_silver=50)
    ptok = sign_in(poor, "Poor")[1]
    ptid = poor.create_tournament(ptok, "Cup", "", 1, 1, 1, 0).tournament_id
    with pytest.raises(FailedPrecondition) as err:
        poor.register_tournament(ptok, ptid)
    assert err.value.reason == "SILVER_TOO_LOW"
    low, _, _ = make_service(starting_silver=300)
    ltok = sign_in(low, "Low")[1]
    ltid = low.create_tournament(ltok, "Big", "", 8, 1, 1, 0).tournament_id
    with pytest.raises(FailedPrecondition) as err:
        low.register_tournament(ltok, ltid)
    assert err.value.reason == "STAKE_NOT_ALLOWED"


def test_start_rules():
    mm, _, _ = make_service()
    creator, tokens, tid = setup(mm, humans=3, bots=2)
    with pytest.raises(PermissionDenied):
        mm.start_tournament(tokens[1], tid)
    with pytest.raises(PermissionDenied):
        mm.add_tournament_bots(tokens[1], tid, 3)
    with pytest.raises(FailedPrecondition) as err:
        mm.start_tournament(creator, tid)
    assert "register 3 more" in err.value.message
    mm.add_tournament_bots(creator, tid, 3)
    mm.start_tournament(creator, tid)
    late = sign_in(mm, "Late")[1]
    with pytest.raises(FailedPrecondition) as err:
        mm.register_tournament(late, tid)
    assert err.value.reason == "TOURNAMENT_STARTED"
    with pytest.raises(FailedPrecondition):
        mm.add_tournament_bots(creator, tid, 4)
    with pytest.raises(FailedPrecondition):
        mm.start_tournament(creator, tid)
    assert len(mm.tournament(tid).entrants) == 8


@pytest.mark.parametrize(
    ("rounds", "hands", "stake", "bots"),
    [(0, 1, 1, 4), (1, 0, 1, 4), (1, 1, 0, 4), (1, 1, 3, 4), (99, 1, 1, 4), (1, 1, 1, -1)],
)
def test_bad_settings_create_nothing(rounds, hands, stake, bots):
    mm, _, _ = make_service()
    tok = sign_in(mm, "C")[1]
    with pytest.raises(InvalidArgument):
        mm.create_tournament(tok, "Cup", "", stake, rounds, hands, bots)
    assert list_ids(mm.tournament_records) == []
    assert [k for k, _ in mm.store.scan("mm_players") if k.startswith("bot-")] == []


def test_create_enters_only_bots_and_invites_enter_nobody():
    mm, _, _ = make_service()
    tok = sign_in(mm, "C")[1]
    other = mm.authenticate(sign_in(mm, "O")[1]).player_id
    t = mm.create_tournament(tok, "Cup", "", 2, 1, 1, 3)
    assert [e.bot for e in t.entrants] == [True, True, True]
    t = mm.invite_to_tournament(tok, t.tournament_id, [other])
    assert t.invited == (other,) and t.entrant(other) is None
    with pytest.raises(NotFound):
        mm.invite_to_tournament(tok, t.tournament_id, ["p-missing"])
    assert len(list_ids(mm.tournament_records)) == 1


def test_tournament_house_rules_reach_every_table():
    mm, alloc, _ = make_service()
    tok = sign_in(mm, "C")[1]
    with pytest.raises(InvalidArgument):
        mm.create_tournament(tok, "Cup", "", 1, 1, 1, 3, {"payment.garden": "maybe"})
    t = mm.create_tournament(tok, "Cup", "", 1, 1, 1, 3, {"payment.garden": "true"})
    mm.register_tournament(tok, t.tournament_id)
    mm.start_tournament(tok, t.tournament_id)
    ((request, _),) = alloc.tables.values()
    assert request.ruleset_options == {"payment.garden": "true"}


def test_withdraw_before_start():
    mm, _, _ = make_service()
    _creator, tokens, tid = setup(mm, humans=4, bots=0)
    t = mm.withdraw_tournament(tokens[2], tid)
    assert len(t.entrants) == 3
    with pytest.raises(NotFound):
        mm.withdraw_tournament(tokens[2], tid)


def test_gateway_outage_leaves_tables_pending_until_a_tick():
    mm, alloc, _ = make_service()
    creator, _, tid = setup(mm, humans=4, bots=4)
    alloc.down = True
    t = mm.start_tournament(creator, tid)
    assert t.state == tournaments.RUNNING and not any(x.table_id for x in mm.tournament_tables(tid))
    alloc.down = False
    mm.tick()
    assert all(x.table_id for x in mm.tournament_tables(tid))


def test_a_start_between_a_ticks_read_and_its_cleanup_keeps_the_tournament_running(monkeypatch):
    """A tick reads a registering tournament (its roll open) and drops its running mark (a
    start refused half-way leaves one); the creator's start lands in between. The tournament
    must stay marked running, or no tick ever advances it: its rounds would never move on
    (seen in the cluster test: round 1's tables all finished, round 2 never seated)."""
    from services.matchmaking.domain.tournaments import desk

    mm, alloc, _ = make_service()
    creator, _, tid = setup(mm, humans=4, bots=4, rounds=2, hands=1)
    tournaments.mark_running(mm.tournament_records, tid)  # as a start refused half-way left it
    real_done = desk.done_running
    started = []

    def start_lands_first(store, tournament_id):
        if not started:
            started.append(mm.start_tournament(creator, tid))  # after the tick's read
        real_done(store, tournament_id)

    monkeypatch.setattr(desk, "done_running", start_lands_first)
    mm.tick()  # reads the roll open, the start lands, then the cleanup
    monkeypatch.setattr(desk, "done_running", real_done)
    assert started and started[0].state == tournaments.RUNNING
    assert running_ids(mm.tournament_records) == [tid]
    settle_round(mm, alloc, tid, random.Random(3))
    mm.tick()
    assert mm.tournament(tid).current_round == 2  # the ticks still advance it
