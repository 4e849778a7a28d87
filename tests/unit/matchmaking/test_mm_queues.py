import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from prometheus_client import REGISTRY

from services.matchmaking.domain.queues import quick_match as queues
from services.matchmaking.storage import queue_records
from shared.errors import FailedPrecondition, InvalidArgument, PermissionDenied, Unauthenticated
from tests.support.identity import sign_in
from tests.unit.matchmaking.mm_fakes import make_service


def players(mm, n, silver_each=None):
    out = []
    for i in range(n):
        player, token = sign_in(mm, f"P{i}")
        out.append((player, token))
    return out


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.floats(min_value=0, max_value=100), max_size=30),
    st.floats(min_value=0, max_value=200),
)
def test_plan_tables_seats_each_ticket_at_most_once(joined, now):
    waiting = [(f"t{i}", at) for i, at in enumerate(sorted(joined))]
    tables = queues.plan_tables(waiting, now, bot_fill_seconds=30)
    seated = [t for table in tables for t in table if t]
    assert len(seated) == len(set(seated))
    assert all(len(t) == 4 for t in tables)
    assert len(seated) >= len(waiting) - len(waiting) % 4
    bot_tables = [t for t in tables if None in t]
    assert len(bot_tables) <= 1
    if bot_tables:
        first = dict(waiting)[bot_tables[0][0]]
        assert now - first >= 30


def test_four_players_make_a_table_and_each_learns_its_seat():
    mm, alloc, _ = make_service()
    ps = players(mm, 4)
    tickets = [mm.join_queue(tok, "", 0) for _, tok in ps]
    assert {t.stake for t in tickets} == {8}  # 1000 silver: 副主管, base 8
    mm.tick()
    assigned = [mm.ticket(tok, t.ticket_id) for (_, tok), t in zip(ps, tickets, strict=True)]
    assert {t.state for t in assigned} == {queues.ASSIGNED}
    assert sorted(t.assignment.seat for t in assigned) == [0, 1, 2, 3]
    assert len({t.assignment.table_id for t in assigned}) == 1
    ((request, _),) = alloc.tables.values()
    assert request.stake == 8 and request.ruleset == "shanghai-qiaoma"
    assert not any(s.bot for s in request.seats)
    assert request.tag.startswith("quick/")
    # Players are free to queue again.
    mm.join_queue(ps[0][1], "", 0)


def test_queues_are_separate_per_ruleset_and_stake():
    mm, alloc, _ = make_service()
    ps = players(mm, 4)
    mm.join_queue(ps[0][1], "", 2)
    mm.join_queue(ps[1][1], "", 1)
    mm.join_queue(ps[2][1], "shanghai-classic", 2)  # 1,000 silver covers classic at 2, not 8
    mm.join_queue(ps[3][1], "", 2)
    mm.tick()
    assert alloc.tables == {}


def _sample(name, **labels):
    return REGISTRY.get_sample_value(name, labels) or 0.0


def test_bots_fill_empty_seats_after_the_configured_wait():
    bots_before = _sample("mahjong_matchmaking_bot_seats_total")
    waits_before = _sample("mahjong_matchmaking_queue_wait_seconds_count", stake="8")
    mm, alloc, clock = make_service(bot_fill_seconds=20)
    ps = players(mm, 2)
    tickets = [mm.join_queue(tok, "", 0) for _, tok in ps]
    clock.advance(19.9)
    version = mm.version
    assert mm.tick() is False  # nothing happened: watchers are not woken
    assert alloc.tables == {} and mm.version == version
    clock.advance(0.1)
    assert mm.tick() is True
    assert mm.version > version
    ((request, _),) = alloc.tables.values()
    assert [s.bot for s in request.seats] == [False, False, True, True]
    assert mm.ticket(ps[1][1], tickets[1].ticket_id).state == queues.ASSIGNED
    assert _sample("mahjong_matchmaking_bot_seats_total") == bots_before + 2
    assert _sample("mahjong_matchmaking_queue_wait_seconds_count", stake="8") == waits_before + 2


def test_one_queue_at_a_time():
    mm, _, _ = make_service()
    ((_, tok),) = players(mm, 1)
    first = mm.join_queue(tok, "", 0)
    with pytest.raises(FailedPrecondition) as err:
        mm.join_queue(tok, "shanghai-classic", 2)
    assert err.value.reason == "ALREADY_QUEUED"
    assert first.ticket_id in err.value.message
    assert queues.waiting_count(mm.queue_records, queues.queue_key("shanghai-classic", 2)) == 0


