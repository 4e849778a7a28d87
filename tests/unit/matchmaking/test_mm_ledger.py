"""The ledger (services/matchmaking/ledger.py and its books in ledger_store/), on the memory,
SQLite and PostgreSQL stores: once per hand, balances kept with the entries, zero-sum hands,
the reconciliation check, the legacy records taken in, and concurrent hands from threads and
processes (no deadlock, no lost entry)."""

import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from services.matchmaking import ledger, records
from services.matchmaking.ledger import HandReport
from services.matchmaking.ledger_store import (
    HOUSE_STRIPES,
    account_deltas,
    ledger_for,
    stripe_of,
)
from shared.errors import FailedPrecondition, InvalidArgument
from shared.store.memory import MemoryStore
from tests.support import ledger_workers
from tests.support.concurrency import run_processes, run_threads

PIDS = ("a", "b", "c", "d")


def report(hand_id="h1", payments=(30, -10, -10, -10), **kw):
    return HandReport(
        hand_id, kw.pop("table_id", "t1"), kw.pop("tag", "quick/m"), PIDS, payments, **kw
    )


def test_a_hand_is_recorded_once_and_balances_are_sums_of_entries(store):
    for p in PIDS:
        ledger.grant(store, p, "registration", 1000, 1.0)
    assert ledger.record_hand(store, report(), 2.0) is True
    assert [ledger.balance(store, p) for p in PIDS] == [1030, 990, 990, 990]
    assert ledger.record_hand(store, report(), 3.0) is False
    assert [ledger.balance(store, p) for p in PIDS] == [1030, 990, 990, 990]
    entries = ledger.entries(store, "a")
    assert [(e.kind, e.amount) for e in entries] == [("grant", 1000), ("hand", 30)]
    assert sum(e.amount for e in entries) == ledger.balance(store, "a")


def test_reusing_a_hand_id_with_other_results_is_refused_and_changes_nothing(store):
    ledger.record_hand(store, report(), 1.0)
    with pytest.raises(FailedPrecondition) as err:
        ledger.record_hand(store, report(payments=(0, 0, 30, -30)), 2.0)
    assert err.value.reason == "HAND_ID_REUSED"
    assert ledger.balance(store, "c") == -10
    assert len(ledger.entries(store, "c")) == 1 and ledger.reconcile(store) == []


def test_escape_penalty_and_house_share_are_entries(store):
    ledger.record_hand(store, report(payments=(-4, 1, 1, 1), house=1, escaped_seat=0), 1.0)
    assert [(e.kind, e.amount) for e in ledger.entries(store, "a")] == [("escape_penalty", -4)]
    assert [(e.kind, e.amount) for e in ledger.entries(store, "house")] == [("house_share", 1)]
    assert ledger.balance(store, "b") == 1
    assert sum(ledger.balance(store, p) for p in PIDS) == -ledger.balance(store, "house")


@pytest.mark.parametrize(
    ("kw", "field"),
    [
        ({"hand_id": ""}, "hand_id"),
        ({"payments": (1, 1, 1, 1)}, "payments"),
        ({"payments": (1, -1, 0)}, "payments"),
        ({"payments": (-4, 1, 1, 1), "house": -1}, "house"),
        ({"payments": (1, 1, 1, -4), "house": 1, "escaped_seat": 3, "table_id": ""}, "table_id"),
    ],
)
def test_malformed_reports_are_invalid_and_record_nothing(store, kw, field):
    with pytest.raises(InvalidArgument) as err:
        ledger.record_hand(store, report(**kw), 1.0)
    assert field in err.value.message or err.value.details.get("field") == field
    assert all(ledger.balance(store, p) == 0 for p in PIDS)


def test_repeated_players_are_invalid():
    bad = HandReport("h", "t", "", ("a", "a", "c", "d"), (0, 0, 0, 0))
    with pytest.raises(InvalidArgument):
        ledger.record_hand(MemoryStore(), bad, 1.0)


def test_a_failure_part_way_records_nothing_and_the_retry_records_it(store, monkeypatch):
    """The transaction fails after the hand row went in (as a crash or a lost connection
    would): nothing is left of it, and the gateway's retry records the hand whole."""
    books = ledger_for(store)
    module = sys.modules[type(books).__module__]

    def boom(entries):
        raise RuntimeError("connection lost")

    monkeypatch.setattr(module, "account_deltas", boom)
    with pytest.raises(RuntimeError):
        ledger.record_hand(store, report(), 1.0)
    assert not ledger.has_hand(store, "h1") and ledger.entries(store, "a") == []
    monkeypatch.setattr(module, "account_deltas", account_deltas)
    assert ledger.record_hand(store, report(), 5.0) is True
    assert [ledger.balance(store, p) for p in PIDS] == [30, -10, -10, -10]
    assert ledger.reconcile(store) == []


def test_grants_are_once_per_reference(store):
    ledger.grant(store, "a", "registration", 1000, 1.0)
    ledger.grant(store, "a", "registration", 1000, 2.0)
    ledger.grant(store, "a", "bonus", 5, 3.0)
    assert ledger.balance(store, "a") == 1005 and len(ledger.entries(store, "a")) == 2
    assert ledger.has_account(store, "a") and not ledger.has_account(store, "zz")
    assert ledger.balance(store, "zz") == 0 and ledger.entries(store, "zz") == []


