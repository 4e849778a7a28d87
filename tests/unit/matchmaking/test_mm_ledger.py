"""The ledger (services/matchmaking/domain/economy/ledger.py and its books in ledger_store/), on the
memory, SQLite and PostgreSQL stores: transactions of legs summing to zero per asset, once per
reference; no balance but the house's below zero (the domain and the tables' CHECK); 64-bit limits;
hands once, bots on the house; pages of entries; the reconciliation check; concurrent hands from
threads and processes (no deadlock, no lost entry)."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from infra.store.memory import MemoryStore
from services.matchmaking.domain.economy import ledger, statement
from services.matchmaking.domain.economy.books import (
    HOUSE_STRIPES,
    MAX_BALANCE,
    books_of,
    stripe_of,
)
from services.matchmaking.domain.economy.ledger import HOUSE, HandReport, Leg
from shared.errors import FailedPrecondition, InvalidArgument
from tests.support import ledger_workers
from tests.support.concurrency import run_processes, run_threads

PIDS = ("a", "b", "c", "d")


def report(hand_id="h1", payments=(30, -10, -10, -10), players=PIDS, **kw):
    return HandReport(
        hand_id, kw.pop("table_id", "t1"), kw.pop("tag", "quick/m"), players, payments, **kw
    )


def fund(store, silver=1000, room_cards=0, players=PIDS):
    for p in players:
        ledger.welcome_grant(store, p, f"iss|{p}", silver, room_cards, 1.0)


def buy(account, silver, asset, count, kind=ledger.PURCHASE):
    return [
        Leg(account, "silver", -silver, kind),
        Leg(HOUSE, "silver", silver, kind),
        Leg(account, asset, count, kind),
        Leg(HOUSE, asset, -count, kind),
    ]


def test_a_hand_is_recorded_once_and_balances_are_sums_of_entries(store):
    fund(store)
    assert ledger.record_hand(store, report(), 2.0) is True
    assert [ledger.balance(store, p) for p in PIDS] == [1030, 990, 990, 990]
    assert ledger.record_hand(store, report(), 3.0) is False
    assert [ledger.balance(store, p) for p in PIDS] == [1030, 990, 990, 990]
    entries = ledger.entries(store, "a")
    assert [(e.kind, e.amount) for e in entries] == [("grant", 1000), ("hand", 30)]
    assert sum(e.amount for e in entries) == ledger.balance(store, "a")
    assert ledger.balance(store, HOUSE) == -4000 and ledger.reconcile(store) == []


def test_reusing_a_hand_id_with_other_results_is_refused_and_changes_nothing(store):
    fund(store)
    ledger.record_hand(store, report(), 1.0)
    with pytest.raises(FailedPrecondition) as err:
        ledger.record_hand(store, report(payments=(0, 0, 30, -30)), 2.0)
    assert err.value.reason == "HAND_ID_REUSED"
    assert ledger.balance(store, "c") == 990
    assert len(ledger.entries(store, "c")) == 2 and ledger.reconcile(store) == []


def test_escape_penalty_and_house_share_are_entries(store):
    fund(store)
    ledger.record_hand(store, report(payments=(-4, 1, 1, 1), house=1, escaped_seat=0), 2.0)
    assert [(e.kind, e.amount) for e in ledger.entries(store, "a")][-1] == ("escape_penalty", -4)
    assert [(e.kind, e.amount) for e in ledger.entries(store, HOUSE)][-1] == ("house_share", 1)
    assert ledger.balance(store, "b") == 1001
    assert sum(ledger.balance(store, p) for p in PIDS) == -ledger.balance(store, HOUSE)
    assert ledger.reconcile(store) == []


def test_a_bot_seat_is_the_houses_side_and_no_bot_has_a_wallet(store):
    fund(store, players=("a", "b"))
    players = ("a", "bot-m-1", "b", "bot-m-3")
    ledger.record_hand(store, report(payments=(90, -30, -30, -30), players=players), 2.0)
    assert ledger.balance(store, "a") == 1090 and ledger.balance(store, "b") == 970
    assert ledger.balance(store, "bot-m-1") == 0 and not ledger.has_account(store, "bot-m-1")
    sides = [e for e in ledger.entries(store, HOUSE) if e.kind == ledger.BOT_SIDE]
    assert [(e.amount, e.note) for e in sides] == [(-30, "seat 1 bot-m-1"), (-30, "seat 3 bot-m-3")]
    assert ledger.hand_reports(store, "quick/m")[0].player_ids == players  # named by seat
    with pytest.raises(InvalidArgument) as err:
        ledger.transact(
            store, "x", [Leg("bot-m-1", "silver", 1, "hand"), Leg(HOUSE, "silver", -1, "hand")], 3.0
        )
    assert err.value.reason == "BOT_ACCOUNT"
    assert ledger.reconcile(store) == []


def test_a_hand_costing_more_than_a_loser_holds_is_cut_never_lost_nor_minted(store):
    """The farmer's overdraw (a loser spent silver during the hand): the loser pays what they
    hold (破产), the winners' gains shrink by as much, nobody goes below zero, the hand is kept."""
    fund(store, silver=20)
    house = ledger.balance(store, HOUSE)
    assert ledger.record_hand(store, report(payments=(60, -30, -15, -15)), 2.0) is True
    assert [ledger.balance(store, p) for p in PIDS] == [70, 0, 5, 5]
    assert ledger.balance(store, HOUSE) == house  # nothing minted, nothing absorbed
    assert ledger.has_hand(store, "h1") and ledger.reconcile(store) == []
    (cut,) = [e for e in ledger.entries(store, "b") if e.ref == "h1"]
    assert cut.amount == -20 and "ran short" in cut.note
    assert ledger.record_hand(store, report(payments=(60, -30, -15, -15)), 3.0) is False


