import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from services.matchmaking import ledger
from services.matchmaking.ledger import HandReport
from shared.errors import FailedPrecondition, InvalidArgument
from shared.store.memory import MemoryStore

PIDS = ("a", "b", "c", "d")


def report(hand_id="h1", payments=(30, -10, -10, -10), **kw):
    return HandReport(
        hand_id, kw.pop("table_id", "t1"), kw.pop("tag", "quick/m"), PIDS, payments, **kw
    )


def test_a_hand_is_recorded_once_and_balances_are_sums_of_entries():
    store = MemoryStore()
    for p in PIDS:
        ledger.grant(store, p, "registration", 1000, 1.0)
    assert ledger.record_hand(store, report(), 2.0) is True
    assert [ledger.balance(store, p) for p in PIDS] == [1030, 990, 990, 990]
    assert ledger.record_hand(store, report(), 3.0) is False
    assert [ledger.balance(store, p) for p in PIDS] == [1030, 990, 990, 990]
    entries = ledger.entries(store, "a")
    assert [(e.kind, e.amount) for e in entries] == [("grant", 1000), ("hand", 30)]
    assert sum(e.amount for e in entries) == ledger.balance(store, "a")


def test_reusing_a_hand_id_with_other_results_is_refused_and_changes_nothing():
    store = MemoryStore()
    ledger.record_hand(store, report(), 1.0)
    with pytest.raises(FailedPrecondition):
        ledger.record_hand(store, report(payments=(0, 0, 30, -30)), 2.0)
    assert ledger.balance(store, "c") == -10


def test_escape_penalty_and_house_share_are_entries():
    store = MemoryStore()
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
def test_malformed_reports_are_invalid_and_record_nothing(kw, field):
    store = MemoryStore()
    with pytest.raises(InvalidArgument) as err:
        ledger.record_hand(store, report(**kw), 1.0)
    assert field in err.value.message or err.value.details.get("field") == field
    assert all(ledger.balance(store, p) == 0 for p in PIDS)


def test_repeated_players_are_invalid():
    bad = HandReport("h", "t", "", ("a", "a", "c", "d"), (0, 0, 0, 0))
    with pytest.raises(InvalidArgument):
        ledger.record_hand(MemoryStore(), bad, 1.0)


def test_a_report_cut_short_is_completed_by_the_retry():
    store = MemoryStore()
    r = report()
    ledger.record_hand(store, r, 1.0)
    # Simulate a crash after the hand record and two of the entries were written.
    for pid in ("c", "d"):
        store.delete("mm_ledger/" + pid, r.hand_id)
    assert ledger.balance(store, "c") == 0
    assert ledger.record_hand(store, r, 5.0) is False
    assert [ledger.balance(store, p) for p in PIDS] == [30, -10, -10, -10]


def test_chips_by_tag_group_and_hands_per_table():
    store = MemoryStore()
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