def test_leaving_a_queue_frees_the_player():
    mm, alloc, clock = make_service(bot_fill_seconds=5)
    ((_, tok),) = players(mm, 1)
    t = mm.join_queue(tok, "", 0)
    assert mm.leave_queue(tok, t.ticket_id).state == queues.CANCELLED
    clock.advance(10)
    mm.tick()
    assert alloc.tables == {}
    with pytest.raises(FailedPrecondition):
        mm.leave_queue(tok, t.ticket_id)
    mm.join_queue(tok, "", 0)


def test_another_players_ticket_is_permission_denied():
    mm, _, _ = make_service()
    (_, a), (_, b) = players(mm, 2)
    t = mm.join_queue(a, "", 0)
    with pytest.raises(PermissionDenied):
        mm.leave_queue(b, t.ticket_id)
    with pytest.raises(PermissionDenied):
        mm.ticket(b, t.ticket_id)


def test_level_and_silver_rules_apply_to_queues():
    mm, _, _ = make_service(starting_silver=250)
    ((_, tok),) = players(mm, 1)
    with pytest.raises(FailedPrecondition) as err:
        mm.join_queue(tok, "", 4)
    assert err.value.reason == "STAKE_NOT_ALLOWED"
    poor, _, _ = make_service(starting_silver=50)
    ((_, tok2),) = players(poor, 1)
    with pytest.raises(FailedPrecondition) as err:
        poor.join_queue(tok2, "", 0)
    assert err.value.reason == "SILVER_TOO_LOW"
    with pytest.raises(InvalidArgument):
        mm.join_queue(tok, "no-such-rules", 0)
    with pytest.raises(Unauthenticated):
        mm.join_queue(tok + "x", "", 0)
    # Nothing was queued by any refused call.
    mm.join_queue(tok, "", 2)


def test_gateway_outage_keeps_the_match_pending_then_completes_it():
    mm, alloc, _ = make_service()
    ps = players(mm, 4)
    tickets = [mm.join_queue(tok, "", 0) for _, tok in ps]
    alloc.down = True
    mm.tick()
    assert mm.ticket(ps[0][1], tickets[0].ticket_id).state == queues.MATCHED
    with pytest.raises(FailedPrecondition):
        mm.leave_queue(ps[0][1], tickets[0].ticket_id)
    alloc.down = False
    mm.tick()
    assert {mm.ticket(tok, t.ticket_id).state for (_, tok), t in zip(ps, tickets, strict=True)} == {
        queues.ASSIGNED
    }
    assert len(alloc.tables) == 1


def test_many_tickets_form_many_tables_in_arrival_order():
    mm, alloc, clock = make_service()
    ps = players(mm, 10)
    for _, tok in ps:
        mm.join_queue(tok, "", 0)
        clock.advance(1)
    mm.tick()
    assert len(alloc.tables) == 2
    seated = [s.player_id for r, _ in alloc.tables.values() for s in r.seats]
    assert set(seated) == {p.player_id for p, _ in ps[:8]}
    assert queues.waiting_count(mm.queue_records, queues.queue_key("shanghai-qiaoma", 8)) == 2


def test_a_claim_that_loses_a_ticket_releases_the_others():
    mm, _, clock = make_service()
    ps = players(mm, 4)
    tickets = [mm.join_queue(tok, "", 0) for _, tok in ps]
    mm.leave_queue(ps[3][1], tickets[3].ticket_id)  # left after being planned
    seats = tuple(t.ticket_id for t in tickets)
    assert queues._start_match(mm.queue_records, tickets[0].queue, seats, clock()) is None
    for (_, tok), t in zip(ps[:3], tickets[:3], strict=True):
        got = mm.ticket(tok, t.ticket_id)
        assert (got.state, got.match_id) == (queues.WAITING, "")
    assert list(mm.store.scan(queue_records.MATCHES)) == []


def test_a_match_abandoned_half_claimed_by_a_crash_is_released_later():
    mm, alloc, clock = make_service()
    ps = players(mm, 4)
    tickets = [mm.join_queue(tok, "", 0) for _, tok in ps]
    # A replica wrote the match and claimed one ticket, then died.
    seats = [t.ticket_id for t in tickets]
    body = {"queue": tickets[0].queue, "seats": seats, "created_at": clock()}
    mm.store.put(queue_records.MATCHES, "m-dead", queues.records.dump(body))
    assert queues._set_state(mm.queue_records, seats[0], queues.WAITING, queues.MATCHED, "m-dead")
    mm.tick()  # the three others cannot make a table yet; the dead match is not stale
    assert alloc.tables == {}
    clock.advance(queues.STALE_MATCH_SECONDS)
    mm.tick()  # released, then formed normally in the same pass
    assert len(alloc.tables) == 1
    assert {mm.ticket(tok, t.ticket_id).state for (_, tok), t in zip(ps, tickets, strict=True)} == {
        queues.ASSIGNED
    }
