"""Work for the ledger's concurrency tests (threads, or spawned processes) and what checks it."""

from __future__ import annotations

from infra.store import open_store
from services.matchmaking.domain.economy import ledger
from services.matchmaking.domain.economy.ledger import HandReport
from services.matchmaking.storage.ledger import ledger_for

PLAYERS = ("p1", "p2", "p3", "p4")
FUNDS = 10_000  # each player's silver before the hands (no balance may go below zero)


def fund(store) -> None:
    """Give every player :data:`FUNDS` silver from the house (once)."""
    for p in PLAYERS:
        ledger.welcome_grant(store, p, f"test|{p}", FUNDS, 0, 0.0)


def hand(name: str, i: int) -> HandReport:
    """Hand ``i`` of worker ``name``: a winner by turn, and every third hand an escape that
    pays the house."""
    if i % 3 == 0:
        return HandReport(f"{name}-{i}", "t", "quick/m", PLAYERS, (-4, 1, 1, 1), 1, 0)
    payments = [-1, -1, -1, -1]
    payments[i % 4] = 3
    return HandReport(f"{name}-{i}", "t", "quick/m", PLAYERS, tuple(payments))


def record_hands(store, name: str, count: int) -> None:
    for i in range(count):
        assert ledger.record_hand(store, hand(name, i), float(i)) is True
        assert ledger.record_hand(store, hand(name, i), float(i)) is False  # a redelivery


def record_hands_process(url: str, count: int, name: str, barrier, queue) -> None:
    store = open_store(url, pool_size=2)
    try:
        barrier.wait(60)
        record_hands(store, name, count)
        queue.put((name, "ok"))
    except BaseException as exc:
        queue.put((name, repr(exc)))
        raise
    finally:
        store.close()


def check_books(store, hands_per_name: int) -> None:
    """Balances as the hands say (each worker's hands are the same sequence), the books agree."""
    hands = [e.ref for e in ledger.entries(store, "p1") if e.kind != ledger.GRANT]
    names = {r.rsplit("-", 1)[0] for r in hands}
    expected = [FUNDS] * 4
    house = -FUNDS * 4
    for name in names:
        for i in range(hands_per_name // len(names)):
            h = hand(name, i)
            expected = [a + b for a, b in zip(expected, h.payments, strict=True)]
            house += h.house
    assert [ledger.balance(store, p) for p in PLAYERS] == expected
    assert ledger.balance(store, ledger.HOUSE) == house
    assert len(hands) == hands_per_name
    assert ledger.reconcile(store) == []


def corrupt_balance(store, account: str, delta: int) -> None:
    """Move a balance without an entry (what the reconciliation must catch)."""
    books = ledger_for(store)
    kind = type(books).__name__
    if kind == "MemoryLedger":
        books._balances[(account, "silver", 0)] += delta
    elif kind == "SqliteLedger":
        store.transaction(
            lambda db: db.execute(
                "UPDATE ledger_accounts SET balance = balance + ? WHERE account = ?",
                (delta, account),
            )
        )
    else:
        store.transaction(
            lambda conn: conn.execute(
                "UPDATE ledger_accounts SET balance = balance + %s WHERE account = %s",
                (delta, account),
            )
        )