def test_a_cut_shares_the_shortfall_among_several_winners_by_their_gains(store):
    fund(store, silver=10)
    assert ledger.record_hand(store, report(payments=(25, 5, -20, -10)), 2.0) is True
    # c pays 10 of 20: the gains of 25 and 5 lose 10 between them, 8 + 1 and 1 (whole chips
    # in proportion, the remainder from the largest gain)
    assert [ledger.balance(store, p) for p in PIDS] == [26, 14, 0, 0]
    assert ledger.reconcile(store) == []


def test_transactions_are_once_per_reference_and_sum_to_zero_per_asset(store):
    fund(store)
    assert ledger.transact(store, "buy/a/1", buy("a", 100, "double_card", 2), 2.0) is True
    assert ledger.transact(store, "buy/a/1", buy("a", 100, "double_card", 2), 3.0) is False
    with pytest.raises(FailedPrecondition) as err:
        ledger.transact(store, "buy/a/1", buy("a", 50, "double_card", 1), 4.0)
    assert err.value.reason == "REF_REUSED"
    assert ledger.balances(store, "a") == {
        "silver": 900,
        "room_card": 0,
        "double_card": 2,
        "match_card": 0,
    }
    unbalanced = [*buy("a", 100, "match_card", 1)[:3], Leg(HOUSE, "match_card", -2, "purchase")]
    with pytest.raises(InvalidArgument) as err:
        ledger.transact(store, "buy/a/2", unbalanced, 5.0)
    assert err.value.reason == "UNBALANCED" and "match_card legs sum to -1" in err.value.message
    with pytest.raises(InvalidArgument, match="unknown asset 'gold'"):
        ledger.transact(
            store, "g", [Leg("a", "gold", 1, "grant"), Leg(HOUSE, "gold", -1, "grant")], 1
        )
    with pytest.raises(InvalidArgument):
        ledger.transact(store, "", buy("a", 1, "match_card", 1), 1.0)
    with pytest.raises(InvalidArgument):
        ledger.transact(store, "none", [], 1.0)
    assert ledger.balance(store, "a", "match_card") == 0 and ledger.reconcile(store) == []