def test_a_hand_whose_id_is_a_grants_reference_is_refused_and_writes_nothing(store):
    ledger.grant(store, "b", "h1", 5, 1.0)  # entries are unique per (reference, account)
    with pytest.raises(FailedPrecondition) as err:
        ledger.record_hand(store, report("h1"), 2.0)
    assert err.value.reason == "HAND_ID_REUSED"
    assert [ledger.balance(store, p) for p in PIDS] == [0, 5, 0, 0]
    assert not ledger.has_hand(store, "h1") and ledger.reconcile(store) == []


def test_reconcile_finds_a_balance_that_is_not_the_sum_of_its_entries(store):
    ledger.grant(store, "a", "registration", 1000, 1.0)
    ledger.record_hand(store, report(), 2.0)
    assert ledger.reconcile(store) == []
    ledger_workers.corrupt_balance(store, "b", 7)  # as a bug writing balances alone would
    assert ledger.reconcile(store) == ["account b: balance -3 but its entries sum to -10"]


def test_the_house_is_striped_over_hands():
    stripes = {stripe_of("house", f"h{i}") for i in range(200)}
    assert len(stripes) == HOUSE_STRIPES
    assert {stripe_of("a", f"h{i}") for i in range(50)} == {0}


def test_house_balance_is_the_sum_of_its_stripes(store):
    for i in range(40):
        ledger.record_hand(store, report(f"h{i}", (-4, 1, 1, 1), house=1, escaped_seat=0), 1.0)
    assert ledger.balance(store, "house") == 40 == -sum(ledger.balance(store, p) for p in PIDS)
    assert len(ledger.entries(store, "house")) == 40 and ledger.reconcile(store) == []


def test_a_store_with_the_legacy_records_is_taken_in_once(backend):
    """The version before kept the ledger as store records; the first ledger on that store
    takes them in (balances from the entries), a second changes nothing."""
    store = backend.open()
    body = {
        "hand_id": "h1",
        "table_id": "t1",
        "tag": "tournament/T/round/1/table/0",
        "player_ids": list(PIDS),
        "payments": [30, -10, -10, -10],
        "house": 0,
        "escaped_seat": None,
        "recorded_at": 2.0,
    }
    store.create(ledger.LEGACY_HANDS_NS, "h1", records.dump(body))
    for pid, amount in zip(PIDS, body["payments"], strict=True):
        entry = {
            "account": pid,
            "ref": "h1",
            "kind": "hand",
            "amount": amount,
            "tag": body["tag"],
            "at": 2.0,
        }
        store.create(ledger.LEGACY_ACCOUNT_NS + pid, "h1", records.dump(entry))
    grant = {
        "account": "a",
        "ref": "registration",
        "kind": "grant",
        "amount": 1000,
        "tag": "",
        "at": 1.0,
    }
    store.create(ledger.LEGACY_ACCOUNT_NS + "a", "registration", records.dump(grant))
    assert [ledger.balance(store, p) for p in PIDS] == [1030, -10, -10, -10]
    assert ledger.chips_by_player(store, "tournament/T") == {"a": 30, "b": -10, "c": -10, "d": -10}
    assert ledger.hands_of_table(store, "t1") == 1
    assert ledger.record_hand(store, report(tag="tournament/T/round/1/table/0"), 9.0) is False
    again = backend.open()  # another replica starting on the same store
    if again is not store:
        assert ledger_for(again).import_legacy(*ledger.legacy_books(again)) is False
        assert ledger.balance(again, "a") == 1030
    assert ledger.reconcile(store) == []


def test_concurrent_hands_sharing_players_lose_nothing(store):
    """8 threads record 25 hands each, every hand among the same 4 players and the house
    (the rows every hand shares): balances are the sums, nothing deadlocks, the books agree."""

    def worker(i):
        ledger_workers.record_hands(store, f"w{i}", 25)

    run_threads(worker, 8, with_index=True)
    ledger_workers.check_books(store, 8 * 25)


def test_processes_recording_hands_lose_nothing(shared_backend):
    ledger_for(shared_backend.open())  # the tables exist before the race
    run_processes(ledger_workers.record_hands_process, shared_backend.url, 4, extra=(30,))
    ledger_workers.check_books(shared_backend.open(), 4 * 30)


def test_chips_by_tag_group_and_hands_per_table(store):
    ledger.record_hand(store, report("h1", tag="tournament/T/round/1/table/0"), 1.0)
    ledger.record_hand(
        store, report("h2", payments=(-5, 5, 0, 0), tag="tournament/T/round/1/table/0"), 1.0
    )
    ledger.record_hand(store, report("h3", tag="room/123456", table_id="t2"), 1.0)
    assert ledger.chips_by_player(store, "tournament/T") == {"a": 25, "b": -5, "c": -10, "d": -10}
    assert ledger.hands_of_table(store, "t1") == 2
    assert ledger.hands_of_table(store, "t2") == 1


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
        assert ledger.balance(store, pid) == sum(r.payments[seat] for r in reports)
        assert ledger.balance(store, pid) == sum(e.amount for e in ledger.entries(store, pid))
    house = ledger.balance(store, ledger.HOUSE)
    assert house == sum(r.house for r in reports)
    assert sum(ledger.balance(store, p) for p in PIDS) == -house
    assert ledger.reconcile(store) == []
