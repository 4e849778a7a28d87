"""Quick match's tables with one player per client address (``one_per_address``)."""

from __future__ import annotations

import random

from services.matchmaking.domain.queues.quick_match import plan_tables


def test_without_addresses_every_four_in_arrival_order():
    waiting = [(f"t{i}", float(i), "") for i in range(9)]
    assert plan_tables(waiting, 100.0, 30.0, True) == [
        ("t0", "t1", "t2", "t3"),
        ("t4", "t5", "t6", "t7"),
        ("t8", None, None, None),
    ]


def test_a_second_ticket_from_one_address_goes_to_the_next_table():
    waiting = [("a1", 0, "A"), ("a2", 1, "A"), ("b", 2, "B"), ("c", 3, "C"), ("d", 4, "D")]
    assert plan_tables(waiting, 5.0, 30.0, True) == [("a1", "b", "c", "d")]
    assert plan_tables(waiting, 40.0, 30.0, True) == [
        ("a1", "b", "c", "d"),
        ("a2", None, None, None),
    ]
    assert plan_tables(waiting, 5.0, 30.0, False) == [("a1", "a2", "b", "c")]


def test_no_table_ever_holds_one_address_twice():
    rng = random.Random(3)
    for _ in range(200):
        waiting = [(f"t{i}", float(i), rng.choice("ABCDEFG")) for i in range(rng.randrange(30))]
        address = {t: a for t, _, a in waiting}
        tables = plan_tables(waiting, 1000.0, 30.0, True)
        seated = [t for table in tables for t in table if t]
        assert sorted(seated) == sorted(address)  # everyone seated once, after the wait
        for table in tables:
            people = [address[t] for t in table if t]
            assert len(people) == len(set(people))