def test_no_account_but_the_house_goes_below_zero_of_any_asset(store):
    fund(store, room_cards=1)
    spend = [Leg("a", "room_card", -2, "room_card"), Leg(HOUSE, "room_card", 2, "room_card")]
    with pytest.raises(FailedPrecondition) as err:
        ledger.transact(store, "room/x", spend, 2.0)
    assert err.value.reason == "INSUFFICIENT_FUNDS" and err.value.details["asset"] == "room_card"
    escrow = [Leg("escrow/T", "silver", -1, "refund"), Leg("a", "silver", 1, "refund")]
    with pytest.raises(FailedPrecondition) as err:  # an escrow holds only what went in
        ledger.transact(store, "refund/T/a", escrow, 2.0)
    assert err.value.details["account"] == "escrow/T"
    # The house may: it funds every grant.
    assert ledger.balance(store, HOUSE) == -4000
    assert ledger.balance(store, "a", "room_card") == 1 and ledger.reconcile(store) == []


def test_a_balance_past_64_bits_is_refused_with_a_clear_error(store):
    step = ledger.MAX_AMOUNT
    n = 0
    with pytest.raises(FailedPrecondition) as err:
        while True:  # the house pays a rich account until the next grant would overflow it
            legs = [
                Leg("rich", "match_card", step, "operator_grant"),
                Leg(HOUSE, "match_card", -step, "operator_grant"),
            ]
            ledger.transact(store, f"g{n}", legs, 1.0)
            n += 1
    assert err.value.reason == "BALANCE_OVERFLOW" and err.value.details["account"] == "rich"
    assert n == MAX_BALANCE // step  # every grant that fitted went in, the one past did not
    assert ledger.balance(store, "rich", "match_card") == n * step <= MAX_BALANCE
    with pytest.raises(InvalidArgument) as err:
        ledger.transact(store, "huge", buy("rich", 2**60, "double_card", 1), 1.0)
    assert err.value.reason == "AMOUNT_TOO_LARGE"
    assert ledger.reconcile(store) == []


def test_the_welcome_grant_is_once_per_identity(store):
    assert ledger.welcome_grant(store, "p-1", "https://id.example|alice", 1000, 3, 1.0) is True
    assert ledger.welcome_grant(store, "p-1", "https://id.example|alice", 1000, 3, 2.0) is False
    # A second player record for the same identity (a race of two replicas) gets nothing.
    assert ledger.welcome_grant(store, "p-2", "https://id.example|alice", 1000, 3, 3.0) is False
    assert ledger.balances(store, "p-1")["silver"] == 1000
    assert ledger.balances(store, "p-1")["room_card"] == 3
    assert ledger.balance(store, "p-2") == 0 and ledger.reconcile(store) == []


def test_entries_come_a_page_at_a_time_newest_first(store):
    fund(store)
    for i in range(7):
        ledger.transact(store, f"buy/{i}", buy("a", 10, "double_card", 1), 10.0 + i)
    pages, token, seen = 0, "", []
    while True:
        page, token = statement.entries_page(store, "a", None, token, 5)
        seen += page
        pages += 1
        if not token:
            break
    assert pages == 3 and len(seen) == 15  # the grant's 1 + 7 purchases × 2 (silver, card)
    keys = [(e.at, e.ref, e.seq) for e in seen]
    assert keys == sorted(keys, reverse=True) and len(set(keys)) == 15
    only, token = statement.entries_page(store, "a", "double_card", "", 0)
    assert len(only) == 7 and token == "" and {e.asset for e in only} == {"double_card"}
    for bad in ("%%%", "bm90IGpzb24", "WzEsMiwzXQ"):
        with pytest.raises(InvalidArgument) as err:
            statement.entries_page(store, "a", None, bad, 10)
        assert err.value.details["field"] == "page_token"
    for size in (-1, 501):
        with pytest.raises(InvalidArgument):
            statement.entries_page(store, "a", None, "", size)


def test_reconcile_finds_a_balance_that_is_not_the_sum_of_its_entries(store):
    fund(store)
    ledger.record_hand(store, report(), 2.0)
    assert ledger.reconcile(store) == []
    ledger_workers.corrupt_balance(store, "b", 7)  # as a bug writing balances alone would
    assert ledger.reconcile(store) == ["account b: silver balance 997 but its entries sum to 990"]


def test_the_house_is_striped_over_hands():
    stripes = {stripe_of("house", f"h{i}") for i in range(200)}
    assert len(stripes) == HOUSE_STRIPES
    assert {stripe_of("a", f"h{i}") for i in range(50)} == {0}


def test_house_balance_is_the_sum_of_its_stripes(store):
    fund(store)
    for i in range(40):
        ledger.record_hand(store, report(f"h{i}", (-4, 1, 1, 1), house=1, escaped_seat=0), 1.0)
    assert ledger.balance(store, "house") == 40 - 4000
    assert sum(ledger.balance(store, p) for p in PIDS) == 4000 - 40
    assert ledger.reconcile(store) == []


def test_concurrent_hands_sharing_players_lose_nothing(store):
    """8 threads record 25 hands each, every hand among the same 4 players and the house
    (the rows every hand shares): balances are the sums, nothing deadlocks, the books agree."""
    ledger_workers.fund(store)

    def worker(i):
        ledger_workers.record_hands(store, f"w{i}", 25)

    run_threads(worker, 8, with_index=True)
    ledger_workers.check_books(store, 8 * 25)


def test_processes_recording_hands_lose_nothing(shared_backend):
    ledger_workers.fund(shared_backend.open())  # the tables exist before the race
    run_processes(ledger_workers.record_hands_process, shared_backend.url, 4, extra=(30,))
    ledger_workers.check_books(shared_backend.open(), 4 * 30)


def test_chips_by_tag_group_and_hands_per_table(store):
    fund(store)
    ledger.record_hand(store, report("h1", tag="tournament/T/round/1/table/0"), 1.0)
    ledger.record_hand(
        store, report("h2", payments=(-5, 5, 0, 0), tag="tournament/T/round/1/table/0"), 1.0
    )
    ledger.record_hand(store, report("h3", tag="room/123456", table_id="t2"), 1.0)
    assert ledger.chips_by_player(store, "tournament/T") == {"a": 25, "b": -5, "c": -10, "d": -10}
    assert ledger.hands_of_table(store, "t1") == 2
    assert ledger.hands_of_table(store, "t2") == 1
    # each hand's table (a hand entry's replay address), only the hands recorded
    got = books_of(store).tables_of_hands(["h1", "h3", "unknown", "h1"])
    assert got == {"h1": "t1", "h3": "t2"}
    assert books_of(store).tables_of_hands([]) == {}


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.lists(st.integers(-50, 50), min_size=3, max_size=3),
            st.integers(0, 3),
            st.booleans(),
        ),
        min_size=1,
        max_size=12,
    ),
    st.randoms(use_true_random=False),
)
def test_any_order_of_repeated_deliveries_gives_the_sum_of_distinct_hands(hands, rnd):
    store = MemoryStore()
    fund(store)
    reports = []
    for i, (three, escaped, escape) in enumerate(hands):
        if escape:
            payments, house = [2, 2, 2, 2], 2
            payments[escaped] = -8
            reports.append(report(f"h{i}", tuple(payments), house=house, escaped_seat=escaped))
        else:
            reports.append(report(f"h{i}", (*three, -sum(three))))
    deliveries = reports * 3
    rnd.shuffle(deliveries)
    for r in deliveries:
        ledger.record_hand(store, r, 1.0)
    for seat, pid in enumerate(PIDS):
        assert ledger.balance(store, pid) == 1000 + sum(r.payments[seat] for r in reports)
        assert ledger.balance(store, pid) == sum(e.amount for e in ledger.entries(store, pid))
    house = ledger.balance(store, ledger.HOUSE)
    assert house == sum(r.house for r in reports) - 4000
    assert sum(ledger.balance(store, p) for p in PIDS) == -house
    assert ledger.reconcile(store) == []
